-- The judgement of runs of one sweep: joins their rows on the axes and gives each point a verdict
-- per metric (same, slower, faster, new, missing, error) by the rule of judge/rule.lua. Used by
-- gpuexp compare (CSV files) and gpuexp nightly (baselines from the history); judge/printers.lua
-- renders the verdicts.
local rule = require("gpuexp.judge.rule")
local stats = require("gpuexp.judge.stats")

local M = {}

-- Runs are store/result.lua values (one model for CSVs, the history and the ledger).

-- The default metric: median_ms, else the first *_ms column that is not an axis.
function M.default_metric(run)
  local is_axis = {}
  for _, axis in ipairs(run.axes) do is_axis[axis] = true end
  for _, name in ipairs(run.columns) do if name == "median_ms" then return name end end
  for _, name in ipairs(run.columns) do if name:match("_ms$") and not is_axis[name] then return name end end
  return nil
end

-- "col", "col:lower" or "col:higher" -> {name, direction}, or nil and why.
function M.parse_metric(text)
  local name, direction = text:match("^(.-):(%a+)$")
  if not name then name = text; direction = rule.direction(text) end
  if direction ~= "lower" and direction ~= "higher" then
    return nil, string.format("--metric %s: say which way is better (%s:lower or %s:higher)", text, name, name)
  end
  return {name = name, direction = direction}
end

