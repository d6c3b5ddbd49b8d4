-- The regret bound a tune reports with its winner: an upper bound, at a stated confidence, on how
-- far the winner may be from the best configuration of the space (as a fraction: 0.02 = the best may
-- be 2% better). Two parts, each covering where the best may hide:
--   selection    the best is among the configurations measured at the final level: the winner's
--                interval against each rival (the log-ratio of medians, its standard error from the
--                samples' median absolute deviation, Bonferroni over the rivals);
--   exploration  the best is among the others: those racing measured at a shorter level only (the
--                same interval, against the winner at that level), and those never measured (the
--                space's roughness: how much better a configuration was than its nearest measured
--                neighbour, leave-one-out over the measured ones; the conformal quantile at the
--                confidence's share, taken for every unmeasured configuration).
-- The bound is the larger of the parts, each at half of 1 - confidence (a union bound). A part with
-- too few measurements to say anything is math.huge ("unbounded"). docs/howto/tune.md states the
-- method and its validation on spaces with exhaustive ground truth.
local paired = require("gpuexp.judge.paired")

local M = {}

M.CONFIDENCE = 0.9
M.UNMEASURED_CAP = 1000 -- unmeasured configurations scored at most (a seeded sample beyond)
M.MEASURED_CAP = 500    -- measured ones the roughness is read from at most (a seeded sample beyond)

-- The standard normal quantile (judge/paired.lua's).
M.z = paired.normal_quantile

-- A value as a cost: lower is better whatever the goal.
local function log_cost(value, direction)
  if direction == "max" then return -math.log(value) end
  return math.log(value)
end

-- The standard error of the log of a median, from the samples' spread (1.2533 x the robust sigma
-- of their logs / sqrt(n)); 0 with fewer than 2 samples (a value alone: no noise known).
local function log_median_se(samples)
  if type(samples) ~= "table" or #samples < 2 then return 0 end
  local logs = {}
  for i, v in ipairs(samples) do logs[i] = math.log(math.abs(v) > 0 and math.abs(v) or 1e-300) end
  table.sort(logs)
  local n = #logs
  local median = n % 2 == 1 and logs[(n + 1) // 2] or (logs[n // 2] + logs[n // 2 + 1]) / 2
  local deviations = {}
  for i, v in ipairs(logs) do deviations[i] = math.abs(v - median) end
  table.sort(deviations)
  local mad = n % 2 == 1 and deviations[(n + 1) // 2] or (deviations[n // 2] + deviations[n // 2 + 1]) / 2
  return 1.2533 * 1.4826 * mad / math.sqrt(n)
end

-- The largest upper bound over rivals of log(cost(winner) / cost(rival)), Bonferroni at delta over
-- them: how much better than the winner any of them may be. rivals: {value, samples}... Returns the
-- fraction (>= 0).
local function against(winner, rivals, direction, delta)
  if #rivals == 0 then return 0 end
  local z = M.z(1 - delta / #rivals)
  local winner_cost, winner_se = log_cost(winner.value, direction), log_median_se(winner.samples)
  local worst = -math.huge
  for _, r in ipairs(rivals) do
    local se = log_median_se(r.samples)
    local upper = winner_cost - log_cost(r.value, direction) + z * math.sqrt(winner_se ^ 2 + se ^ 2)
    if upper > worst then worst = upper end
  end
  return math.max(0, math.exp(worst) - 1)
end

-- L1 distance of two configurations' value positions, each axis scaled to [0, 1].
local function distance(a, b, sizes)
  local d = 0
  for axis, size in ipairs(sizes) do
    if size > 1 then d = d + math.abs(a[axis] - b[axis]) / (size - 1) end
  end
  return d
end

-- The nearest measured configuration's position in `measured` (skipping `skip`).
local function nearest(coords, measured, sizes, skip)
  local best, best_d = nil, math.huge
  for i, m in ipairs(measured) do
    if i ~= skip then
      local d = distance(coords, m.coords, sizes)
      if d < best_d then best, best_d = i, d end
    end
  end
  return best
end

-- The unmeasured part: how much better than the winner's cost an unmeasured configuration may be.
-- measured: {index, coords, value} at one level (the winner among them: winner_value at that level).
local function unmeasured_bound(o, measured, winner_value, delta)
  local space, sizes, direction = o.space, o.space.sizes, o.direction
  if #measured < 3 then return math.huge, 0 end
  local all = measured
  if #measured > M.MEASURED_CAP then -- a seeded sample keeps the neighbour searches linear
    local rng, order = o.generator(11), {}
    for i = 1, #measured do order[i] = i end
    for i = #order, 2, -1 do local j = rng.int(i); order[i], order[j] = order[j], order[i] end
    measured = {}
    for i = 1, M.MEASURED_CAP do measured[i] = all[order[i]] end
  end
  -- leave-one-out residuals: how much better each was than its nearest other measured one
  local residuals = {}
  for i, m in ipairs(measured) do
    local j = nearest(m.coords, measured, sizes, i)
    residuals[#residuals + 1] = log_cost(m.value, direction) - log_cost(measured[j].value, direction)
  end
  table.sort(residuals)
  local k = math.floor(delta * (#residuals + 1))
  if k < 1 then return math.huge, 0 end
  local q = residuals[k]
  -- the unmeasured configurations (all of a listed space, a seeded sample of a large one)
  local seen = {}
  for _, m in ipairs(all) do seen[m.index] = true end
  local candidates, count = {}, 0
  if space.count and space.count - #all <= M.UNMEASURED_CAP then
    for index in space.each() do
      if not seen[index] then candidates[#candidates + 1] = index end
    end
    count = #candidates
  else
    local rng = o.generator(7)
    for _ = 1, M.UNMEASURED_CAP * 2 do
      if #candidates >= M.UNMEASURED_CAP then break end
      local index = space.draw(rng)
      if not index then break end
      if not seen[index] then seen[index] = true; candidates[#candidates + 1] = index end
    end
    count = (space.count or space.estimate(o.generator(1))) - #all
  end
  if #candidates == 0 then return 0, 0 end
  local lowest = math.huge
  for _, index in ipairs(candidates) do
    local j = nearest(space.coords(index), measured, sizes)
    local predicted = log_cost(measured[j].value, direction) + q
    if predicted < lowest then lowest = predicted end
  end
  return math.max(0, math.exp(log_cost(winner_value, direction) - lowest) - 1), math.max(0, count)
end

-- M.bound{space, entries, levels (the levels measured, final last), finalists (entries at the
-- final level: {index, value, samples}), winner (the finalists' position of the best), direction,
-- confidence, generator} -> {bound, selection, exploration, confidence, unmeasured, dropped}
function M.bound(o)
  local confidence = o.confidence or M.CONFIDENCE
  local delta = 1 - confidence
  local winner = o.finalists[o.winner]
  local rivals, final = {}, {}
  for i, f in ipairs(o.finalists) do
    if f.value then
      final[f.index] = true
      if i ~= o.winner then rivals[#rivals + 1] = f end
    end
  end
  local selection = against(winner, rivals, o.direction, delta / 2)
  -- configurations measured at a shorter level only (racing's dropped ones), against the winner there
  local dropped, lowest_level, by_level = 0, nil, {}
  for index, levels in pairs(o.entries) do
    if not final[index] then
      local longest
      for level, r in pairs(levels) do if r.value and (not longest or level > longest) then longest = level end end
      if longest and o.entries[winner.index][longest] and o.entries[winner.index][longest].value then
        by_level[longest] = by_level[longest] or {}
        table.insert(by_level[longest], levels[longest])
        dropped = dropped + 1
      end
    end
    for level in pairs(levels) do if not lowest_level or level < lowest_level then lowest_level = level end end
  end
  local measured_all = dropped + #rivals + 1
  local space_count = o.space.count or o.space.estimate(o.generator(1))
  local has_unmeasured = space_count > measured_all
  local share = (has_unmeasured and dropped > 0) and delta / 4 or delta / 2 -- split between the parts there are
  local exploration = 0
  for level, list in pairs(by_level) do
    exploration = math.max(exploration, against(o.entries[winner.index][level], list, o.direction, share * #list / dropped))
  end
  local unmeasured = 0
  if has_unmeasured then
    -- the level most configurations were measured at (racing's first; the only one otherwise)
    local measured = {}
    for index, levels in pairs(o.entries) do
      local r = levels[lowest_level]
      if r and r.value then measured[#measured + 1] = {index = index, coords = o.space.coords(index), value = r.value} end
    end
    table.sort(measured, function(a, b) return a.index < b.index end)
    local winner_at = o.entries[winner.index][lowest_level]
    local part
    part, unmeasured = unmeasured_bound(o, measured, winner_at and winner_at.value or winner.value, share)
    exploration = math.max(exploration, part)
  end
  return {bound = math.max(selection, exploration), selection = selection, exploration = exploration,
    confidence = confidence, unmeasured = unmeasured, dropped = dropped}
end

-- A bound as text: "+2.1%", or "unbounded".
function M.text(fraction)
  if fraction == math.huge then return "unbounded" end
  return string.format("+%.2f%%", fraction * 100)
end

return M
