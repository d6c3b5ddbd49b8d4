-- The nightly's counter set (api/counters.lua) against GH100's metric list, without a GPU: every
-- name is valid on the chip the H100 and H200 carry, and the set takes four replay passes (the
-- cost a night pays); then the columns it derives from collected values.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local counters = require("gpuexp.api.counters")
local binary = assert(arg[1], "the gpuexp binary is the first argument")

local usable, problem = pcall(gpuexp.metric_info, "smsp__inst_executed.sum", "GH100")
if not usable then
  local why = type(problem) == "table" and problem.message or problem
  io.stderr:write("SKIP: CUPTI's host side is not here (" .. tostring(why) .. ")\n")
  os.exit(77)
end
T.eq(#counters.names, 23, "the set's metrics")
for _, name in ipairs(counters.names) do
  local valid, info = pcall(gpuexp.metric_info, name, "GH100")
  T.ok(valid, name .. " on GH100: " .. tostring(type(info) == "table" and info.message or info))
end
local ws = T.workspace(binary)
local code, stdout, stderr = ws.run("metrics --chip GH100 --check " .. table.concat(counters.names, " "))
T.eq(code, 0, "gpuexp metrics --check: " .. stderr)
T.eq((stdout .. stderr):match("(%d+ metric%(s%) on GH100: %d+ replay pass%(es%))"), "23 metric(s) on GH100: 4 replay pass(es)",
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
