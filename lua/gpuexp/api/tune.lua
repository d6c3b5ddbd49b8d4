-- gpuexp.tune{...}: search a sweep's space (axes and where) for the configurations that minimise
-- or maximise an objective column, under a budget, and return the tie set (judge/tie.lua). The
-- strategies live in api/search.lua; every round of measurements they ask for is a sweep
-- (gpuexp.sweep, one CSV per round: OUT-stem.NAME.round-NNN.csv), so a tune is supervised (a crashing or hanging
-- configuration is a row and is skipped), resumable (--resume replays the finished rounds from
-- their CSVs: the strategies are deterministic given their seed and results), recorded in the
-- history (--history/--record record every round, and the winners: store/winners.lua) and, for
-- brute force and random sampling, shardable. docs/tune.md is the reference.
local sweep = require("gpuexp.api.sweep")
local search = require("gpuexp.api.search")
local spaces = require("gpuexp.api.space")
local regret = require("gpuexp.api.regret")
local pool = require("gpuexp.api.compile_pool")
local option_keys = require("gpuexp.api.option_keys")
local tie = require("gpuexp.judge.tie")
local text_formats = require("gpuexp.store.text")
local rule = require("gpuexp.judge.rule")
local csv = require("gpuexp.store.csv")
local json = require("gpuexp.store.json")
local meta = require("gpuexp.store.meta")
local result_store = require("gpuexp.store.result")
local samples_store = require("gpuexp.store.samples")
local winners = require("gpuexp.store.winners")

local M = {}

local known = {
  name = true, axes = true, where = true, setup = true, run = true, columns = true, out = true, quiet = true,
  timeout_s = true, objective = true, condition = true, samples = true, strategy = true, seed = true,
  max_evals = true, budget_s = true, start = true, tie_pct = true, alpha = true, eta = true, batch = true,
  sources = true, options = true, history = true, compile = true, compile_workers = true, confidence = true,
}

M.PLAN_POINTS = 8 -- configurations an offline plan compiles and checks

-- The options `gpuexp tune` passes (GPUEXP_TUNE: JSON), which win over the script's.
local function command_options()
  local text = os.getenv("GPUEXP_TUNE")
  if not text or text == "" then return {} end
  local ok, value = pcall(json.decode, text)
  if not ok or type(value) ~= "table" then gpuexp.error("usage", "tune: GPUEXP_TUNE is not a JSON object") end
  return value
end

local function check(spec)
  if type(spec) ~= "table" then gpuexp.error("usage", "tune: expected a table of options") end
  option_keys.check(spec, known, "tune")
  if type(spec.run) ~= "function" then gpuexp.error("usage", "tune: 'run' must be a function(point) returning a row") end
  if spec.strategy ~= nil and not search.STRATEGIES[spec.strategy] then
    gpuexp.error("usage", "tune: 'strategy' is brute, random, racing or model, got '" .. tostring(spec.strategy) .. "'")
  end
  for _, key in ipairs({"max_evals", "budget_s", "tie_pct", "alpha", "eta", "batch"}) do
    local v = spec[key]
    if v ~= nil and (type(v) ~= "number" or v ~= v or v < 0 or v == math.huge or (key ~= "tie_pct" and v == 0)) then
      gpuexp.error("usage", "tune: '" .. key .. "' must be a number > 0, got " .. tostring(v))
    end
  end
  if spec.seed ~= nil and not search.seed(spec.seed) then
    gpuexp.error("usage", "tune: 'seed' must be a whole number from 0 to 2^63-1, got " .. tostring(spec.seed))
  end
  if spec.confidence ~= nil and (type(spec.confidence) ~= "number" or not (spec.confidence > 0 and spec.confidence < 1)) then
    gpuexp.error("usage", "tune: 'confidence' (of the regret bound) must be between 0 and 1, got " .. tostring(spec.confidence))
  end
  if spec.compile ~= nil and type(spec.compile) ~= "function" then
    gpuexp.error("usage", "tune: 'compile' must be a function(point) returning gpuexp.compile's table (or a list of them)")
  end
  local workers = spec.compile_workers
  if workers ~= nil and (math.type(workers) ~= "integer" or workers < 0 or workers > 256) then
    gpuexp.error("usage", "tune: 'compile_workers' must be a whole number from 0 to 256, got " .. tostring(workers))
  end
  if spec.alpha and spec.alpha >= 1 then gpuexp.error("usage", "tune: 'alpha' must be below 1") end
  if spec.eta and spec.eta < 2 then gpuexp.error("usage", "tune: 'eta' must be at least 2") end
