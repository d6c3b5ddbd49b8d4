-- The one place where the corpus meets gpuexp's judges (bench/corpus/README.md): recompute.lua
-- calls every judgment through these functions, on the stored records, and nothing else of
-- gpuexp's internals. When a judge changes its entry point, its texts or its findings' fields,
-- this file is what changes:
--   row            a record's point as the nightly's row (api/counters.lua turns raw counters into
--                  its ctr_* columns, so a new column of a later counter set comes from the same
--                  raw values)
--   nightly        nights recorded in a history and judged by judge/verdict.lua's replay (the
--                  nightly's one judge), each entry explained by judge/explain.lua's entry (the
--                  nightly's explanation: the counters against the entry's baselines, the noise of
--                  the last nights)
--   compare        judge/compare.lua on two runs
--   diagnose       api/diagnose.lua's judge on a launch's raw values; its price tag (price)
--   ab_replay      api/ab.lua's interleave fed with recorded blocks (the decision gpuexp ab takes)
--   tune_replay    gpuexp.tune with its run answered by recorded measurements
-- and the words that tell which cause a text names (EXPLAINED, DIAGNOSED, NEUTRAL).
local counters = require("gpuexp.api.counters")
local diagnose = require("gpuexp.api.diagnose")
local explain = require("gpuexp.judge.explain")
local compare = require("gpuexp.judge.compare")
local verdict = require("gpuexp.judge.verdict")
local history = require("gpuexp.store.history")
local result = require("gpuexp.store.result")
local csv = require("gpuexp.store.csv")
local ab = require("gpuexp.api.ab")

local J = {}

