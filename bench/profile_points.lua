-- 24 launches of the shipped study kernels, 10 metrics each. Modes:
--   gpuexp --out X.csv bench/profile_points.lua all    collect every point's metrics in-process, point by point
--   gpuexp --out X.csv bench/profile_points.lua batch  the same in one batch (gpuexp.metrics: one replay)
--   gpuexp bench/profile_points.lua one K               launch point K once (for ncu run once per point)
--   gpuexp bench/profile_points.lua every               launch every point once (for one ncu process)
--   (batch R and every R: the 24 points R times over, R x 24 launches)
-- bench/run_metrics.sh runs both and compares the numbers and the wall times.
local script_started = gpuexp.clock()
local mode, which = arg[1] or "all", tonumber(arg[2])
local METRICS = {
  "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
  "lts__t_sector_hit_rate.pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__inst_executed.sum",
  "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
}
if mode == "names" then print(table.concat(METRICS, ",")) return end

local dev = gpuexp.device()
local saxpy = gpuexp.compile{file = "kernels/saxpy.cu"}
local bank = gpuexp.compile{file = "kernels/bank_conflicts.cu"}
local reduction = gpuexp.compile{file = "kernels/reduction.cu"}
local n = 16 * 1024 * 1024
local x = dev:alloc("f32", n):random{seed = 1, min = -1, max = 1}
local y = dev:alloc("f32", n):random{seed = 2, min = -1, max = 1}
local small_in, small_out = dev:alloc("f32", 8192):random{seed = 3}, dev:alloc("f32", 8192)
local sink = dev:alloc("f32", 264 * 256)
local ints, total = dev:alloc("i32", 4 << 20):random{seed = 4, min = 0, max = 9}, dev:alloc("i32", 1):fill(0)

local points = {}
for _, variant in ipairs({"minimal", "balanced", "sophisticated", "vectorized"}) do
  for _, block in ipairs({128, 256, 512}) do
    local threads = variant == "vectorized" and n // 4 or n
    points[#points + 1] = {name = variant .. "/" .. block, kernel = saxpy:kernel(variant),
      launch = {grid = threads // block, block = block, args = {y, x, gpuexp.f32(2.5), gpuexp.i32(n)}}}
  end
end
for _, name in ipairs({"no_conflict", "two_way_conflict"}) do
  points[#points + 1] = {name = name, kernel = bank:kernel(name),
    launch = {grid = 32, block = 256, args = {small_out, small_in, gpuexp.i32(8192)}}}
end
for _, sp in ipairs({{1, 0}, {2, 0}, {32, 0}, {32, 1}}) do
  points[#points + 1] = {name = string.format("strided_read/s%d/p%d", sp[1], sp[2]), kernel = bank:kernel("strided_read"),
    launch = {grid = 264, block = 256, shared = 4 * 32 * (32 + sp[2]),
      args = {sink, gpuexp.i32(sp[1]), gpuexp.i32(sp[2]), gpuexp.i32(256)}}}
end
for _, variant in ipairs({"atomic_per_thread", "atomic_per_warp", "atomic_per_block"}) do
  for _, block in ipairs({128, 256}) do
    points[#points + 1] = {name = variant .. "/" .. block, kernel = reduction:kernel(variant),
      launch = {grid = (4 << 20) // block, block = block, args = {total, ints, gpuexp.i32(4 << 20)}}}
  end
end
assert(#points == 24)
-- batch R / every R: the 24 points R times over (R x 24 launches), to see the cost per extra point
local repeats = (mode == "batch" or mode == "every") and which or 1
for r = 2, repeats do
  for i = 1, 24 do points[#points + 1] = points[i] end
end

if mode == "one" or mode == "every" then
  for k = mode == "one" and which or 1, mode == "one" and which or #points do
    local p = assert(points[k], "point 1..24")
    p.kernel:launch(p.launch)
  end
  dev:synchronize()
  return
end

local columns = {"point", "name", "passes", "seconds"}
for _, m in ipairs(METRICS) do columns[#columns + 1] = m end
if mode == "batch" then
  local started = gpuexp.clock()
  io.stdout:write(string.format("gpuexp_batch setup (compile from the cache, 160 MB of buffers with data) %.3f s\n",
    started - script_started))
  pcall(gpuexp.metric_info, "gpu__time_duration.sum") -- CUPTI loaded, the chip's metric tables read
  io.stdout:write(string.format("gpuexp_batch CUPTI host tables %.3f s\n", gpuexp.clock() - started))
  local spec = {metrics = METRICS}
  for i, p in ipairs(points) do
    local launch = {kernel = p.kernel}
    for k, v in pairs(p.launch) do launch[k] = v end
    spec[i] = launch
  end
  local values, info = assert(gpuexp.metrics(spec))
  local seconds = gpuexp.clock() - started
  local writer = gpuexp.csv.open(gpuexp.out or "results/profile_points_batch.csv")
  writer:header(columns)
  for i, v in ipairs(values) do
    v.point, v.name, v.passes = i, points[i].name, info.passes
    writer:row(v)
  end
  writer:close()
  local t = info.timing
  print(string.format("gpuexp_batch launches %d passes %d batches %d seconds %.3f (setup %.3f, between passes %.3f, " ..
    "start %.3f, launches %.3f, stop %.3f, decode %.3f, evaluate %.3f)", #values, info.passes, info.batches, seconds,
    t.setup_s, t.prepare_s, t.start_s, t.launch_s, t.stop_s, t.decode_s, t.evaluate_s))
  print(string.format("gpuexp_batch script total %.3f s", gpuexp.clock() - script_started))
  return
end

local started = gpuexp.clock()
local timing, passes = {}, 0
local rows = gpuexp.sweep{
  name = "profile_points", device = dev,
  axes = {{"point", (function() local t = {} for i = 1, #points do t[i] = i end return t end)()}},
  columns = (function() local c = {"name", "passes", "seconds"} for _, m in ipairs(METRICS) do c[#c + 1] = m end return c end)(),
  run = function(p)
    local point = points[p.point]
    local spec = {metrics = METRICS}
    for k, v in pairs(point.launch) do spec[k] = v end
    local values, info = point.kernel:collect(spec)
    assert(values, info)
    for key, value in pairs(info.timing) do timing[key] = (timing[key] or 0) + value end
    passes = passes + info.passes
    values.name, values.passes, values.seconds = point.name, info.passes, nil
    return values
  end,
}
print(string.format("gpuexp_points %d gpuexp_seconds %.3f, %d passes: setup %.3f, between passes %.3f, start %.3f, " ..
  "launches %.3f, stop %.3f, decode %.3f, evaluate %.3f (s)", #rows, gpuexp.clock() - started, passes, timing.setup_s,
  timing.prepare_s, timing.start_s, timing.launch_s, timing.stop_s, timing.decode_s, timing.evaluate_s))