end

-- The objective: a column and which way is better ({column=, goal="min"|"max"} or a column name).
local function objective_of(spec)
  local objective = spec.objective or "median_ms"
  if type(objective) == "string" then objective = {column = objective} end
  if type(objective) ~= "table" or type(objective.column) ~= "string" then
    gpuexp.error("usage", "tune: 'objective' is a column name or {column = NAME, goal = 'min'|'max'}")
  end
  local goal = objective.goal
  if goal == nil then
    local direction = rule.direction(objective.column)
    if not direction then
      gpuexp.error("usage", "tune: say whether '" .. objective.column .. "' is to be minimised or maximised: " ..
        "objective = {column = '" .. objective.column .. "', goal = 'min'}")
    end
    goal = direction == "higher" and "max" or "min"
  end
  if goal ~= "min" and goal ~= "max" then gpuexp.error("usage", "tune: objective.goal is 'min' or 'max'") end
  return {column = objective.column, goal = goal}
end

-- Whether a row satisfies the condition (a function of the row, or a column that must be true).
local function holds(condition, row)
  if condition == nil then return true end
  if type(condition) == "function" then return condition(row) and true or false end
  local value = row[condition]
  return value == true or value == 1 or value == "true" or value == "ok"
end

-- A point's key, as the ledger and the result files make it.
local function key_of(point, axes)
  local cells = {}
  for i, axis in ipairs(axes) do cells[i] = csv.format_value(point[axis.name]) end
  return result_store.key(cells)
end