---------------------------------------------------------------------------------------------------
-- which cause a text names (lower-cased text, Lua patterns; any of a cause's patterns)

-- An explanation's first finding names the cause when it matches one of these.
J.EXPLAINED = {
  uncoalesced_loads = {"global load"},
  uncoalesced_stores = {"global store"},
  bank_conflicts = {"bank conflict", "shared wavefronts"},
  divergence = {"divergen", "active lanes"},
  register_spills = {"spill"},
  local_memory = {"local memory", "stack frame", "local load", "local store"},
  occupancy_registers = {"^registers.*occupancy"},
  occupancy_shared = {"^shared memory bytes.*occupancy", "^dynamic shared.*occupancy"},
  occupancy_block = {"block size", "threads a block", "threads per block", "block_size", "^launch shape"},
  too_few_blocks = {"^launch shape", "grid", "waves", " sms", "blocks"},
  tail_wave = {"^launch shape", "grid", "waves", "tail", "blocks"},
  atomic_contention = {"atomic"},
  barrier_stalls = {"barrier"},
  fp64 = {"fp64", "double"},
  tensor_to_fma = {"tensor"},
  extra_instructions = {"^instructions"},
  extra_traffic = {"^dram bytes", "^l2 bytes"},
  l2_overflow = {"l2 hit", "^dram bytes"},
  -- nothing accounts, nothing moved, or the warps' sleeping named (the stall a __nanosleep is)
  invisible = {"^nothing the counters see", "^counters unchanged", "sleeping"},
}
-- A first finding that names no cause (it says none accounts, or nothing moved).
J.NO_CAUSE = {"^nothing the counters see", "^counters unchanged"}

-- diagnose's verdict names the cause when it matches one of these (causes without an entry
-- have no verdict of their own: a diagnosis of one launch cannot see "more work than before", nor
-- that FMAs could have been a tensor core's)
J.DIAGNOSED = {
  uncoalesced_loads = {"uncoalesced.*load"},
  uncoalesced_stores = {"uncoalesced.*store"},
  bank_conflicts = {"bank conflict"},
  divergence = {"divergen"},
  register_spills = {"spill"},
  local_memory = {"local memory", "stack"},
  occupancy_registers = {"occupancy.*register"},
  occupancy_shared = {"occupancy.*shared"},
  occupancy_block = {"occupancy.*block size"},
  too_few_blocks = {"too few blocks", "grid", "idle sm", "waves"},
  tail_wave = {"tail", "wave"},
  atomic_contention = {"atomic"},
  barrier_stalls = {"barrier", "synchroni"},
  fp64 = {"fp64", "double"},
}
-- verdicts that name no defect (a kernel's limiter): on a good kernel they are not false alarms
J.NEUTRAL = {"^memory%-bound", "^compute%-bound", "^latency%-bound"}

local function matches(text, patterns)
  if type(text) ~= "string" then return false end
  local lower = text:lower()
  for _, pattern in ipairs(patterns or {}) do
    if lower:find(pattern) then return true end
  end
  return false
end
J.matches = matches

-- How a first finding reads against the true cause: "right", "none" (it names no cause) or
-- "wrong" (it names another).
function J.explained_as(first, cause)
  if matches(first, J.EXPLAINED[cause]) then return "right" end
  if first == nil or matches(first, J.NO_CAUSE) then return "none" end
  return "wrong"
end

-- The cause a finding names, for the tables (the first of EXPLAINED's causes it matches).
function J.cause_named(text, table_of)
  table_of = table_of or J.EXPLAINED
  local names = {}
  for cause in pairs(table_of) do names[#names + 1] = cause end
  table.sort(names)
  for _, cause in ipairs(names) do
    if cause ~= "invisible" and matches(text, table_of[cause]) then return cause end
  end
  return nil
end

---------------------------------------------------------------------------------------------------
-- rows

-- A point record of a night (collect.lua) as the nightly's row: the time's columns, the SM clock
-- and the counter set's columns from the raw values. nil when the point has no time.
function J.row(record)
  local t = record.timing
  if type(t) ~= "table" or type(t.median_ms) ~= "number" then return nil end
  local row = {median_ms = t.median_ms, noise_pct = t.noise_pct, samples = t.samples, sm_clock_mhz = t.sm_clock_mhz,
    clock_throttled = t.clock_throttled, mode = t.mode, status = "ok"}
  if type(record.counters) == "table" then
    local launch = record.launch or {}
    -- the launch's shape as the counter set's columns, where it has them (counters.shape: blocks,
    -- threads a block, waves, SMs given a block), from the recorded launch and its occupancy
    local shape = counters.shape and counters.shape(launch.grid, launch.block,
      launch.occupancy and (launch.occupancy.active_blocks_per_sm or launch.occupancy.blocks_per_sm),
      launch["launch__sm_count"]) or nil
    local fields = counters.fields(record.counters, record.resources, launch.shared or 0, shape)
    for k, v in pairs(fields) do row[k] = v end
  end
  return row
end

-- the columns a run of rows has: the time's first, then every other column in name order
local function columns_of(rows)
  local seen, list = {}, {"point", "median_ms", "noise_pct", "samples", "mode", "sm_clock_mhz", "clock_throttled"}
  for _, name in ipairs(list) do seen[name] = true end
  local extra = {}
  for _, row in pairs(rows) do
    for k in pairs(row) do
      if not seen[k] and k ~= "status" then seen[k] = true; extra[#extra + 1] = k end
    end
  end
  table.sort(extra)
  for _, name in ipairs(extra) do list[#list + 1] = name end
  list[#list + 1] = "status"
  return list
end

-- rows ({key -> row}) as a result (store/result.lua) with one axis, "point"
local function as_result(label, rows, order, samples)
  local columns = columns_of(rows)
  local run = result.new(label, {sweep = {name = "corpus", complete = true, axes = {{name = "point"}},
    finished_utc = "2000-01-01T00:00:00Z"}, script = "/nonexistent/corpus.lua"}, {"point"}, columns)
  for _, key in ipairs(order) do
    local row = rows[key]
    if row then
      local cells = {}
      for c, name in ipairs(columns) do
        if name == "point" then cells[c] = key else cells[c] = row[name] == nil and "" or csv.format_value(row[name]) end
      end
      assert(run:add(cells))
      local s = samples and samples[key]
      if s then run:add_samples(key, "samples_ms", table.concat(s, " ")) end
    end
  end
  run.source = gpuexp.hash(label .. tostring(#order) .. tostring(os.clock()))
  return run
end
J.as_result = as_result

---------------------------------------------------------------------------------------------------
-- compare

-- J.compare(base_rows, new_rows, order, options) -> {key -> entry (verdict, change_pct,
-- threshold_pct, basis)}: `gpuexp compare BASE NEW` of two runs of those rows (options.rule:
-- gpuexp's by default).
function J.compare(base_rows, new_rows, order, options)
  local base = as_result("base", base_rows, order)
  local new = as_result("new", new_rows, order)
  local judged = compare.compare({base}, new, {metrics = {{name = "median_ms", direction = "lower"}},
    rule = options and options.rule or "gpuexp", floor_pct = options and options.floor_pct})
  local by_key = {}
  for _, e in ipairs(judged.points) do by_key[e.key] = e end
  return by_key
end

---------------------------------------------------------------------------------------------------
-- the nightly

-- J.nightly(path, nights, order, options) -> per night, {key -> entry}: the nights (lists of
-- {key -> row}, oldest first) recorded as nightly runs of one experiment in a new history at
-- path, then judged as gpuexp nightly judges a recorded night (verdict.replay: the regression
-- states, the creep against the accepted level). options.explain(night) -> true: every entry of
-- that night is explained too, by explain.recorded as the nightly explains a regression, whatever
-- its verdict (entry.explanation_text; entry.explanation: its findings, split at "; ", the first
-- the one that counts). No night has a re-measure: a suspect stands as measured (the nightly's
-- confirm stage would clear some), and no diagnosis is attached.
function J.nightly(path, nights, order, options)
  options = options or {}
  history.remove(path)
  local db = assert(history.open(path))
  local ids = {}
  for n, rows in ipairs(nights) do
    local run = as_result(string.format("night %d", n), rows, order)
    local id, problem = history.record(db, run, {kind = "nightly", nightly = string.format("night-%03d", n),
      experiment = options.experiment or "corpus"})
    assert(id, problem)
    ids[n] = id
  end
  local _, judged = verdict.replay(db, ids[#ids], true)
  local out = {}
  for n, night in ipairs(judged) do
    local by_key, read = {}, {}
    for _, e in ipairs(night.comparison.points) do
      by_key[e.key] = e
      if options.explain and options.explain(n) then
        -- the nightly's own explanation of an entry (its baselines, the noise it names), as text
        local text = explain.recorded(db, e, night.run, read)
        if text then
          rawset(e, "explanation_text", text)
          local findings = {}
          for finding in (text .. "; "):gmatch("(.-); ") do findings[#findings + 1] = finding end
          rawset(e, "explanation", findings)
        end
      end
    end
    out[n] = by_key
  end
  db:close()
  history.remove(path)
  return out
end

---------------------------------------------------------------------------------------------------
-- diagnose

-- J.diagnose(record, ceilings) -> findings (verdict, evidence, ...), or nil without counters:
-- diagnose's judge on the launch's raw values, as gpuexp diagnose judges a launch (its block, and
-- its shape: the grid against the SMs and the blocks an SM holds at once).
function J.diagnose(record, ceilings)
  if type(record.counters) ~= "table" then return nil end
  local launch = record.launch or {}
  local occupancy = launch.occupancy or {}
  local ok, findings = pcall(diagnose.judge, record.counters, record.resources, ceilings, launch.block,
    {grid = launch.grid, sms = launch["launch__sm_count"], blocks_per_sm = occupancy.active_blocks_per_sm or occupancy.blocks_per_sm})
  if not ok then return {verdict = "error", evidence = {tostring(findings)}, error = true} end
  return findings
end

-- The counts a verdict's evidence is a ratio of: the requests a per-request ratio divides by (the
-- first of `any` collected), or the instructions a share is of (the sum of `sum`). Verdicts that
-- rest on throughputs (memory-, compute-, latency-bound) have none.
J.EVIDENCE_COUNTS = {
  {pattern = "uncoalesced.*load", any = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "smsp__sass_inst_executed_op_global_ld.sum"}},
  {pattern = "uncoalesced.*store", any = {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_inst_executed_op_global_st.sum"}},
  {pattern = "bank conflict", sum = {"smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum"}},
  {pattern = "atomic", sum = {"smsp__sass_inst_executed_op_global_atom.sum", "smsp__sass_inst_executed_op_global_red.sum"}},
  {pattern = "divergen", any = {"smsp__inst_executed.sum"}},
  {pattern = "spill", sum = {"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"}},
  {pattern = "local memory", sum = {"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"}},
  {pattern = "fp64", any = {"smsp__inst_executed_pipe_fp64.sum"}},
}
-- The floor this study holds a verdict's counts to: at least 0.5% of the launch's warp
-- instructions, and at least 100.
J.COUNT_FLOOR_SHARE, J.COUNT_FLOOR_MIN = 0.005, 100

-- J.evidence_count(findings, values) -> count, floor; nil when the verdict rests on no count (or
-- none of its counts was collected).
function J.evidence_count(findings, values)
  local text = (findings.verdict or ""):lower()
  for _, rule in ipairs(J.EVIDENCE_COUNTS) do
    if text:find(rule.pattern) then
      local count
      for _, name in ipairs(rule.any or {}) do
        if type(values[name]) == "number" then count = values[name]; break end
      end
      for _, name in ipairs(rule.sum or {}) do
        if type(values[name]) == "number" then count = (count or 0) + values[name] end
      end
      if not count then return nil end
      return count, math.max(J.COUNT_FLOOR_MIN, J.COUNT_FLOOR_SHARE * (values["smsp__inst_executed.sum"] or 0))
    end
  end
  return nil
end

-- The price tag of a diagnosis: {speedup (the time's ratio if fixed: 1.8 = 1.8 times faster),
-- low, high (its 80% interval)}, or nil when the findings carry none. Read from the first of
-- these fields present: price, gain, estimated_speedup, speedup, as a number (a speedup) or a
-- table {speedup|estimate|value, low, high}.
function J.price(findings)
  for _, field in ipairs({"price", "gain", "estimated_speedup", "speedup"}) do
    local v = findings and findings[field]
    if type(v) == "number" then return {speedup = v} end
    if type(v) == "table" then
      local estimate = v.speedup or v.estimate or v.value or v.x
      if type(estimate) == "number" then return {speedup = estimate, low = v.low, high = v.high} end
    end
  end
  return nil
end

---------------------------------------------------------------------------------------------------
-- ab

-- J.ab_replay(blocks, options) -> the decision of gpuexp ab's interleave on recorded blocks
-- (blocks[i] = {a = samples, b = samples, seconds = GPU and host time the block took}), in
-- order, as gpuexp.ab decides after its probe: {verdict, summary, stopped_by, gpu_s, wall_s,
-- blocks}; options: seed, budget_s, mde_pct (ab's defaults otherwise). A decision that wants more
-- blocks than recorded raises.
function J.ab_replay(blocks, options)
  local index_a, index_b, clock_s = 0, 0, 0
  local function side(which)
    return function()
      local i
      if which == "a" then index_a = index_a + 1; i = index_a else index_b = index_b + 1; i = index_b end
      local block = blocks[i]
      if not block then error({out_of_blocks = true}) end
      if which == "b" then clock_s = clock_s + block.seconds end
      return block[which]
    end
  end
  local o = {measure_a = side("a"), measure_b = side("b"), reps = 1, clock = function() return clock_s end}
  for key, value in pairs(options or {}) do o[key] = value end
  local r = ab.interleave(o)
  r.blocks = #r.ratios
  return r
end

---------------------------------------------------------------------------------------------------
-- tune

-- J.tune_replay(axes, measured, options, out) -> gpuexp.tune's result with each configuration's
-- row answered by `measured(point)` ({median_ms, samples_ms}); options: strategy, seed,
-- max_evals, tie_pct; out: where its rounds go (a folder that is removed after).
-- (gpuexp.tune prints its tie set to io.stdout whatever `quiet` says: it goes to /dev/null here)
function J.tune_replay(axes, measured, options, out)
  local spec = {name = "replay", axes = axes, quiet = true, out = out, run = function(p) return measured(p) end}
  for key, value in pairs(options) do spec[key] = value end
  local stdout, null = io.stdout, assert(io.open("/dev/null", "w"))
  io.stdout = null
  local ok, r = pcall(gpuexp.tune, spec)
  io.stdout = stdout
  null:close()
  if not ok then error(r, 0) end
  return r
end

return J
