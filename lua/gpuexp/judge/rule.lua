-- The regression rule: is a point's new value worse than its baseline by more than the noise that
-- separates runs of unchanged code? Designed from measured data (bench/nightly_rule/): on an H200
-- the night-to-night spread of a point's median is far smaller than its within-run sample noise
-- (triad 0.05% vs 1%, FMA chain 0.06% vs 5%), so the rule judges a change against the spread of
-- the baseline runs' medians when there are enough of them, and against the within-run noise only
-- while the history is young.
local stats = require("gpuexp.judge.stats")

local M = {}

M.FLOOR_PCT = 2.0      -- never call a change smaller than this a regression (machines of one model differ)
M.SPREAD_FACTOR = 3    -- times the baseline's night-to-night spread (see M.spread)
M.NOISE_FACTOR = 2     -- young history: times the larger within-run noise (relative standard deviation)
M.ERROR_FACTOR = 3     -- times the standard error of the new median (a short or disturbed run)
M.MIN_HISTORY = 3      -- baseline runs needed before the spread is trusted
-- Short work: a kernel's median moves between processes by an amount of time that is not the
-- kernel's (its launch, the clocks' ramp, the GPU's front end), which neither the within-run noise
-- nor a few nights' spread shows: a time is never called changed by less than SHIFT_US of it, and
-- by less than LAUNCH_US when the two were timed differently (per-run events include a launch's
-- host time, back to back does not; auto mode picks by that share, so a kernel near its line
-- flips between runs). SHIFT_US: a 4-5 us kernel's median moved by up to 0.84 us between ten
-- processes on an H200 (bench/nightly_rule/h200/suite_v1_data.tgz); LAUNCH_US: a launch's host
-- time, 416k-425k launches/s from a C loop on an H200 (bench/RESULTS.md).
M.SHIFT_US = 1.0
M.LAUNCH_US = 2.4

-- The unit of a time column in ms (1 for *_ms, 1e-3 for *_us, ...), or nil for a column that is
-- not a time (cycles, rates).
function M.unit_ms(column)
  local name = type(column) == "string" and column:lower() or ""
  if name:match("_ms$") then return 1 end
  if name:match("_us$") then return 1e-3 end
  if name:match("_ns$") then return 1e-6 end
  if name:match("_s$") then return 1e3 end
  return nil
end

-- How a time was taken, as a family: per-run events ("hot"), cold runs, or back to back ("batch",
-- "graph"); nil when not said.
local METHOD = {hot = "per-run events", cold = "cold runs", batch = "back to back", graph = "back to back"}
local function method_of(mode) return type(mode) == "string" and METHOD[mode] or nil end

local median = stats.median -- (nil for no values)
M.median = median

-- The night-to-night spread of baseline values (percent of their centre): the largest deviation
-- from the centre, ignoring the single largest one when there are 4 or more values, so that one
-- outlying night (a suspect the re-measure did not confirm) does not blunt the rule for weeks.
function M.spread(values, center)
  local deviations = {}
  for i, v in ipairs(values) do deviations[i] = math.abs(v - center) / center * 100 end
  table.sort(deviations)
  if #deviations >= 4 then table.remove(deviations) end
  return deviations[#deviations] or 0
end

-- Which way is better for a column: "lower" for times, "higher" for rates, nil when unknown.
function M.direction(column)
  local name = column:lower()
  if name:match("_ms$") or name:match("_us$") or name:match("_ns$") or name:match("_s$") or name:match("time")
    or name:match("latency") or name:match("cycles$") then
    return "lower"
  end
  if name:match("gbps$") or name:match("gflops$") or name:match("tflops$") or name:match("_per_s$")
    or name:match("throughput") or name:match("bandwidth") or name:match("occupancy") then
    return "higher"
  end
  return nil
end

-- M.judge{value, noise_pct, samples, baseline = {{value, noise_pct, mode}...}, direction =
-- "lower"|"higher", rule = "gpuexp"|"nvbench", floor_pct, unit_ms (the values' unit when they are
-- times: the short-work floor), mode (how the new value was timed)} -> {verdict =
-- "same"|"slower"|"faster", center, change_pct (signed, new against the baseline's centre),
-- worse_pct (positive = worse), threshold_pct, basis}
function M.judge(p)
  local floor = p.floor_pct or M.FLOOR_PCT
  local values, noises = {}, {}
  for i, b in ipairs(p.baseline) do values[i] = b.value; noises[#noises + 1] = b.noise_pct end
  local center = median(values)
  local change = (p.value - center) / center * 100
  local worse = p.direction == "higher" and -change or change
  local threshold, basis
  if p.rule == "nvbench" then
    -- nvbench_compare.py: SAME when the difference is within the smaller of the two runs' noise
    -- (relative standard deviation), against the last baseline run only
    local last = p.baseline[#p.baseline]
    change = (p.value - last.value) / last.value * 100
    worse = p.direction == "higher" and -change or change
    center = last.value
    threshold = math.min(last.noise_pct or math.huge, p.noise_pct or math.huge)
    if threshold == math.huge then threshold = 0 end
    basis = string.format("nvbench: min noise %.2f%%", threshold)
  elseif #values >= M.MIN_HISTORY then
    local spread = M.spread(values, center)
    threshold = math.max(floor, M.SPREAD_FACTOR * spread)
    basis = string.format("%d runs, spread %.2f%%", #values, spread)
  else
    local noise = 0
    for _, n in ipairs(noises) do noise = math.max(noise, n) end
    noise = math.max(noise, p.noise_pct or 0)
    threshold = math.max(floor, M.NOISE_FACTOR * noise)
    basis = string.format("%d run%s, noise %.2f%%", #values, #values == 1 and "" or "s", noise)
  end
  if p.rule ~= "nvbench" and p.noise_pct and p.samples and p.samples > 1 then
    -- the standard error of a median: 1.2533 sigma / sqrt(n)
    local error_pct = 1.2533 * p.noise_pct / math.sqrt(p.samples)
    if M.ERROR_FACTOR * error_pct > threshold then
      threshold = M.ERROR_FACTOR * error_pct
      basis = basis .. string.format(", new median +-%.2f%%", error_pct)
    end
  end
  if p.rule ~= "nvbench" and p.unit_ms and center > 0 then
    -- short work: the time a run moves by that is not the kernel's
    local method, other = method_of(p.mode), nil
    for _, b in ipairs(p.baseline) do
      local m = method_of(b.mode)
      if method and m and m ~= method then other = m end
    end
    local shift_us = other and math.max(M.SHIFT_US, M.LAUNCH_US) or M.SHIFT_US
    local shift_pct = 100 * shift_us / (center * p.unit_ms * 1000)
    if shift_pct > threshold then
      threshold = shift_pct
      basis = basis .. (other and string.format(", timed by %s against %s: a launch's host time (%.2g us) is %.2f%%",
        method, other, shift_us, shift_pct) or string.format(", short work: %.2g us between runs is %.2f%%", shift_us,
        shift_pct))
    end
  end
  local verdict = "same"
  if worse > threshold then verdict = "slower" elseif worse < -threshold then verdict = "faster" end
  return {verdict = verdict, center = center, change_pct = change, worse_pct = worse, threshold_pct = threshold,
    basis = basis}
end

return M
