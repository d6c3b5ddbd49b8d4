-- The nightly's counter set (api/counters.lua) against GH100's metric list, without a GPU: every
-- name is valid on the chip the H100 and H200 carry, and the set takes five replay passes (the
-- cost a night pays); then the columns it derives from collected values, the stall reasons'
-- shares, the stack frame and the launch's shape.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local counters = require("gpuexp.api.counters")
local binary = assert(arg[1], "the gpuexp binary is the first argument")

local usable, problem = pcall(gpuexp.metric_info, "smsp__inst_executed.sum", "GH100")
if not usable then
  local why = type(problem) == "table" and problem.message or problem
  io.stderr:write("SKIP: CUPTI's host side is not here (" .. tostring(why) .. ")\n")
  os.exit(77)
end
T.eq(#counters.names, 32, "the set's metrics")
for _, name in ipairs(counters.names) do
  local valid, info = pcall(gpuexp.metric_info, name, "GH100")
  T.ok(valid, name .. " on GH100: " .. tostring(type(info) == "table" and info.message or info))
end
local ws = T.workspace(binary)
local code, stdout, stderr = ws.run("metrics --chip GH100 --check " .. table.concat(counters.names, " "))
T.eq(code, 0, "gpuexp metrics --check: " .. stderr)
T.eq((stdout .. stderr):match("(%d+ metric%(s%) on GH100: %d+ replay pass%(es%))"), "32 metric(s) on GH100: 5 replay pass(es)",
  "the set's replay passes on GH100")

-- the columns from collected values: ratios of sums, requests summed, none for a ratio over 0
local values = {["smsp__inst_executed.sum"] = 1000, ["smsp__thread_inst_executed.sum"] = 16000,
  ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 100, ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 400,
  ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] = 100, ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = 3200,
  ["smsp__inst_executed_op_shared_ld.sum"] = 50, ["smsp__inst_executed_op_shared_st.sum"] = 50,
  ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 1600, ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] = 50,
  ["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] = 41.5, ["l1tex__t_sector_hit_rate.pct"] = 12.5,
  ["smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"] = 3.0,
  ["smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"] = 1.0}
local row = counters.fields(values, {registers = 15, spill_store_bytes = 0, spill_load_bytes = 0, static_shared_bytes = 4096}, 0)
T.eq(row.ctr_lanes_per_instruction, 16.0, "lanes per instruction")
T.eq(row.ctr_load_sectors_per_request, 4.0, "sectors per load")
T.eq(row.ctr_store_sectors_per_request, 32.0, "sectors per store")
T.eq(row.ctr_shared_requests, 100, "shared requests")
T.eq(row.ctr_shared_wavefronts_per_request, 16.5, "wavefronts per shared request")
T.eq(row.ctr_tensor_pct, 41.5, "tensor pipe")
T.eq(row.ctr_l1_hit_pct, 12.5, "L1 hit rate")
T.eq(row.ctr_stall, "mio_throttle", "the dominant stall")
T.eq(row.ctr_shared_bytes, 4096, "shared bytes")
T.eq(row.ctr_stall_mio_throttle_pct, nil, "no stall shares without the warp cycles per instruction")
-- the stall reasons' shares of the warp cycles per issued instruction (all reasons, selected too)
values["smsp__average_warp_latency_per_inst_issued.ratio"] = 8.0
values["smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"] = 2.0
values["sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"] = 91.0
values["l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"], values["l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"] = 30, 12
values["lts__t_requests_op_atom.sum"], values["lts__t_requests_op_red.sum"] = 5, 1000
values["sm__cycles_active.avg.pct_of_peak_sustained_elapsed"] = 49.5
row = counters.fields(values, {registers = 40, spill_store_bytes = 0, spill_load_bytes = 0, stack_frame_bytes = 64,
  static_shared_bytes = 0}, 0, counters.shape(66, 256, 8, 132))
T.eq(row.ctr_stall_cycles, 8.0, "warp cycles per issued instruction")
T.eq(row.ctr_stall_mio_throttle_pct, 37.5, "mio_throttle's share")
T.eq(row.ctr_stall_barrier_pct, 25.0, "barrier's share")
T.eq(row.ctr_stall_wait_pct, 12.5, "wait's share")
T.eq(row.ctr_stall_sleeping_pct, nil, "a reason not collected has no share (not 0)")
T.eq(row.ctr_fp64_pct, 91.0, "the FP64 pipe")
T.eq(row.ctr_local_requests, 42, "local memory requests, loads and stores")
T.eq(row.ctr_atomic_requests, 1005, "atomic and reduction requests at the L2")
T.eq(row.ctr_sm_active_pct, 49.5, "SMs active")
T.eq(row.ctr_stack_bytes, 64, "the stack frame")
T.eq(row.ctr_spill_bytes, 0, "no spill (the stack frame is apart)")
-- the launch's shape: 1056 blocks of 256 threads fill 132 SMs of 8 blocks once; 66 give half of them one
T.eq(row.ctr_blocks, 66, "blocks")
T.eq(row.ctr_block_threads, 256, "threads a block")
T.eq(row.ctr_waves, 0.0625, "waves")
T.eq(row.ctr_sms_busy_pct, 50.0, "half the SMs given a block")
local full = counters.shape({1056, 1, 1}, {256}, 8, 132)
T.eq(full.ctr_waves, 1.0, "one wave")
T.eq(full.ctr_sms_busy_pct, 100.0, "every SM")
local grid2 = counters.shape({64, 64}, {32, 8})
T.eq(grid2.ctr_blocks, 4096, "a 2-D grid's blocks")
T.eq(grid2.ctr_block_threads, 256, "a 2-D block's threads")
T.eq(grid2.ctr_waves, nil, "no waves without the occupancy and the SMs")
for _, reason in ipairs(counters.STALLS) do
  local name = "smsp__average_warps_issue_stalled_" .. reason .. "_per_issue_active.ratio"
  local collected = false
  for _, n in ipairs(counters.names) do collected = collected or n == name end
  T.ok(collected, reason .. " is collected")
end
values["smsp__inst_executed_op_shared_ld.sum"], values["smsp__inst_executed_op_shared_st.sum"] = 0, 0
values["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 0
values["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] = 0
row = counters.fields(values)
T.eq(row.ctr_shared_requests, 0, "no shared request: 0 requests")
T.eq(row.ctr_shared_wavefronts_per_request, nil, "no shared request: no wavefronts per request (not 0)")
values["smsp__thread_inst_executed.sum"] = nil
T.eq(counters.fields(values).ctr_lanes_per_instruction, nil, "a metric missing: no ratio")
-- every column the set declares is one the rows can carry
for _, column in ipairs(counters.COLUMNS) do T.ok(column:match("^ctr_"), column .. " is a ctr_ column") end
T.done()