-- The differences between the machines of two runs that make timings incomparable; of two offline
-- plans (or a plan and a GPU), their architectures: each plan's values are the model's for its own.
function M.gpu_differences(base, new)
  local found = {}
  local a, b = base or {}, new or {}
  local ga, gb = a.gpu or {}, b.gpu or {}
  local function differ(what, x, y)
    if x ~= nil and y ~= nil and x ~= y then
      found[#found + 1] = string.format("%s: %s vs %s", what, tostring(x), tostring(y))
    end
  end
  local machine = require("gpuexp.store.meta").machine
  differ("GPU", ga.name, gb.name)
  differ("architecture", (machine(a) or {}).arch, (machine(b) or {}).arch)
  differ("driver", a.driver_version, b.driver_version)
  differ("CUDA driver", a.versions and a.versions.driver_cuda, b.versions and b.versions.driver_cuda)
  differ("maximum SM clock (kHz)", ga.sm_clock_max_khz, gb.sm_clock_max_khz)
  differ("maximum memory clock (kHz)", ga.memory_clock_max_khz, gb.memory_clock_max_khz)
  differ("ECC", ga.ecc_enabled, gb.ecc_enabled)
  return found
end

-- The fields compare reads of a point's row (converted from its cells), or nil when it has none.
local function fields(run, key, metric)
  if not run:has(key) then return nil end
  return {status = run:value(key, "status"), error = run:value(key, "error"), value = run:value(key, metric),
    noise_pct = tonumber(run:value(key, "noise_pct")), samples = tonumber(run:value(key, "samples")),
    clock_throttled = run:value(key, "clock_throttled"), mode = run:value(key, "mode")}
end

-- An entry of a comparison: its own fields are the verdict and numbers; what many entries share
-- (the result it is read from, the metric and its direction) is in its metatable, and its point's
-- text and cells and its baseline's values are made when read (a printer, a report). A run of
-- 200k points keeps 200k small tables, not 200k copies of all that.
local entry_kinds = {}
local function entry_kind(result, metric)
  local by_metric = entry_kinds[result] or setmetatable({}, {__mode = "k"})
  entry_kinds[result] = by_metric
  local kind = by_metric[metric]
  if kind then return kind end
  local shared = {result = result, metric = metric.name, direction = metric.direction}
  kind = {__index = function(entry, field)
    if shared[field] ~= nil then return shared[field]
    elseif field == "point" then return result:describe(entry.key)
    elseif field == "cells" then return result:axis_cells(entry.key)
    elseif field == "baseline" then
      local values = {}
      for i, b in ipairs(rawget(entry, "judged_baseline")) do values[i] = b.value end
      return values
    end
  end}
  by_metric[metric] = kind
  return kind
end
setmetatable(entry_kinds, {__mode = "k"})

local function ok_row(row) return row and (row.status == nil or row.status == "ok") end

M.ALPHA = 0.05 -- --rule mannwhitney: the p-value under which two runs' samples differ

-- Significance from the samples (a metric median_X has its samples in samples_X): the Mann-Whitney
-- p-value of the new run's samples against the last baseline run that has them, the bootstrap 95%
-- interval of the ratio of their medians (as a change in percent), and that run's value. Returns
-- their text for the basis, or nil when one side has no samples.
local function significance(entry, bases, new, key, metric)
  local suffix = metric.name:match("^median_(.+)$")
  if not suffix then return end
  local new_samples, new_dropped = new:samples(key, "samples_" .. suffix)
  local dropped = new_dropped
  local function with_dropped(text)
    return dropped and (text .. "; samples left out (not finite numbers): " .. dropped) or text
  end
  if not new_samples then return dropped and with_dropped("no usable samples in the new run") end
  for b = #bases, 1, -1 do
    local base_samples, base_dropped = bases[b]:samples(key, "samples_" .. suffix)
    local base_value = base_samples and tonumber(bases[b]:value(key, metric.name))
    if base_value and base_value > 0 then
      if base_dropped then dropped = base_dropped .. (dropped and ("; " .. dropped) or "") end
      entry.p_value = stats.mann_whitney(base_samples, new_samples)
      entry.samples_sizes = {#base_samples, #new_samples}
      local low, high = stats.bootstrap_ratio(base_samples, new_samples)
      entry.ci_low_pct, entry.ci_high_pct = (low - 1) * 100, (high - 1) * 100
      entry.significance_base = base_value
      return with_dropped(string.format("Mann-Whitney p=%.2g, 95%% CI of the median ratio [%+.2f%%, %+.2f%%]",
        entry.p_value, entry.ci_low_pct, entry.ci_high_pct))
    end
  end
  return dropped and with_dropped("no baseline run with usable samples")
end

-- The smallest two-sided p-value the exact Mann-Whitney test can give with n and m samples a side:
-- the most extreme of the C(n+m, n) equally likely rank orders, at either end, 2 / C(n+m, n). With
-- 3 a side that is 2/20 = 0.1: p < 0.05 cannot be reached, whatever the change.
function M.smallest_p(n, m)
  local orders = 1
  for i = 1, math.min(n, m) do orders = orders * (n + m - i + 1) / i end
  return math.min(1, 2 / orders)
end

-- --rule mannwhitney (as asv decides): slower (faster) when the samples differ, p under ALPHA, and
-- the change against the last baseline run with samples is past the floor; without samples the
-- default rule decides, and the basis says so.
local function mann_whitney_verdict(entry, value, direction, floor, significance_text)
  if not entry.p_value then
    entry.basis = entry.basis .. "; no samples on both sides: decided by gpuexp's rule" ..
      (significance_text and ("; " .. significance_text) or "")
    return
  end
  local n, m = entry.samples_sizes[1], entry.samples_sizes[2]
  if M.smallest_p(n, m) >= M.ALPHA then
    -- too few samples for the test ever to say "different": the default rule decides
    entry.basis = string.format("%s; mannwhitney: %d and %d samples a side cannot reach p < %.2g (the exact " ..
      "test's smallest p is %.2g): decided by gpuexp's rule; %s", entry.basis, n, m, M.ALPHA, M.smallest_p(n, m),
      significance_text)
    return
  end
  local change = (value - entry.significance_base) / entry.significance_base * 100
  local worse = direction == "higher" and -change or change
  entry.base, entry.change_pct, entry.threshold_pct = entry.significance_base, change, floor
  entry.verdict = "same"
  if entry.p_value < M.ALPHA and worse > floor then entry.verdict = "slower"
  elseif entry.p_value < M.ALPHA and worse < -floor then entry.verdict = "faster" end
  entry.basis = string.format("mannwhitney: p %s %.2g, change against the last baseline run, floor %.2f%%; %s",
    entry.p_value < M.ALPHA and "<" or ">=", M.ALPHA, floor, significance_text)
end

-- A value a change can be computed against: a finite positive number (times and rates).
local function usable(value) return type(value) == "number" and value > 0 and value < math.huge end

-- M.compare(bases, new, options) -> {points = {...}, counts}; options: metrics ({name, direction}
-- list; {name = "status", status_only = true} judges only whether each point still succeeds),
-- floor_pct, rule ("gpuexp", "nvbench", "mannwhitney"), significance (p-values and intervals from
-- the samples, when both runs have them), bases_for (function(key, metric name) -> the baseline
-- runs of that point, when points have baselines of their own: judge/verdict.lua's regression
-- state; default: bases). Each entry: key, point (text), cells, metric, verdict, base (centre), new,
-- change_pct, threshold_pct, basis, baseline (values), throttled.
function M.compare(bases, new, options)
  local entries = {}
  local keys, seen = {}, {}
  for _, key in ipairs(new.order) do keys[#keys + 1] = key; seen[key] = true end
  for _, base in ipairs(bases) do
    for _, key in ipairs(base.order) do
      if not seen[key] then keys[#keys + 1] = key; seen[key] = true end
    end
  end
  for _, key in ipairs(keys) do
    local labelled = new:has(key) and new or nil
    if not labelled then for _, base in ipairs(bases) do if base:has(key) then labelled = base end end end
    for _, metric in ipairs(options.metrics) do
      local new_row = fields(new, key, metric.name)
      local entry = setmetatable({key = key}, entry_kind(labelled, metric))
      local baseline, unusable = {}, {}
      local point_bases = options.bases_for and options.bases_for(key, metric.name) or bases
      for _, base in ipairs(point_bases) do
        local row = fields(base, key, metric.name)
        if ok_row(row) and (metric.status_only or type(row.value) == "number") then
          local value = metric.status_only and 1 or row.value
          if usable(value) then
            baseline[#baseline + 1] = {value = value, noise_pct = tonumber(row.noise_pct), mode = row.mode}
          else
            unusable[#unusable + 1] = tostring(value) -- 0, negative, infinite or NaN: no change can be computed
          end
        end
      end
      entry.judged_baseline = baseline -- with their noise, for a re-judge (entry.baseline: the values)
      local value = new_row and new_row.value
      if ok_row(new_row) and value == nil and #baseline == 0 then
        entry = nil -- a column this point does not fill (e.g. gbps of a compute kernel)
      elseif not new_row then
        entry.verdict = "missing"
      elseif not ok_row(new_row) then
        entry.verdict, entry.status = "error", new_row.status
        entry.basis = string.format("status %s: %s", tostring(new_row.status), tostring(new_row.error or ""))
      elseif metric.status_only then
        -- ok now; its status is all that is judged: same as an ok baseline, new without one
        entry.verdict = #baseline > 0 and "same" or "new"
      elseif type(value) ~= "number" or value ~= value then
        entry.verdict = "error"
        entry.basis = string.format("no %s value in the new row", metric.name)
      elseif not usable(value) then
        entry.verdict, entry.new = "error", value
        entry.basis = string.format("the new %s is %s: no change can be computed from it (a time or rate is a " ..
          "finite positive number)", metric.name, tostring(value))
      elseif #baseline == 0 then
        entry.verdict = "new"
        entry.new = value
        if #unusable > 0 then
          entry.basis = string.format("no usable baseline value (%s: not finite and positive)", table.concat(unusable, ", "))
        end
      else
        local judged = rule.judge{value = value, noise_pct = tonumber(new_row.noise_pct),
          samples = tonumber(new_row.samples), baseline = baseline, direction = metric.direction,
          rule = options.rule, floor_pct = options.floor_pct, unit_ms = rule.unit_ms(metric.name), mode = new_row.mode}
        entry.verdict, entry.base, entry.new = judged.verdict, judged.center, value
        entry.change_pct, entry.threshold_pct, entry.basis = judged.change_pct, judged.threshold_pct, judged.basis
        local significance_text = (options.significance or options.rule == "mannwhitney")
          and significance(entry, point_bases, new, key, metric)
        if options.rule == "mannwhitney" then
          mann_whitney_verdict(entry, value, metric.direction, options.floor_pct or rule.FLOOR_PCT, significance_text)
        elseif significance_text then
          entry.basis = entry.basis .. "; " .. significance_text
        end
        if new_row.clock_throttled == true then
          entry.throttled = true
          entry.basis = entry.basis .. "; clock throttled during the new run"
        end
      end
      if entry then
        entries[#entries + 1] = entry
      end
    end
  end
  return {points = entries, counts = M.count(entries)}
end

-- The number of entries of each verdict.
function M.count(entries)
  local counts = {same = 0, slower = 0, faster = 0, new = 0, missing = 0, error = 0}
  for _, e in ipairs(entries) do counts[e.verdict] = counts[e.verdict] + 1 end
  return counts
end

-- Judges a comparison's slower points again with a re-measure of them (a run, as store/result.lua
-- reads it), as nightly does the same night: a point stays slower only when its re-measured value
-- is slower too against the same baseline; otherwise it is same, marked unconfirmed. A suspect the
-- re-measure has no value for keeps its verdict. The counts are counted again from the verdicts.
-- options.skip(entry): true for a suspect judged otherwise (judge/verdict.lua: a creep).
function M.confirm(comparison, remeasure, options)
  for _, e in ipairs(comparison.points) do
    if e.verdict == "slower" and not (options.skip and options.skip(e)) then
      local row = remeasure and remeasure:row(e.key)
      local value = ok_row(row) and row[e.metric]
      if type(value) == "number" and usable(value) then
        local again = rule.judge{value = value, noise_pct = tonumber(row.noise_pct), samples = tonumber(row.samples),
          baseline = e.judged_baseline, direction = e.direction, rule = options.rule, floor_pct = options.floor_pct,
          unit_ms = rule.unit_ms(e.metric), mode = row.mode}
        e.confirm_value, e.confirmed_change = value, again.change_pct
        if again.verdict ~= "slower" then
          e.verdict, e.unconfirmed = "same", true
          e.basis = (e.basis or "") .. string.format("; suspect, not confirmed: re-measured %+.2f%%", again.change_pct)
        end
      else
        e.basis = (e.basis or "") .. "; the re-measure gave no value, so the first measurement stands"
      end
    end
  end
  comparison.counts = M.count(comparison.points)
end

-- A regression: slower, or failing now where the baseline had an ok row (a point that failed in
-- the baseline too is failing, not newly broken).
function M.is_regression(entry)
  return entry.verdict == "slower" or (entry.verdict == "error" and #entry.judged_baseline > 0)
end

return M
