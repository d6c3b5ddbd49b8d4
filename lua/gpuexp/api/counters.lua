-- A run's counters (gpuexp --counters, which gpuexp nightly passes): a small fixed set of hardware
-- counters for the last timed launch of every point, collected once when the point ends (however
-- often it timed), as ctr_* columns of its row, so a night that
-- got slower can say what changed as the hardware sees it (judge/explain.lua reads them).
-- The set sees the classic causes of a slower kernel: the work (warp instructions, and the active
-- lanes per instruction that divergence lowers), the traffic (DRAM and L2 bytes, L2 and L1 hit
-- rates, sectors per request of global loads and stores that coalescing sets), shared-memory
-- wavefronts per request (bank conflicts), local-memory requests (spills and per-thread arrays
-- indexed at run time), atomic requests at the L2, the tensor and FP64 pipes' activity, the warps
-- (achieved occupancy, the share of cycles the SMs had work), the warp cycles per issued
-- instruction with the share of each of nine stall reasons in them; then the kernel's registers,
-- spills, stack frame and shared memory from its resources, and the launch's shape (blocks,
-- threads a block, waves per SM, the share of SMs given a block). 32 metrics in five replay passes
-- on GH100 (gpuexp metrics --chip GH100 --check counts them offline; the set before the judgments
-- issue took four, that of issue 19 three).
local M = {}

-- The stall reasons recorded, each as its share of the warp cycles per issued instruction (all
-- reasons together, `selected` included): the seven that explain most regressions, sleeping
-- (__nanosleep, a wait no other counter sees) and membar (fences); the others of ncu's 18 would
-- take two more passes on GH100. ctr_stall is the dominant one of them.
M.STALLS = {"long_scoreboard", "short_scoreboard", "math_pipe_throttle", "mio_throttle", "lg_throttle", "barrier", "wait",
  "sleeping", "membar"}

local STALL = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"
local STALL_CYCLES = "smsp__average_warp_latency_per_inst_issued.ratio" -- the sum of every reason's

-- a stall reason's column: its share of the warp cycles per issued instruction, in percent
function M.stall_column(reason) return "ctr_stall_" .. reason .. "_pct" end

-- column -> metric, for the columns that are one metric's value
M.METRICS = {
  ctr_instructions = "smsp__inst_executed.sum",
  ctr_dram_bytes = "dram__bytes.sum",
  ctr_l2_bytes = "lts__t_bytes.sum",
  ctr_l2_hit_pct = "lts__t_sector_hit_rate.pct",
  ctr_l1_hit_pct = "l1tex__t_sector_hit_rate.pct",
  ctr_tensor_pct = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
  ctr_fp64_pct = "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
  ctr_occupancy_pct = "sm__warps_active.avg.pct_of_peak_sustained_active",
  ctr_sm_active_pct = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
  ctr_stall_cycles = STALL_CYCLES,
}

