-- Seed 004, the nsys half: where on the time axis the work waits. A pipeline of chunked
-- H2D copy -> kernel -> D2H copy, spread over 1, 2, 4 and 8 streams, from pinned and from
-- pageable host memory, with the kernel's work set so the three stages take about the same time
-- (balanced stages). Each configuration is one sequence, timed as one unit; its speed-up over one
-- stream is set against the ideal, which the stages' own times and the copy engines bound.
--
--   gpuexp experiments/overlap.lua                       (CSV in results/)
--   gpuexp --trace overlap.json experiments/overlap.lua   (the timeline: each stream is a row)
--
-- The ideal for S streams over C chunks, with stage times h (H2D), k (kernel), d (D2H) for the
-- whole data: a pipeline is bound by its slowest resource, the kernel or the copy engines (one
-- engine per direction when the GPU has two, else H2D and D2H share one), plus filling and
-- draining it (the other stages of one chunk); and S streams keep at most S chunks in flight.
--   ideal(S) = max(max(k, copies) + (h + k + d - max(k, copies)) / C, (h + k + d) / min(S, 3))

local plan = gpuexp.plan
local dev = gpuexp.device()
local out = gpuexp.out or "results/overlap.csv"
local elements = 64 * 1024 * 1024 -- 256 MB each way: several times the L2
local chunks = 16
local chunk = elements // chunks
local s, c = 0.9999, 1e-4 -- a = a * s + c: a fixed point at 1, so each input gives its own output
local program = gpuexp.compile{file = "kernels/overlap.cu"}
local kernel = program:kernel("chunk_work")

local buffers, stages, iterations, engines = {}, {}, nil, nil

-- Stage times of the whole data, and the kernel's iterations set so it takes as long as the
-- slower copy (balanced stages).
local function setup()
  if plan then return end
  engines = dev:attribute("async_engine_count")
  buffers.device_in, buffers.device_out = dev:alloc("f32", elements), dev:alloc("f32", elements)
  for _, memory in ipairs({"pinned", "pageable"}) do
    local pinned = memory == "pinned"
    local host_in = gpuexp.host("f32", elements, {pinned = pinned})
    local host_out = gpuexp.host("f32", elements, {pinned = pinned})
    host_in:random{seed = 4, min = 0, max = 1}
    buffers[memory] = {host_in = host_in, host_out = host_out}
    local h2d = buffers.device_in:time_copy_from(host_in, {warmup = 1, reps = 5}).median_ms
    local d2h = host_out:time_copy_from(buffers.device_out, {warmup = 1, reps = 5}).median_ms
    stages[memory] = {h2d_ms = h2d, d2h_ms = d2h}
  end
  local function kernel_ms(n)
    return kernel:measure{grid = dev.sm_count * 8, block = 256, mode = "hot", min_time_ms = 50, timeout_s = 5,
      args = {buffers.device_out, buffers.device_in, gpuexp.u64(0), gpuexp.u64(elements), gpuexp.i32(n), gpuexp.f32(s),
              gpuexp.f32(c)}}.median_ms
  end
  local t1, t2 = kernel_ms(64), kernel_ms(512)
  local per_iteration = (t2 - t1) / (512 - 64)
  local target = math.max(stages.pinned.h2d_ms, stages.pinned.d2h_ms)
  iterations = math.max(1, math.floor(64 + (target - t1) / per_iteration + 0.5))
  local k = kernel_ms(iterations)
  for _, memory in ipairs({"pinned", "pageable"}) do stages[memory].kernel_ms = k end
  print(string.format("stages of %d MB: pinned H2D %.2f ms, D2H %.2f ms; pageable H2D %.2f ms, D2H %.2f ms; "
    .. "kernel %.2f ms (%d FMAs per element); %d copy engine(s)", elements * 4 // (1024 * 1024), stages.pinned.h2d_ms,
    stages.pinned.d2h_ms, stages.pageable.h2d_ms, stages.pageable.d2h_ms, k, iterations, engines))
end

local function ideal_ms(st, streams)
  local h, k, d = st.h2d_ms, st.kernel_ms, st.d2h_ms
  local copies = engines >= 2 and math.max(h, d) or h + d
  local bound = math.max(k, copies)
  local total = h + k + d
  return math.max(bound + (total - bound) / chunks, total / math.min(streams, 3))
end

-- The expected output of element a0 after the kernel: the closed form of a = a * s + c.
local function expected(a0)
  local fs, fc = string.unpack("f", string.pack("f", s)), string.unpack("f", string.pack("f", c))
  local fixed = fc / (1 - fs)
  return fixed + (a0 - fixed) * fs ^ iterations
end

