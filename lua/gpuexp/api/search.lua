-- The search strategies of gpuexp.tune, apart from any GPU: each decides which configurations (by
-- index into the space's points) to measure next and at what level (the fraction of a full
-- measurement), through evaluate(batch, level) -> results, one per index: {value (nil when the
-- point failed), samples, cost_s}. The tests drive them with synthetic objectives; api/tune.lua
-- drives them with sweeps. docs/tune.md describes each.
--   brute  every configuration, in order, at the full level;
--   random a seeded random order, at the full level;
--   racing successive halving: every candidate measured briefly, those shown worse than the best
--          by their own samples (one-sided Mann-Whitney, Bonferroni) dropped and at most 1/eta kept,
--          the survivors measured eta times longer, until the last level is a full measurement;
--   model  a tree-structured Parzen estimator over the axes (ordinal, neighbour-smoothed
--          densities of the best fifth and the rest), picking among candidates drawn from the
--          good density the one with the highest density ratio.
-- Every strategy takes a seed, a budget (max_evals: full-measurement equivalents; budget_s: the
-- evaluations' cost_s) and start points measured first.
local tie = require("gpuexp.judge.tie")

local M = {}

M.STRATEGIES = {brute = true, random = true, racing = true, model = true}
M.ETA = 3
M.GAMMA = 0.2      -- the model's "good" fraction
M.INITIAL = 12     -- the model's random start (or a quarter of its budget, when less)
M.CANDIDATES = 48  -- drawn from the good density per proposal
M.BATCH = 4        -- proposals per round (one sweep each)

-- A seeded generator (xorshift64*) with integer and float draws; math.random's state is the
-- user's and stays untouched.
function M.generator(seed)
  local state = (seed or 1) * 2654435761 + 88172645463325252
  if state == 0 then state = 88172645463325252 end
  local function next_value()
    state = state ~ (state >> 12); state = state ~ (state << 25); state = state ~ (state >> 27)
    return (state * 2685821657736338717) >> 11
  end
  return {
    int = function(n) return next_value() % n + 1 end,
    float = function() return next_value() / 9007199254740992.0 end, -- 2^53: [0, 1)
  }
end

local function shuffled(list, rng)
  local copy = {table.unpack(list)}
  for i = #copy, 2, -1 do
    local j = rng.int(i)
    copy[i], copy[j] = copy[j], copy[i]
  end
  return copy
end

-- The run's state: what was measured, at what level, and the budget spent.
local function new_state(spec)
  local count = spec.count
  return {spec = spec, count = count, entries = {}, order = {}, evaluations = 0, cost_s = 0,
    max_evals = spec.max_evals or count, budget_s = spec.budget_s, direction = spec.direction or "min",
    sample_direction = spec.sample_direction or spec.direction or "min"}
end

local function exhausted(state, extra)
  if state.evaluations + (extra or 0) > state.max_evals + 1e-9 then return "max_evals" end
  if state.budget_s and state.cost_s >= state.budget_s then return "budget_s" end
  return nil
end

-- Measures a batch at a level; records each result as the point's entry at that level.
local function evaluate(state, batch, level)
  if #batch == 0 then return {} end
  local results = state.spec.evaluate(batch, level)
  for i, index in ipairs(batch) do
    local r = results[i] or {}
    state.entries[index] = state.entries[index] or {}
    state.entries[index][level] = r
    state.order[#state.order + 1] = {index = index, level = level}
    state.evaluations = state.evaluations + level
    state.cost_s = state.cost_s + (r.cost_s or 0)
  end
  return results
end

-- The entries measured at a level, as tie.tie_set reads them.
local function level_entries(state, level, indices)
  local list = {}
  for _, index in ipairs(indices) do
    local r = state.entries[index] and state.entries[index][level]
    list[#list + 1] = {index = index, value = r and r.value, samples = r and r.samples}
  end
  return list
end

local function unique_start(spec)
  local seen, start = {}, {}
  for _, index in ipairs(spec.start or {}) do
    if not seen[index] and index >= 1 and index <= spec.count then seen[index] = true; start[#start + 1] = index end
  end
  return start, seen
end

-- Brute force and random sampling: one list, measured in rounds of `batch`.
local function sequential(state, order)
  local batch_size = state.spec.batch or 64
  local i = 1
  while i <= #order do
    local room = math.floor(state.max_evals - state.evaluations + 1e-9)
    if room <= 0 or exhausted(state) then state.stopped_by = exhausted(state) or "max_evals"; break end
    local batch = {}
    for j = i, math.min(#order, i + math.min(batch_size, room) - 1) do batch[#batch + 1] = order[j] end
    evaluate(state, batch, 1)
    i = i + #batch
  end
  local measured = {}
  for _, entry in ipairs(state.order) do measured[#measured + 1] = entry.index end
  return measured, 1
end

local function start_then(spec, rest)
  local start, seen = unique_start(spec)
  for _, index in ipairs(rest) do if not seen[index] then start[#start + 1] = index end end
  return start
end

local function all_indices(count)
  local list = {}
  for i = 1, count do list[i] = i end
  return list
end

local strategies = {}

function strategies.brute(state)
  return sequential(state, start_then(state.spec, all_indices(state.count)))
end

function strategies.random(state, rng)
  return sequential(state, start_then(state.spec, shuffled(all_indices(state.count), rng)))
end

-- Successive halving whose levels fit the budget: with n candidates and K levels every level costs
-- n / eta^(K-1) full measurements, so K is the smallest count whose total fits max_evals; when even
-- the deepest useful ladder cannot hold every configuration, a random sample of them races.
function strategies.racing(state, rng)
  local eta, budget = state.spec.eta or M.ETA, state.max_evals
  local candidates = start_then(state.spec, shuffled(all_indices(state.count), rng))
  local levels = 1
  local function ladder_cost(n, k) return k * n / eta ^ (k - 1) end
  while ladder_cost(#candidates, levels) > budget and levels < 8 do levels = levels + 1 end
  while ladder_cost(#candidates, levels) > budget and #candidates > 1 do
    candidates[#candidates] = nil -- keep the start points (first) and a random sample
  end
  local survivors, level = candidates, nil
  for k = 1, levels do
    level = eta ^ -(levels - k)
    evaluate(state, survivors, level)
    if k == levels then break end
    local list = level_entries(state, level, survivors)
    local best = tie.best(list, state.direction)
    if not best then break end
    local kept = {}
    for _, e in ipairs(list) do
      if e.value then
        local p = tie.worse_p(list[best].samples, e.samples, state.sample_direction)
        if p >= (state.spec.alpha or tie.ALPHA) / #list then kept[#kept + 1] = e end
      end
    end
    table.sort(kept, function(a, b)
      if state.direction == "max" then return a.value > b.value end
      return a.value < b.value
    end)
    survivors = {}
    for i = 1, math.min(#kept, math.max(1, math.ceil(#list / eta))) do survivors[i] = kept[i].index end
    state.dropped_by_test = (state.dropped_by_test or 0) + (#list - #kept)
  end
  return survivors, level
end

-- A neighbour-smoothed histogram over an axis' value positions: a prior of 1 per value, 1 per
-- observation at its value and half of one at each neighbour (the axes are ordered).
local function density(observations, axis, size)
  local weights, total = {}, 0
  for v = 1, size do weights[v] = 1 end
  for _, c in ipairs(observations) do
    local v = c[axis]
    weights[v] = weights[v] + 1
    if v > 1 then weights[v - 1] = weights[v - 1] + 0.5 end
    if v < size then weights[v + 1] = weights[v + 1] + 0.5 end
  end
  for v = 1, size do total = total + weights[v] end
  for v = 1, size do weights[v] = weights[v] / total end
  return weights
end

function strategies.model(state, rng)
  local spec = state.spec
  local coords, sizes = spec.coords, spec.sizes -- each point's value positions on each axis
  local budget = math.floor(state.max_evals + 1e-9)
  local initial = math.min(budget, M.INITIAL, math.max(2, budget // 4))
  local order = start_then(spec, shuffled(all_indices(state.count), rng))
  local first, measured = {}, {}
  for i = 1, math.min(#order, math.max(initial, #unique_start(spec))) do first[#first + 1] = order[i] end
  evaluate(state, first, 1)
  for _, index in ipairs(first) do measured[index] = true end
  while not exhausted(state, 1) and state.evaluations < state.count do
    -- good: the best fifth of what was measured (failed points are bad)
    local list = {}
    for index in pairs(measured) do
      local r = state.entries[index][1]
      list[#list + 1] = {index = index, value = r.value}
    end
    table.sort(list, function(a, b)
      if not a.value or not b.value then return a.value ~= nil and b.value == nil end
      if a.value == b.value then return a.index < b.index end
      if state.direction == "max" then return a.value > b.value end
      return a.value < b.value
    end)
    local good_count = math.max(1, math.ceil(M.GAMMA * #list))
    local good, bad = {}, {}
    for i, e in ipairs(list) do
      if i <= good_count and e.value then good[#good + 1] = coords[e.index] else bad[#bad + 1] = coords[e.index] end
    end
    local l, g = {}, {}
    for axis, size in ipairs(sizes) do l[axis], g[axis] = density(good, axis, size), density(bad, axis, size) end
    -- the unmeasured points, weighted by the good density
    local pool, weights, total = {}, {}, 0
    for index = 1, state.count do
      if not measured[index] then
        local w = 1
        for axis = 1, #sizes do w = w * l[axis][coords[index][axis]] end
        pool[#pool + 1], weights[#weights + 1] = index, w
        total = total + w
      end
    end
    if #pool == 0 then break end
    local batch = {}
    local room = math.min(spec.batch or M.BATCH, budget - math.floor(state.evaluations + 1e-9))
    for _ = 1, math.min(room, #pool) do
      local best, best_score = nil, -math.huge
      for _ = 1, M.CANDIDATES do
        local target, index = rng.float() * total, nil
        for k, w in ipairs(weights) do
          target = target - w
          if target <= 0 then index = k; break end
        end
        index = index or #pool
        local p = pool[index]
        if not measured[p] then
          local score = 0
          for axis = 1, #sizes do score = score + math.log(l[axis][coords[p][axis]] / g[axis][coords[p][axis]]) end
          if score > best_score then best, best_score = p, score end
        end
      end
      if not best then break end
      measured[best] = true
      batch[#batch + 1] = best
    end
    if #batch == 0 then break end
    evaluate(state, batch, 1)
  end
  local indices = {}
  for index in pairs(measured) do indices[#indices + 1] = index end
  table.sort(indices)
  return indices, 1
end

-- M.run{count, coords, sizes, strategy, seed, max_evals, budget_s, start, direction, sample_direction,
-- alpha, tie_pct, eta, batch, evaluate} -> {ties (tie.tie_set over the final level's entries), finalists (their
-- indices), entries, level, evaluations, cost_s, stopped_by}
function M.run(spec)
  local strategy = strategies[spec.strategy or "model"]
  if not strategy then error("unknown strategy '" .. tostring(spec.strategy) .. "' (brute, random, racing, model)") end
  local state = new_state(spec)
  local rng = M.generator(spec.seed or 1)
  local finalists, level = strategy(state, rng)
  local list = level_entries(state, level, finalists)
  local ties = tie.tie_set(list, {direction = state.direction, sample_direction = state.sample_direction,
    alpha = spec.alpha, tie_pct = spec.tie_pct})
  return {ties = ties, finalists = list, entries = state.entries, level = level, evaluations = state.evaluations,
    cost_s = state.cost_s, stopped_by = state.stopped_by, measured = #state.order, order = state.order, dropped_by_test = state.dropped_by_test}
end

-- M.space(points, axes) -> coords, sizes: each point's value positions on each axis.
function M.space(points, axes)
  local position, sizes, coords = {}, {}, {}
  for a, axis in ipairs(axes) do
    position[a] = {}
    for v, value in ipairs(axis.values) do position[a][tostring(value)] = v end
    sizes[a] = #axis.values
  end
  for i, point in ipairs(points) do
    local c = {}
    for a, axis in ipairs(axes) do c[a] = position[a][tostring(point[axis.name])] end
    coords[i] = c
  end
  return coords, sizes
end

return M
