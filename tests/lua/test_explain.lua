-- The regression explainer (judge/explain.lua) judged as the rule was: on known changes, each
-- named with its numbers (expected against got, printed as a table), and on no-change nights with
-- realistic counter noise, where it must never name a counter.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local explain = require("gpuexp.judge.explain")

-- a point's counters on an ordinary night
local function night(overrides, jitter)
  jitter = jitter or function() return 1 end
  local row = {ctr_registers = 32, ctr_spill_bytes = 0, ctr_shared_bytes = 4096,
    ctr_instructions = math.floor(1.2e7 * jitter(0)), ctr_dram_bytes = 6.4e8 * jitter(0.003),
    ctr_l2_bytes = 9.1e8 * jitter(0.003), ctr_l2_hit_pct = 31.5 + (jitter(0.02) - 1) * 50,
    ctr_occupancy_pct = 97.0 + (jitter(0.01) - 1) * 100, ctr_stall = "long_scoreboard", sm_clock_mhz = 1980}
  for k, v in pairs(overrides or {}) do row[k] = v end
  return row
end
local base = {night(), night(), night(), night(), night()}

local cases = {
  {"5% more instructions", {ctr_instructions = 1.26e7}, 5.3, "instructions +5.0% (the time moved +5.3%)"},
  {"register pressure", {ctr_registers = 40, ctr_occupancy_pct = 75.0}, 8.0,
    "registers 32 -> 40: achieved occupancy 97% -> 75%"},
  {"spills", {ctr_spill_bytes = 64, ctr_instructions = 1.23e7}, 4.0, "spilled bytes 0 -> 64"},
  {"more DRAM traffic", {ctr_dram_bytes = 6.976e8}, 9.0, "DRAM bytes +9.0%"},
  {"a worse L2 hit rate", {ctr_l2_hit_pct = 12.0, ctr_dram_bytes = 8.0e8}, 12.0, "L2 hit rate 31.5% -> 12%"},
  {"a lowered clock", {sm_clock_mhz = 1755}, 12.8, "SM clock -11.4% (1980 MHz -> 1755 MHz)"},
  {"another stall", {ctr_stall = "math_pipe_throttle", ctr_instructions = 1.3e7}, 7.0,
    "dominant stall long_scoreboard -> math_pipe_throttle"},
  {"nothing the counters see", {}, 3.1, "counters unchanged"},
}
print(string.format("%-28s  %-60s  %s", "known change", "expected", "got"))
for _, case in ipairs(cases) do
  local findings = explain.explain(base, night(case[2]), case[3])
  local got = findings and table.concat(findings, "; ") or "(none)"
  print(string.format("%-28s  %-60s  %s", case[1], case[4], got))
  T.ok(got:find(case[4], 1, true), case[1] .. ": expected '" .. case[4] .. "', got '" .. got .. "'")
  if case[1] ~= "nothing the counters see" then
    T.ok(not got:find("counters unchanged", 1, true), case[1] .. ": a change is not 'unchanged'")
  end
end
T.eq(explain.explain(base, {median_ms = 1}, 5), nil, "no counters: no explanation")

-- no-change nights: counters with the noise measured ones have (bytes +-0.3%, hit rate and
-- occupancy a point or so, instructions exact) never name a change
math.randomseed(7)
local function noise(width) return 1 + (math.random() * 2 - 1) * width end
local false_alarms = 0
for _ = 1, 500 do
  local history = {}
  for n = 1, 5 do history[n] = night(nil, noise) end
  local findings = explain.explain(history, night(nil, noise), 2.5)
  if not (findings and #findings == 1 and findings[1]:find("^counters unchanged")) then
    false_alarms = false_alarms + 1
    print("false alarm: " .. table.concat(findings or {}, "; "))
  end
end
print(string.format("no-change nights: %d of 500 named a counter", false_alarms))
T.eq(false_alarms, 0, "no counter named on a no-change night")
T.done()