-- The tune's key in the history: the kernel's source hash (the files named by `sources` and the
-- compile `options`, else the script), the architecture, GPU model, driver and CUDA version.
local function history_key(spec, device)
  local parts = {}
  for _, path in ipairs(spec.sources or {}) do
    local full = path:sub(1, 1) == "/" and path or (gpuexp.script_dir and gpuexp.script_dir .. "/" .. path or path)
    local text = meta.read_all(full) or meta.read_all(path)
    if not text then gpuexp.error("usage", "tune: source '" .. path .. "' cannot be read (sources name the kernel files)") end
    parts[#parts + 1] = path .. "\0" .. text
  end
  if #parts == 0 then parts[1] = gpuexp.script and meta.read_all(gpuexp.script) or "" end
  parts[#parts + 1] = json.encode(spec.options or {})
  local versions = gpuexp.versions(false)
  local facts = device and device.facts or {}
  return {source_hash = gpuexp.hash(table.concat(parts, "\0")), arch = facts.arch or gpuexp.offline_arch or "?",
    gpu = facts.name or "?", driver = meta.driver_version() or tostring(versions.driver_cuda or "?"),
    cuda = tostring(versions.nvrtc or versions.built_with_cuda or "?")}
end

-- The configurations to start from: given points, or "stored" (the history's winners of this
-- tune: this key's first, then those of other keys, whose drift this tune checks).
local function start_points(spec, space, stored)
  local indices, unknown = {}, 0
  local function add(point)
    local index = type(point) == "table" and space.index_of(point) or nil
    if index then indices[#indices + 1] = index else unknown = unknown + 1 end
  end
  if spec.start == "stored" then
    for _, record in ipairs(stored) do
      add(record.best)
      for _, t in ipairs(record.ties) do add(t.point) end
    end
  elseif type(spec.start) == "table" then
    for _, point in ipairs(spec.start) do
      if type(point) ~= "table" then gpuexp.error("usage", "tune: 'start' is a list of points or \"stored\"") end
      add(point)
    end
  elseif spec.start ~= nil then
    gpuexp.error("usage", "tune: 'start' is a list of points or \"stored\"")
  end
  if unknown > 0 then
    io.stderr:write(text_formats.format("gpuexp tune: %d start configuration(s) are not in the space (axes and where) and " ..
      "are skipped\n", unknown))
  end
  return indices
end

-- Where a tune's rounds go: beside the script's output, OUT-stem.NAME.round-NNN.csv.
local function rounds_prefix(spec, name)
  local out = spec.out or gpuexp.out
  if not out then -- the default, as a sweep's: results/SCRIPT.csv, its folder made (a named one must exist)
    local stem = (gpuexp.script or "tune"):match("([^/]+)$"):gsub("%.lua$", "")
    out = "results/" .. stem .. ".csv"
    gpuexp.mkdir("results")
  end
  if type(out) ~= "string" or out == "" then gpuexp.error("usage", "tune: 'out' must name a CSV file") end
  return out:gsub("%.csv$", "") .. "." .. name:gsub("[^%w_.-]", "_")
end

-- The measurement policy of a level: a full measurement at level 1 (the script's own policy); a
-- short level (racing's, the model's) a fraction of its minimum GPU time, a few samples, no noise
-- target. M.level_policy(level, defaults) -> the options a level below 1 changes (defaults: the
-- script's gpuexp.measure_defaults; bench/tune/replay.lua simulates short levels with it).
function M.level_policy(level, defaults)
  local measure = require("gpuexp.api.measure")
  local min_samples = math.max(5, math.floor((defaults.min_samples or measure.defaults.min_samples) * level + 0.5))
  return {min_time_ms = math.max(1, (defaults.min_time_ms or measure.defaults.min_time_ms) * level),
    min_samples = min_samples, max_noise_pct = 100,
    -- the same share of the samples' cap: a full measurement that stops there costs level x it
    max_samples = math.max(min_samples, math.ceil((defaults.max_samples or measure.defaults.max_samples) * level)),
    timeout_s = math.max(0.1, (defaults.timeout_s or measure.defaults.timeout_s) * level)}
end

local function with_level(level, fn)
  if level >= 1 then return fn() end
  local defaults = gpuexp.measure_defaults
  local saved = {}
  for k, v in pairs(defaults) do saved[k] = v end
  for k, v in pairs(M.level_policy(level, defaults)) do defaults[k] = v end
  local results = table.pack(pcall(fn))
  for k in pairs(defaults) do defaults[k] = nil end
  for k, v in pairs(saved) do defaults[k] = v end
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n) -- every value: the rows and the round's path (a resume reads its samples)
end

local function sum(list)
  local total = 0
  for _, v in ipairs(list) do total = total + v end
  return total
end

-- The tune's wall-time breakdown (result.timing; docs/howto/tune.md "Where the wall time goes"), in
-- seconds of the measuring process: gpu_s the timed samples its run callbacks returned; run_s the
-- rest of those callbacks (warm-up, probes, verification, synchronisation) less wait_s (for the
-- compile pool), compile_s (gpuexp.compile's cache lookups and foreground compiles) and load_s
-- (module loads); sweep_s the rounds' engine (rows to the ledger, the CSV and samples files);
-- pool_s the pool's start, submissions and end; setup_s the script's setup; search_s the rest (the
-- strategy's statistics and choices between rounds, the result). They add up to wall_s.
M.TIMING = {"gpu_s", "run_s", "wait_s", "compile_s", "load_s", "sweep_s", "pool_s", "setup_s", "search_s"}

local function new_timing()
  local timing = {wall_s = 0, runs = 0}
  for _, key in ipairs(M.TIMING) do timing[key] = 0 end
  return timing
end

-- o.run timed into t.timing (waiting for the pool first): the callback's value or error unchanged.
local function timed_run(t)
  local timing, column, o = t.timing, t.samples_column, t.o
  local clock, compiled, loaded = gpuexp.clock, gpuexp._compile_seconds, gpuexp._load_seconds
  return function(point)
    local started = clock()
    if t.pool then t.pool.wait_for(point) end
    local waited, compile_s, load_s = clock(), compiled(), loaded()
    local ok, row = pcall(o.run, point)
    local ended = clock()
    compile_s, load_s = compiled() - compile_s, loaded() - load_s
    local gpu_s = 0
    local samples = ok and type(row) == "table" and row[column]
    if type(samples) == "table" then
      for _, ms in ipairs(samples) do if type(ms) == "number" and ms == ms and ms >= 0 then gpu_s = gpu_s + ms / 1000 end end
    end
    timing.runs = timing.runs + 1
    timing.wait_s = timing.wait_s + (waited - started)
    timing.compile_s, timing.load_s, timing.gpu_s = timing.compile_s + compile_s, timing.load_s + load_s, timing.gpu_s + gpu_s
    timing.run_s = timing.run_s + (ended - waited) - compile_s - load_s - gpu_s
    timing.round_s = timing.round_s + (ended - started)
    if not ok then error(row, 0) end
    return row
  end
end

-- fn(...) timed into t.timing[key]; its values returned.
local function timed(t, key, fn, ...)
  local started = gpuexp.clock()
  local results = table.pack(fn(...))
  t.timing[key] = t.timing[key] + gpuexp.clock() - started
  return table.unpack(results, 1, results.n)
end

-- The tune's settings, from its options alone: the script's options with `gpuexp tune`'s over
-- them (both checked), its name, objective, strategy and which way the samples run.
local function settings_of(spec)
  check(spec)
  local o = {}
  for k, v in pairs(spec) do o[k] = v end
  for k, v in pairs(command_options()) do o[k] = v end
  check(o)
  local name = o.name or "tune"
  if type(name) ~= "string" or name == "" then gpuexp.error("usage", "tune: 'name' must be a non-empty string") end
  local objective = objective_of(o)
  local samples_column = o.samples or "samples_ms"
  -- which way the samples run: times are better lower whatever the objective (gflops maximised,
  -- its samples_ms minimised)
  local sample_way = rule.direction(samples_column)
  return {o = o, name = name, objective = objective, samples_column = samples_column,
    sample_direction = sample_way == "lower" and "min" or sample_way == "higher" and "max" or objective.goal,
    strategy = o.strategy or "model", seed = search.seed(o.seed or 1), run_options = gpuexp.run_options or {}}
end

-- The space searched (api/space.lua: listed when small, lazy when large), each configuration found
-- again by its key.
local function add_space(t)
  t.space = spaces.new(t.o.axes, t.o.where)
  t.axes = t.space.axes
  t.count = t.space.count or t.space.estimate(search.generator(1))
  if t.count == 0 then gpuexp.error("usage", "tune: the filter ('where') left no configuration") end
  if t.run_options.shard and (t.strategy == "racing" or t.strategy == "model") then
    gpuexp.error("usage", "tune: --shard splits brute force and random sampling only; racing and model choose each " ..
      "round from the last, which one share cannot see (run them unsharded, or use --devices)")
  end
end

-- Where the tune writes and what it reads back: the rounds' prefix, its key in the history, and
-- the winners stored there before (this key's first).
local function add_records(t)
  t.prefix = rounds_prefix(t.o, t.name)
  local found_device, default_device = pcall(gpuexp.device)
  local device = not gpuexp.offline_arch and found_device and default_device or nil
  t.key = history_key(t.o, device)
  t.history_path = t.o.history or t.run_options.history
  t.stored = {}
  if t.history_path then
    local list, why, damaged = winners.latest(t.history_path, t.name)
    if not list and t.o.start == "stored" then
      gpuexp.error("usage", string.format("tune '%s': start = \"stored\", but the stored winners in %s cannot be " ..
        "read: %s (start without them, or repair the history)", t.name, t.history_path, why))
    end
    if not list then io.stderr:write("gpuexp tune: the stored winners cannot be read: " .. why .. "\n") end
    for _, problem in ipairs(damaged or {}) do
      io.stderr:write("gpuexp tune: a damaged stored winner is skipped: " .. problem .. "\n")
    end
    t.stored = list or {}
    table.sort(t.stored, function(a, b) -- this key's winners first
      return #winners.differences(a, t.key) < #winners.differences(b, t.key)
    end)
  end
end

-- One row of a round as the search takes it: {status, cost_s, value, samples}; a row that failed or
-- broke the condition has no value. samples_of(row) reads a resumed row's samples from its file.
local function row_result(t, row, samples_of)
  local r = {status = row.status, cost_s = 0}
  -- the value and samples as the round's files hold them, so that a resumed tune, which reads them
  -- back, takes every decision as the run that measured them did (and measures nothing again)
  local value = csv.convert(csv.format_value(row[t.objective.column]))
  local samples = row[t.samples_column]
  if type(samples) ~= "table" and row.status == "ok" then samples = samples_of(row) end
  if type(samples) == "table" then samples = samples_store.as_stored(samples) end
  if type(samples) == "table" then r.cost_s = sum(samples) / 1000 end
  if row.status == "ok" and type(value) == "number" and value == value then
    local ok, verified = pcall(holds, t.o.condition, row)
    if ok and verified then
      r.value, r.samples = value, type(samples) == "table" and #samples > 1 and samples or nil
    else
      r.status = ok and "condition" or "condition error: " .. tostring(verified)
    end
  end
  return r
end

-- The rounds: rounds.measure(batch, level) runs the configurations of a batch (indices into the
-- points) as one sweep, OUT-stem.NAME.round-NNN.csv, the script's setup once before the first,
-- and returns their results in the batch's order. rounds.count and rounds.measured (configurations
-- with a row here: a shard has its share's only) say what was done.
local function new_rounds(t)
  local o, axes = t.o, t.axes
  local rounds = {count = 0, measured = 0}
  local set_up, has_row = false, {}
  function rounds.measure(batch, level)
    rounds.count = rounds.count + 1
    local round = rounds.count
    local wanted, position_of, points = {}, {}, {}
    for i, index in ipairs(batch) do
      wanted[t.space.key(index)] = index; position_of[index] = i
      points[i] = t.space.point(index)
    end
    if not set_up then
      set_up = true
      if o.setup then timed(t, "setup_s", o.setup) end
    end
    if t.pool then timed(t, "pool_s", t.pool.submit, points) end
    local out = string.format("%s.round-%03d.csv", t.prefix, round)
    local sweep_started = gpuexp.clock()
    t.timing.round_s = 0
    local rows, path = with_level(level, function()
      return sweep.run{name = string.format("%s/round-%03d", t.name, round), axes = o.axes, expect_failures = true,
        points = points, run = timed_run(t), columns = o.columns, out = out, timeout_s = o.timeout_s, quiet = true,
        meta = {tune = t.name, round = round, level = level, strategy = t.strategy, seed = tostring(t.seed)}}
    end)
    t.timing.sweep_s = t.timing.sweep_s + (gpuexp.clock() - sweep_started) - t.timing.round_s
    local stored_samples
    local function samples_of(row) -- a resumed row: its samples from the round's samples file
      stored_samples = stored_samples or result_store.read(path)
      return stored_samples and stored_samples:samples(key_of(row, axes), t.samples_column)
    end
    local results = {}
    for _, row in ipairs(rows) do
      local index = wanted[key_of(row, axes)]
      local position = index and position_of[index]
      if position then
        if not has_row[index] then has_row[index] = true; rounds.measured = rounds.measured + 1 end
        results[position] = row_result(t, row, samples_of)
      end
    end
    t.say(string.format("round %d: %d configuration(s) at level %.3g", round, #batch, level))
    return results
  end
  return rounds
end

local function budget_text(o)
  return o.budget_s and string.format(", budget_s %g", o.budget_s) or ""
end

-- The offline plan: the start points and a seeded sample compile and their launches are checked;
-- nothing is timed, and the line says what the tune would do.
local function plan(t, rounds)
  local rng = search.generator(t.seed)
  local batch, seen = {}, {}
  for _, index in ipairs(t.start) do if not seen[index] then seen[index] = true; batch[#batch + 1] = index end end
  for _ = 1, 50 * M.PLAN_POINTS do
    if #batch >= math.min(M.PLAN_POINTS, t.count) then break end
    local index = t.space.draw(rng)
    if not index then break end
    if not seen[index] then seen[index] = true; batch[#batch + 1] = index end
  end
  io.stderr:write(text_formats.format("gpuexp tune '%s' (offline plan): %s configurations; strategy %s, seed %d, " ..
    "max_evals %g%s; objective %s (%s); %d configuration(s) compiled and checked now, nothing timed\n", t.name,
    M.count_text(t), t.strategy, t.seed, t.max_evals, budget_text(t.o), t.objective.column, t.objective.goal, #batch))
  rounds.measure(batch, 1)
end

-- The search's answer as the result: the tie set (copies of its points, with each verdict) and
-- every configuration measured at the final level, with its samples (a study replays them).
-- Returns the result and the set of point indices in the tie set.
local function result_of(t, found, rounds)
  local ties = found.ties
  local result = {name = t.name, strategy = t.strategy, evaluations = found.evaluations, measured = rounds.measured,
    shard = t.run_options.shard, seed = t.seed,
    cost_s = found.cost_s, stopped_by = found.stopped_by, rounds = rounds.count, prefix = t.prefix,
    objective = t.objective, configurations = t.count, estimated = t.space.lazy, rule = tie.rule_text(ties), ties = {},
    drift = {}, regret = found.regret}
  local in_tie = {}
  for _, member in ipairs(ties.members) do
    local entry, verdict = found.finalists[member], ties.verdicts[member]
    local point = {}
    for k, v in pairs(t.space.point(entry.index)) do point[k] = v end
    in_tie[entry.index] = true
    result.ties[#result.ties + 1] = {point = point, value = entry.value, ratio = verdict.ratio, p = verdict.p,
      ci_low = verdict.ci_low, ci_high = verdict.ci_high}
  end
  result.best = result.ties[1].point
  result.evaluated = {}
  for i, entry in ipairs(found.finalists) do
    result.evaluated[i] = {point = t.space.point(entry.index), value = entry.value, samples = entry.samples}
  end
  return result, in_tie
end

-- Drift: a stored winner measured again (at any level: racing may have dropped it early) that is
-- not in the tie set; its ratio to the best from its longest measurement.
local function drift_of(t, found, result, in_tie)
  local drift = {}
  for _, record in ipairs(t.stored) do
    local index = type(record.best) == "table" and t.space.index_of(record.best) or nil
    local levels = index and found.entries[index] or {}
    local longest
    for level, r in pairs(levels) do if r.value and (not longest or level > longest) then longest = level end end
    if longest and not in_tie[index] then
      local best_value, value = result.ties[1].value, levels[longest].value
      local ratio = t.objective.goal == "max" and best_value / value or value / best_value
      drift[#drift + 1] = {point = record.best, ratio = ratio, changed = winners.differences(record, t.key),
        recorded_utc = record.recorded_utc, level = longest}
    end
  end
  return drift
end

-- The winners into the history under the tune's key; returns the record's id.
local function store_winners(t, result, found)
  local objective = t.objective
  local record = {name = t.name, strategy = t.strategy, objective = objective.column .. ":" .. objective.goal,
    best = result.best, evaluations = found.evaluations, cost_s = found.cost_s, drift = result.drift, ties = {},
    regret = result.regret}
  for k, v in pairs(t.key) do record[k] = v end
  for i, tied in ipairs(result.ties) do record.ties[i] = {point = tied.point, value = tied.value, ratio = tied.ratio} end
  local id, why = winners.store(t.history_path, record)
  if not id then gpuexp.error("system", "tune '" .. t.name .. "': the winners were not stored in the history: " .. why) end
  return id
end

-- M.run(spec) -> result: {best (a point), ties ({point, value, ratio, p, ci_low, ci_high}...),
-- evaluated ({point, value, samples}... at the final level), strategy, evaluations, measured,
-- cost_s, stopped_by, drift, rounds, prefix}; nil in an offline
-- plan (which compiles and checks a few configurations and says what the tune would do).
function M.run(spec)
  local t = settings_of(spec)
  if pool.is_helper() then pool.serve() end -- a compile helper of this tune's pool: never returns
  add_space(t)
  add_records(t)
  t.start = start_points(t.o, t.space, t.stored)
  t.max_evals = t.o.max_evals or (t.strategy == "brute" and t.count or math.max(20, math.ceil(t.count / 10)))
  local quiet = t.o.quiet or gpuexp.quiet
  function t.say(text) if not quiet then io.stderr:write(text_formats.message("gpuexp tune '" .. t.name .. "': " .. text) .. "\n") end end
  local rounds = new_rounds(t)
  t.timing = new_timing()
  if gpuexp.plan then
    plan(t, rounds)
    return nil
  end

  t.say(string.format("%s configurations, strategy %s, seed %d, max_evals %g%s, %d start point(s)", M.count_text(t),
    t.strategy, t.seed, t.max_evals, budget_text(t.o), #t.start))
  local o = t.o
  local started = gpuexp.clock()
  t.pool = timed(t, "pool_s", pool.start, o, t.say)
  local ok, found = pcall(search.run, {space = t.space, strategy = t.strategy, seed = t.seed,
    max_evals = t.max_evals, budget_s = o.budget_s, start = t.start, direction = t.objective.goal,
    sample_direction = t.sample_direction, alpha = o.alpha, confidence = o.confidence,
    tie_pct = o.tie_pct, eta = o.eta, batch = o.batch, evaluate = rounds.measure,
    ahead = t.pool and function(batch)
      local points = {}
      for i, index in ipairs(batch) do points[i] = t.space.point(index) end
      timed(t, "pool_s", t.pool.submit, points)
    end})
  local compile = t.pool and timed(t, "pool_s", t.pool.close) or nil
  if not ok then error(found, 0) end
  if not found.ties.best then
    error(string.format("tune '%s': no configuration gave a value for '%s' (every row failed or broke the " ..
      "condition; see %s.round-*.csv)", t.name, t.objective.column, t.prefix), 2) -- a script error (exit 1) at the call
  end
  local result, in_tie = result_of(t, found, rounds)
  result.drift = drift_of(t, found, result, in_tie)
  result.wall_s, result.compile, result.timing = gpuexp.clock() - started, compile, t.timing
  local timing = t.timing
  timing.round_s, timing.wall_s, timing.search_s = nil, result.wall_s, 0
  local accounted = 0
  for _, key in ipairs(M.TIMING) do accounted = accounted + timing[key] end
  timing.search_s = result.wall_s - accounted
  M.print(result, t.axes, io.stdout)
  for _, d in ipairs(result.drift) do
    io.stderr:write(text_formats.format("gpuexp tune '%s': TUNING DRIFT: the winner stored %s (%s) is now %+.1f%% from the " ..
      "best and out of the tie set%s\n", t.name, d.recorded_utc, json.encode(d.point), (d.ratio - 1) * 100,
      #d.changed > 0 and "; changed since: " .. table.concat(d.changed, ", ") or ""))
  end
  if t.history_path and not t.run_options.shard then result.history_id = store_winners(t, result, found) end
  return result
end

-- The number of configurations in words: counted, or estimated for a lazy space.
function M.count_text(t)
  if t.space.count then return tostring(t.space.count) end
  return string.format("about %d (estimated: a lazy space of %d axis combinations)", t.count, t.space.total)
end

-- The regret bound in one line.
function M.regret_line(r)
  local head = r.bound == math.huge and "unbounded: too few configurations measured to bound those never measured"
    or "the best configuration of the space is at most " .. regret.text(r.bound) .. " better than the winner"
  return string.format("regret bound (%.0f%% confidence): %s (selection %s: the winner's interval against the rivals " ..
    "measured in full; exploration %s: %d measured at a shorter level only, %d never measured)", r.confidence * 100,
    head, regret.text(r.selection), regret.text(r.exploration), r.dropped, r.unmeasured)
end

-- The tie set as a table: the axes, the objective, the ratio to the best, p and the interval.
function M.print(result, axes, file)
  local rows, columns = {}, {}
  for _, axis in ipairs(axes) do columns[#columns + 1] = axis.name end
  for _, c in ipairs({result.objective.column, "ratio", "p", "ci_low", "ci_high"}) do columns[#columns + 1] = c end
  for i, t in ipairs(result.ties) do
    local row = {}
    for k, v in pairs(t.point) do row[k] = v end
    row[result.objective.column] = t.value
    row.ratio = string.format("%.4f", t.ratio)
    row.p = t.p and string.format("%.2g", t.p) or ""
    row.ci_low = t.ci_low and string.format("%.4f", t.ci_low) or ""
    row.ci_high = t.ci_high and string.format("%.4f", t.ci_high) or ""
    rows[i] = row
  end
  file:write(text_formats.format("tune '%s'%s: %s, %d of %s configurations measured (%.1f full-measurement equivalents, %.2f " ..
    "s of GPU time, %d rounds in %s.round-*.csv); tie set of %d:\n", result.name,
    result.shard and " (shard " .. result.shard .. ": its share of the configurations only)" or "", result.strategy, result.measured,
    result.estimated and "about " .. result.configurations or result.configurations, result.evaluations, result.cost_s, result.rounds, result.prefix, #result.ties))
  csv.print_table(rows, columns, file)
  file:write(result.rule .. "\n")
  if result.regret then file:write(M.regret_line(result.regret) .. "\n") end
  local c = result.compile
  if c then
    file:write(string.format("compiled ahead: %d configuration(s) by %d worker(s), %.1f s of compiling; the GPU " ..
      "waited %.1f s for them, %d compiled in the foreground; %.1f s of wall time; the helpers busy %.0f%% of the " ..
      "pool's %.1f s, the first compile back after %.1f s, %.1f s of the jobs' time outside the compiler\n", c.jobs,
      c.workers, c.compile_s, c.wait_s, c.missed, result.wall_s, 100 * (c.busy or 0), c.life_s or 0, c.first_s or 0,
      c.latency_s or 0))
  end
  if result.timing then file:write(M.timing_line(result.timing) .. "\n") end
end

-- The wall-time breakdown in one line (M.TIMING's parts, which add up to the wall time).
function M.timing_line(t)
  return string.format("wall time %.1f s: %.1f GPU-timed samples, %.1f the run callbacks' own host time, %.1f " ..
    "waiting for the compile pool, %.1f compile calls (cache lookups), %.1f module loads, %.1f the sweeps' rows and " ..
    "files, %.1f the pool's start and submissions, %.1f setup, %.1f the search between rounds; %d configuration(s) " ..
    "run, %.1f ms of host time each", t.wall_s, t.gpu_s, t.run_s, t.wait_s, t.compile_s, t.load_s, t.sweep_s,
    t.pool_s, t.setup_s, t.search_s, t.runs, t.runs > 0 and 1000 * (t.wall_s - t.gpu_s) / t.runs or 0)
end

return M
