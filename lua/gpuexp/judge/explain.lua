-- What changed, as the hardware sees it, when a point got slower: its counters against its
-- baseline nights'. The counters are columns of the point's row (ctr_* below, and the SM clock);
-- a run that has none gets no explanation. Each counter is compared with the median of the
-- baseline rows; a change is named when it is past the counter's own noise (the baseline's
-- spread) and its floor. Counters that did not move are said too: then the time moved alone, and
-- the clock or the machine is where to look.
local rule = require("gpuexp.judge.rule")

local M = {}

-- The counters, in the order a reader wants them: what the kernel does, then where it waits.
-- floor: the smallest relative change (percent) or absolute change (points, for percentages and
-- counts of a few) called a change.
M.COUNTERS = {
  {column = "ctr_registers", label = "registers", kind = "count", floor = 1},
  {column = "ctr_spill_bytes", label = "spilled bytes", kind = "count", floor = 1},
  {column = "ctr_shared_bytes", label = "shared memory bytes", kind = "count", floor = 1},
  {column = "ctr_instructions", label = "instructions", kind = "relative", floor = 1},
  {column = "ctr_dram_bytes", label = "DRAM bytes", kind = "relative", floor = 2},
  {column = "ctr_l2_bytes", label = "L2 bytes", kind = "relative", floor = 2},
  {column = "ctr_l2_hit_pct", label = "L2 hit rate", kind = "points", floor = 5, unit = "%"},
  {column = "ctr_occupancy_pct", label = "achieved occupancy", kind = "points", floor = 5, unit = "%"},
  {column = "sm_clock_mhz", label = "SM clock", kind = "relative", floor = 2, unit = " MHz"},
}
M.STALL = "ctr_stall" -- the dominant stall reason (text)

local function median_of(rows, column)
  local values = {}
  for _, row in ipairs(rows) do
    if type(row[column]) == "number" then values[#values + 1] = row[column] end
  end
  return rule.median(values), values
end

local function number(value, unit)
  local text = math.type(value) == "integer" and tostring(value) or string.format("%.4g", value)
  return text .. (unit or "")
end

-- explain(base_rows, new_row, change_pct) -> the findings (strings, most telling first) and
-- whether the point has counters at all; nil when it has none.
function M.explain(base_rows, new_row, change_pct)
  local findings, present, unchanged = {}, false, {}
  local moved = {}
  for _, counter in ipairs(M.COUNTERS) do
    local new = new_row[counter.column]
    local base, values = median_of(base_rows, counter.column)
    if type(new) == "number" and base then
      present = true
      local delta = new - base
      local significant
      if counter.kind == "relative" then
        local pct = base ~= 0 and delta / base * 100 or (delta ~= 0 and math.huge or 0)
        local spread = base ~= 0 and rule.spread(values, base) or 0
        significant = math.abs(pct) >= math.max(counter.floor, 3 * spread)
        if significant then
          findings[#findings + 1] = string.format("%s %+.1f%%%s", counter.label, pct,
            counter.unit and string.format(" (%s -> %s)", number(base, counter.unit), number(new, counter.unit)) or "")
        end
      else
        significant = math.abs(delta) >= counter.floor
        if significant then
          findings[#findings + 1] = string.format("%s %s -> %s", counter.label, number(base, counter.unit),
            number(new, counter.unit))
        end
      end
      moved[counter.column] = significant or nil
      if not significant then unchanged[#unchanged + 1] = counter.label end
    end
  end
  local base_stall = {}
  for _, row in ipairs(base_rows) do
    if type(row[M.STALL]) == "string" and row[M.STALL] ~= "" then base_stall[row[M.STALL]] = (base_stall[row[M.STALL]] or 0) + 1 end
  end
  local usual, most = nil, 0
  for reason, count in pairs(base_stall) do
    if count > most or (count == most and reason < usual) then usual, most = reason, count end
  end
  local stall = new_row[M.STALL]
  if type(stall) == "string" and stall ~= "" and usual then
    present = true
    if stall ~= usual then findings[#findings + 1] = string.format("dominant stall %s -> %s", usual, stall) end
  end
  if not present then return nil end
  -- registers that cost occupancy: one finding, cause and effect
  if moved.ctr_registers and moved.ctr_occupancy_pct then
    local registers, occupancy
    for n, text in ipairs(findings) do
      if text:find("^registers ") then registers = n elseif text:find("^achieved occupancy ") then occupancy = n end
    end
    findings[registers] = findings[registers] .. ": " .. findings[occupancy]
    table.remove(findings, occupancy)
  end
  if #findings == 0 then
    findings[1] = string.format("counters unchanged (%d compared): the time moved %+.1f%% alone; look at the clocks " ..
      "or the machine", #unchanged, change_pct or 0)
  elseif moved.ctr_instructions and change_pct then
    for n, text in ipairs(findings) do
      if text:find("^instructions ") then findings[n] = text .. string.format(" (the time moved %+.1f%%)", change_pct) end
    end
  end
  return findings
end

-- The explanation of a regressed entry of a comparison, as one line, or nil: base_runs and new_run
-- are results (store/result.lua) holding the point's rows.
function M.entry(e, base_runs, new_run)
  local new_row = new_run:row(e.key)
  if not new_row then return nil end
  local base_rows = {}
  for _, run in ipairs(base_runs) do
    local row = run:row(e.key)
    if row and (row.status == nil or row.status == "ok") then base_rows[#base_rows + 1] = row end
  end
  if #base_rows == 0 then return nil end
  local findings = M.explain(base_rows, new_row, e.change_pct)
  return findings and table.concat(findings, "; ") or nil
end

return M
