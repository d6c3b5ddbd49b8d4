-- Short work timed as the GPU runs it (issue 26): a 3-kernel sequence of about 15 µs and a single
-- kernel of about 3 µs, measured by gpuexp in auto mode, against (a) ncu's gpu__time_duration of
-- each kernel plus the gaps between back-to-back kernels in a --trace timeline, and (b) the C peer
-- bench/short_sequence.c running them back to back between two events. Modes:
--   measure DIR   gpuexp's numbers (auto, and hot for contrast) into DIR/gpuexp.json
--   ncu           each run 10 times, for ncu to profile every kernel
--   trace         each timed back to back (graphs of 20 runs), for --trace: the gaps
--   compare DIR   reads DIR/gpuexp.json, DIR/c.txt, DIR/ncu.csv, DIR/trace.json; prints the comparison
-- bench/run_short_sequence.sh runs them all.
local mode, dir = arg[1] or "measure", arg[2] or "."
local json = require("cjson")
local ncu_csv = dofile(gpuexp.script_dir .. "/ncu_csv.lua")

local read_all = require("gpuexp.store.meta").read_all
local function read(path) return (assert(read_all(path), "cannot read " .. path)) end

local function median(list) return gpuexp.stats(list).median end

if mode == "compare" then
  local ours = json.decode(read(dir .. "/gpuexp.json"))
  local c = {}
  for name, value in read(dir .. "/c.txt"):gmatch("(%S+) (%S+)") do c[name] = tonumber(value) end
  -- the sequence's 30 launches come first (scale, add, add), then the single kernel's 10
  local rows = ncu_csv.times(dir .. "/ncu.csv")
  assert(#rows == 40, "expected 40 profiled launches (30 of the sequence, 10 single), got " .. #rows)
  local per_position = {{}, {}, {}}
  for i = 1, 30 do table.insert(per_position[(i - 1) % 3 + 1], rows[i]) end
  local single_ncu = median({table.unpack(rows, 31, 40)})
  local ncu_sum = median(per_position[1]) + median(per_position[2]) + median(per_position[3])
  -- the gaps, from the traced back-to-back runs: the sequence's kernels are scale/add/add with
  -- n = 2M, the single kernel's are scale alone (told apart by their order: the sequence first)
  local events = json.decode(read(dir .. "/trace.json"))
  local kernels = {}
  for _, e in ipairs(events) do
    if e.ph == "X" and e.cat == "kernel" and not e.name:match("^gx_") then kernels[#kernels + 1] = e end
  end
  table.sort(kernels, function(a, b) return a.ts < b.ts end)
  local marker = #kernels -- the single kernel's part: the trailing run of consecutive scales
  while marker > 1 and kernels[marker - 1].name:match("scale") do marker = marker - 1 end
  local sequence_gaps, single_gaps = {}, {}
  for i = 2, marker - 1 do
    sequence_gaps[#sequence_gaps + 1] = (kernels[i].ts - (kernels[i - 1].ts + kernels[i - 1].dur)) / 1000
  end
  for i = marker + 1, #kernels do
    single_gaps[#single_gaps + 1] = (kernels[i].ts - (kernels[i - 1].ts + kernels[i - 1].dur)) / 1000
  end
  assert(#sequence_gaps > 0 and #single_gaps > 0, "the trace has no kernels of graph replays: " .. #kernels .. " kernels")
  local sequence_predicted = ncu_sum + 3 * median(sequence_gaps) -- three gaps per run, back to back
  local single_predicted = single_ncu + median(single_gaps)
  local function line(what, value, against, label)
    local pct = 100 * (value / against - 1)
    print(string.format("  %-44s %9.4f ms  vs %-26s %9.4f ms  %+6.2f%%  %s", what, value, label, against, pct,
      math.abs(pct) <= 10 and "ok" or "OUTSIDE 10%"))
    return math.abs(pct) <= 10
  end
  print(string.format("GPU: %s", ours.gpu))
  print(string.format("sequence: ncu %.4f + %.4f + %.4f = %.4f ms, trace gap %.4f ms x 3", median(per_position[1]),
    median(per_position[2]), median(per_position[3]), ncu_sum, median(sequence_gaps)))
  local all = true
  all = line("gpuexp sequence:measure{} (mode " .. ours.sequence.mode .. ")", ours.sequence.median_ms,
    sequence_predicted, "ncu + trace gaps") and all
  all = line("gpuexp sequence:measure{} (mode " .. ours.sequence.mode .. ")", ours.sequence.median_ms,
    c.c_sequence_back_to_back_ms, "C back to back") and all
  print(string.format("  (per-run events: gpuexp hot %.4f ms, C %.4f ms; host share seen by auto %.1f%%)",
    ours.sequence_hot.median_ms, c.c_sequence_per_run_events_ms, ours.sequence.host_share_pct or 0))
  print(string.format("single kernel: ncu %.4f ms, trace gap %.4f ms", single_ncu, median(single_gaps)))
  all = line("gpuexp kernel:measure{} (mode " .. ours.single.mode .. ")", ours.single.median_ms, single_predicted,
    "ncu + trace gap") and all
  all = line("gpuexp kernel:measure{} (mode " .. ours.single.mode .. ")", ours.single.median_ms,
    c.c_single_back_to_back_ms, "C back to back") and all
  print(string.format("  (per-run events: gpuexp hot %.4f ms, C %.4f ms)", ours.single_hot.median_ms,
    c.c_single_per_run_events_ms))
  print(string.format("blocking-kernel timeouts: gpuexp sequence %s, single %s; C sequence %s, single %s",
    tostring(ours.sequence.block_timeouts), tostring(ours.single.block_timeouts),
    tostring(c.c_sequence_block_timeouts), tostring(c.c_single_block_timeouts)))
  if ours.sequence.timing_note or ours.single.timing_note then
    print("note: " .. tostring(ours.sequence.timing_note or ours.single.timing_note))
  end
  print(all and "all within 10%: yes" or "all within 10%: NO")
  return
end

if gpuexp.plan then
  print("bench/short_sequence.lua times on a GPU: an offline plan has nothing to compare")
  return
end
local dev = gpuexp.device()
local program = gpuexp.compile{file = "bench/short_kernels.cu"}
local scale, add = program:kernel("scale"), program:kernel("add")
local n, single_n = 2 * 1024 * 1024, 512 * 1024 -- as bench/short_sequence.c
local a, b, c = dev:alloc("f32", n):fill(1), dev:alloc("f32", n):fill(2), dev:alloc("f32", n)
local grid = 1056 -- 8 blocks per SM of an H100 or H200, as the C peer
local sequence = gpuexp.sequence(function()
  scale:launch{grid = grid, block = 256, args = {c, a, gpuexp.f32(2), gpuexp.u64(n)}}
  add:launch{grid = grid, block = 256, args = {c, b, gpuexp.u64(n)}}
  add:launch{grid = grid, block = 256, args = {c, a, gpuexp.u64(n)}}
end, {name = "scale_add_add"})
local single = {grid = grid, block = 256, args = {c, a, gpuexp.f32(2), gpuexp.u64(single_n)}}

if mode == "ncu" then
  for _ = 1, 10 do sequence:run() end
  for _ = 1, 10 do scale:launch(single) end
  dev:synchronize()
elseif mode == "trace" then
  sequence:time{warmup = 2, reps = 5, graph = 20}
  scale:bind(single):time{warmup = 2, reps = 5, graph = 20}
else
  local function keep(r)
    return {median_ms = r.median_ms, mode = r.mode, noise_pct = r.noise_pct, per_run_ms = r.per_run_ms,
      back_to_back_ms = r.back_to_back_ms, host_share_pct = r.host_share_pct, launches_per_sample = r.launches_per_sample,
      block_timeouts = r.block_timeouts, timing_note = r.timing_note}
  end
  local result = {
    gpu = dev.name,
    sequence = keep(sequence:measure{}),
    sequence_hot = keep(sequence:measure{mode = "hot"}),
    single = keep(scale:measure(single)),
    single_hot = keep(scale:measure{grid = grid, block = 256, args = single.args, mode = "hot"}),
  }
  local file = assert(io.open(dir .. "/gpuexp.json", "w"))
  file:write(json.encode(result))
  file:close()
  print(string.format("sequence auto %.4f ms (%s), hot %.4f ms; single auto %.4f ms (%s), hot %.4f ms",
    result.sequence.median_ms, result.sequence.mode, result.sequence_hot.median_ms, result.single.median_ms,
    result.single.mode, result.single_hot.median_ms))
end
