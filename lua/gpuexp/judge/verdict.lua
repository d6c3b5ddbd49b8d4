-- One judge for a recorded night: gpuexp nightly, the history site and `bisect --run` all judge a
-- night here, with the options that night ran with (recorded in runs.judge), by replaying its
-- series (experiment, sweep, GPU model, driver) from its first night. The replay carries each
-- point's regression state:
--   * a confirmed regression OPENS a state of its point; while it is open, every night is judged
--     against the accepted level (not the recent nights), is slower, and is no baseline;
--   * a night back at the accepted level closes it as FIXED;
--   * `gpuexp history accept RUN [--point P]` makes the level of that night intended: the state is
--     ACCEPTED, and the nights of the regression up to that one are the point's new baselines;
--   * a slow creep: each night is judged against the accepted level (the median of the first
--     --baseline nights since the series began or the last acceptance) as well as against the
--     recent nights; past the night's threshold, and with an upward step found by asv's step
--     detection (judge/steps.lua) in the nights since the level was set, it is a regression that
--     began at the step's onset.
-- The state is never stored: it follows from the nights, their options and the acceptances, so
-- the three readers cannot disagree.
local history = require("gpuexp.store.history")
local json = require("gpuexp.store.json")
local compare = require("gpuexp.judge.compare")
local rule = require("gpuexp.judge.rule")
local steps = require("gpuexp.judge.steps")

local M = {}

M.DEFAULT_BASELINE_RUNS = 5

