-- Metric names without a GPU: CUPTI's host API from a chip name. Presets, validation with the
-- closest names, pass counts, and the values derived from raw counters.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local metrics = require("gpuexp.api.metrics")

local chips = gpuexp.metric_chips()
local known = {}
for _, chip in ipairs(chips) do known[chip] = true end
T.ok(known.GH100 and known.GA100 and known.GB100, "Hopper, Ampere and Blackwell chips known")

-- presets: every name valid on GH100; chip-specific stall reasons dropped elsewhere
for name, list in pairs(gpuexp.metric_presets) do
  for _, metric in ipairs(list) do
    if not (metric:find("gmma") or metric:find("imc_miss")) then
      T.ok(pcall(gpuexp.metric_info, metric, "GH100"), name .. ": " .. metric .. " valid on GH100")
    end
  end
end
local function has(list, needle)
  for _, item in ipairs(list) do if item:find(needle, 1, true) then return true end end
  return false
end
T.ok(has(gpuexp.expand_metrics("warp_stalls", "GH100"), "_gmma_"), "gmma stalls on Hopper")
T.ok(not has(gpuexp.expand_metrics("warp_stalls", "GA100"), "_gmma_"), "no gmma before Hopper")
T.ok(not has(gpuexp.expand_metrics("warp_stalls", "GB100"), "imc_miss"), "no imc_miss on Blackwell")
local mixed = gpuexp.expand_metrics({"bank_conflicts", "dram__bytes_read.sum", "bank_conflicts"}, "GH100")
T.eq(#mixed, 7, "presets and names mixed, duplicates dropped")
-- pass counts from the brief's GH100 measurements
T.eq(gpuexp.metric_passes(gpuexp.metric_presets.speed_of_light, "GH100"), 9, "speed of light: 9 passes on GH100")
T.eq(gpuexp.metric_passes(gpuexp.metric_presets.occupancy, "GH100"), 1, "occupancy: 1 pass")

local info = gpuexp.metric_info("dram__bytes_read.sum", "GH100")
T.eq(info.unit, "byte", "unit"); T.eq(info.type, "counter", "type")
T.raises(function() gpuexp.metric_info("sm__warps_actve.avg.pct_of_peak_sustained_active", "GH100") end,
  "unknown metric 'sm__warps_actve.avg.pct_of_peak_sustained_active' on GH100; did you mean: sm__warps_active")
T.raises(function() gpuexp.metric_info("sm__throughput.avg", "GH100") end,
  "closest valid: sm__throughput.avg.pct_of_peak_sustained_active")
T.raises(function() gpuexp.metric_info("launch__occupancy_limit_registers", "GH100") end,
  "computed by ncu from the launch, not a hardware counter CUPTI can collect: kernel:occupancy{} gives the same limits")
T.raises(function() gpuexp.metric_info("dram__bytes_read.sum", "GX999") end, "unknown chip 'GX999'")
T.ok(#gpuexp.metric_names("GH100") > 3000, "GH100 base metrics listed")

-- derived values, on synthetic counters
local d = metrics.derive{
  ["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] = 100, ["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"] = 10,
  ["smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"] = 5, ["dram__bytes.sum"] = 43, ["gpu__time_duration.sum"] = 1000,
  ["smsp__sass_inst_executed_op_shared_ld.sum"] = 256, ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 512,
  ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 256,
  ["smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio"] = 30,
  ["smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"] = 12,
  ["smsp__average_warps_issue_stalled_selected_per_issue_active.ratio"] = 99,
}
T.eq(d.fp32_flop, 215, "2 x FFMA + FADD + FMUL"); T.eq(d.fp32_flop_per_byte, 5, "intensity")
T.near(d.fp32_gflops, 0.215, 1e-12, "FLOP per ns = GFLOP/s")
T.eq(d.shared_ld_ways, 2, "wavefronts per request"); T.eq(d.shared_ld_conflict_pct, 50, "conflict %")
T.eq(d.dominant_stall, "lg_throttle", "dominant stall, 'selected' is not a stall")
T.raises(function() metrics.expand(42) end, "give a preset name or a list")
T.raises(function() gpuexp.metrics{} end, "expected {{kernel=", "a batch with no launch")
T.raises(function() gpuexp.metrics{{}, metricz = {"x"}} end, "unknown option 'metricz'", "a misspelt batch option")
T.done()
