-- Hardware metrics: named presets mirroring ncu's sections, values derived from them as ncu derives
-- them, and kernel:metrics{}, which collects in-process with CUPTI (kernel:collect, in C).
local M = {}

local stall_reasons = {"barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle",
  "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected",
  "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait"}

M.stall_reasons = stall_reasons -- every reason ncu's WarpStateStats knows; chips have subsets

local function stall_metric(reason)
  return "smsp__average_warps_issue_stalled_" .. reason .. "_per_issue_active.ratio"
end

-- Preset name -> metric names, as ncu's sections collect them (Nsight Compute 2025.3 section files).
M.presets = {
  occupancy = {
    "sm__warps_active.avg.pct_of_peak_sustained_active", -- achieved occupancy
    "sm__warps_active.avg.per_cycle_active",             -- achieved active warps per SM
  },
  speed_of_light = {
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",                 -- compute (SM) throughput %
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", -- memory throughput %
    "gpu__time_duration.sum", "gpc__cycles_elapsed.max", "sm__cycles_active.avg",
    "gpc__cycles_elapsed.avg.per_second", "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__cycles_elapsed.avg.per_second",
  },
  memory = {
    "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes.sum.per_second",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sector_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
  },
  warp_stalls = (function()
    local names = {"smsp__average_warp_latency_per_inst_issued.ratio", "smsp__issue_active.avg.per_cycle_active"}
    for _, reason in ipairs(stall_reasons) do names[#names + 1] = stall_metric(reason) end
    return names
  end)(),
  bank_conflicts = {
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
  },
  tensor = { -- ncu's tensor pipe view: how busy the pipe was, and who waited on it
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor.sum",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
  },
  hierarchical_roofline = { -- ncu's hierarchical roofline: FLOPs against bytes at L1, L2 and DRAM
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes.sum",
    "gpu__time_duration.sum",
  },
  roofline = {
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "dram__bytes.sum", "gpu__time_duration.sum",
  },
}

-- Names of a preset that this chip lacks (gmma before Hopper, imc_miss on Blackwell) are dropped;
-- explicit names are kept, so a wrong one is an error naming the closest valid names.
function M.expand(list, chip)
  if type(list) == "string" then list = {list} end
  if type(list) ~= "table" then gpuexp.error("usage", "metrics: give a preset name or a list of names and presets", 3) end
  local names, seen, presets = {}, {}, {}
  for _, item in ipairs(list) do
    local preset = M.presets[item]
    if preset then presets[item] = true end
    for _, name in ipairs(preset or {item}) do
      local keep = not seen[name]
      if keep and preset and chip then keep = pcall(gpuexp.metric_info, name, chip) end
      if keep then
        seen[name] = true
        names[#names + 1] = name
      end
    end
    if not preset and type(item) ~= "string" then gpuexp.error("usage", "metrics: names must be strings", 3) end
  end
  return names, presets
end

-- Values ncu derives from the raw metrics, added when their inputs were collected.
function M.derive(v)
  local d = {}
  local ffma, fadd, fmul = v["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"],
    v["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"], v["smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"]
  local dfma, dadd, dmul = v["smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"],
    v["smsp__sass_thread_inst_executed_op_dadd_pred_on.sum"], v["smsp__sass_thread_inst_executed_op_dmul_pred_on.sum"]
  local duration_ns = v["gpu__time_duration.sum"]
  local dram = v["dram__bytes.sum"] or (v["dram__bytes_read.sum"] and v["dram__bytes_write.sum"]
    and v["dram__bytes_read.sum"] + v["dram__bytes_write.sum"])
  if ffma and fadd and fmul then d.fp32_flop = 2 * ffma + fadd + fmul end
  if dfma and dadd and dmul then d.fp64_flop = 2 * dfma + dadd + dmul end
  if dram then d.dram_bytes = dram end
  for _, precision in ipairs({"fp32", "fp64"}) do
    local flop = d[precision .. "_flop"]
    if flop and duration_ns and duration_ns > 0 then d[precision .. "_gflops"] = flop / duration_ns end
    if flop and dram and dram > 0 then d[precision .. "_flop_per_byte"] = flop / dram end
  end
  if dram and duration_ns and duration_ns > 0 then d.dram_gbps = dram / duration_ns end
  for _, op in ipairs({"ld", "st"}) do
    local requests = v["smsp__sass_inst_executed_op_shared_" .. op .. ".sum"]
    local wavefronts = v["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_" .. op .. ".sum"]
    local conflicts = v["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_" .. op .. ".sum"]
    if requests and wavefronts and requests > 0 then d["shared_" .. op .. "_ways"] = wavefronts / requests end
    if conflicts and wavefronts and wavefronts > 0 then d["shared_" .. op .. "_conflict_pct"] = 100 * conflicts / wavefronts end
  end
  local best, best_value = nil, -1
  for _, reason in ipairs(stall_reasons) do
    local value = v[stall_metric(reason)]
    if value and reason ~= "selected" and value > best_value then best, best_value = reason, value end
  end
  if best then
    d.dominant_stall = best
    d.dominant_stall_ratio = best_value
  end
  return d
end

-- The chip CUPTI profiles on this run's GPU: true and the chip (nil in an offline plan), or false
-- and why when counters cannot be read here (permissions, another profiler); other errors raise.
local function profiled_chip()
  if gpuexp.plan then return true, nil end
  local ok, info = pcall(gpuexp.metric_info, "gpu__time_duration.sum")
  if ok then return true, info.chip end
  if type(info) == "table" and info.kind == "profiler" then return false, info.message end
  error(info, 0)
end

-- kernel:metrics{grid=, block=, shared=, args=, metrics = "memory" | {"memory", "name.sum", ...},
--                restore = true, flush_l2 = true}
-- -> values (metric name or derived name -> number or string), info {passes, chip, units, names, seconds};
-- or nil and the reason when counters cannot be read here (permissions, another profiler, offline plan).
function M.kernel_metrics(kernel, spec)
  if type(spec) ~= "table" then gpuexp.error("usage", "metrics: expected a table {grid=, block=, args=, metrics=}", 2) end
  -- kernel:collect's keys, said before a misspelled metrics = is taken for a missing one
  require("gpuexp.api.option_keys").check(spec, {grid = true, block = true, shared = true, args = true, metrics = true,
    restore = true, flush_l2 = true}, "metrics")
  local started = gpuexp.clock()
  local usable, chip = profiled_chip()
  if not usable then return nil, chip end
  local names, presets = M.expand(spec.metrics, chip)
  local launch = {}
  for key, value in pairs(spec) do launch[key] = value end
  launch.metrics = names
  local values, info = kernel:collect(launch)
  if not values then return nil, info end
  for key, value in pairs(M.derive(values)) do values[key] = value end
  if presets.occupancy then
    local theoretical = kernel:occupancy{block = spec.block, shared = spec.shared, cluster = spec.cluster}
    values.theoretical_occupancy_pct = theoretical.occupancy_pct
    values.occupancy_limiter = theoretical.limiter
    values.achieved_occupancy_pct = values["sm__warps_active.avg.pct_of_peak_sustained_active"]
  end
  info.names = names
  info.seconds = gpuexp.clock() - started
  return values, info
end

-- The bytes of a device buffer argument (0 for scalars and host buffers).
local function device_bytes(a)
  if type(a) ~= "userdata" then return 0 end
  local ok, kind, bytes = pcall(function() return a.kind, a.bytes end)
  return ok and kind == "device" and type(bytes) == "number" and bytes or 0
end

-- gpuexp.metrics{ {kernel=, grid=, block=, shared=, args=}, ..., metrics = preset or names,
--                 restore = true, flush_l2 = true, batch = 64, max_snapshot_bytes = 8 GiB}
-- -> list of values per launch (as kernel:metrics gives them), info {passes, batches, chip, names,
-- seconds, timing}; or nil and the reason. The launches are profiled together: every replay pass
-- runs all of a batch's launches, each with its buffers restored and the L2 flushed before it,
-- so each value is still that of one isolated launch, but the passes' fixed cost is paid once
-- per batch instead of once per launch.
function M.batch_metrics(spec)
  if type(spec) ~= "table" or #spec == 0 then
    gpuexp.error("usage", "metrics: expected {{kernel=, grid=, block=, args=}, ..., metrics = ...}", 2)
  end
  local named = {} -- the options (the launches are the list's)
  for key, value in pairs(spec) do if math.type(key) ~= "integer" then named[key] = value end end
  require("gpuexp.api.option_keys").check(named, {metrics = true, restore = true, flush_l2 = true, batch = true,
    max_snapshot_bytes = true}, "metrics")
  local started = gpuexp.clock()
  local usable, chip = profiled_chip()
  if not usable then return nil, chip end
  local names, presets = M.expand(spec.metrics, chip)
  local batch_size = spec.batch or 64
  local max_bytes = spec.max_snapshot_bytes or 8 * 1024 ^ 3
  local restore = spec.restore ~= false
  local results, info = {}, {passes = 0, batches = 0, chip = chip, names = names, timing = {}}
  local first = 1
  while first <= #spec do
    -- a batch: up to batch_size launches whose written buffers fit the snapshot memory
    local last, bytes = first, 0
    while last <= #spec and last - first < batch_size do
      local launch_bytes = 0
      for _, a in ipairs(spec[last].args or {}) do launch_bytes = launch_bytes + device_bytes(a) end
      if restore and last > first and bytes + launch_bytes > max_bytes then break end
      bytes = bytes + launch_bytes
      last = last + 1
    end
    local launches = {}
    for i = first, last - 1 do launches[#launches + 1] = spec[i] end
    local values, batch_info = gpuexp._collect_batch(launches, names, restore, spec.flush_l2 ~= false)
    if not values then return nil, batch_info end
    for i, v in ipairs(values) do
      for key, value in pairs(M.derive(v)) do v[key] = value end
      if presets.occupancy then
        local l = launches[i]
        local theoretical = l.kernel:occupancy{block = l.block, shared = l.shared}
        v.theoretical_occupancy_pct = theoretical.occupancy_pct
        v.occupancy_limiter = theoretical.limiter
        v.achieved_occupancy_pct = v["sm__warps_active.avg.pct_of_peak_sustained_active"]
      end
      results[#results + 1] = v
    end
    info.passes = math.max(info.passes, batch_info.passes)
    info.batches = info.batches + 1
    for key, value in pairs(batch_info.timing) do info.timing[key] = (info.timing[key] or 0) + value end
    first = last
  end
  info.seconds = gpuexp.clock() - started
  return results, info
end

-- How a metric of several kernels adds up: counts add (.sum), extremes stay extremes (.max, .min),
-- and averages, percentages, ratios and rates are weighted by each kernel's duration.
local function combine(name, values, durations, total_duration)
  if name:match("%.sum$") then
    local sum = 0
    for _, v in ipairs(values) do sum = sum + v end
    return sum
  elseif name:match("%.max$") then
    return math.max(table.unpack(values))
  elseif name:match("%.min$") then
    return math.min(table.unpack(values))
  elseif total_duration > 0 then
    local weighted = 0
    for i, v in ipairs(values) do weighted = weighted + v * durations[i] end
    return weighted / total_duration
  end
end

-- sequence:metrics{metrics = preset or names, restore = {buffers}, flush_l2 = true}
-- -> values of the whole sequence (counts summed, the rest weighted by duration, then derived as for a
-- kernel), info {passes, chip, names, kernels = {values per kernel, each with its kernel name}, seconds};
-- or nil and the reason. Every pass runs the sequence once (restore: buffers put back before each).
function M.sequence_metrics(sequence, spec)
  if type(spec) ~= "table" then gpuexp.error("usage", "metrics: expected a table {metrics=, restore=, flush_l2=}", 2) end
  require("gpuexp.api.option_keys").check(spec, {metrics = true, restore = true, flush_l2 = true}, "metrics")
  if spec.restore ~= nil and type(spec.restore) ~= "table" then
    gpuexp.error("usage", "metrics: restore must be a list of device buffers", 2)
  end
  local started = gpuexp.clock()
  local usable, chip = profiled_chip()
  if not usable then return nil, chip end
  local names = M.expand(spec.metrics, chip)
  local wanted = {}
  for _, name in ipairs(names) do wanted[name] = true end
  local collected = {table.unpack(names)}
  if not wanted["gpu__time_duration.sum"] then collected[#collected + 1] = "gpu__time_duration.sum" end
  local kernels, info = gpuexp._collect_sequence(sequence, collected, spec.restore or {}, spec.flush_l2 ~= false)
  if not kernels then return nil, info end
  local durations, total_duration = {}, 0
  for i, k in ipairs(kernels) do
    durations[i] = k["gpu__time_duration.sum"] or 0
    total_duration = total_duration + durations[i]
  end
  local total = {}
  for _, name in ipairs(collected) do
    local values = {}
    for i, k in ipairs(kernels) do values[i] = k[name] end
    total[name] = combine(name, values, durations, total_duration)
  end
  for _, k in ipairs(kernels) do
    for key, value in pairs(M.derive(k)) do k[key] = value end
  end
  for key, value in pairs(M.derive(total)) do total[key] = value end
  info.names = names
  info.kernels = kernels
  info.seconds = gpuexp.clock() - started
  return total, info
end

return M
