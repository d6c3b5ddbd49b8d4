-- The tuner's two statistical guards, tested where they decide (judge/tie.lua, api/search.lua):
--   * the Holm correction of the tie set: 200 configurations of one distribution compared with the
--     best: Holm keeps the family's false splits at alpha (none here), where the raw tests split
--     about alpha of them; the adjusted p-values are Holm's, step by step;
--   * racing's evidence test: a configuration leaves a level only when its own samples show it
--     worse than the level's best (one-sided Mann-Whitney at alpha / n), or when the level's
--     1/eta better ones fill the next level; tied configurations all go on, and clearly worse ones
--     stop at the first level even when the next level has room for them.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local tie = require("gpuexp.judge.tie")
local stats = require("gpuexp.judge.stats")
local search = require("gpuexp.api.search")

local function lognormal_samples(rng, center, n, width)
  local samples = {}
  for i = 1, n do
    local u1, u2 = math.max(rng.float(), 1e-12), rng.float()
    samples[i] = center * math.exp(width * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2))
  end
  return samples
end

-- Holm over 200 configurations whose samples come from one distribution: the first is the best by
-- its value (so the best's samples are not picked for their luck), tie_pct 0 so that only the test
-- decides; every null hypothesis is true, and the raw tests split about alpha of them
local rng = search.generator(2024)
local entries = {}
for i = 1, 200 do
  local samples = lognormal_samples(rng, 0.1, 60, 0.02)
  entries[i] = {key = i, value = i == 1 and 0.0999 or 0.1, samples = samples}
end
local result = tie.tie_set(entries, {tie_pct = 0})
local split, raw = 0, 0
for i, v in pairs(result.verdicts) do
  if not v.tied then split = split + 1 end
  if i ~= result.best then
    local p = tie.worse_p(entries[result.best].samples, entries[i].samples, "min")
    if math.min(1, 2 * math.min(p, 1 - p)) <= tie.ALPHA then raw = raw + 1 end
  end
end
print(string.format("200 identical configurations: %d split from the best with Holm, %d by the raw tests", split, raw))
T.ok(raw >= 3, "the raw tests split some (the case is sensitive): " .. raw)
T.eq(split, 0, "Holm keeps them tied")
-- the adjusted p-values, step by step: sorted p_(k) x (m - k + 1), made monotone, at most 1
local ps = {}
for i, v in pairs(result.verdicts) do
  if i ~= result.best then
    local p = tie.worse_p(entries[result.best].samples, entries[i].samples, "min")
    ps[#ps + 1] = {i = i, p = math.min(1, 2 * math.min(p, 1 - p))}
  end
end
table.sort(ps, function(a, b) return a.p < b.p end)
local running = 0
for k, c in ipairs(ps) do
  running = math.max(running, math.min(1, c.p * (#ps - k + 1)))
  T.near(result.verdicts[c.i].p, running, 1e-12, string.format("Holm's adjusted p of the %d-th smallest", k))
end
-- a configuration truly 5% worse is still told apart among them
local worse_samples = lognormal_samples(rng, 0.105, 60, 0.02)
entries[201] = {key = 201, value = 0.105, samples = worse_samples}
result = tie.tie_set(entries, {tie_pct = 0})
T.eq(result.verdicts[201].tied, false, "a 5% worse configuration is split off")

-- Racing: 27 configurations, eta 3, a budget of two levels (a third of a measurement, then a full one)
local function evaluator(centers, seed)
  local r = search.generator(seed)
  return function(batch, level)
    local results = {}
    for i, index in ipairs(batch) do
      local samples = lognormal_samples(r, centers[index], math.max(6, math.floor(60 * level + 0.5)), 0.02)
      results[i] = {value = stats.median(samples), samples = samples, cost_s = 0}
    end
    return results
  end
end
local function race(centers, seed)
  return search.run{count = #centers, strategy = "racing", seed = seed, max_evals = 20, eta = 3,
    evaluate = evaluator(centers, seed * 31)}
end
-- the levels a run measured, and each level's configurations
local function levels_of(run)
  local levels, by_level = {}, {}
  for _, o in ipairs(run.order) do
    if not by_level[o.level] then by_level[o.level] = {}; levels[#levels + 1] = o.level end
    table.insert(by_level[o.level], o.index)
  end
  table.sort(levels)
  return levels, by_level
end
-- every configuration that did not go on: shown worse by its samples, or the next level full of
-- ones at least as good
local function check_drops(run, what)
  local levels, by_level = levels_of(run)
  T.ok(#levels >= 2, what .. ": two levels raced")
  local tested = 0
  for l = 1, #levels - 1 do
    local level, list = levels[l], by_level[levels[l]]
    local next_level = {}
    for _, index in ipairs(by_level[levels[l + 1]]) do next_level[index] = true end
    local best
    for _, index in ipairs(list) do
      local value = run.entries[index][level].value
      if not best or value < run.entries[best][level].value then best = index end
    end
    local capacity = math.ceil(#list / 3)
    for _, index in ipairs(list) do
      if not next_level[index] then
        local p = tie.worse_p(run.entries[best][level].samples, run.entries[index][level].samples, "min")
        local shown_worse = p < tie.ALPHA / #list
        local better_went_on = 0
        for other in pairs(next_level) do
          if run.entries[other][level].value <= run.entries[index][level].value then better_went_on = better_went_on + 1 end
        end
        if shown_worse then tested = tested + 1 end
        T.ok(shown_worse or better_went_on >= capacity, string.format("%s: configuration %d left level %.3g without " ..
          "evidence (p %.3g, alpha/n %.3g; %d better went on of %d places)", what, index, level, p, tie.ALPHA / #list,
          better_went_on, capacity))
      end
    end
  end
  return tested
end
-- tied configurations: none is shown worse, so the next level is full (a third of them)
local same = {}
for i = 1, 27 do same[i] = 0.1 end
for seed = 1, 5 do
  local run = race(same, seed)
  local _, by_level = levels_of(run)
  local levels = levels_of(run)
  T.eq(#by_level[levels[2]], 9, "tied configurations fill the next level (seed " .. seed .. ")")
  check_drops(run, "tied, seed " .. seed)
end
-- one best and 26 that are 30% slower: all 26 are shown worse at the first level and stop there,
-- though the next level has room for nine
local one = {}
for i = 1, 27 do one[i] = i == 14 and 0.1 or 0.13 end
for seed = 1, 5 do
  local run = race(one, seed)
  local levels, by_level = levels_of(run)
  T.eq(#by_level[levels[2]], 1, "only the best goes on (seed " .. seed .. "): " .. #by_level[levels[2]])
  T.eq(by_level[levels[2]][1], 14, "and it is the best")
  T.eq(check_drops(run, "one best, seed " .. seed), 26, "26 dropped by the test")
  T.eq(run.dropped_by_test, 26, "and counted as dropped by it")
end
T.done()
