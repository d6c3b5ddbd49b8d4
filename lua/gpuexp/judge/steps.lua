-- Step detection in a series of nights, the method of asv (airspeed velocity, asv/step_detect.py):
-- the series is fitted with a piecewise-constant function by minimising
--     gamma * (number of jumps) + sum |y_i - level of y_i's segment|        (L1, the Potts model)
-- each segment's level being its median (Friedrich et al., "Complexity penalized M-estimation",
-- JCGS 17 (2008)). The penalty gamma is chosen per series as asv does: among gamma = d0 * e^x,
-- x in [ln(0.1/n), 0] (d0: the L1 distance of the whole series from its median), the one that
-- minimises the information criterion  beta * segments + ln(sigma0 + L1 error), beta = 4 ln(n)/n,
-- sigma0 a floor on the noise (0.1 x the smallest jump between levels; 0.001 x the smallest level
-- with one or two segments). Then, as asv's detect_regressions, the upward steps whose size is
-- past the larger of the threshold and the segments' own mean deviation are the regressions, read
-- from the latest segment backwards (a short segment that the level comes back from is dropped).
-- Differences from asv, on purpose: the fit is exact (dynamic programming over every segment; a
-- nightly series is at most a few hundred nights), every night weighs the same, and asv's AR(1)
-- correlation of the noise is not fitted (rho = 0).
local stats = require("gpuexp.judge.stats")

local M = {}

local function median_of(values, first, last)
  return stats.median(values, first, last)
end

-- The level (median) and L1 distance of every segment y[l..r], computed once per series.
local function segment_table(y)
  local n = #y
  local level, distance = {}, {}
  for l = 1, n do
    level[l], distance[l] = {}, {}
    for r = l, n do
      local m = median_of(y, l, r)
      local d = 0
      for i = l, r do d = d + math.abs(y[i] - m) end
      level[l][r], distance[l][r] = m, d
    end
  end
  return level, distance
end

-- The exact L1 Potts fit for one gamma: a list of segments {first, last, level, distance}.
local function fit(y, gamma, level, distance)
  local n = #y
  local best, from = {[0] = -gamma}, {}
  for r = 1, n do
    best[r] = math.huge
    for l = 1, r do
      local cost = best[l - 1] + gamma + distance[l][r]
      if cost <= best[r] then best[r], from[r] = cost, l end
    end
  end
  local segments = {}
  local r = n
  while r >= 1 do
    local l = from[r]
    table.insert(segments, 1, {first = l, last = r, level = level[l][r], distance = distance[l][r]})
    r = l - 1
  end
  return segments
end

-- Golden-section search for the minimum of f on [a, b] (asv's golden_search, bounds expanded so
-- that the ends are tried).
local function golden(f, a, b, tolerance)
  local ratio = 2 / (1 + math.sqrt(5))
  local x0 = (ratio * a - (1 - ratio) * b) / (2 * ratio - 1)
  local x3 = (ratio * b - (1 - ratio) * a) / (2 * ratio - 1)
  local x1, x2 = ratio * x0 + (1 - ratio) * x3, (1 - ratio) * x0 + ratio * x3
  local f1, f2 = f(x1), f(x2)
  while math.abs(x0 - x3) >= tolerance do
    if f2 < f1 then
      x0, x1, f1 = x1, x2, f2
      x2 = ratio * x1 + (1 - ratio) * x3
      f2 = f(x2)
    else
      x3, x2, f2 = x2, x1, f1
      x1 = ratio * x2 + (1 - ratio) * x0
      f1 = f(x1)
    end
  end
end

-- M.segments(y) -> the piecewise-constant fit of the values (list of {first, last, level,
-- distance, error}: error is the segment's mean absolute deviation), with gamma chosen as above.
function M.segments(y)
  local n = #y
  if n == 0 then return {} end
  local level, distance = segment_table(y)
  local d0 = distance[1][n]
  if d0 == 0 then d0 = 1 end
  local beta = 4 * math.log(n) / n
  local chosen, chosen_objective
  local function objective(x)
    local segments = fit(y, d0 * math.exp(x), level, distance)
    local sigma0
    if #segments > 2 then
      sigma0 = math.huge
      for s = 2, #segments do sigma0 = math.min(sigma0, math.abs(segments[s].level - segments[s - 1].level)) end
      sigma0 = 0.1 * sigma0
    else
      sigma0 = math.huge
      for _, s in ipairs(segments) do sigma0 = math.min(sigma0, math.abs(s.level)) end
      sigma0 = 0.001 * sigma0
    end
    sigma0 = math.max(1e-300, sigma0)
    local error = 0
    for _, s in ipairs(segments) do error = error + s.distance end
    local value = beta * #segments + math.log(sigma0 + error)
    if not chosen_objective or value < chosen_objective then chosen, chosen_objective = segments, value end
    return value
  end
  local a = math.log(0.1 / n)
  golden(objective, a, 0, math.abs(a) * 0.1)
  for _, s in ipairs(chosen) do s.error = s.distance / (s.last - s.first + 1) end
  return chosen
end

-- M.regressions(segments, threshold, min_size) -> nil when the latest level is no regression, or
-- {latest, best, steps = {{before, after, level_before, best_after}...}} (asv's detect_regressions:
-- lower is better; threshold relative, e.g. 0.02; before/after: the last index of the better
-- segment and the first of the worse one). The first step is where the regression began.
function M.regressions(segments, threshold, min_size)
  if #segments == 0 then return nil end
  threshold, min_size = threshold or 0, min_size or 2
  local found = {}
  local latest = segments[#segments].level
  local best = latest
  local reference, reference_error = latest, segments[#segments].error
  local next_first, short = nil, nil
  for s = #segments, 1, -1 do
    local segment = segments[s]
    local step = math.max(segment.error, reference_error, threshold * segment.level)
    if reference > segment.level + step then
      if segment.last - segment.first + 1 < min_size then short = {reference, reference_error} end
      found[#found + 1] = {before = segment.last, after = next_first, level_before = segment.level, best_after = best}
      reference, reference_error = segment.level, segment.error
    elseif short then
      -- the level came back after a short segment: that segment was no step
      if short[1] <= segment.level + step then
        table.remove(found)
        reference, reference_error = short[1], short[2]
      end
      short = nil
    end
    next_first = segment.first
    if segment.level < best then best = segment.level end
  end
  if #found == 0 then return nil end
  local steps = {}
  for i = #found, 1, -1 do steps[#steps + 1] = found[i] end
  return {latest = latest, best = best, steps = steps}
end

-- M.onset(y, level, margin, after) -> the index where a rise above level began: from the first
-- worse segment (after, as M.regressions gives it) back over the nights already more than margin
-- above the level. A slow creep is fitted as a staircase whose first step comes late (its first
-- nights sit inside the better segment's spread); they were part of the rise all the same.
function M.onset(y, level, margin, after)
  local first = after
  while first > 1 and y[first - 1] > level + margin do first = first - 1 end
  return first
end

return M
