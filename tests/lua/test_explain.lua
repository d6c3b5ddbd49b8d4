-- The regression explainer (judge/explain.lua) judged as the rule was: on known changes, each
-- with synthetic counters consistent with its cause (expected against got, printed as a table),
-- and on no-change nights whose counter noise is the noise recorded H200 nights showed, never
-- drawn narrower than the floors, where it must never name a counter.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local explain = require("gpuexp.judge.explain")

-- a point's counters on an ordinary night: a kernel that streams through global memory and stages
-- tiles in shared memory (jitter(width) multiplies a value by 1 +- width; none on a known night)
local function night(overrides, jitter)
  jitter = jitter or function(kind) return kind == "points" and 0 or 1 end
  local row = {ctr_registers = 32, ctr_spill_bytes = 0, ctr_shared_bytes = 4096, sm_clock_mhz = 1980,
    ctr_instructions = 1.2e7 * jitter("ctr_instructions"), ctr_lanes_per_instruction = 32 * jitter("ratio"),
    ctr_dram_bytes = 6.4e8 * jitter("ctr_dram_bytes"), ctr_l2_bytes = 9.1e8 * jitter("ctr_l2_bytes"),
    ctr_l2_hit_pct = 31.5 + jitter("points"), ctr_l1_hit_pct = 20.0 + jitter("points"),
    ctr_load_requests = 3.75e5, ctr_load_sectors_per_request = 4 * jitter("ratio"),
    ctr_store_requests = 3.75e5, ctr_store_sectors_per_request = 4 * jitter("ratio"),
    ctr_shared_requests = 2e5, ctr_shared_wavefronts_per_request = 1 * jitter("ratio"),
    ctr_tensor_pct = 0.0, ctr_occupancy_pct = 90.0 + jitter("points"), ctr_stall = "long_scoreboard",
    ctr_fp64_pct = 0.0, ctr_local_requests = 0, ctr_atomic_requests = 0, ctr_stack_bytes = 0,
    -- (the judgments issue's columns draw their noise apart: the older columns' draws stay as they were)
    ctr_sm_active_pct = 98.0 + jitter("points", true), ctr_stall_cycles = 12.0 * jitter("ratio", true),
    ctr_stall_long_scoreboard_pct = 60.0 + jitter("points", true), ctr_stall_wait_pct = 15.0 + jitter("points", true),
    ctr_stall_barrier_pct = 2.0, ctr_stall_lg_throttle_pct = 1.0, ctr_stall_sleeping_pct = 0.0,
    ctr_blocks = 1056, ctr_block_threads = 256, ctr_waves = 1.0, ctr_sms_busy_pct = 100.0}
  for k, v in pairs(overrides or {}) do row[k] = v end
  return row
end
local base = {night(), night(), night(), night(), night()}

