-- Paired statistics for gpuexp ab: two variants measured in interleaved blocks in one process, so
-- each block gives one ratio B/A taken under the same clocks, temperature and neighbours. The
-- verdict (docs/ab.md):
--   effect   = the geometric mean of the block ratios (the mean of their logarithms);
--   interval = a percentile bootstrap interval of that mean at the stated confidence (99.5%);
--   test     = the Wilcoxon signed-rank test of the log ratios against 0 (normal approximation
--              with the tie correction; zeros dropped);
--   slower / faster when the test rejects at alpha = 1 - confidence AND the interval excludes 1
--   AND the change is at least the threshold; else same;
--   detectable effect = (z(1 - alpha/2) + z(power)) x the standard error of the mean log ratio:
--              the change the run would have found with that power; blocks are added until it is
--              under the --mde asked for, or the budget ends. Every verdict states it.
-- The stopping rule reads only the spread of the ratios, never their mean, so stopping early does
-- not inflate the false-call rate.
local stats = require("gpuexp.judge.stats")
local rule = require("gpuexp.judge.rule")

local M = {}

M.CONFIDENCE = 0.995
M.POWER = 0.9
M.MIN_BLOCKS = 20

-- The standard normal quantile (Acklam's rational approximation, relative error under 1.2e-9
-- after one Newton step on erfc).
function M.normal_quantile(p)
  if p <= 0 then return -math.huge elseif p >= 1 then return math.huge end
  local a = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
    -3.066479806614716e+01, 2.506628277459239e+00}
  local b = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
    -1.328068155288572e+01}
  local c = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
    4.374664141464968e+00, 2.938163982698783e+00}
  local d = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
  local x
  if p < 0.02425 then
    local q = math.sqrt(-2 * math.log(p))
    x = (((((c[1] * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) * q + c[6]) / ((((d[1] * q + d[2]) * q + d[3]) * q + d[4]) * q + 1)
  elseif p <= 1 - 0.02425 then
    local q = p - 0.5
    local r = q * q
    x = (((((a[1] * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * r + a[6]) * q /
      (((((b[1] * r + b[2]) * r + b[3]) * r + b[4]) * r + b[5]) * r + 1)
  else
    local q = math.sqrt(-2 * math.log(1 - p))
    x = -(((((c[1] * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) * q + c[6]) / ((((d[1] * q + d[2]) * q + d[3]) * q + d[4]) * q + 1)
  end
  local e = 0.5 * stats.erfc(-x / math.sqrt(2)) - p
  local u = e * math.sqrt(2 * math.pi) * math.exp(x * x / 2)
  return x - u / (1 + x * u / 2)
end

-- M.wilcoxon(values) -> two-sided p of the signed-rank test that values are centred on 0, W+, z.
function M.wilcoxon(values)
  local nonzero = {}
  for _, v in ipairs(values) do if v ~= 0 then nonzero[#nonzero + 1] = v end end
  local n = #nonzero
  if n == 0 then return 1, 0, 0 end
  table.sort(nonzero, function(x, y) return math.abs(x) < math.abs(y) end)
  local plus, ties = 0, 0
  local i = 1
  while i <= n do
    local j = i
    while j < n and math.abs(nonzero[j + 1]) == math.abs(nonzero[i]) do j = j + 1 end
    local rank, t = (i + j) / 2, j - i + 1
    if t > 1 then ties = ties + t * t * t - t end
    for k = i, j do if nonzero[k] > 0 then plus = plus + rank end end
    i = j + 1
  end
  local mean = n * (n + 1) / 4
  local variance = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
  if variance <= 0 then return 1, plus, 0 end
  local difference = plus - mean
  local z = math.max(0, math.abs(difference) - 0.5) / math.sqrt(variance) * (difference < 0 and -1 or 1)
  return math.min(1, stats.erfc(math.abs(z) / math.sqrt(2))), plus, z
end

-- A seeded generator of its own (xorshift64), so an interval is the same for the same ratios.
local function generator(seed)
  local state = seed or 88172645463325252
  return function(n)
    state = state ~ (state << 13); state = state ~ (state >> 7); state = state ~ (state << 17)
    return (state >> 11) % n + 1
  end
end

-- M.block_ratio(a_samples, b_samples) -> median(B) / median(A) of one block.
function M.block_ratio(a_samples, b_samples)
  return stats.median(b_samples) / stats.median(a_samples)
end

-- M.summary(ratios [, options]) -> {blocks, ratio, change_pct, ci_low, ci_high, p, se, mde_pct,
-- confidence, power}: the paired statistics of the block ratios (options: confidence, power, reps,
-- seed; bootstrap = false: no interval, for the stopping rule, which reads only the spread).
function M.summary(ratios, options)
  options = options or {}
  local confidence, power = options.confidence or M.CONFIDENCE, options.power or M.POWER
  local n = #ratios
  local logs, sum = {}, 0
  for i, r in ipairs(ratios) do logs[i] = math.log(r); sum = sum + logs[i] end
  local mean = n > 0 and sum / n or 0
  local squares = 0
  for _, l in ipairs(logs) do squares = squares + (l - mean) ^ 2 end
  local se = n > 1 and math.sqrt(squares / (n - 1) / n) or math.huge
  local alpha = 1 - confidence
  local z = M.normal_quantile(1 - alpha / 2) + M.normal_quantile(power)
  local result = {blocks = n, ratio = math.exp(mean), change_pct = (math.exp(mean) - 1) * 100, se = se,
    mde_pct = se < math.huge and (math.exp(z * se) - 1) * 100 or math.huge, confidence = confidence, power = power}
  result.p = M.wilcoxon(logs)
  if n >= 2 and options.bootstrap ~= false then
    local reps, random, means = options.reps or 2000, generator(options.seed), {}
    for r = 1, reps do
      local s = 0
      for _ = 1, n do s = s + logs[random(n)] end
      means[r] = s / n
    end
    table.sort(means)
    result.ci_low = math.exp(means[math.max(1, math.floor(alpha / 2 * reps + 0.5))])
    result.ci_high = math.exp(means[math.min(reps, math.floor((1 - alpha / 2) * reps + 0.5))])
  end
  return result
end

-- M.enough(summary, mde_pct [, min_blocks]) -> true once the run could detect mde_pct.
function M.enough(summary, mde_pct, min_blocks)
  return summary.blocks >= (min_blocks or M.MIN_BLOCKS) and summary.mde_pct <= mde_pct
end

-- M.verdict(summary [, threshold_pct, min_blocks]) -> "slower"|"faster"|"same"|"undecided", basis
-- text (the effect it could detect, the interval and the p-value). B is the new variant: slower
-- means B takes longer. A run of fewer than min_blocks blocks (default M.MIN_BLOCKS: a budget too
-- short for the kernel) that shows no change is undecided, not same: its spread, and so the effect
-- it could have detected, rests on too few blocks to be said.
function M.verdict(summary, threshold_pct, min_blocks)
  local alpha = 1 - summary.confidence
  local verdict = "same"
  if summary.blocks >= 2 and summary.p < alpha and math.abs(summary.change_pct) >= (threshold_pct or 0) then
    if summary.ci_low > 1 then verdict = "slower" elseif summary.ci_high < 1 then verdict = "faster" end
  end
  local needed = min_blocks or M.MIN_BLOCKS
  local undecided = verdict == "same" and summary.blocks < needed
  local basis = string.format("%d blocks, %.3g%% CI %s..%s, Wilcoxon p=%.2g; could detect %s at %.0f%% power",
    summary.blocks, summary.confidence * 100,
    summary.ci_low and string.format("%+.2f%%", (summary.ci_low - 1) * 100) or "?",
    summary.ci_high and string.format("%+.2f%%", (summary.ci_high - 1) * 100) or "?", summary.p,
    summary.mde_pct < math.huge and string.format("+-%.2f%%", summary.mde_pct) or "nothing", summary.power * 100)
  if undecided then
    verdict = "undecided"
    basis = basis .. string.format("; undecided: %d block%s, fewer than the %d a verdict needs (a longer budget)",
      summary.blocks, summary.blocks == 1 and "" or "s", needed)
  end
  return verdict, basis
end

-- A pool's summary ({median, noise_pct, count}) of a list of samples, or the summary given.
local function summary_of(samples)
  if samples.median and samples.count then return samples end
  local pool = stats.pool(math.max(1, #samples))
  pool:add_all(samples)
  return pool:summary()
end

-- M.nvbench(a, b) -> verdict, change_pct, threshold_pct: NVBench's rule on the same samples pooled
-- as two runs (nvbench_compare.py: same within the smaller relative noise). a and b: lists of
-- samples, or the summaries of pools of them (stats.pool, for runs of millions of samples).
function M.nvbench(a, b)
  a, b = summary_of(a), summary_of(b)
  local judged = rule.judge{value = b.median, noise_pct = b.noise_pct, samples = b.count,
    baseline = {{value = a.median, noise_pct = a.noise_pct}}, direction = "lower", rule = "nvbench"}
  return judged.verdict, judged.change_pct, judged.threshold_pct
end

return M
