-- What changed, as the hardware sees it, when a point got slower: its counters against its
-- baseline nights'. The counters are columns of the point's row (ctr_* below, and the SM clock);
-- a run that has none gets no explanation. Each counter is compared with the median of the
-- baseline rows; a change is named when it is past the counter's own noise (the baseline's
-- spread) and its floor. Counters that did not move are said too: then the time moved alone, and
-- the clock or the machine is where to look.
local rule = require("gpuexp.judge.rule")

local M = {}

-- The counters. floor: the smallest relative change (percent) or absolute change (points, for
-- percentages and counts of a few) called a change. rank: where a change of it goes in the
-- explanation, most telling first (ranks of the work and the traffic depend on what the kernel
-- waits on: see order below).
M.COUNTERS = {
  {column = "ctr_spill_bytes", label = "spilled bytes", kind = "count", floor = 1, rank = 1},
  {column = "ctr_registers", label = "registers", kind = "count", floor = 1, rank = 9},
  {column = "ctr_shared_bytes", label = "shared memory bytes", kind = "count", floor = 1, rank = 9},
  {column = "ctr_instructions", label = "instructions", kind = "relative", floor = 1, work = true},
  {column = "ctr_dram_bytes", label = "DRAM bytes", kind = "relative", floor = 2, traffic = 1},
  {column = "ctr_l2_bytes", label = "L2 bytes", kind = "relative", floor = 2, traffic = 2},
  {column = "ctr_l2_hit_pct", label = "L2 hit rate", kind = "points", floor = 5, unit = "%", traffic = 3},
  {column = "ctr_occupancy_pct", label = "achieved occupancy", kind = "points", floor = 5, unit = "%", rank = 7},
  {column = "sm_clock_mhz", label = "SM clock", kind = "relative", floor = 2, unit = " MHz", rank = 7},
}
M.STALL = "ctr_stall" -- the dominant stall reason (text)
-- stalls of warps waiting on memory: then a change of bytes explains more than one of instructions
local MEMORY_STALLS = {long_scoreboard = true, lg_throttle = true, drain = true, imc_miss = true}

local function median_of(rows, column)
  local values = {}
  for _, row in ipairs(rows) do
    if type(row[column]) == "number" then values[#values + 1] = row[column] end
  end
  return rule.median(values), values
end

local function number(value, unit)
  local text = math.type(value) == "integer" and tostring(value)
    or string.format(unit == "%" and "%.1f" or "%.4g", value)
  return text .. (unit or "")
end

-- The most frequent value of a text column over rows, or nil.
local function usual_text(rows, column)
  local counts, usual, most = {}, nil, 0
  for _, row in ipairs(rows) do
    local v = row[column]
    if type(v) == "string" and v ~= "" then counts[v] = (counts[v] or 0) + 1 end
  end
  for value, count in pairs(counts) do
    if count > most or (count == most and value < usual) then usual, most = value, count end
  end
  return usual
end

-- explain(base_rows, new_row, change_pct) -> the findings (strings, most telling first), or nil
-- when the point has no counters. Order: spills; registers or shared memory that moved occupancy;
-- then the work and the traffic, bytes first for a kernel waiting on memory, instructions first
-- for the rest; occupancy and the clock; the dominant stall; registers or shared memory that cost
-- nothing.
function M.explain(base_rows, new_row, change_pct)
  local found, present, unchanged, moved = {}, false, 0, {}
  local stall, usual = new_row[M.STALL], usual_text(base_rows, M.STALL)
  local memory_bound = MEMORY_STALLS[type(stall) == "string" and stall or ""] or MEMORY_STALLS[usual or ""]
  for _, counter in ipairs(M.COUNTERS) do
    local new = new_row[counter.column]
    local base, values = median_of(base_rows, counter.column)
    if type(new) == "number" and base then
      present = true
      local delta, text = new - base, nil
      if counter.kind == "relative" then
        local pct = base ~= 0 and delta / base * 100 or (delta ~= 0 and math.huge or 0)
        local spread = base ~= 0 and rule.spread(values, base) or 0
        if math.abs(pct) >= math.max(counter.floor, 3 * spread) then
          text = string.format("%s %+.1f%%%s", counter.label, pct,
            counter.unit and string.format(" (%s -> %s)", number(base, counter.unit), number(new, counter.unit)) or "")
          if counter.work and change_pct then text = text .. string.format(" (the time moved %+.1f%%)", change_pct) end
        end
      elseif math.abs(delta) >= counter.floor then
        text = string.format("%s %s -> %s", counter.label, number(base, counter.unit), number(new, counter.unit))
      end
      if text then
        local rank = counter.rank
        if counter.work then rank = memory_bound and 5 or 3 end
        if counter.traffic then rank = (memory_bound and 3 or 5) + counter.traffic / 10 end
        found[#found + 1] = {text = text, rank = rank, column = counter.column}
        moved[counter.column] = found[#found]
      else
        unchanged = unchanged + 1
      end
    end
  end
  if type(stall) == "string" and stall ~= "" and usual then
    present = true
    if stall ~= usual then found[#found + 1] = {text = string.format("dominant stall %s -> %s", usual, stall), rank = 8} end
  end
  if not present then return nil end
  -- registers (or shared memory) that cost occupancy: one finding, cause and effect
  local occupancy = moved.ctr_occupancy_pct
  for _, column in ipairs({"ctr_registers", "ctr_shared_bytes"}) do
    local resource = moved[column]
    if resource and occupancy and occupancy.rank then
      resource.text, resource.rank = resource.text .. ": " .. occupancy.text, 2
      occupancy.rank = nil
    end
  end
  local findings = {}
  for n, f in ipairs(found) do f.n = n end
  table.sort(found, function(a, b) return (a.rank or 99) < (b.rank or 99) or ((a.rank or 99) == (b.rank or 99) and a.n < b.n) end)
  for _, f in ipairs(found) do
    if f.rank then findings[#findings + 1] = f.text end
  end
  if #findings == 0 then
    findings[1] = string.format("counters unchanged (%d compared): the time moved %+.1f%% alone; look at the clocks " ..
      "or the machine", unchanged, change_pct or 0)
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