-- {known change, counters of the night with it, the time's change, the finding expected first,
-- findings expected after it marked as not explaining it}
local cases = {
  {"extra instructions", {ctr_instructions = 1.344e7, ctr_stall = "wait"}, 11.0, "instructions +12.0% (the time moved +11.0%)"},
  {"extra DRAM bytes", {ctr_dram_bytes = 8.0e8, ctr_l2_bytes = 1.092e9}, 22.0, "DRAM bytes +25.0%"},
  {"spills", {ctr_spill_bytes = 96, ctr_registers = 24, ctr_instructions = 1.38e7, ctr_l2_bytes = 1.456e9,
    ctr_l1_hit_pct = 55.0}, 40.0, "spilled bytes 0 -> 96", {"registers 32 -> 24 (does not explain it)"}},
  {"occupancy lost to shared memory", {ctr_shared_bytes = 49152, ctr_occupancy_pct = 30.0}, 150.0,
    "shared memory bytes 4096 -> 49152: achieved occupancy 90.0% -> 30.0%"},
  {"occupancy lost to registers", {ctr_registers = 128, ctr_occupancy_pct = 45.0}, 60.0,
    "registers 32 -> 128: achieved occupancy 90.0% -> 45.0%"},
  -- the H200's transpose without its padding: 32-way conflicts, +89%, and incidental moves that
  -- the old counter set named alone
  {"bank conflicts", {ctr_shared_wavefronts_per_request = 32.4, ctr_registers = 31, ctr_shared_bytes = 3968}, 89.0,
    "shared wavefronts per request 1 -> 32.4 (bank conflicts)",
    {"registers 32 -> 31 (does not explain it)", "shared memory bytes 4096 -> 3968 (does not explain it)"}},
  {"uncoalesced stores", {ctr_store_sectors_per_request = 32, ctr_l2_bytes = 3.64e9, ctr_dram_bytes = 6.7e8}, 180.0,
    "sectors per global store 4 -> 32 (coalescing)"},
  {"uncoalesced loads", {ctr_load_sectors_per_request = 16, ctr_l2_bytes = 2.0e9, ctr_dram_bytes = 9.0e8}, 120.0,
    "sectors per global load 4 -> 16 (coalescing)"},
  {"divergence introduced", {ctr_lanes_per_instruction = 16, ctr_instructions = 2.16e7}, 75.0,
    "active lanes per instruction 32 -> 16 (divergence)"},
  {"tensor cores replaced by FMA", {ctr_tensor_pct = 0.0, ctr_instructions = 7.2e7, ctr_stall = "math_pipe_throttle"}, 300.0,
    "tensor pipe active 45.0% -> 0.0% (the tensor-core path replaced: instructions +500%)", nil, {ctr_tensor_pct = 45.0}},
  {"a lowered clock", {sm_clock_mhz = 1755}, 12.8, "SM clock -11.4% (1980 MHz -> 1755 MHz)"},
  {"a worse L2 hit rate", {ctr_l2_hit_pct = 12.0, ctr_dram_bytes = 8.0e8}, 12.0, "DRAM bytes +25.0%",
    {}},
  -- the cases the judgments issue found the explainer missing (an H200, a suite nobody had seen):
  -- FP64 replacing FP32 in an FMA loop (+88%)
  {"FP64 for FP32", {ctr_fp64_pct = 93.0, ctr_stall = "wait", ctr_stall_cycles = 21.0}, 88.0,
    "FP64 pipe active 0.0% -> 93.0% (FP64 arithmetic)"},
  -- a per-thread array indexed at run time: a 64-byte stack frame, local memory (+177%)
  {"local memory", {ctr_stack_bytes = 64, ctr_local_requests = 2.4e6, ctr_dram_bytes = 1.85e9, ctr_l2_bytes = 8.1e9,
    ctr_instructions = 1.5e7}, 177.0, "local memory: stack frame bytes 0 -> 64, local memory requests 0 -> 2.4e+06"},
  -- the same work in 1/16 of the blocks: half the SMs idle (+105%)
  {"too few blocks", {ctr_blocks = 66, ctr_waves = 0.0625, ctr_sms_busy_pct = 50.0, ctr_occupancy_pct = 12.5,
    ctr_sm_active_pct = 49.0}, 105.0, "launch shape 1056 blocks of 256 threads (1 waves, 100% of the SMs given a block) " ..
    "-> 66 blocks of 256 threads (0.062 waves, 50% of the SMs given a block): achieved occupancy 90.0% -> 12.5%"},
  -- an atomicAdd per thread on one address (+3061%)
  {"contended atomics", {ctr_atomic_requests = 1.05e6, ctr_stall_cycles = 350.0, ctr_stall_lg_throttle_pct = 90.0,
    ctr_stall_long_scoreboard_pct = 5.0, ctr_stall = "lg_throttle"}, 3061.0, "atomic requests at the L2 0 -> 1.05e+06 (atomics)"},
  -- a __syncthreads() per loop iteration with a shared-memory exchange (+755%): the barrier named
  {"barrier stalls", {ctr_stall_cycles = 95.0, ctr_stall_barrier_pct = 26.0, ctr_stall_long_scoreboard_pct = 8.0,
    ctr_stall = "long_scoreboard", ctr_instructions = 1.45e7, ctr_shared_requests = 6e6}, 755.0,
    "warp cycles per issued instruction 12 -> 95 (stalls: barrier 2% -> 26%, long_scoreboard 60% -> 8%)"},
  {"nothing the counters see", {}, 3.1, "counters unchanged (23 compared): the time moved +3.1% alone"},
  -- the corpus of causes' held-out H100 records (issue 33), missed before: the same work in 1.125
  -- waves (a tail wave: the last wave's 99 blocks leave 33 SMs idle; +47.5%): the waves rounded up
  -- account for it (2 wave-times for 1.125 waves of work: +78%), not "nothing accounts"
  {"a tail wave", {ctr_blocks = 891, ctr_waves = 1.125, ctr_occupancy_pct = 86.0}, 47.5,
    "launch shape 1056 blocks of 256 threads (1 waves, 100% of the SMs given a block) -> 891 blocks of 256 threads " ..
    "(1.1 waves, 100% of the SMs given a block)"},
  -- stores 32 sectors a request in a latency-bound kernel (+891%): the warp cycles grew with the
  -- memory waits, and the stores are their cause (before: the warp cycles named first, the stores
  -- "not explaining it")
  {"stores whose waits grew", {ctr_store_sectors_per_request = 32, ctr_stall_cycles = 75.9, ctr_l2_bytes = 4.0e9,
    ctr_stall_long_scoreboard_pct = 88.0, ctr_stall_lg_throttle_pct = 9.0, ctr_instructions = 1.57e7}, 891.0,
    "sectors per global store 4 -> 32 (coalescing): warp cycles per issued instruction 12 -> 75.9 (stalls: " ..
    "long_scoreboard 60% -> 88%, lg_throttle 1% -> 9%"},
  -- stores 16 sectors a request that also took 8 more registers (occupancy 70% -> 46%, +30%): the
  -- stores first, the registers' occupancy after them
  {"stores and registers", {ctr_store_sectors_per_request = 16, ctr_l2_bytes = 1.2e9, ctr_registers = 48,
    ctr_occupancy_pct = 59.0}, 30.0, "sectors per global store 4 -> 16 (coalescing)"},
}
print(string.format("%-32s  %-66s  %s", "known change", "expected first", "got"))
local wrong = 0
for _, case in ipairs(cases) do
  local name, changes, time_pct, first, after, base_changes = table.unpack(case)
  local rows = base
  if base_changes then rows = {night(base_changes), night(base_changes), night(base_changes)} end
  local new = night(changes)
  for k, v in pairs(base_changes or {}) do if changes[k] == nil then new[k] = v end end
  local findings, accounted = explain.explain(rows, new, time_pct)
  local got = findings and table.concat(findings, "; ") or "(none)"
  print(string.format("%-32s  %-66s  %s", name, first, got))
  local right = findings and findings[1]:sub(1, #first) == first
  for _, incidental in ipairs(after or {}) do
    local at
    for i, f in ipairs(findings or {}) do if f == incidental then at = i end end
    right = right and at and at > 1
  end
  if name ~= "nothing the counters see" then right = right and accounted == true end
  if not right then wrong = wrong + 1 end
  T.ok(right, name .. ": expected first '" .. first .. "' (then " .. table.concat(after or {}, ", ") .. "), got '" .. got .. "'")
end
print(string.format("%d of %d known changes explained wrongly", wrong, #cases))

-- The issue's night, with the counter set of issue 19 (no wavefronts): the incidental changes are
-- not offered as the cause, the explanation says nothing accounts for +89%
local old_set = {}
for n = 1, 3 do
  old_set[n] = {ctr_registers = 16, ctr_shared_bytes = 4224, ctr_instructions = 5.0e6, ctr_dram_bytes = 2.7e8,
    ctr_l2_bytes = 2.8e8, ctr_l2_hit_pct = 12.0, ctr_occupancy_pct = 88.0, ctr_stall = "long_scoreboard"}
end
local bad = {}
for k, v in pairs(old_set[1]) do bad[k] = v end
bad.ctr_registers, bad.ctr_shared_bytes = 15, 4096
local findings, accounted = explain.explain(old_set, bad, 89.0)
T.eq(table.concat(findings, "; "), "nothing the counters see accounts for +89.0%; registers 16 -> 15 (does not explain it); " ..
  "shared memory bytes 4224 -> 4096 (does not explain it)", "the old set on the bank-conflict night")
T.eq(accounted, false, "nothing accounts")
-- and with this set's wavefronts, the same night is bank conflicts
bad.ctr_shared_requests, bad.ctr_shared_wavefronts_per_request = 1.3e5, 32.4
for _, row in ipairs(old_set) do row.ctr_shared_requests, row.ctr_shared_wavefronts_per_request = 1.3e5, 1.0 end
findings, accounted = explain.explain(old_set, bad, 89.0)
T.eq(table.concat(findings, "; "), "shared wavefronts per request 1 -> 32.4 (bank conflicts); registers 16 -> 15 " ..
  "(does not explain it); shared memory bytes 4224 -> 4096 (does not explain it)", "the bank-conflict night explained")
T.eq(accounted, true, "bank conflicts account for +89%")
T.eq(explain.explain(base, {median_ms = 1}, 5), nil, "no counters: no explanation")
-- a NaN or an infinity (a broken collection) is not compared, on either side
local broken = {night({ctr_dram_bytes = 0 / 0}), night({ctr_dram_bytes = math.huge}), night(), night(), night()}
findings = explain.explain(broken, night({ctr_dram_bytes = math.huge, ctr_l2_bytes = 0 / 0, ctr_instructions = 1.344e7}), 11.0)
T.eq(table.concat(findings, "; "), "instructions +12.0% (the time moved +11.0%)", "NaN and infinity left out")

-- a measured change too small to account for the time: +3% instructions for a +40% night is not
-- offered at all (a build's fact, registers, is named and marked)
findings = explain.explain(base, night({ctr_instructions = 1.236e7, ctr_registers = 33}), 40)
T.eq(table.concat(findings, "; "), "nothing the counters see accounts for +40.0%; instructions +3.0% (the time moved " ..
  "+40.0%) (does not explain it); registers 32 -> 33 (does not explain it)", "+3% cannot account for +40%")

-- A time that did not rise, or rose inside its own night-to-night noise, has nothing to account
-- for (the corpus of causes' no-change nights on an H100: a kernel 1.7% faster with its DRAM bytes
-- 9.5% up was explained by them; a 2 us kernel +1.7%, inside its nights' 2.45-2.62 us, by its warp
-- cycles per issued instruction, +22% in one launch): the changes are listed, none accounts
local timed = {}
for n, ms in ipairs({2.59e-3, 2.62e-3, 2.51e-3, 2.45e-3}) do timed[n] = night({median_ms = ms}) end
findings, accounted = explain.explain(timed, night({median_ms = 2.59e-3, ctr_stall_cycles = 14.6}), 1.7, timed)
T.eq(findings[1], "nothing the counters see accounts for +1.7%: the time is inside its nights' noise (0.00245 to " ..
  "0.00262 ms, spread 2.75%)", "a 2 us kernel inside its noise: " .. table.concat(findings, "; "))
T.eq(findings[2], "warp cycles per issued instruction 12 -> 14.6 (does not explain it)", "the counter, marked")
T.eq(accounted, false, "nothing accounts inside the noise")
findings = explain.explain(base, night({ctr_dram_bytes = 7.0e8, ctr_l2_bytes = 9.9e8}), -1.7)
T.eq(findings[1], "nothing the counters see accounts for -1.7%: the time did not rise", "a faster night: " ..
  table.concat(findings, "; "))
-- past the noise the same counter accounts (3 noise nights at least: fewer cannot bound it)
findings = explain.explain(timed, night({median_ms = 3.1e-3, ctr_stall_cycles = 14.6}), 19.7, timed)
T.eq(findings[1], "warp cycles per issued instruction 12 -> 14.6", "past the noise: " .. table.concat(findings, "; "))
findings = explain.explain({timed[1], timed[2]}, night({median_ms = 2.63e-3, ctr_stall_cycles = 14.6}), 1.7)
T.eq(findings[1], "warp cycles per issued instruction 12 -> 14.6", "two nights do not bound the time's noise")

-- A history holding an earlier regression of the same size (a night with shared memory that cost
-- the same occupancy, reverted since) is not the counter's noise: the next one is still named
local nights = {}
for n = 1, 20 do nights[n] = night({ctr_registers = 8, ctr_occupancy_pct = 95.0 + (n % 3) * 0.5}) end
nights[15].ctr_shared_bytes, nights[15].ctr_occupancy_pct = 102400, 24.6
findings = explain.explain({nights[16], nights[17], nights[18], nights[19], nights[20]},
  night({ctr_registers = 128, ctr_occupancy_pct = 24.8}), 180, nights)
T.eq(findings[1], "registers 8 -> 128: achieved occupancy 95.5% -> 24.8%", "an earlier regression in the noise history")

-- the diagnosis the nightly attaches when nothing accounts (a row of gpuexp --diagnose)
T.eq(explain.diagnosis_text({diagnosis = "latency-bound", diagnosis_evidence = "SoL compute 3%, memory 1% (DRAM 0%)"}),
  "gpuexp diagnose says LATENCY-BOUND: SoL compute 3%, memory 1% (DRAM 0%)", "a diagnosis attached")
T.eq(explain.diagnosis_text({diagnosis = ""}), nil, "no diagnosis")

-- the most telling change first, as the H200's known nights had them (tests/gpu/test_explain_night)
local function first_and_last(base_row, new_row, change)
  local found = explain.explain({base_row, base_row, base_row}, new_row, change)
  return found[1], found[#found]
end
-- an FMA chain 8% longer: one more register too, which costs nothing; instructions explain it
local first, last = first_and_last({ctr_registers = 11, ctr_instructions = 1e7, ctr_occupancy_pct = 95, ctr_stall = "wait"},
  {ctr_registers = 12, ctr_instructions = 1.084e7, ctr_occupancy_pct = 95, ctr_stall = "wait"}, 8.2)
T.eq(first, "instructions +8.4% (the time moved +8.2%)", "a compute kernel: instructions first")
T.eq(last, "registers 11 -> 12 (does not explain it)", "a register that moved nothing: last, marked")
-- a copy that reads 1/8 more: its instructions grew 64%, but it waits on memory: the bytes first
first = first_and_last({ctr_registers = 8, ctr_instructions = 1e7, ctr_dram_bytes = 2.5e8, ctr_l2_bytes = 2.6e8,
  ctr_stall = "long_scoreboard"}, {ctr_registers = 12, ctr_instructions = 1.636e7, ctr_dram_bytes = 2.67e8,
  ctr_l2_bytes = 2.76e8, ctr_stall = "long_scoreboard"}, 4.3)
T.eq(first, "DRAM bytes +6.8%", "a memory-bound kernel: the bytes first")
-- spills: first, before the occupancy the lower register count bought
-- (the L2 bytes, +922.7% on the H200, are the spills' traffic: what accounts for +155.8%)
first = first_and_last({ctr_registers = 40, ctr_spill_bytes = 0, ctr_occupancy_pct = 72.8, ctr_instructions = 1e7,
  ctr_l2_bytes = 1e8, ctr_stall = "wait"}, {ctr_registers = 24, ctr_spill_bytes = 876, ctr_occupancy_pct = 95,
  ctr_instructions = 1.25e7, ctr_l2_bytes = 1.0227e9, ctr_stall = "long_scoreboard"}, 155.8)
T.eq(first, "spilled bytes 0 -> 876", "spills first")

-- No-change nights. The noise of each counter from night to night, as recorded H200 nights showed
-- it, and never narrower than the counter's floor (so the floors alone cannot keep these nights
-- clean: the noise guard has to):
--   L2 bytes 3.3%: bench/h200/explain/first_run.txt, night 4: the FMA chain's L2 bytes moved -3.3%
--     on a night whose change added only instructions (its traffic is its output, unchanged);
--   DRAM bytes 3.3%: no recorded unchanged move; taken as L2's (its floor is 2%);
--   instructions 1%: identical on every recorded night (the floor);
--   rates and occupancy 5 points, ratios 5%: under the floors on every recorded night (the floors).
local NOISE = {ctr_l2_bytes = 0.033, ctr_dram_bytes = 0.033, ctr_instructions = 0.01, ratio = 0.05, points = 5}
-- and wider where the nights tests/gpu/test_explain_night.lua records show more: each counter's
-- largest move from its median over a point's no-change nights (relative for counts and ratios,
-- points for rates), from bench/h200/explain/counters_by_night.csv when it is there
local KIND = {ctr_instructions = "ctr_instructions", ctr_dram_bytes = "ctr_dram_bytes", ctr_l2_bytes = "ctr_l2_bytes",
  ctr_lanes_per_instruction = "ratio", ctr_load_sectors_per_request = "ratio", ctr_store_sectors_per_request = "ratio",
  ctr_shared_wavefronts_per_request = "ratio", ctr_l2_hit_pct = "points", ctr_l1_hit_pct = "points",
  ctr_occupancy_pct = "points", ctr_tensor_pct = "points"}
local function recorded_noise(path)
  local readable, rows = pcall(gpuexp.csv.read, path)
  if not readable then return nil end
  local by_case = {}
  for _, row in ipairs(rows) do
    if (row.variant == nil or row.variant == "") and row.case then
      by_case[row.case] = by_case[row.case] or {}
      table.insert(by_case[row.case], row)
    end
  end
  local widths = {}
  for _, case_rows in pairs(by_case) do
    for column, kind in pairs(KIND) do
      local values = {}
      for _, row in ipairs(case_rows) do
        if type(row[column]) == "number" then values[#values + 1] = row[column] end
      end
      local center = require("gpuexp.judge.rule").median(values)
      for _, v in ipairs(values) do
        local width = kind == "points" and math.abs(v - center) or (center ~= 0 and math.abs(v - center) / center or 0)
        widths[kind] = math.max(widths[kind] or 0, width)
      end
    end
  end
  return widths
end
-- (the reader itself, on nights whose noise is known)
local sample = T.temporary_directory() .. "/nights.csv"
local file = assert(io.open(sample, "w"))
file:write("night,variant,case,ctr_l2_bytes,ctr_occupancy_pct\n1,,copy,100,90\n2,,copy,105,91\n3,,copy,99,89\n" ..
  "4,bank,copy,500,40\n5,,copy,100,96\n")
file:close()
local sample_widths = recorded_noise(sample)
T.eq(string.format("%.3f %.1f", sample_widths.ctr_l2_bytes, sample_widths.points), "0.050 5.5", "noise read from recorded nights (the bank night left out)")
local recorded = recorded_noise(gpuexp.script_dir .. "/../../bench/h200/explain/counters_by_night.csv")
for kind, width in pairs(recorded or {}) do NOISE[kind] = math.max(NOISE[kind], width) end
print("no-change noise: " .. (recorded and "the floors, 3.3% on bytes, and bench/h200/explain/counters_by_night.csv"
  or "the floors and 3.3% on bytes (no bench/h200/explain/counters_by_night.csv yet)"))
local newer = require("gpuexp.api.search").generator(11)
local function noisy(kind, newer_column)
  local width = NOISE[kind]
  local u = (newer_column and newer.float() or math.random()) * 2 - 1
  if kind == "points" then return u * width end
  return 1 + u * width
end
-- nights: the point's history the explainer reads the noise from (the nightly gives it 20; the
-- first nights have 5), the last 5 of them the baseline
-- -> the nights that name a counter at all, those that name one as the cause (a wrong
-- explanation: the others only list moves marked as not explaining it), and an example
local function no_change_nights(count, nights)
  math.randomseed(7)
  newer = require("gpuexp.api.search").generator(11)
  local named, wrong, example = 0, 0, nil
  for _ = 1, count do
    local history, baseline = {}, {}
    for n = 1, nights or 5 do history[n] = night(nil, noisy) end
    for n = #history - 4, #history do baseline[#baseline + 1] = history[n] end
    local found, accounted = explain.explain(baseline, night(nil, noisy), 2.5, history)
    -- a night that names no counter: unchanged, or nothing that moved accounts for the time
    if not (found and #found == 1 and (found[1]:find("^counters unchanged") or found[1]:find("^nothing the counters"))) then
      named = named + 1
      if accounted then wrong = wrong + 1 end
      example = example or table.concat(found or {}, "; ")
    end
  end
  return named, wrong, example
end
-- With the 20 nights the nightly reads the noise from, no night names a counter
local named, wrong, example = no_change_nights(500, 20)
print(string.format("no-change nights, noise from 20 nights: %d of 500 named a counter, %d as the cause%s", named, wrong,
  example and (" (" .. example .. ")") or ""))
T.eq(named, 0, "no counter named on a no-change night with 20 nights of noise: " .. tostring(example))
-- Five nights (a history's first week) cannot bound a noise drawn this wide: now and then four of
-- them sit close together and a fifth value an ordinary night away looks like a change (L2 bytes
-- +5.3% once the other nights agreed within 0.8%). 14 of these 500 nights name one as the cause
-- (2.8%; the bound is 3%); 24 name one, most of them marked as not explaining it.
named, wrong, example = no_change_nights(500)
print(string.format("no-change nights, noise from 5 nights: %d of 500 named a counter, %d as the cause%s", named, wrong,
  example and (" (" .. example .. ")") or ""))
T.ok(wrong <= 15, "at most 3% of no-change nights explained by a counter, got " .. wrong .. ": " .. tostring(example))
-- the guard is what keeps them clean: without it, the same nights name counters as the cause
local spreads = explain.NOISE_SPREADS
explain.NOISE_SPREADS = 0
local _, unguarded = no_change_nights(500)
local unguarded_long = no_change_nights(500, 20)
explain.NOISE_SPREADS = spreads
print(string.format("without the spread guard: %d of 500 explained by a counter with 5 nights, %d named with 20",
  unguarded, unguarded_long))
T.ok(unguarded > 15, "without the spread guard the bound does not hold (" .. unguarded .. " nights)")
-- (with 20 nights the range of those nights alone keeps them clean: mutating it fails the first check)
T.done()
