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
--          good density the one with the highest density ratio, each screened at a short level and
--          promoted eta times longer while among the best 1/eta of its level (BOHB-like); its last
--          quarter of the proposals climbs from the best to its untried neighbours (one axis, one step).
-- Every strategy takes a seed, a budget (max_evals: full-measurement equivalents; budget_s: the
-- evaluations' cost_s) and start points measured first. The space is api/space.lua's (a listed one,
-- or a lazy one whose filter runs only on what is drawn); `ahead(batch)`, when given, hears of the
-- configurations the next round will measure (the compile pool starts on them meanwhile).
local tie = require("gpuexp.judge.tie")
local spaces = require("gpuexp.api.space")
local regret = require("gpuexp.api.regret")

local M = {}

M.STRATEGIES = {brute = true, random = true, racing = true, model = true}
M.ETA = 3
M.LEVELS = 8       -- racing's deepest ladder
M.GAMMA = 0.2      -- the model's "good" fraction
M.INITIAL = 12     -- the model's random start (or a quarter of its budget, when less)
M.CANDIDATES = 48  -- drawn from the good density per proposal
M.BATCH = 4        -- proposals per round (one sweep each)
M.CLIMB = 0.25     -- the model's share of its proposals that climb from the best to its neighbours
M.RUNGS = 4        -- the model's levels: a screen at 1/eta^3, then eta times longer up to a full measurement

-- M.seed(value) -> the seed as an integer from 0 to 2^63-1, or nil: a whole number (a float that is
-- one, or a string of digits: `gpuexp tune --seed` passes it so, as JSON's numbers are doubles);
-- 2^63-1 written in Lua (a float: it rounds to 2^63) is 2^63-1.
function M.seed(value)
  if type(value) == "string" then
    if not value:match("^%d+$") then return nil end
    value = math.tointeger(tonumber(value))
    return value
  end
  if math.type(value) == "integer" then return value >= 0 and value or nil end
  if math.type(value) ~= "float" or value ~= value or value < 0 then return nil end
  if value == 2.0 ^ 63 then return math.maxinteger end
  return math.tointeger(value)
end

-- A seeded generator (xorshift64*) with integer and float draws; math.random's state is the
-- user's and stays untouched. Any seed from 0 to 2^63-1 (integer arithmetic wraps).
function M.generator(seed)
  local state = (M.seed(seed or 1) or 1) * 2654435761 + 88172645463325252
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

-- A shuffled copy (a loop, not table.unpack: a list of 10^6 overflows the C stack).
local function shuffled(list, rng)
  local copy = {}
  for i = 1, #list do copy[i] = list[i] end
  for i = #copy, 2, -1 do
    local j = rng.int(i)
    copy[i], copy[j] = copy[j], copy[i]
  end
  return copy
end

-- The run's state: what was measured, at what level, and the budget spent.
local function new_state(spec)
  local space = spec.space or spaces.list(spec.count, spec.coords, spec.sizes)
  local count = space.count or space.estimate(M.generator(1))
  return {spec = spec, space = space, count = count, entries = {}, order = {}, evaluations = 0, cost_s = 0,
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

local function ahead(state, batch)
  if state.spec.ahead and #batch > 0 then state.spec.ahead(batch) end
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

local function unique_start(state)
  local seen, start = {}, {}
  for _, index in ipairs(state.spec.start or {}) do
    if not seen[index] and state.space.valid(index) then seen[index] = true; start[#start + 1] = index end
  end
  return start, seen
end

-- The start points, then what `more()` yields (nil when done), each once: an iterator.
local function start_then(state, more)
  local start, seen = unique_start(state)
  local i = 0
  return function()
    i = i + 1
    if start[i] then return start[i] end
    while true do
      local index = more()
      if index == nil then return nil end
      if not seen[index] then seen[index] = true; return index end
    end
  end
end

-- Distinct uniform draws of the space: a shuffled list when it is listed, draws of a lazy one
-- (ending after 200 draws in a row that found only configurations drawn before).
local function draws(state, rng)
  local space = state.space
  if space.list then
    local order, i = shuffled(space.list, rng), 0
    return function() i = i + 1; return order[i] end
  end
  local seen = {}
  return function()
    for _ = 1, 200 do
      local index = space.draw(rng)
      if index == nil then return nil end
      if not seen[index] then seen[index] = true; return index end
    end
  end
end

-- Brute force and random sampling: one order, measured in rounds of `batch`; the round after the
-- one measuring is announced to `ahead` first.
local function sequential(state, next_index)
  local batch_size = state.spec.batch or 64
  local function take(room)
    local batch = {}
    while #batch < math.min(batch_size, room) do
      local index = next_index()
      if index == nil then break end
      batch[#batch + 1] = index
    end
    return batch
  end
  local room = math.floor(state.max_evals - state.evaluations + 1e-9)
  local batch = take(room)
  ahead(state, batch) -- the first round is heard of before the second
  while #batch > 0 do
    if exhausted(state) then break end
    local following = take(math.max(0, room - #batch))
    ahead(state, following)
    evaluate(state, batch, 1)
    room = room - #batch
    batch = following
    if exhausted(state) then break end
  end
  if #batch > 0 or room <= 0 or exhausted(state) then state.stopped_by = exhausted(state) or "max_evals" end
  local measured = {}
  for _, entry in ipairs(state.order) do measured[#measured + 1] = entry.index end
  return measured, 1
end

local strategies = {}

function strategies.brute(state)
  return sequential(state, start_then(state, state.space.each()))
end

function strategies.random(state, rng)
  return sequential(state, start_then(state, draws(state, rng)))
end

-- M.race_keep(list, o) -> the entries racing keeps from a level: those whose own samples do not
-- show them worse than the level's best (one-sided Mann-Whitney at alpha / the level's size), the
-- best ceil(#list / eta) of them by value; and the number dropped by the test. A configuration
-- is dropped only with that evidence or for ranking below the kept share. o: direction,
-- sample_direction, alpha, eta.
function M.race_keep(list, o)
  local best = tie.best(list, o.direction)
  if not best then return {}, 0 end
  local kept = {}
  for _, e in ipairs(list) do
    if e.value then
      local p = tie.worse_p(list[best].samples, e.samples, o.sample_direction)
      if p >= (o.alpha or tie.ALPHA) / #list then kept[#kept + 1] = e end
    end
  end
  table.sort(kept, function(a, b)
    if o.direction == "max" then return a.value > b.value end
    return a.value < b.value
  end)
  local survivors = {}
  for i = 1, math.min(#kept, math.max(1, math.ceil(#list / o.eta))) do survivors[i] = kept[i] end
  return survivors, #list - #kept
end

-- Successive halving whose levels fit the budget: with n candidates and K levels every level costs
-- n / eta^(K-1) full measurements, so K is the smallest count (at most 8) whose total fits
-- max_evals. The first level holds the whole space when it has at most M.FIRST x max_evals
-- configurations and the ladder fits; else a seeded uniform sample of as many as fit both (the
-- start points first): every configuration of the first level is compiled, whatever its level.
M.FIRST = 27
function strategies.racing(state, rng)
  local eta, budget = state.spec.eta or M.ETA, state.max_evals
  local function ladder_cost(n, k) return k * n / eta ^ (k - 1) end
  local first = math.min(state.count, math.max(1, math.floor(M.FIRST * budget)))
  local levels = 1
  while ladder_cost(first, levels) > budget and levels < M.LEVELS do levels = levels + 1 end
  if ladder_cost(first, levels) > budget then first = math.max(1, math.floor(budget * eta ^ (levels - 1) / levels)) end
  local next_index = start_then(state, draws(state, rng))
  local candidates = {}
  while #candidates < first do
    local index = next_index()
    if index == nil then break end
    candidates[#candidates + 1] = index
  end
  state.sampled = #candidates < state.count
  local survivors, level = candidates, nil
  for k = 1, levels do
    level = eta ^ -(levels - k)
    evaluate(state, survivors, level)
    if k == levels then break end
    local kept, dropped = M.race_keep(level_entries(state, level, survivors), {direction = state.direction,
      sample_direction = state.sample_direction, alpha = state.spec.alpha, eta = eta})
    if #kept == 0 then break end
    survivors = {}
    for i, e in ipairs(kept) do survivors[i] = e.index end
    state.dropped_by_test = (state.dropped_by_test or 0) + dropped
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

local function draw_position(weights, rng)
  local target = rng.float()
  for v, w in ipairs(weights) do
    target = target - w
    if target <= 0 then return v end
  end
  return #weights
end

-- One proposal of the model: of M.CANDIDATES configurations drawn from the good density (an axis at
-- a time; a draw the filter refuses or that was measured is drawn again), the highest ratio good/rest.
local function propose(state, rng, l, g, taken)
  local space, sizes = state.space, state.space.sizes
  local best, best_score, found = nil, -math.huge, 0
  for _ = 1, M.CANDIDATES * 20 do
    if found >= M.CANDIDATES then break end
    local coords = {}
    for axis = 1, #sizes do coords[axis] = draw_position(l[axis], rng) end
    local index = space.at(coords)
    if index and not taken[index] then
      found = found + 1
      local score = 0
      for axis = 1, #sizes do score = score + math.log(l[axis][coords[axis]] / g[axis][coords[axis]]) end
      if score > best_score then best, best_score = index, score end
    end
  end
  if best then return best end
  for _ = 1, 200 do -- the good density found nothing new: a uniform draw
    local index = space.draw(rng)
    if index == nil then return nil end
    if not taken[index] then return index end
  end
end

-- The untried neighbours of a configuration: one axis, one position up or down.
local function neighbours(state, index, taken)
  local list, coords = {}, state.space.coords(index)
  for axis, size in ipairs(state.space.sizes) do
    for _, step in ipairs({-1, 1}) do
      local c = coords[axis] + step
      if c >= 1 and c <= size then
        local moved = {table.unpack(coords)}
        moved[axis] = c
        local other = state.space.at(moved)
        if other and not taken[other] then list[#list + 1] = other end
      end
    end
  end
  return list
end

-- The model's rungs: level 1/eta^(R-1) (the screen) up to 1 (a full measurement). R is M.RUNGS, less
-- while the budget is under twice what a ladder over the random start costs (R x M.INITIAL /
-- eta^(R-1)): a small budget measures in full from the start (R = 1).
local function model_levels(budget, eta)
  local rungs = M.RUNGS
  while rungs > 1 and rungs * M.INITIAL / eta ^ (rungs - 1) > budget / 2 do rungs = rungs - 1 end
  local levels = {}
  for r = 1, rungs do levels[r] = eta ^ -(rungs - r) end
  return levels
end

-- The model (BOHB-like: the Parzen estimator's proposals raced asynchronously): every proposal is
-- measured at the screen; a configuration among the best 1/eta of those measured at a rung is
-- promoted to the next, eta times longer (asynchronous successive halving), until a full
-- measurement, while fewer than 1/eta of the rung were promoted (each rung then costs at most what
-- the screen does: without the cap, proposals better than the ones before, as a model's are, would
-- all climb to the top). The densities are fitted on the screen's values; the last M.CLIMB of the proposals
-- are the untried neighbours of the best (the highest rung first, then its value). Once the budget
-- left is what the promotions still due may cost, proposals stop and the best not yet promoted at
-- the highest rung below the top are promoted until nothing more fits.
function strategies.model(state, rng)
  local spec = state.spec
  local sizes = state.space.sizes
  local eta = spec.eta or M.ETA
  local budget = state.max_evals
  local levels = model_levels(budget, eta)
  local rungs, screen = #levels, levels[1]
  local initial = rungs > 1 and M.INITIAL or math.min(math.floor(budget + 1e-9), M.INITIAL,
    math.max(2, math.floor(budget + 1e-9) // 4))
  local next_index = start_then(state, draws(state, rng))
  local start = unique_start(state)
  local measured, at, promoted, count_promoted = {}, {}, {}, {}
  for r = 1, rungs do at[r], promoted[r], count_promoted[r] = {}, {}, 0 end
  local function measure(batch, r)
    if r == 1 then ahead(state, batch) end -- new configurations: the pool compiles them side by side
    evaluate(state, batch, levels[r])
    for _, index in ipairs(batch) do
      at[r][#at[r] + 1] = index
      if r > 1 then promoted[r - 1][index] = true; count_promoted[r - 1] = count_promoted[r - 1] + 1 end
    end
  end
  local function fits(n, r) return n > 0 and not exhausted(state, n * levels[r]) end
  local function value(index, r) local e = state.entries[index][levels[r]]; return e and e.value end
  local function better(a, b)
    if state.direction == "max" then return a > b end
    return a < b
  end
  -- a rung's measured configurations with a value, best first
  local function ranked_at(r)
    local list = {}
    for _, index in ipairs(at[r]) do
      local v = value(index, r)
      if v then list[#list + 1] = {index = index, value = v} end
    end
    table.sort(list, function(a, b)
      if a.value == b.value then return a.index < b.index end
      return better(a.value, b.value)
    end)
    return list
  end
  -- the promotions due: at each rung below the top, the best of its best 1/eta not yet promoted,
  -- while fewer than 1/eta of it were (so that each rung costs what the screen does)
  local function promote_due()
    for r = rungs - 1, 1, -1 do
      local list, batch, quota = ranked_at(r), {}, math.floor(#at[r] / eta)
      for i = 1, quota do
        local e = list[i]
        if e and not promoted[r][e.index] and count_promoted[r] + #batch < quota then batch[#batch + 1] = e.index end
      end
      while #batch > 0 and not fits(#batch, r + 1) do batch[#batch] = nil end
      if #batch > 0 then measure(batch, r + 1); return true end
    end
    return false
  end
  -- the budget a configuration promoted from the screen still needs, up to a full measurement
  local carry = 0
  for r = 2, rungs do carry = carry + levels[r] end
  local per_round = spec.batch or M.BATCH
  local reserve = rungs > 1 and carry * per_round / eta or 0
  -- the proposals the budget allows: each costs its screen and its expected promotions
  local each = 0
  for r = 1, rungs do each = each + levels[r] / eta ^ (r - 1) end
  local climb_after = math.max(initial, budget / each) * (1 - M.CLIMB)

  local first = {}
  while #first < math.max(initial, #start) do
    local index = next_index()
    if index == nil then break end
    first[#first + 1] = index
  end
  measure(first, 1)
  for _, index in ipairs(first) do measured[index] = true end
  local proposed = #first
  -- the best so far: the highest rung first, then its value there
  local function leaders()
    local list, seen = {}, {}
    for r = rungs, 1, -1 do
      for _, e in ipairs(ranked_at(r)) do
        if not seen[e.index] then seen[e.index] = true; list[#list + 1] = e.index end
      end
    end
    return list
  end
  local climbed = {}
  local function climb(room)
    local batch = {}
    for _, index in ipairs(leaders()) do
      if not climbed[index] then
        local around = neighbours(state, index, measured)
        if #around == 0 then climbed[index] = true end
        for _, other in ipairs(around) do
          if #batch >= room then break end
          measured[other] = true
          batch[#batch + 1] = other
        end
        if #batch > 0 then break end
      end
    end
    return batch
  end
  local function tpe(room)
    local list = ranked_at(1)
    for index in pairs(measured) do
      if not value(index, 1) then list[#list + 1] = {index = index} end
    end
    local good_count = math.max(1, math.ceil(M.GAMMA * #list))
    local good, bad = {}, {}
    for i, e in ipairs(list) do
      local coords = state.space.coords(e.index)
      if i <= good_count and e.value then good[#good + 1] = coords else bad[#bad + 1] = coords end
    end
    local l, g = {}, {}
    for axis, size in ipairs(sizes) do l[axis], g[axis] = density(good, axis, size), density(bad, axis, size) end
    local batch = {}
    for _ = 1, room do
      local index = propose(state, rng, l, g, measured)
      if not index then break end
      measured[index] = true
      batch[#batch + 1] = index
    end
    return batch
  end
  -- proposals at the screen, the promotions due between them
  while true do
    if not promote_due() then
      local left = budget - state.evaluations
      local room = math.min(per_round, math.floor((left - reserve) / screen + 1e-9))
      if room < 1 or exhausted(state, screen) then break end
      local batch = proposed >= climb_after and climb(room) or {}
      if #batch == 0 then batch = tpe(room) end
      if #batch == 0 then break end
      proposed = proposed + #batch
      measure(batch, 1)
    end
  end
  -- what is left: the promotions due, then the best not yet promoted at the highest rung below the top
  while rungs > 1 do
    if not promote_due() then
      local done = true
      for r = rungs - 1, 1, -1 do
        for _, e in ipairs(ranked_at(r)) do
          if not promoted[r][e.index] then
            if fits(1, r + 1) then measure({e.index}, r + 1); done = false end
            break
          end
        end
        if not done then break end
      end
      if done then break end
    end
  end
  local indices = {}
  for _, index in ipairs(at[rungs]) do indices[#indices + 1] = index end
  table.sort(indices)
  return indices, 1
end

-- M.run{space | count, coords, sizes; strategy, seed, max_evals, budget_s, start, direction,
-- sample_direction, alpha, tie_pct, eta, batch, evaluate, ahead, confidence} -> {ties (tie.tie_set
-- over the final level's entries), finalists (their indices), entries, level, evaluations, cost_s,
-- stopped_by, regret (api/regret.lua's bound, nil when nothing gave a value)}
function M.run(spec)
  local strategy = strategies[spec.strategy or "model"]
  if not strategy then error("unknown strategy '" .. tostring(spec.strategy) .. "' (brute, random, racing, model)") end
  local state = new_state(spec)
  local rng = M.generator(spec.seed or 1)
  local finalists, level = strategy(state, rng)
  local list = level_entries(state, level, finalists)
  local ties = tie.tie_set(list, {direction = state.direction, sample_direction = state.sample_direction,
    alpha = spec.alpha, tie_pct = spec.tie_pct})
  local bound
  if ties.best then
    bound = regret.bound{space = state.space, entries = state.entries, finalists = list, winner = ties.best,
      direction = state.direction, confidence = spec.confidence, generator = M.generator}
  end
  return {ties = ties, finalists = list, entries = state.entries, level = level, evaluations = state.evaluations,
    cost_s = state.cost_s, stopped_by = state.stopped_by, measured = #state.order, order = state.order,
    dropped_by_test = state.dropped_by_test, regret = bound, count = state.count, sampled = state.sampled}
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
