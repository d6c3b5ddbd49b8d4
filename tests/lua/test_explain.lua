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
    "registers 32 -> 40: achieved occupancy 97.0% -> 75.0%"},
  {"spills", {ctr_spill_bytes = 64, ctr_instructions = 1.23e7}, 4.0, "spilled bytes 0 -> 64"},
  {"more DRAM traffic", {ctr_dram_bytes = 6.976e8}, 9.0, "DRAM bytes +9.0%"},
  {"a worse L2 hit rate", {ctr_l2_hit_pct = 12.0, ctr_dram_bytes = 8.0e8}, 12.0, "L2 hit rate 31.5% -> 12.0%"},
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

-- the most telling change first, as the H200's known nights had them (tests/gpu/test_explain_night)
local function first_and_last(base_row, new_row, change)
  local findings = explain.explain({base_row, base_row, base_row}, new_row, change)
  return findings[1], findings[#findings]
end
-- an FMA chain 8% longer: one more register too, which costs nothing; instructions explain it
local first, last = first_and_last({ctr_registers = 11, ctr_instructions = 1e7, ctr_occupancy_pct = 95, ctr_stall = "wait"},
  {ctr_registers = 12, ctr_instructions = 1.084e7, ctr_occupancy_pct = 95, ctr_stall = "wait"}, 8.2)
T.eq(first, "instructions +8.4% (the time moved +8.2%)", "a compute kernel: instructions first")
T.eq(last, "registers 11 -> 12", "a register that moved nothing: last")
-- a copy that reads 1/8 more: its instructions grew 64%, but it waits on memory: the bytes first
first = first_and_last({ctr_registers = 8, ctr_instructions = 1e7, ctr_dram_bytes = 2.5e8, ctr_l2_bytes = 2.6e8,
  ctr_stall = "long_scoreboard"}, {ctr_registers = 12, ctr_instructions = 1.636e7, ctr_dram_bytes = 2.67e8,
  ctr_l2_bytes = 2.76e8, ctr_stall = "long_scoreboard"}, 4.3)
T.eq(first, "DRAM bytes +6.8%", "a memory-bound kernel: the bytes first")
-- spills: first, before the occupancy the lower register count bought
first = first_and_last({ctr_registers = 40, ctr_spill_bytes = 0, ctr_occupancy_pct = 72.8, ctr_instructions = 1e7,
  ctr_stall = "wait"}, {ctr_registers = 24, ctr_spill_bytes = 876, ctr_occupancy_pct = 95, ctr_instructions = 1.25e7,
  ctr_stall = "long_scoreboard"}, 155.8)
T.eq(first, "spilled bytes 0 -> 876", "spills first")

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
