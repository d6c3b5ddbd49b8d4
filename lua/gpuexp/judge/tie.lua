-- The tie set of a tuning run: the configurations that cannot be told apart from the best at a
-- stated confidence, from the samples every measured configuration keeps. The rule (docs/tune.md):
--   best     = the configuration with the best median;
--   distinct = the Mann-Whitney U test of its samples against the best's rejects "one
--              distribution" at alpha, Holm-corrected over the configurations compared (so a
--              search of 2,000 configurations does not tie by luck nor split by luck);
--   tied     = not distinct, or not shown to be more than tie_pct worse: the bootstrap 95%
--              interval of the ratio of its median to the best's starts below 1 + tie_pct/100 (a
--              0.2% difference that thousands of samples make "significant" is still a tie for a
--              tuner, and a noisy best does not push its close rivals out).
-- The samples may run the other way from the values (a rate maximised, its times as samples:
-- options.sample_direction). Entries without samples (a row that kept none) are judged by their
-- values alone: tied within tie_pct. Racing uses the same test one-sided to drop configurations shown worse early.
local stats = require("gpuexp.judge.stats")

local M = {}

M.ALPHA = 0.05
M.TIE_PCT = 1.0

-- A value oriented so that lower is better.
local function cost(value, direction) return direction == "max" and -value or value end

-- The index (into entries) of the best entry by its value, or nil when none has one.
function M.best(entries, direction)
  local best
  for i, e in ipairs(entries) do
    if type(e.value) == "number" and e.value == e.value and (not best or cost(e.value, direction) <
      cost(entries[best].value, direction)) then
      best = i
    end
  end
  return best
end

-- The ratio of an entry to the best, > 1 when worse (for "max" objectives: best / value).
local function ratio_to(best_value, value, direction)
  if direction == "max" then return best_value / value end
  return value / best_value
end

-- M.worse_p(best_samples, samples, direction) -> one-sided p-value that samples are worse than
-- the best's (Mann-Whitney, normal approximation), or 1 without samples.
function M.worse_p(best_samples, samples, direction)
  if not best_samples or not samples or #best_samples < 2 or #samples < 2 then return 1 end
  local p, _, z = stats.mann_whitney(best_samples, samples)
  -- z > 0: the best's ranks are high (its values larger); worse for "min" means the other is larger
  local worse
  if direction == "max" then worse = z > 0 else worse = z < 0 end
  if worse then return p / 2 end
  return 1 - p / 2
end

-- M.tie_set(entries, options) -> {best = i, members = {i...}, verdicts = {[i] = {...}}}
-- entries: {key=, value= (the median), samples= {numbers}}; options: direction "min"|"max" (of
-- the values), sample_direction (of the samples; default direction), alpha, tie_pct. Every entry with a value gets a verdict: ratio (to the best),
-- p (Holm-adjusted), ci_low/ci_high (bootstrap, for those close enough to matter) and tied.
function M.tie_set(entries, options)
  options = options or {}
  local direction, alpha, tie_pct = options.direction or "min", options.alpha or M.ALPHA, options.tie_pct or M.TIE_PCT
  local sample_direction = options.sample_direction or direction
  local best = M.best(entries, direction)
  local result = {best = best, members = {}, verdicts = {}, alpha = alpha, tie_pct = tie_pct, direction = direction}
  if not best then return result end
  local best_entry = entries[best]
  local compared = {}
  for i, e in ipairs(entries) do
    if i ~= best and type(e.value) == "number" and e.value == e.value then
      local p = M.worse_p(best_entry.samples, e.samples, sample_direction)
      -- two-sided "can be told apart": worse (the best is the best by its median, so at most
      -- marginally better)
      compared[#compared + 1] = {index = i, p = math.min(1, 2 * math.min(p, 1 - p))}
    end
  end
  -- Holm: sorted by p, the k-th smallest rejected while p <= alpha / (m - k + 1)
  table.sort(compared, function(a, b) return a.p < b.p end)
  local m, stopped = #compared, false
  for k, c in ipairs(compared) do
    c.adjusted = math.min(1, c.p * (m - k + 1))
    if k > 1 and compared[k - 1].adjusted > c.adjusted then c.adjusted = compared[k - 1].adjusted end
    if stopped or c.p > alpha / (m - k + 1) then stopped = true; c.distinct = false else c.distinct = true end
  end
  result.verdicts[best] = {ratio = 1, p = 1, tied = true, best = true}
  result.members[1] = best
  for _, c in ipairs(compared) do
    local e = entries[c.index]
    local verdict = {ratio = ratio_to(best_entry.value, e.value, direction), p = c.adjusted}
    local limit = 1 + tie_pct / 100
    if not (best_entry.samples and e.samples and #best_entry.samples > 1 and #e.samples > 1) then
      c.distinct = verdict.ratio >= limit -- no samples to test: the values alone, against tie_pct
      verdict.p = nil
    end
    if c.distinct and verdict.ratio < 1 + 2 * tie_pct / 100 and best_entry.samples and e.samples and #e.samples > 1 then
      local low, high = stats.bootstrap_ratio(best_entry.samples, e.samples, 200, 400)
      if sample_direction == "max" then low, high = 1 / high, 1 / low end
      verdict.ci_low, verdict.ci_high = low, high
      verdict.equivalent = low < limit
    end
    verdict.tied = not c.distinct or verdict.equivalent == true
    result.verdicts[c.index] = verdict
    if verdict.tied then result.members[#result.members + 1] = c.index end
  end
  table.sort(result.members, function(a, b) return result.verdicts[a].ratio < result.verdicts[b].ratio end)
  return result
end

-- How the tie set was decided, in one line for reports.
function M.rule_text(result)
  local compared = -1
  for _ in pairs(result.verdicts) do compared = compared + 1 end
  return string.format("tied: Mann-Whitney against the best not significant at alpha %.3g (Holm over %d " ..
    "configurations), or the bootstrap 95%% interval of the ratio to the best starting below +%.3g%%", result.alpha,
    math.max(0, compared), result.tie_pct)
end

return M
