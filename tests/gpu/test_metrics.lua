-- Hardware counters in-process: known kernels give known counts, replay passes leave in-place
-- results as one launch would, and achieved occupancy stays within (0, theoretical].
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local root = gpuexp.script_dir .. "/../.."

-- SAXPY: exact instruction counts and DRAM bytes, and the data after 9+ replay passes
local saxpy = gpuexp.compile{file = root .. "/kernels/saxpy.cu"}:kernel("minimal")
local n = 16 * 1024 * 1024
local x = dev:alloc("f32", n):random{seed = 1, min = -1, max = 1}
local y = dev:alloc("f32", n):random{seed = 2, min = -1, max = 1}
local y_once = dev:alloc("f32", n):copy_from(y)
local args = {y, x, gpuexp.f32(2.5), gpuexp.i32(n)}
saxpy:launch{grid = n // 256, block = 256, args = {y_once, x, gpuexp.f32(2.5), gpuexp.i32(n)}}
local m, info = saxpy:metrics{grid = n // 256, block = 256, args = args,
  metrics = {"speed_of_light", "roofline", "occupancy", "dram__bytes_read.sum", "dram__bytes_write.sum"}}
T.ok(m, "metrics collected: " .. tostring(info))
T.ok(info.passes >= 5, "several replay passes: " .. info.passes)
T.ok((y:compare(y_once, {rtol = 0, atol = 0})), "after the replay, y is what one launch gives")
T.eq(m["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"], n, "one FFMA per element")
T.eq(m.fp32_flop, 2 * n, "FLOPs counted as ncu does")
T.near(m["dram__bytes_read.sum"] / (8 * n), 1, 0.05, "DRAM reads: x and y once")
-- writes still dirty in L2 when the kernel ends are not written during it (ncu counts the same way:
-- about 0.73 of y's bytes for this launch on an H200), so the bound is loose from below
local written = m["dram__bytes_write.sum"] / (4 * n)
T.ok(written > 0.5 and written < 1.05, "DRAM writes: at most y once, most of it: " .. written)
local theoretical = saxpy:occupancy{block = 256}.occupancy_pct
T.ok(m.achieved_occupancy_pct > 0 and m.achieved_occupancy_pct <= theoretical + 1e-9,
  "achieved occupancy " .. m.achieved_occupancy_pct .. " within (0, " .. theoretical .. "]")
T.ok(m["gpu__time_duration.sum"] > 0, "duration")
T.eq(info.units["dram__bytes_read.sum"], "byte", "units")
T.ok(m["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"] > 30, "SAXPY is memory-heavy")

-- a batch (gpuexp.metrics): one replay for several launches gives each launch's own values, the
-- same as collecting them one by one, and leaves shared buffers as the launches in order would
local y_batch = dev:alloc("f32", n):copy_from(y)
local batch_names = {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "dram__bytes_read.sum",
  "gpu__time_duration.sum", "lts__t_sector_hit_rate.pct"}
local batch_args = {y_batch, x, gpuexp.f32(2.5), gpuexp.i32(n)}
local half = {y_batch, x, gpuexp.f32(2.5), gpuexp.i32(n // 2)}
local values, batch_info = gpuexp.metrics{{kernel = saxpy, grid = n // 256, block = 256, args = batch_args},
  {kernel = saxpy, grid = n // 512, block = 256, args = half},
  {kernel = saxpy, grid = n // 256, block = 256, args = batch_args}, metrics = batch_names}
T.ok(values, "batch collected: " .. tostring(batch_info))
T.eq(#values, 3, "a value table per launch")
T.eq(batch_info.batches, 1, "one batch")
T.eq(values[1]["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"], n, "launch 1: one FFMA per element")
T.eq(values[2]["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"], n // 2, "launch 2: half the elements")
T.eq(values[3]["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"], n, "launch 3")
T.near(values[1]["dram__bytes_read.sum"] / (8 * n), 1, 0.05, "launch 1 reads x and y once: the L2 was flushed")
T.near(values[3]["dram__bytes_read.sum"] / values[1]["dram__bytes_read.sum"], 1, 0.02, "launch 3 as cold as launch 1")
T.near(values[1]["gpu__time_duration.sum"] / m["gpu__time_duration.sum"], 1, 0.1, "duration as collected alone")
-- y_batch: launch 1, then the first half again, then all again: as three launches in order
local expected = dev:alloc("f32", n):copy_from(y)
for _, count in ipairs({n, n // 2, n}) do
  saxpy:launch{grid = count // 256, block = 256, args = {expected, x, gpuexp.f32(2.5), gpuexp.i32(count)}}
end
T.ok((y_batch:compare(expected, {rtol = 0, atol = 0})), "after the batch's replay passes, y is what the three launches give")

-- the seed's bank-conflict kernels
local bank = gpuexp.compile{file = root .. "/kernels/bank_conflicts.cu"}
local size = 8 * 1024
local input = dev:alloc("f32", size):random{seed = 3}
local output = dev:alloc("f32", size)
local result = {}
for _, name in ipairs({"no_conflict", "two_way_conflict"}) do
  result[name] = bank:kernel(name):metrics{grid = size // 256, block = 256, args = {output, input, gpuexp.i32(size)},
    metrics = "bank_conflicts"}
end
T.ok(result.no_conflict.shared_ld_ways < 1.1 and result.no_conflict.shared_st_ways < 1.1, "no conflict: 1 wavefront per request")
T.near(result.two_way_conflict.shared_ld_ways, 2, 0.1, "two-way loads")
T.near(result.two_way_conflict.shared_st_ways, 2, 0.1, "two-way stores")
T.ok(result.two_way_conflict["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] >= size // 32, "one conflict per warp load")
T.ok(result.no_conflict["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
  < result.two_way_conflict["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], "fewer conflicts without the stride")

-- atomics: the total after the replay is one launch's sum
local reduction = gpuexp.compile{file = root .. "/kernels/reduction.cu"}:kernel("atomic_per_thread")
local ints = dev:alloc("i32", 1 << 20):fill(3)
local total = dev:alloc("i32", 1):fill(0)
local stalls = reduction:metrics{grid = (1 << 20) // 256, block = 256, args = {total, ints, gpuexp.i32(1 << 20)},
  metrics = "warp_stalls"}
T.eq(total[1], 3 * (1 << 20), "in-place atomics restored between passes")
T.ok(stalls.dominant_stall, "a dominant stall")

-- misuse raises; the message names the closest valid names
T.raises(function() saxpy:metrics{grid = 1, block = 32, args = args, metrics = {"dram__byts_read.sum"}} end,
  "unknown metric 'dram__byts_read.sum'")
T.raises(function() saxpy:metrics{grid = 1, block = 32, args = args, metrics = {"launch__occupancy_limit_warps"}} end,
  "computed by ncu")
-- every preset is valid on this chip
for name in pairs(gpuexp.metric_presets) do
  local names = gpuexp.expand_metrics(name, info.chip)
  T.ok(#names > 0, "preset " .. name)
  T.ok(gpuexp.metric_passes(names) >= 1, "passes for " .. name)
end
T.done()
