-- The explainer itself (judge/explain.lua) on recorded GPU nights: bench/h100/explain/
-- counters_by_night.csv, 23 nights of seven kernels on an H100 (tests/gpu/test_explain_night.lua's
-- suite), each night with one known change to one kernel (or none). Every other (night, kernel) is
-- a no-change point: the explainer is run on each of them, as the nightly would run it on a point
-- it called slower (the baseline the point's last five clean nights, the noise its last twenty, the
-- time's change as measured), and it must name no counter at all. Then every changed point is
-- explained first by its cause. (The rule alone keeps no-change points from being explained on a
-- night; this runs the explainer where the rule is wrong, on the same noise.)
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local explain = require("gpuexp.judge.explain")
local rule = require("gpuexp.judge.rule")

local rows = gpuexp.csv.read(gpuexp.script_dir .. "/../../bench/h100/explain/counters_by_night.csv")
T.eq(#rows, 23 * 7, "23 nights of 7 kernels")
-- which kernel each change touched, and the explanation expected first (the GPU test's patterns)
local CHANGED = {
  instructions = {"fma", "^instructions %+[789]%.%d%% %(the time moved"},
  traffic = {"copy", "^DRAM bytes %+[5-8]%.%d%%"},
  spills = {"pressure", "^spilled bytes 0 %-> %d+"},
  shared = {"lean", "^shared memory bytes 0 %-> 102400: achieved occupancy"},
  registers = {"lean", "^registers %d+ %-> %d+: achieved occupancy"},
  bank = {"transpose", "^shared wavefronts per request [%d.]+ %-> [%d.]+ %(bank conflicts%)"},
  stores = {"scatter", "^sectors per global store [%d.]+ %-> [%d.]+ %(coalescing%)"},
  divergence = {"fma", "^active lanes per instruction [%d.]+ %-> [%d.]+ %(divergence%)"},
  tensor = {"mma", "^tensor pipe active [%d.]+%% %-> [%d.]+%% %(the tensor%-core path replaced"},
  -- the H100's nights predate the stall shares: nothing the recorded counters see
  sleep = {"fma", "^counters unchanged %(%d+ compared%): the time moved %+[%d.]+%% alone"},
}
local by_case, order = {}, {}
for _, row in ipairs(rows) do
  if not by_case[row.case] then by_case[row.case] = {}; order[#order + 1] = row.case end
  table.insert(by_case[row.case], row)
end

local function medians(list, column)
  local values = {}
  for i, row in ipairs(list) do values[i] = row[column] end
  return rule.median(values)
end

local clean_points, named, changed_points, right = 0, {}, 0, 0
local lines = {}
for _, case in ipairs(order) do
  local clean = {} -- the nights before, without a change to this kernel: its baselines
  for _, row in ipairs(by_case[case]) do
    local change = CHANGED[row.variant or ""]
    local changed_here = change and change[1] == case
    if #clean >= 3 then
      local base, noise = {}, {}
      for i = math.max(1, #clean - 4), #clean do base[#base + 1] = clean[i] end
      for i = math.max(1, #clean - 19), #clean do noise[#noise + 1] = clean[i] end
      local change_pct = (row.median_ms / medians(base, "median_ms") - 1) * 100
      local findings = explain.explain(base, row, change_pct, noise)
      local text = findings and table.concat(findings, "; ") or "(no counters)"
      if changed_here then
        changed_points = changed_points + 1
        local ok = findings and findings[1]:find(change[2]) ~= nil
        if ok then right = right + 1 end
        T.ok(ok, string.format("night %d, %s (%s): expected first '%s', got '%s'", row.night, case, row.variant, change[2], text))
        lines[#lines + 1] = string.format("night %2d %-9s %-12s %+8.1f%%  %s", row.night, case, row.variant, change_pct, text)
      else
        clean_points = clean_points + 1
        -- nothing named: the counters are unchanged, whatever the time did
        if not (findings and #findings == 1 and findings[1]:find("^counters unchanged")) then
          named[#named + 1] = string.format("night %d, %s (%+.2f%%): %s", row.night, case, change_pct, text)
        end
      end
    end
    if not changed_here then clean[#clean + 1] = row end
  end
end
print(table.concat(lines, "\n"))
print(string.format("%d of %d known changes explained first by their cause; %d of %d no-change points with a counter named",
  right, changed_points, #named, clean_points))
T.eq(changed_points, 10, "ten changed points")
T.ok(clean_points >= 120, "the no-change points: " .. clean_points)
T.eq(#named, 0, "no counter named on a no-change point:\n" .. table.concat(named, "\n"))

-- the floors that keep them clean: without the rate floor on bytes, a kernel that lives in L2 has
-- its few KB of DRAM traffic named (mma: 1024 -> 1792 bytes, +75%, on a night its time moved +0.3%)
local floor = explain.BYTES_FLOOR_GBPS
explain.BYTES_FLOOR_GBPS = 0
local mma = by_case.mma
local base = {mma[2], mma[3], mma[4], mma[5], mma[6]}
local findings = explain.explain(base, mma[7], 0.3, {mma[1], mma[2], mma[3], mma[4], mma[5], mma[6]})
explain.BYTES_FLOOR_GBPS = floor
T.ok(table.concat(findings, "; "):find("DRAM bytes", 1, true), "without the floor: " .. table.concat(findings, "; "))
findings = explain.explain(base, mma[7], 0.3, {mma[1], mma[2], mma[3], mma[4], mma[5], mma[6]})
T.eq(table.concat(findings, "; "):find("DRAM bytes", 1, true), nil, "with it: " .. table.concat(findings, "; "))
T.done()
