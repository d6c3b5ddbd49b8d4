-- A sequence of three launches (scale, add, add over 128 MB arrays: the three steps of one
-- operation) timed as one unit, against ncu's gpu__time_duration of each kernel plus the launch
-- gaps a --trace timeline measures between them. Modes:
--   measure DIR   gpuexp's numbers: the sequence hot and in graph mode, each kernel alone (DIR/gpuexp.json)
--   ncu           the sequence run 10 times, for ncu to profile each kernel
--   trace         the sequence timed 50 times hot, for --trace (the gaps between its kernels)
--   compare DIR   reads DIR/gpuexp.json, DIR/ncu.csv and DIR/trace.json and prints the comparison
-- bench/run_sequence.sh runs all four.
local mode, dir = arg[1] or "measure", arg[2] or "."
local json = require("cjson")
local ncu_csv = dofile(gpuexp.script_dir .. "/ncu_csv.lua")

local read_all = require("gpuexp.store.meta").read_all
local function read(path) return (assert(read_all(path), "cannot read " .. path)) end

local function median(list) return gpuexp.stats(list).median end

if mode == "compare" then
  local ours = json.decode(read(dir .. "/gpuexp.json"))
  -- ncu's launches in order (scale, add, add, scale, ...): by their place in the sequence
  local per_position = {{}, {}, {}}
  for i, ms in ipairs(ncu_csv.times(dir .. "/ncu.csv")) do
    local list = per_position[(i - 1) % 3 + 1]
    list[#list + 1] = ms
  end
  -- the gaps: in each run of the traced sequence, the start of a kernel after the end of the one before
  local events = json.decode(read(dir .. "/trace.json"))
  local kernels = {}
  for _, e in ipairs(events) do
    if e.ph == "X" and e.cat == "kernel" and not e.name:match("^gx_") then kernels[#kernels + 1] = e end
  end
  table.sort(kernels, function(a, b) return a.ts < b.ts end)
  local gaps, spans = {{}, {}}, {}
  for first = 1, #kernels - 2, 3 do
    local a, b, c = kernels[first], kernels[first + 1], kernels[first + 2]
    gaps[1][#gaps[1] + 1] = (b.ts - (a.ts + a.dur)) / 1000
    gaps[2][#gaps[2] + 1] = (c.ts - (b.ts + b.dur)) / 1000
    spans[#spans + 1] = (c.ts + c.dur - a.ts) / 1000
  end
  local ncu_sum = 0
  for p = 1, 3 do ncu_sum = ncu_sum + median(per_position[p]) end
  local gap_sum = median(gaps[1]) + median(gaps[2])
  local predicted = ncu_sum + gap_sum
  local hot, graph = ours.sequence_hot_ms, ours.sequence_graph_ms
  print(string.format("ncu gpu__time_duration, median of %d runs: %.4f + %.4f + %.4f = %.4f ms", #per_position[1],
    median(per_position[1]), median(per_position[2]), median(per_position[3]), ncu_sum))
  print(string.format("launch gaps from the trace (median of %d runs): %.4f + %.4f = %.4f ms; first kernel start to last end %.4f ms",
    #gaps[1], median(gaps[1]), median(gaps[2]), gap_sum, median(spans)))
  print(string.format("sequence hot (events):   %.4f ms against ncu + gaps %.4f ms: %+.2f%%", hot, predicted,
    100 * (hot / predicted - 1)))
  print(string.format("sequence graph (events): %.4f ms against ncu alone %.4f ms: %+.2f%%", graph, ncu_sum,
    100 * (graph / ncu_sum - 1)))
  print(string.format("each kernel alone (gpuexp hot): %.4f, %.4f, %.4f ms", ours.kernels_ms[1], ours.kernels_ms[2],
    ours.kernels_ms[3]))
  local within = math.abs(hot / predicted - 1) < 0.05 and math.abs(graph / ncu_sum - 1) < 0.05
  print(within and "within 5%: yes" or "within 5%: NO")
  return
end

local dev = gpuexp.device()
local program = gpuexp.compile{file = "tests/gpu/own/reduce_kernels.cuh"}
local scale, add = program:kernel("own::scale"), program:kernel("own::add")
local q = 32 * 1024 * 1024
local a, b, c = dev:alloc("f32", q):random{seed = 1}, dev:alloc("f32", q):random{seed = 2}, dev:alloc("f32", q)
local grid = dev.sm_count * 8
local launches = {
  {kernel = scale, args = {c, a, gpuexp.f32(2), gpuexp.u64(q)}},
  {kernel = add, args = {c, b, gpuexp.u64(q)}},
  {kernel = add, args = {c, a, gpuexp.u64(q)}},
}
local sequence = gpuexp.sequence(function()
  for _, l in ipairs(launches) do l.kernel:launch{grid = grid, block = 256, args = l.args} end
end, {name = "scale_add_add"})

if mode == "ncu" then
  sequence:run() -- warm
  for _ = 1, 10 do sequence:run() end
elseif mode == "trace" then
  sequence:time{warmup = 5, reps = 50}
else
  local hot = sequence:measure{mode = "hot"}
  local graph = sequence:measure{mode = "graph", graph_launches = 10}
  local kernels_ms = {}
  for i, l in ipairs(launches) do
    kernels_ms[i] = l.kernel:measure{grid = grid, block = 256, args = l.args, mode = "hot"}.median_ms
  end
  local result = {sequence_hot_ms = hot.median_ms, sequence_graph_ms = graph.median_ms, kernels_ms = kernels_ms,
    hot_noise_pct = hot.noise_pct, graph_noise_pct = graph.noise_pct, gpu = dev.name}
  local file = assert(io.open(dir .. "/gpuexp.json", "w"))
  file:write(json.encode(result))
  file:close()
  print(string.format("sequence hot %.4f ms (noise %.2f%%), graph %.4f ms; kernels alone %.4f %.4f %.4f ms",
    hot.median_ms, hot.noise_pct, graph.median_ms, kernels_ms[1], kernels_ms[2], kernels_ms[3]))
end