-- column -> {numerator metrics, denominator metrics}: the columns that are a ratio of sums (none
-- when the denominator is 0: a kernel with no shared-memory request has no wavefronts per request)
M.RATIOS = {
  ctr_lanes_per_instruction = {{"smsp__thread_inst_executed.sum"}, {"smsp__inst_executed.sum"}},
  ctr_load_sectors_per_request = {{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"},
    {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"}},
  ctr_store_sectors_per_request = {{"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
    {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"}},
  ctr_shared_wavefronts_per_request = {
    {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"},
    {"smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"}},
}
-- column -> metrics summed: the requests the ratios above are per (what a change of them weighs),
-- local memory's (a spill or an array the compiler could not keep in registers) and the L2's
-- atomic and reduction requests
M.SUMS = {
  ctr_load_requests = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"},
  ctr_store_requests = {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
  ctr_shared_requests = {"smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"},
  ctr_local_requests = {"l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"},
  ctr_atomic_requests = {"lts__t_requests_op_atom.sum", "lts__t_requests_op_red.sum"},
}

-- the columns a point gets, in this order (ctr_seconds: what collecting them cost, the worker's
-- CUPTI set-up included on its first point; ctr_note: why a point has none)
M.COLUMNS = {"ctr_instructions", "ctr_lanes_per_instruction", "ctr_dram_bytes", "ctr_l2_bytes", "ctr_l2_hit_pct",
  "ctr_l1_hit_pct", "ctr_load_requests", "ctr_load_sectors_per_request", "ctr_store_requests",
  "ctr_store_sectors_per_request", "ctr_shared_requests", "ctr_shared_wavefronts_per_request", "ctr_local_requests",
  "ctr_atomic_requests", "ctr_tensor_pct", "ctr_fp64_pct", "ctr_occupancy_pct", "ctr_sm_active_pct", "ctr_stall",
  "ctr_stall_cycles"}
for _, reason in ipairs(M.STALLS) do M.COLUMNS[#M.COLUMNS + 1] = M.stall_column(reason) end
for _, column in ipairs({"ctr_registers", "ctr_spill_bytes", "ctr_stack_bytes", "ctr_shared_bytes", "ctr_blocks",
  "ctr_block_threads", "ctr_waves", "ctr_sms_busy_pct", "ctr_seconds"}) do
  M.COLUMNS[#M.COLUMNS + 1] = column
end

-- the metric names collected, each once, in this order: CUPTI packs the metrics into replay passes
-- in the order given, and this one (the set before, then what the judgments issue added) takes
-- five passes on GH100 where the columns' order takes six
local COLLECT_ORDER = {"ctr_instructions", "ctr_lanes_per_instruction", "ctr_dram_bytes", "ctr_l2_bytes",
  "ctr_l2_hit_pct", "ctr_l1_hit_pct", "ctr_load_requests", "ctr_load_sectors_per_request", "ctr_store_requests",
  "ctr_store_sectors_per_request", "ctr_shared_requests", "ctr_shared_wavefronts_per_request", "ctr_tensor_pct",
  "ctr_occupancy_pct", "long_scoreboard", "short_scoreboard", "math_pipe_throttle", "mio_throttle", "lg_throttle",
  "barrier", "wait", "ctr_fp64_pct", "ctr_local_requests", "ctr_atomic_requests", "ctr_sm_active_pct",
  "ctr_stall_cycles", "sleeping", "membar"}
M.names = {}
do
  local seen = {}
  local function add(name)
    if not seen[name] then seen[name] = true; M.names[#M.names + 1] = name end
  end
  for _, item in ipairs(COLLECT_ORDER) do
    if not item:match("^ctr_") then add(STALL:format(item)) end
    if M.METRICS[item] then add(M.METRICS[item]) end
    for _, part in ipairs(M.RATIOS[item] or {}) do for _, name in ipairs(part) do add(name) end end
    for _, name in ipairs(M.SUMS[item] or {}) do add(name) end
  end
end

-- The sum of these metrics' values, or nil when one is missing.
local function sum(values, names)
  local total = 0
  for _, name in ipairs(names) do
    if type(values[name]) ~= "number" then return nil end
    total = total + values[name]
  end
  return total
end

-- The threads of a launch dimension ({x, y, z}, {x=, y=, z=} or a number), or nil.
local function product(dimension)
  if type(dimension) == "number" then return math.tointeger(dimension) or dimension end
  if type(dimension) ~= "table" then return nil end
  local x, y, z = dimension[1] or dimension.x or 1, dimension[2] or dimension.y or 1, dimension[3] or dimension.z or 1
  if type(x) ~= "number" or type(y) ~= "number" or type(z) ~= "number" then return nil end
  return x * y * z
end

-- M.shape(grid, block, blocks_per_sm, sms) -> the launch's shape as columns: ctr_blocks,
-- ctr_block_threads, ctr_waves (blocks / (blocks an SM holds at once x SMs)) and ctr_sms_busy_pct
-- (the share of SMs the launch gives a block: under 100 when there are fewer blocks than SMs).
-- The waves and SMs need the occupancy and the SM count; without them, blocks and threads only.
function M.shape(grid, block, blocks_per_sm, sms)
  local blocks, threads = product(grid), product(block or 1)
  local row = {ctr_blocks = blocks, ctr_block_threads = threads}
  if blocks and sms and sms > 0 then
    row.ctr_sms_busy_pct = 100 * math.min(blocks, sms) / sms
    if blocks_per_sm and blocks_per_sm > 0 then row.ctr_waves = blocks / (blocks_per_sm * sms) end
  end
  return row
end

-- The row's fields from collected values (and the kernel's resources, when one kernel ran, and
-- the launch's shape, M.shape's columns).
function M.fields(values, resources, dynamic_shared, shape)
  local row = {}
  for column, metric in pairs(M.METRICS) do row[column] = values[metric] end
  for column, names in pairs(M.SUMS) do row[column] = sum(values, names) end
  for column, parts in pairs(M.RATIOS) do
    local numerator, denominator = sum(values, parts[1]), sum(values, parts[2])
    if numerator and denominator and denominator > 0 then row[column] = numerator / denominator end
  end
  local best, most = nil, -1
  local total = values[STALL_CYCLES]
  for _, reason in ipairs(M.STALLS) do
    local value = values[STALL:format(reason)]
    if value and value > most then best, most = reason, value end
    if type(value) == "number" and type(total) == "number" and total > 0 then
      row[M.stall_column(reason)] = 100 * value / total
    end
  end
  row.ctr_stall = best
  if resources then
    row.ctr_registers = resources.registers
    -- ptxas's spill bytes where the build reported them; else the local memory a thread uses,
    -- which is where spills go (a loaded cubin says no more)
    row.ctr_spill_bytes = resources.spill_store_bytes and (resources.spill_store_bytes + (resources.spill_load_bytes or 0))
      or resources.local_bytes
    -- the stack frame: a per-thread array the compiler could not keep in registers lives there
    -- (with the spills, which ptxas counts apart); the driver's local size where ptxas said nothing
    row.ctr_stack_bytes = resources.stack_frame_bytes or resources.local_bytes
    row.ctr_shared_bytes = (resources.static_shared_bytes or 0) + (dynamic_shared or 0)
  end
  for column, value in pairs(shape or {}) do row[column] = value end
  return row
end

-- The launch a point timed last (kernel:measure, kernel:time, sequence:measure), remembered by
-- M.remember and collected by M.take when the point ends: its fields (with what collecting them
-- cost), or {ctr_note = why}; nil when the point timed nothing. A sequence's counts are summed
-- over its kernels and the rest weighted by each kernel's time; it has no one kernel's resources.
local pending

function M.remember(target, spec)
  local launch
  if spec then
    launch = {metrics = M.names}
    for _, key in ipairs(gpuexp.launch_keys) do launch[key] = spec[key] end
  end
  pending = {target = target, launch = launch}
end

-- The shape of a kernel's launch on the current device (M.shape), with the blocks an SM holds
-- from the occupancy model; nil when it cannot be read.
function M.launch_shape(kernel, launch)
  local found, device = pcall(gpuexp.device)
  local sms = found and device and device.sm_count or nil
  local known, occupancy = pcall(function() return kernel:occupancy{block = launch.block or 1, shared = launch.shared} end)
  local blocks_per_sm = known and type(occupancy) == "table" and (occupancy.active_blocks_per_sm or occupancy.blocks_per_sm)
    or nil
  return M.shape(launch.grid, launch.block, blocks_per_sm, sms)
end

function M.take()
  local p = pending
  pending = nil
  if not p then return nil end
  local started = gpuexp.clock()
  local values, why
  if p.launch then values, why = p.target:collect(p.launch) else values, why = p.target:metrics{metrics = M.names} end
  local shape = p.launch and M.launch_shape(p.target, p.launch) -- (no counter needed: kept when they fail)
  if not values then
    local fields = {ctr_note = "no counters: " .. tostring(why)}
    for column, value in pairs(shape or {}) do fields[column] = value end
    return fields
  end
  local fields = M.fields(values, p.launch and p.target:resources(), p.launch and p.launch.shared, shape)
  fields.ctr_seconds = gpuexp.clock() - started
  return fields
end

function M.forget() pending = nil end

return M
