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
local tie = require("gpuexp.judge.tie")
local rule = require("gpuexp.judge.rule")
local csv = require("gpuexp.store.csv")
local json = require("gpuexp.store.json")
local meta = require("gpuexp.store.meta")
local result_store = require("gpuexp.store.result")
local winners = require("gpuexp.store.winners")

local M = {}

local known = {
  name = true, axes = true, where = true, setup = true, run = true, columns = true, out = true, quiet = true,
  timeout_s = true, objective = true, condition = true, samples = true, strategy = true, seed = true,
  max_evals = true, budget_s = true, start = true, tie_pct = true, alpha = true, eta = true, batch = true,
  sources = true, options = true, history = true,
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
  for key in pairs(spec) do
    if not known[key] then
      local names = {}
      for name in pairs(known) do names[#names + 1] = name end
      table.sort(names)
      gpuexp.error("usage", "tune: unknown option '" .. tostring(key) .. "' (known: " .. table.concat(names, ", ") .. ")")
    end
  end
  if type(spec.run) ~= "function" then gpuexp.error("usage", "tune: 'run' must be a function(point) returning a row") end
  if spec.strategy ~= nil and not search.STRATEGIES[spec.strategy] then
    gpuexp.error("usage", "tune: 'strategy' is brute, random, racing or model, got '" .. tostring(spec.strategy) .. "'")
  end
  for _, key in ipairs({"max_evals", "budget_s", "tie_pct", "alpha", "eta", "batch", "seed"}) do
    local v = spec[key]
    if v ~= nil and (type(v) ~= "number" or v ~= v or v < 0 or (key ~= "tie_pct" and key ~= "seed" and v == 0)) then
      gpuexp.error("usage", "tune: '" .. key .. "' must be a number > 0, got " .. tostring(v))
    end
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
local function start_points(spec, by_key, axes, stored)
  local indices, unknown = {}, 0
  local function add(point)
    local index = by_key[key_of(point, axes)]
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
    io.stderr:write(string.format("gpuexp tune: %d start configuration(s) are not in the space (axes and where) and " ..
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

-- The measurement policy of a level: a full measurement at level 1 (the script's own policy);
-- racing's short levels a fraction of its minimum GPU time, a few samples, no noise target.
local function with_level(level, fn)
  if level >= 1 then return fn() end
  local defaults = gpuexp.measure_defaults
  local saved = {}
  for k, v in pairs(defaults) do saved[k] = v end
  local measure = require("gpuexp.api.measure")
  local full_ms = defaults.min_time_ms or measure.defaults.min_time_ms
  defaults.min_time_ms = math.max(1, full_ms * level)
  defaults.min_samples = math.max(5, math.floor((defaults.min_samples or measure.defaults.min_samples) * level + 0.5))
  defaults.max_noise_pct = 100
  defaults.timeout_s = math.max(0.1, (defaults.timeout_s or measure.defaults.timeout_s) * level)
  local ok, result = pcall(fn)
  for k in pairs(defaults) do defaults[k] = nil end
  for k, v in pairs(saved) do defaults[k] = v end
  if not ok then error(result, 0) end
  return result
end

local function sum(list)
  local total = 0
  for _, v in ipairs(list) do total = total + v end
  return total
end

-- M.run(spec) -> result: {best (a point), ties ({point, value, ratio, p, ci_low, ci_high}...),
-- evaluated ({point, value, samples}... at the final level), strategy, evaluations, measured,
-- cost_s, stopped_by, drift, rounds, prefix}; nil in an offline
-- plan (which compiles and checks a few configurations and says what the tune would do).
function M.run(spec)
  check(spec)
  local overrides = command_options()
  local o = {}
  for k, v in pairs(spec) do o[k] = v end
  for k, v in pairs(overrides) do o[k] = v end
  check(o)
  local name = o.name or "tune"
  if type(name) ~= "string" or name == "" then gpuexp.error("usage", "tune: 'name' must be a non-empty string") end
  local objective = objective_of(o)
  local samples_column = o.samples or "samples_ms"
  -- which way the samples run: times are better lower whatever the objective (gflops maximised,
  -- its samples_ms minimised)
  local sample_way = rule.direction(samples_column)
  local sample_direction = sample_way == "lower" and "min" or sample_way == "higher" and "max" or objective.goal
  local points, axes = sweep.points(o.axes, o.where)
  if #points == 0 then gpuexp.error("usage", "tune: the filter ('where') left no configuration") end
  local strategy = o.strategy or "model"
  local run_options = gpuexp.run_options or {}
  if run_options.shard and (strategy == "racing" or strategy == "model") then
    gpuexp.error("usage", "tune: --shard splits brute force and random sampling only; racing and model choose each " ..
      "round from the last, which one share cannot see (run them unsharded, or use --devices)")
  end
  local by_key = {}
  for i, point in ipairs(points) do by_key[key_of(point, axes)] = i end
  local prefix = rounds_prefix(o, name)
  local found_device, default_device = pcall(gpuexp.device)
  local device = not gpuexp.offline_arch and found_device and default_device or nil
  local key = history_key(o, device)
  local history_path = o.history or run_options.history
  local stored = {}
  if history_path then
    local list, why = winners.latest(history_path, name)
    if not list then io.stderr:write("gpuexp tune: the stored winners cannot be read: " .. why .. "\n") end
    stored = list or {}
    table.sort(stored, function(a, b) -- this key's winners first
      return #winners.differences(a, key) < #winners.differences(b, key)
    end)
  end
  local start = start_points(o, by_key, axes, stored)
  local default_evals = strategy == "brute" and #points or math.max(20, math.ceil(#points / 10))
  local max_evals = o.max_evals or default_evals
  local quiet = o.quiet or gpuexp.quiet
  local function say(text) if not quiet then io.stderr:write("gpuexp tune '" .. name .. "': " .. text .. "\n") end end

  local set_up = false
  local round = 0
  local has_row, rows_measured = {}, 0 -- configurations with a row here (a shard has its share's only)
  local function measure_round(batch, level)
    round = round + 1
    local wanted = {}
    for _, index in ipairs(batch) do wanted[key_of(points[index], axes)] = index end
    if not set_up then
      set_up = true
      if o.setup then o.setup() end
    end
    local out = string.format("%s.round-%03d.csv", prefix, round)
    local rows, path = with_level(level, function()
      return sweep.run{name = string.format("%s/round-%03d", name, round), axes = o.axes, expect_failures = true,
        where = function(point)
          if o.where and not o.where(point) then return false end
          return wanted[key_of(point, axes)] ~= nil
        end,
        run = o.run, columns = o.columns, out = out, timeout_s = o.timeout_s, quiet = true,
        meta = {tune = name, round = round, level = level, strategy = strategy, seed = o.seed or 1}}
    end)
    local results, stored_samples = {}, nil
    for _, row in ipairs(rows) do
      local index = wanted[key_of(row, axes)]
      local position
      for i, b in ipairs(batch) do if b == index then position = i end end
      if position then
        if not has_row[index] then has_row[index] = true; rows_measured = rows_measured + 1 end
        local r = {status = row.status, cost_s = 0}
        local value = row[objective.column]
        local samples = row[samples_column]
        if type(samples) ~= "table" and row.status == "ok" then -- a resumed row: its samples from the file
          stored_samples = stored_samples or result_store.read(path)
          samples = stored_samples and stored_samples:samples(key_of(row, axes), samples_column)
        end
        if type(samples) == "table" then r.cost_s = sum(samples) / 1000 end
        if row.status == "ok" and type(value) == "number" and value == value then
          local ok, verified = pcall(holds, o.condition, row)
          if ok and verified then
            r.value, r.samples = value, type(samples) == "table" and #samples > 1 and samples or nil
          else
            r.status = ok and "condition" or "condition error: " .. tostring(verified)
          end
        end
        results[position] = r
      end
    end
    say(string.format("round %d: %d configuration(s) at level %.3g", round, #batch, level))
    return results
  end

  if gpuexp.plan then
    -- offline: the start points and a seeded sample compile and their launches are checked
    local rng = search.generator(o.seed or 1)
    local batch, seen = {}, {}
    for _, index in ipairs(start) do if not seen[index] then seen[index] = true; batch[#batch + 1] = index end end
    while #batch < math.min(M.PLAN_POINTS, #points) do
      local index = rng.int(#points)
      if not seen[index] then seen[index] = true; batch[#batch + 1] = index end
    end
    io.stderr:write(string.format("gpuexp tune '%s' (offline plan): %d configurations; strategy %s, seed %d, " ..
      "max_evals %g%s; objective %s (%s); %d configuration(s) compiled and checked now, nothing timed\n", name,
      #points, strategy, o.seed or 1, max_evals, o.budget_s and string.format(", budget_s %g", o.budget_s) or "",
      objective.column, objective.goal, #batch))
    measure_round(batch, 1)
    return nil
  end

  say(string.format("%d configurations, strategy %s, seed %d, max_evals %g%s, %d start point(s)", #points, strategy,
    o.seed or 1, max_evals, o.budget_s and string.format(", budget_s %g", o.budget_s) or "", #start))
  local coords, sizes = search.space(points, axes)
  local found = search.run{count = #points, coords = coords, sizes = sizes, strategy = strategy, seed = o.seed or 1,
    max_evals = max_evals, budget_s = o.budget_s, start = start, direction = objective.goal,
    sample_direction = sample_direction, alpha = o.alpha,
    tie_pct = o.tie_pct, eta = o.eta, batch = o.batch, evaluate = measure_round}
  local ties = found.ties
  if not ties.best then
    error(string.format("tune '%s': no configuration gave a value for '%s' (every row failed or broke the " ..
      "condition; see %s.round-*.csv)", name, objective.column, prefix), 2) -- a script error (exit 1) at the call
  end
  local result = {name = name, strategy = strategy, evaluations = found.evaluations, measured = rows_measured,
    shard = run_options.shard,
    cost_s = found.cost_s, stopped_by = found.stopped_by, rounds = round, prefix = prefix, objective = objective,
    configurations = #points, rule = tie.rule_text(ties), ties = {}, drift = {}}
  local in_tie = {}
  for _, member in ipairs(ties.members) do
    local entry, verdict = found.finalists[member], ties.verdicts[member]
    local point = {}
    for k, v in pairs(points[entry.index]) do point[k] = v end
    in_tie[entry.index] = true
    result.ties[#result.ties + 1] = {point = point, value = entry.value, ratio = verdict.ratio, p = verdict.p,
      ci_low = verdict.ci_low, ci_high = verdict.ci_high}
  end
  result.best = result.ties[1].point
  -- every configuration measured at the final level, with its samples (a study replays them)
  result.evaluated = {}
  for i, entry in ipairs(found.finalists) do
    result.evaluated[i] = {point = points[entry.index], value = entry.value, samples = entry.samples}
  end
  -- drift: a stored winner measured again (at any level: racing may have dropped it early) that is
  -- not in the tie set; its ratio from its longest measurement
  for _, record in ipairs(stored) do
    local index = by_key[key_of(record.best, axes)]
    local levels = index and found.entries[index] or {}
    local longest
    for level, r in pairs(levels) do if r.value and (not longest or level > longest) then longest = level end end
    if longest and not in_tie[index] then
      local best_value, value = result.ties[1].value, levels[longest].value
      local ratio = objective.goal == "max" and best_value / value or value / best_value
      result.drift[#result.drift + 1] = {point = record.best, ratio = ratio, changed = winners.differences(record, key),
        recorded_utc = record.recorded_utc, level = longest}
    end
  end
  M.print(result, axes, io.stdout)
  for _, d in ipairs(result.drift) do
    io.stderr:write(string.format("gpuexp tune '%s': TUNING DRIFT: the winner stored %s (%s) is now %+.1f%% from the " ..
      "best and out of the tie set%s\n", name, d.recorded_utc, json.encode(d.point), (d.ratio - 1) * 100,
      #d.changed > 0 and "; changed since: " .. table.concat(d.changed, ", ") or ""))
  end
  if history_path and not run_options.shard then
    local record = {name = name, strategy = strategy, objective = objective.column .. ":" .. objective.goal,
      best = result.best, evaluations = found.evaluations, cost_s = found.cost_s, drift = result.drift, ties = {}}
    for k, v in pairs(key) do record[k] = v end
    for i, t in ipairs(result.ties) do record.ties[i] = {point = t.point, value = t.value, ratio = t.ratio} end
    local id, why = winners.store(history_path, record)
    if not id then gpuexp.error("system", "tune '" .. name .. "': the winners were not stored in the history: " .. why) end
    result.history_id = id
  end
  return result
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
  file:write(string.format("tune '%s'%s: %s, %d of %d configurations measured (%.1f full-measurement equivalents, %.2f " ..
    "s of GPU time, %d rounds in %s.round-*.csv); tie set of %d:\n", result.name,
    result.shard and " (shard " .. result.shard .. ": its share of the configurations only)" or "", result.strategy, result.measured,
    result.configurations, result.evaluations, result.cost_s, result.rounds, result.prefix, #result.ties))
  csv.print_table(rows, columns, file)
  file:write(result.rule .. "\n")
end

return M
