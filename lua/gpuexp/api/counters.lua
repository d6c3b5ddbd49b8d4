-- A run's counters (gpuexp --counters, which gpuexp nightly passes): a small fixed set of hardware
-- counters for the last timed launch of every point, collected once when the point ends (however
-- often it timed), as ctr_* columns of its row, so a night that
-- got slower can say what changed as the hardware sees it (judge/explain.lua reads them).
-- Three replay passes on GH100: the work (instructions), the traffic (DRAM and L2 bytes, L2 hit
-- rate), the warps (achieved occupancy) and the dominant stall among the seven reasons that fit in
-- those passes; then the kernel's registers, spills and shared memory from its resources.
local M = {}

-- The stall reasons weighed for ctr_stall: the seven that explain most regressions and fit in the
-- passes the rest needs (all 18 of ncu's take 6 passes on GH100).
M.STALLS = {"long_scoreboard", "short_scoreboard", "math_pipe_throttle", "mio_throttle", "lg_throttle", "barrier", "wait"}

local STALL = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"

-- column -> metric
M.METRICS = {
  ctr_instructions = "smsp__inst_executed.sum",
  ctr_dram_bytes = "dram__bytes.sum",
  ctr_l2_bytes = "lts__t_bytes.sum",
  ctr_l2_hit_pct = "lts__t_sector_hit_rate.pct",
  ctr_occupancy_pct = "sm__warps_active.avg.pct_of_peak_sustained_active",
}

-- the columns a point gets, in this order (ctr_seconds: what collecting them cost, the worker's
-- CUPTI set-up included on its first point; ctr_note: why a point has none)
M.COLUMNS = {"ctr_instructions", "ctr_dram_bytes", "ctr_l2_bytes", "ctr_l2_hit_pct", "ctr_occupancy_pct", "ctr_stall",
  "ctr_registers", "ctr_spill_bytes", "ctr_shared_bytes", "ctr_seconds"}

M.names = {}
for _, column in ipairs(M.COLUMNS) do
  if M.METRICS[column] then M.names[#M.names + 1] = M.METRICS[column] end
end
for _, reason in ipairs(M.STALLS) do M.names[#M.names + 1] = STALL:format(reason) end

-- The row's fields from collected values (and the kernel's resources, when one kernel ran).
function M.fields(values, resources, dynamic_shared)
  local row = {}
  for column, metric in pairs(M.METRICS) do row[column] = values[metric] end
  local best, most = nil, -1
  for _, reason in ipairs(M.STALLS) do
    local value = values[STALL:format(reason)]
    if value and value > most then best, most = reason, value end
  end
  row.ctr_stall = best
  if resources then
    row.ctr_registers = resources.registers
    -- ptxas's spill bytes where the build reported them; else the local memory a thread uses,
    -- which is where spills go (a loaded cubin says no more)
    row.ctr_spill_bytes = resources.spill_store_bytes and (resources.spill_store_bytes + (resources.spill_load_bytes or 0))
      or resources.local_bytes
    row.ctr_shared_bytes = (resources.static_shared_bytes or 0) + (dynamic_shared or 0)
  end
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
    for _, key in ipairs({"grid", "block", "shared", "args"}) do launch[key] = spec[key] end
  end
  pending = {target = target, launch = launch}
end

function M.take()
  local p = pending
  pending = nil
  if not p then return nil end
  local started = gpuexp.clock()
  local values, why
  if p.launch then values, why = p.target:collect(p.launch) else values, why = p.target:metrics{metrics = M.names} end
  if not values then return {ctr_note = "no counters: " .. tostring(why)} end
  local fields = M.fields(values, p.launch and p.target:resources(), p.launch and p.launch.shared)
  fields.ctr_seconds = gpuexp.clock() - started
  return fields
end

function M.forget() pending = nil end

return M