local rows = gpuexp.sweep{
  name = "overlap", out = out,
  axes = {{"memory", {"pinned", "pageable"}}, {"streams", {1, 2, 4, 8}}},
  columns = {"chunks", "median_ms", "noise_pct", "samples", "ideal_ms", "h2d_ms", "kernel_ms", "d2h_ms", "iterations",
             "verified"},
  setup = setup,
  run = function(p)
    local row = {chunks = chunks}
    if plan then return row end -- streams and events need a GPU
    local b = buffers[p.memory]
    local streams, joins = {}, {}
    for i = 1, p.streams do
      streams[i] = gpuexp.stream{}
      joins[i] = gpuexp.event{timing = false}
    end
    local fork = gpuexp.event{timing = false}
    local grid = dev.sm_count * 8
    local args = {buffers.device_out, buffers.device_in, gpuexp.u64(0), gpuexp.u64(chunk), gpuexp.i32(iterations or 1),
                  gpuexp.f32(s), gpuexp.f32(c)}
    local pipeline = gpuexp.sequence(function(stream)
      fork:record(stream)
      for i = 1, p.streams do streams[i]:wait(fork) end
      for index = 0, chunks - 1 do
        local on, offset = streams[index % p.streams + 1], index * chunk
        buffers.device_in:copy_from(b.host_in, {offset = offset, source_offset = offset, count = chunk, stream = on})
        args[3] = gpuexp.u64(offset)
        kernel:launch{grid = grid, block = 256, stream = on, args = args}
        b.host_out:copy_from(buffers.device_out, {offset = offset, source_offset = offset, count = chunk, stream = on})
      end
      for i = 1, p.streams do
        joins[i]:record(streams[i])
        stream:wait(joins[i])
      end
    end, {name = p.memory .. " x" .. p.streams})
    local t = pipeline:measure{mode = "hot", min_samples = 5, min_time_ms = 150, max_noise_pct = 1, timeout_s = 10}
    -- every chunk went through all three stages: spot checks across the whole output
    b.host_out:fill(-1)
    pipeline:run()
    local verified = true
    for _, i in ipairs({1, chunk, chunk + 1, elements // 2 + 7, elements - 1, elements}) do
      local a0, got = b.host_in[i], b.host_out[i]
      verified = verified and math.abs(got - expected(a0)) < 1e-3
    end
    local st = stages[p.memory]
    row.median_ms, row.noise_pct, row.samples = t.median_ms, t.noise_pct, t.samples
    row.ideal_ms = ideal_ms(st, p.streams)
    row.h2d_ms, row.kernel_ms, row.d2h_ms, row.iterations = st.h2d_ms, st.kernel_ms, st.d2h_ms, iterations
    row.verified = verified
    return row
  end,
}

if plan then
  gpuexp.print_table(rows, {"memory", "streams", "chunks", "status"})
  print("OFFLINE PLAN: the pipeline needs streams and copies, which only a GPU has")
  return
end
-- speed-ups over one stream of the same memory, against the ideal's
local one = {}
for _, row in ipairs(rows) do
  if row.streams == 1 and row.median_ms then one[row.memory] = row end
end
for _, row in ipairs(rows) do
  local base = one[row.memory]
  if base and row.median_ms then
    row.speedup = base.median_ms / row.median_ms
    row.ideal_speedup = base.ideal_ms / row.ideal_ms
    row.of_ideal_pct = 100 * row.speedup / row.ideal_speedup
  end
end
gpuexp.print_table(rows, {"memory", "streams", "median_ms", "ideal_ms", "speedup", "ideal_speedup", "of_ideal_pct",
  "verified", "status"})
print("wrote " .. out .. "; the timeline: run with --trace FILE.json (each stream is a row in ui.perfetto.dev)")

local at = {}
for _, row in ipairs(rows) do at[row.memory .. row.streams] = row end
for _, row in ipairs(rows) do gpuexp.check(row.verified ~= false, "%s x%d: every chunk went through all three stages",
  row.memory, row.streams) end
local lesson = gpuexp.lesson()
local pinned4, pageable4 = at.pinned4, at.pageable4
if not (pinned4 and pinned4.speedup and pageable4 and pageable4.speedup) then
  print("no lesson: a partial run (--only) lacks the 1- and 4-stream points of both memories")
  return
end
local balanced = math.max(pinned4.h2d_ms, pinned4.kernel_ms, pinned4.d2h_ms) /
  math.min(pinned4.h2d_ms, pinned4.kernel_ms, pinned4.d2h_ms)
lesson:claim(balanced < 1.3, string.format("the stages are balanced: H2D %.2f, kernel %.2f, D2H %.2f ms (largest/smallest %.2f)",
  pinned4.h2d_ms, pinned4.kernel_ms, pinned4.d2h_ms, balanced))
lesson:claim(pinned4.speedup >= 0.8 * pinned4.ideal_speedup, string.format(
  "pipelined streams hide transfers: pinned, 4 streams %.2fx over one stream, %.0f%% of the ideal %.2fx",
  pinned4.speedup, pinned4.of_ideal_pct, pinned4.ideal_speedup))
lesson:claim(pageable4.of_ideal_pct < 0.8 * pinned4.of_ideal_pct, string.format(
  "pageable memory defeats it: pageable, 4 streams %.2fx, %.0f%% of its ideal %.2fx", pageable4.speedup,
  pageable4.of_ideal_pct, pageable4.ideal_speedup))
lesson:report("with pinned memory, 4 streams hide the copies behind the kernel; from pageable memory they do not")