-- The options a night is judged with: {floor_pct, baseline, metric ({name, direction} or nil: the
-- run's time column), rule}, from its recorded runs.judge, else the defaults (a night recorded
-- before they were).
function M.options_of(record)
  local recorded = record and record.judge and json.decode(record.judge) or {}
  if type(recorded) ~= "table" then recorded = {} end
  local metric = type(recorded.metric) == "table" and recorded.metric.name and
    {name = recorded.metric.name, direction = recorded.metric.direction or "lower"} or nil
  return {floor_pct = tonumber(recorded.floor_pct) or rule.FLOOR_PCT,
    baseline = math.tointeger(tonumber(recorded.baseline)) or M.DEFAULT_BASELINE_RUNS, metric = metric,
    rule = recorded.rule or "gpuexp"}
end

-- What the history keeps of a night's options (runs.judge).
function M.recorded(options)
  return {floor_pct = options.floor_pct, baseline = options.baseline, rule = options.rule or "gpuexp",
    metric = options.metric and {name = options.metric.name, direction = options.metric.direction} or nil}
end

local function point_id(key, metric) return key .. "\31" .. metric end

-- A fresh state: before the first night of a series.
function M.new_state(db)
  return {db = db, runs = {}, points = {}, nights = {}}
end

local function load(state, id)
  local run = state.runs[id]
  if not run then
    run = assert(history.load_run(state.db, id))
    state.runs[id] = run
  end
  return run
end
M.load = load

local function loaded(state, ids)
  local runs = {}
  for i, id in ipairs(ids or {}) do runs[i] = load(state, id) end
  return runs
end

-- The ids of the nights a level was taken from (the accepted level's first nights).
local function level_ids(p)
  local ids = {}
  for i, v in ipairs(p.level_values) do ids[i] = v.id end
  return ids
end

-- The point's baseline nights an explanation reads its counters' noise from: never a night of an
-- open regression (they are not in p.base), nor one at or after `before` (a creep's nights).
local function noise_ids(p, before)
  local ids = {}
  for _, id in ipairs(p.base) do
    if not before or id < before then ids[#ids + 1] = id end
  end
  return ids
end

local function worse_of(value, reference, direction)
  local change = (value - reference) / reference * 100
  return direction == "higher" and -change or change, change
end

local function usable(value) return type(value) == "number" and value > 0 and value < math.huge end

local function night_text(state, id)
  local record = load(state, id).record
  local commit = record.git_commit and record.git_commit:sub(1, 10) or "unknown"
  return string.format("run %d (%s, commit %s%s)", id, record.started_utc or record.recorded_utc or "?", commit,
    record.git_dirty == 1 and " with changes" or "")
end
M.night_text = night_text

-- An entry judged against the accepted level of its open regression.
local function against_open(state, p, e)
  local open = p.open
  e.base_runs, e.noise_ids = loaded(state, open.base_ids), open.noise_ids
  local worse, change = worse_of(e.new, open.level, e.direction)
  e.base, e.change_pct, e.threshold_pct = open.level, change, open.threshold
  e.verdict = worse > open.threshold and "slower" or worse < -open.threshold and "faster" or "same"
  e.open = open
  e.basis = string.format("against the accepted level %.5g (a regression is open), threshold %.2f%%", open.level,
    open.threshold)
end

-- A creep: slower than the accepted level (its first nights since the series began or the level
-- was accepted, as many as the night's --baseline, judged by the rule of compare: their median,
-- their spread), with an upward step in the nights since the level was set (the night itself the
-- last of them).
local function check_creep(state, p, e, new, options)
  if #p.level_values == 0 or #p.series < 2 then return end
  local judged = rule.judge{value = e.new, noise_pct = tonumber(new:value(e.key, "noise_pct")),
    samples = tonumber(new:value(e.key, "samples")), baseline = p.level_values, direction = e.direction,
    floor_pct = options.floor_pct, unit_ms = rule.unit_ms(e.metric), mode = new:value(e.key, "mode")}
  if judged.verdict ~= "slower" then return end
  local level, id = judged.center, new.record.id
  local sign = e.direction == "higher" and -1 or 1 -- the fit reads lower as better
  local y = {}
  for i, night in ipairs(p.series) do y[i] = sign * night.value end
  y[#y + 1] = sign * e.new
  local found = steps.regressions(steps.segments(y), 0)
  if not found then return end
  -- the onset: past the level's own night-to-night deviation (3x, at least 0.1% of the level)
  local deviation = 0
  for _, v in ipairs(p.level_values) do deviation = deviation + math.abs(v.value - level) end
  deviation = deviation / #p.level_values
  -- the first step past the level's own nights (a step among them is their jitter: the level is
  -- what the verdict was judged against, and a creep cannot begin inside it)
  local first_step = #y
  for _, step in ipairs(found.steps) do
    if step.after and step.after > #p.level_values then first_step = step.after; break end
  end
  local onset = steps.onset(y, sign * level, math.max(3 * deviation, 0.001 * level), first_step)
  local since = onset <= #p.series and p.series[onset].id or id
  local _, change = worse_of(e.new, level, e.direction)
  e.creep = {since = since, nights = #y - onset + 1, level = level, threshold = judged.threshold_pct}
  -- explained against the level it was judged against, with the noise of the level's nights and
  -- those before the creep's first (never the creeping nights: their counters crept too)
  local ids = level_ids(p)
  e.base_runs, e.noise_ids = loaded(state, ids), noise_ids(p, (ids[#ids] or since) + 1)
  e.verdict, e.base, e.change_pct, e.threshold_pct = "slower", level, change, judged.threshold_pct
  e.basis = string.format("creep: %+.2f%% against the accepted level %.5g over %d night(s) since %s (a step found " ..
    "by asv's L1 step detection), threshold %.2f%%; against the recent nights: %s", change, level, e.creep.nights,
    night_text(state, since), e.threshold_pct, e.basis or "")
end

-- M.judge(state, new, options) -> comparison (compare's), each entry judged against its point's
-- baselines (the recent nights at the accepted level), or its open regression's accepted level,
-- and for a creep. The state is not changed (M.settle does that).
function M.judge(state, new, options)
  local metric = options.metric
  if not metric then
    local name = compare.default_metric(new)
    metric = name and {name = name, direction = "lower"} or {name = "status", status_only = true}
  end
  local count = options.baseline or M.DEFAULT_BASELINE_RUNS
  local function bases_for(key, name)
    local p = state.points[point_id(key, name)]
    local list = {}
    if p then
      for i = math.max(1, #p.base - count + 1), #p.base do list[#list + 1] = load(state, p.base[i]) end
    end
    return list
  end
  -- the recent nights: whose points the new run lacks are missing
  local recent = {}
  for i = math.max(1, #state.nights - count + 1), #state.nights do recent[#recent + 1] = load(state, state.nights[i]) end
  local comparison = compare.compare(recent, new, {metrics = {metric}, floor_pct = options.floor_pct,
    rule = options.rule or "gpuexp", bases_for = bases_for})
  for _, e in ipairs(comparison.points) do
    rawset(e, "base_runs", bases_for(e.key, e.metric))
    local p = state.points[point_id(e.key, e.metric)]
    rawset(e, "noise_ids", p and noise_ids(p) or {})
    if p and not metric.status_only and usable(e.new) and e.verdict ~= "error" and e.verdict ~= "missing" then
      if p.open then against_open(state, p, e)
      elseif e.verdict ~= "slower" then check_creep(state, p, e, new, options) end
    end
  end
  comparison.counts = compare.count(comparison.points)
  comparison.metric = metric
  return comparison
end

-- The entries a re-measure should check: slower, and not already an open regression.
function M.suspects(comparison)
  local list = {}
  for _, e in ipairs(comparison.points) do
    if e.verdict == "slower" and not e.open then list[#list + 1] = e end
  end
  return list
end

-- M.confirm(comparison, remeasure, options): the night's re-measure (a run) judges its suspects
-- again, a creep against the accepted level, the others as compare.confirm does; a suspect the
-- re-measure does not confirm is same (unconfirmed).
function M.confirm(comparison, remeasure, options)
  for _, e in ipairs(comparison.points) do
    if e.verdict == "slower" and e.creep then
      local row = remeasure and remeasure:row(e.key)
      local value = row and (row.status == nil or row.status == "ok") and row[e.metric]
      if usable(value) then
        local worse, change = worse_of(value, e.creep.level, e.direction)
        e.confirm_value, e.confirmed_change = value, change
        if worse <= e.creep.threshold then
          e.verdict, e.unconfirmed, e.creep = "same", true, nil
          e.basis = e.basis .. string.format("; suspect, not confirmed: re-measured %+.2f%%", change)
        end
      end
    end
  end
  compare.confirm(comparison, remeasure, {floor_pct = options.floor_pct, rule = options.rule or "gpuexp",
    skip = function(e) return e.creep ~= nil or e.open ~= nil end})
end

local function new_point()
  return {base = {}, series = {}, level_values = {}}
end

-- (run: the night's result, for the point's noise and timing mode)
local function add_night(p, id, value, count, run, key)
  p.base[#p.base + 1] = id
  if usable(value) then
    p.series[#p.series + 1] = {id = id, value = value}
    if #p.level_values < count then
      p.level_values[#p.level_values + 1] = {value = value, noise_pct = tonumber(run:value(key, "noise_pct")),
        mode = run:value(key, "mode"), id = id}
    end
  end
end

-- The state's text for reports: what a reader needs to act on it.
local function state_text(state, s)
  if s.name == "open" then
    return string.format("OPEN since %s, %d night%s, %+.2f%% against the accepted level %.5g", night_text(state,
      s.since), s.nights, s.nights == 1 and "" or "s", s.change_pct, s.level)
  elseif s.name == "fixed" then
    return string.format("FIXED: back at the accepted level %.5g (%+.2f%%); it was open since %s for %d night%s",
      s.level, s.change_pct, night_text(state, s.since), s.nights, s.nights == 1 and "" or "s")
  else
    return string.format("ACCEPTED at run %d%s: its level %.5g (%+.2f%% against %.5g) is the baseline from now on; " ..
      "it was open since %s for %d night%s", s.at, s.note and (" (" .. s.note .. ")") or "", s.new_level, s.change_pct,
      s.level, night_text(state, s.since), s.nights, s.nights == 1 and "" or "s")
  end
end

-- M.settle(state, comparison, new, options, accepted): the night's verdicts move the states of
-- its points (opened, still open, fixed), then the acceptances made at this night (a list of keys,
-- false for every point) make its level intended. Each entry with a state gets e.state = {name =
-- "open"|"fixed"|"accepted", since, nights, level, change_pct, text}.
function M.settle(state, comparison, new, options, accepted)
  local id, count = new.record.id, options.baseline or M.DEFAULT_BASELINE_RUNS
  local complete = new.record.complete == 1
  local metric = comparison.metric
  for _, e in ipairs(comparison.points) do
    local pid = point_id(e.key, e.metric)
    local p = state.points[pid]
    if not p then p = new_point(); state.points[pid] = p end
    local open = p.open
    if open then
      open.nights = open.nights + 1
      open.runs[#open.runs + 1] = id
      if e.verdict == "slower" or not usable(e.new) or e.verdict == "error" or e.verdict == "missing" then
        e.state = {name = "open", since = open.since, nights = open.nights, level = open.level,
          change_pct = e.change_pct or 0}
      else
        e.state = {name = "fixed", since = open.since, nights = open.nights - 1, level = open.level,
          change_pct = e.change_pct}
        p.open = nil
        if complete then add_night(p, id, e.new, count, new, e.key) end
      end
    elseif e.verdict == "slower" then
      local since, nights, level = id, 1, e.base
      if e.creep then
        since, nights, level = e.creep.since, e.creep.nights, e.creep.level
        -- the creep's nights were no baselines after all
        local kept = {}
        for _, b in ipairs(p.base) do if b < since then kept[#kept + 1] = b end end
        p.base = kept
        local series = {}
        for _, night in ipairs(p.series) do if night.id < since then series[#series + 1] = night end end
        p.series = series
      end
      local runs = {}
      for _, night in ipairs(state.nights) do if night >= since then runs[#runs + 1] = night end end
      runs[#runs + 1] = id
      -- the nights the explanation reads while it is open: the level's, as on the night it opened
      local base_ids = {}
      for i, run in ipairs(e.base_runs or {}) do base_ids[i] = run.record.id end
      p.open = {since = since, nights = nights, level = level, threshold = e.threshold_pct, runs = runs,
        base_ids = base_ids, noise_ids = e.noise_ids or noise_ids(p)}
      e.state = {name = "open", since = since, nights = nights, level = level, change_pct = e.change_pct, opened = true}
    elseif complete and e.verdict ~= "error" and e.verdict ~= "missing" then
      add_night(p, id, e.new, count, new, e.key)
    end
  end
  -- the acceptances of this night: its level is intended from now on
  for _, key in ipairs(accepted or {}) do
    for _, e in ipairs(comparison.points) do
      if (not key or key == e.key) and e.metric == metric.name then
        local p = state.points[point_id(e.key, e.metric)]
        local open = p.open
        local nights = open and open.runs or {id}
        p.base, p.series, p.level_values, p.open = {}, {}, {}, nil
        for _, night in ipairs(nights) do
          local run = load(state, night)
          add_night(p, night, run:value(e.key, e.metric), count, run, e.key)
        end
        if open then
          e.state = {name = "accepted", at = id, since = open.since, nights = open.nights, level = open.level,
            new_level = e.new, change_pct = e.change_pct or 0, note = accepted.notes and accepted.notes[key or true]}
        end
      end
    end
  end
  for _, e in ipairs(comparison.points) do
    if e.state then e.state.text = state_text(state, e.state) end
  end
  state.nights[#state.nights + 1] = id
end

-- The acceptances of a series' nights: run id -> list of keys (false: every point), and their
-- notes by key (true: every point's) in the list's notes.
local function acceptances_by_run(db, ids)
  local by_run = {}
  for _, a in ipairs(history.acceptances(db, ids)) do
    by_run[a.run_id] = by_run[a.run_id] or {notes = {}}
    table.insert(by_run[a.run_id], a.key or false)
    by_run[a.run_id].notes[a.key or true] = a.note
  end
  return by_run
end

-- One night of the replay: judged with its own options, its re-measure (if any) applied, settled.
local function replay_night(state, id, accepted)
  local new = load(state, id)
  local options = M.options_of(new.record)
  local comparison = M.judge(state, new, options)
  local record = new.record
  if record.nightly then
    for _, remeasure_id in ipairs(history.runs_of_night(state.db, record.nightly, record.experiment, "confirm")) do
      local remeasure = load(state, remeasure_id)
      if remeasure.record.sweep == record.sweep then M.confirm(comparison, remeasure, options) end
    end
  end
  M.settle(state, comparison, new, options, accepted[id])
  return {id = id, run = new, comparison = comparison, options = options}
end

-- M.replay(db, run_id [, through]) -> the state of run_id's series after every night before it
-- (through: with run_id itself too), and the list of the nights judged ({id, run, comparison,
-- options}, oldest first).
function M.replay(db, run_id, through)
  local state = M.new_state(db)
  local ids = history.series_ids(db, run_id)
  local accepted = acceptances_by_run(db, ids)
  local nights = {}
  for _, id in ipairs(ids) do
    if id == run_id and not through then break end
    nights[#nights + 1] = replay_night(state, id, accepted)
  end
  return state, nights
end

-- The record of a run, a night's re-measure (a confirm run) standing for its night's nightly run;
-- nil when there is no such run.
function M.night_record(db, run_id)
  local record = db:rows("SELECT * FROM runs WHERE id = ?", run_id)[1]
  if record and record.kind == "confirm" and record.nightly then
    local nightly = db:rows([[SELECT * FROM runs WHERE kind = 'nightly' AND nightly = ? AND experiment = ? AND sweep = ?
      ORDER BY id DESC LIMIT 1]], record.nightly, record.experiment, record.sweep)[1]
    if nightly then return nightly end
  end
  return record
end

-- M.night(db, run_id) -> a recorded night's judgement ({id, run, comparison, options}), as the
-- nightly gave it (its re-measure applied, its states set), and the series' state after it; or nil
-- and why. A night's re-measure (a confirm run) stands for its night.
function M.night(db, run_id)
  local record = M.night_record(db, run_id)
  if not record then return nil, "no run " .. tostring(run_id) .. " in the history" end
  run_id = record.id
  if record.kind ~= "nightly" then return nil, string.format("run %d is a %s run, not a night of gpuexp nightly",
    run_id, record.kind) end
  if record.excluded == 1 then return nil, string.format("run %d is excluded (gpuexp history include %d)", run_id,
    run_id) end
  local state, nights = M.replay(db, run_id, true)
  return nights[#nights], state
end

-- The state of every point of a judged night in a few words ("1 open, 1 fixed"), "" when none.
function M.states_summary(comparison)
  local counts, order = {}, {"open", "fixed", "accepted"}
  for _, e in ipairs(comparison.points) do
    if e.state then counts[e.state.name] = (counts[e.state.name] or 0) + 1 end
  end
  local parts = {}
  for _, name in ipairs(order) do if counts[name] then parts[#parts + 1] = counts[name] .. " " .. name end end
  return table.concat(parts, ", ")
end

return M
