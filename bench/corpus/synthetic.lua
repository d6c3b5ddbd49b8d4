-- Synthetic measurements for the dry mode (collect.lua in an offline plan): times and counter
-- values invented from each point's modelled time and its cause's signature, seeded by the
-- point and the night. They exist to develop and test the recompute without a GPU; no figure in
-- the docs comes from them (recompute.lua refuses to publish a table from synthetic records).
local M = {}

-- a number in [0, 1) from a text and a number (FNV-1a over the text, then a xorshift)
local function uniform(text, n)
  local h = 0xcbf29ce484222325
  for i = 1, #text do h = ((h ~ text:byte(i)) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF end
  h = h ~ (n * 0x9E3779B97F4A7C15)
  h = h ~ (h << 13); h = h ~ (h >> 7); h = h ~ (h << 17)
  return ((h >> 11) & ((1 << 53) - 1)) / 2 ^ 53
end

-- a roughly normal deviate (the sum of four uniforms, centred and scaled to unit spread)
local function normal(text, n)
  local s = 0
  for k = 1, 4 do s = s + uniform(text, n * 4 + k) end
  return (s - 2) * math.sqrt(3)
end
M.normal = normal

-- How much slower than its good kernel a cause makes a point on this imaginary GPU (the
-- realized size; the model's own guess times a per-point factor).
local function realized(point)
  return point.modelled_ms * (1 + 0.15 * normal(point.id, 1))
end

-- M.timing(point_or_id, ms, night) -> a timing record like collect.lua's (samples included).
function M.timing(id, ms, night)
  local level = ms * (1 + 0.002 * normal(id, 100 + night)) -- night to night
  local samples = {}
  for i = 1, 200 do samples[i] = level * (1 + 0.01 * normal(id, night * 1000 + i)) end
  local sorted = {table.unpack(samples)}
  table.sort(sorted)
  local sum = 0
  for _, v in ipairs(samples) do sum = sum + v end
  local mean = sum / #samples
  local squares = 0
  for _, v in ipairs(samples) do squares = squares + (v - mean) ^ 2 end
  local stddev = math.sqrt(squares / (#samples - 1))
  return {median_ms = (sorted[100] + sorted[101]) / 2, mean_ms = mean, min_ms = sorted[1], max_ms = sorted[#sorted],
    stddev_ms = stddev, noise_pct = stddev / mean * 100, samples = #samples, mode = "hot", stop_reason = "noise",
    sm_clock_mhz = 1980, sm_clock_min_mhz = 1980, clock_throttled = false, samples_ms = samples}
end

function M.point_timing(point, night) return M.timing(point.id, realized(point), night) end

local STALL = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"

-- M.counters(point, launch, resources, night) -> raw metric values (names as CUPTI's) for a
-- point: a generic profile from its size, then its cause's signature, with a little noise a night.
function M.counters(point, launch, resources, night)
  local p, v = point.params, point.variant_params
  local elements = (p.n or 32768) * (p.reps or 1)
  local warps = elements / 32
  local work = p.work or p.rounds or p.iterations or 4
  local values = {
    ["smsp__inst_executed.sum"] = warps * (10 + 2 * work),
    ["dram__bytes.sum"] = 8 * elements, ["lts__t_bytes.sum"] = 10 * elements,
    ["lts__t_sector_hit_rate.pct"] = 40, ["l1tex__t_sector_hit_rate.pct"] = 5,
    ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = warps, ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 4 * warps,
    ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] = warps, ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = 4 * warps,
    ["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"] = 100,
    ["smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct"] = 100,
    ["smsp__inst_executed_op_shared_ld.sum"] = 0, ["smsp__inst_executed_op_shared_st.sum"] = 0,
    ["smsp__sass_inst_executed_op_shared_ld.sum"] = 0, ["smsp__sass_inst_executed_op_shared_st.sum"] = 0,
    ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 0, ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] = 0,
    ["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] = 0,
    ["sm__warps_active.avg.pct_of_peak_sustained_active"] = 85,
    ["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = 40,
    ["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"] = 70,
    ["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 65,
    ["smsp__average_thread_inst_executed_per_inst_executed.ratio"] = 32,
    ["smsp__sass_inst_executed_op_global_atom.sum"] = 0, ["smsp__sass_inst_executed_op_global_red.sum"] = 0,
    ["smsp__inst_executed_pipe_fp64.sum"] = 0, ["sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"] = 0,
    ["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"] = 0, ["l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"] = 0,
  }
  local stalls = {long_scoreboard = 4, short_scoreboard = 0.3, math_pipe_throttle = 0.5, mio_throttle = 0.2,
    lg_throttle = 0.4, barrier = 0.05, wait = 0.8, sleeping = 0, not_selected = 0.3, selected = 1}
  local cause = point.cause
  if cause == "uncoalesced_loads" or cause == "uncoalesced_stores" then
    local op = cause == "uncoalesced_loads" and "ld" or "st"
    local sectors = math.min(32, 4 * (v.stride or 8))
    values["l1tex__t_sectors_pipe_lsu_mem_global_op_" .. op .. ".sum"] = sectors * warps
    values["smsp__sass_average_data_bytes_per_sector_mem_global_op_" .. op .. ".pct"] = 400 / sectors
    values["lts__t_bytes.sum"] = values["lts__t_bytes.sum"] * sectors / 4
  elseif cause == "bank_conflicts" or point.family == "bank" then
    local requests = warps * 2 * (p.rounds or 4)
    values["smsp__inst_executed_op_shared_ld.sum"], values["smsp__inst_executed_op_shared_st.sum"] = requests / 2, requests / 2
    values["smsp__sass_inst_executed_op_shared_ld.sum"], values["smsp__sass_inst_executed_op_shared_st.sum"] = requests / 2, requests / 2
    local ways = v.ways or 1
    values["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = requests / 2 * ways
    values["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] = requests / 2 * ways
    if ways > 1 then stalls.mio_throttle = 3 * ways / 4 end
  elseif cause == "divergence" then
    values["smsp__inst_executed.sum"] = values["smsp__inst_executed.sum"] * (v.paths or 2)
    values["smsp__average_thread_inst_executed_per_inst_executed.ratio"] = 32 / (v.paths or 2)
  elseif cause == "register_spills" or cause == "local_memory" then
    values["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"] = 8 * warps
    values["l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"] = 8 * warps
    values["lts__t_bytes.sum"] = values["lts__t_bytes.sum"] * 3
    values["smsp__inst_executed.sum"] = values["smsp__inst_executed.sum"] * 1.2
  elseif cause == "occupancy_registers" or cause == "occupancy_shared" then
    values["sm__warps_active.avg.pct_of_peak_sustained_active"] = 24
  elseif cause == "occupancy_block" then
    values["sm__warps_active.avg.pct_of_peak_sustained_active"] = 48
  elseif cause == "too_few_blocks" then
    values["sm__warps_active.avg.pct_of_peak_sustained_active"] = 12
    values["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = 6
  elseif cause == "atomic_contention" then
    values["smsp__sass_inst_executed_op_global_red.sum"] = warps
    values["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 1
    values["lts__t_sector_hit_rate.pct"] = 95
    stalls.lg_throttle = 20
  elseif cause == "barrier_stalls" then
    stalls.barrier = 12
    values["smsp__inst_executed_op_shared_ld.sum"] = warps * work
    values["smsp__inst_executed_op_shared_st.sum"] = warps * work
  elseif cause == "fp64" then
    values["smsp__inst_executed_pipe_fp64.sum"] = warps * 4 * work
    values["sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"] = 80
    stalls.math_pipe_throttle = 6
  elseif point.family == "tensor" and not cause then
    values["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] = 60
  elseif cause == "tensor_to_fma" then
    values["smsp__inst_executed.sum"] = values["smsp__inst_executed.sum"] * 40
    stalls.math_pipe_throttle = 5
  elseif cause == "extra_instructions" then
    values["smsp__inst_executed.sum"] = values["smsp__inst_executed.sum"] * (1 + (v.extra or 0.3))
  elseif cause == "extra_traffic" then
    values["dram__bytes.sum"] = values["dram__bytes.sum"] * (1 + (v.fraction or 0.5) / 2)
    values["lts__t_bytes.sum"] = values["lts__t_bytes.sum"] * (1 + (v.fraction or 0.5) / 2)
  elseif cause == "l2_overflow" then
    values["lts__t_sector_hit_rate.pct"] = 8
    values["dram__bytes.sum"] = values["dram__bytes.sum"] * 4
  elseif cause == "invisible" then
    stalls.sleeping = 8
  end
  values["smsp__thread_inst_executed.sum"] = values["smsp__inst_executed.sum"]
    * values["smsp__average_thread_inst_executed_per_inst_executed.ratio"]
  for reason, value in pairs(stalls) do values[STALL:format(reason)] = value end
  -- the night's noise: counts within 0.2%, percentages within 0.5 points
  local k = 0
  local names = {}
  for name in pairs(values) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    k = k + 1
    local value = values[name]
    if name:match("%.pct$") or name:match("pct_of_peak") then
      values[name] = math.max(0, value + 0.5 * normal(point.id .. name, night))
    elseif value > 0 then
      values[name] = value * (1 + 0.002 * normal(point.id .. name, night))
    end
  end
  values["gpu__time_duration.sum"] = (point.synthetic_ms or point.modelled_ms) * 1e6
  values.achieved_occupancy_pct = values["sm__warps_active.avg.pct_of_peak_sustained_active"]
  return values
end

M.realized = realized

return M
