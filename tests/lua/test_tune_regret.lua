-- The regret bound (api/regret.lua) on a synthetic space with known truth: 1,152 configurations,
-- a bowl with a rugged +-2.5% bump per configuration, 100 samples per full measurement with 2%
-- lognormal noise. 50 searches (racing and the model at 2% and 5% of the space, random sampling
-- at 5%, 10 seeds each): the 90% bound must cover the true regret (the winner's true time over the
-- optimum's, - 1) in at least 45, and say something (its median under 50%). Enough of the searches
-- miss the optimum by more than 1% that a bound without its exploration part fails.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local search = require("gpuexp.api.search")
local regret = require("gpuexp.api.regret")
local axes = {{name = "bx", values = {8, 16, 32, 64, 128, 256}}, {name = "by", values = {1, 2, 4, 8, 16}},
  {name = "tile", values = {1, 2, 4, 8}}, {name = "unroll", values = {1, 2, 4, 8}}, {name = "vec", values = {1, 2, 4}}}
local sweep_axes = {}
for i, a in ipairs(axes) do sweep_axes[i] = {a.name, a.values} end
local points = gpuexp.points(sweep_axes, function(p) return p.bx * p.by >= 32 and p.bx * p.by <= 1024 end)
local coords, sizes = search.space(points, axes)
local function log2(x) return math.log(x, 2) end
local truth = {}
local rough = 0.05
for i, p in ipairs(points) do
  local h = ((i * 2654435761) % 1000) / 1000
  truth[i] = 0.1 * (1 + 0.08 * (log2(p.bx * p.by) - 8) ^ 2) * (1 + 0.1 * (log2(p.tile) - 2) ^ 2)
    * (1 + 0.002 * (log2(p.unroll) - 2) ^ 2) * (p.vec == 4 and 1 or p.vec == 2 and 1.06 or 1.15) * (1 + rough * h)
end
local optimum = 1
for i = 2, #points do if truth[i] < truth[optimum] then optimum = i end end
local FULL = 100
local function evaluator(seed)
  local rng = search.generator(seed)
  return function(batch, level)
    local results = {}
    for i, index in ipairs(batch) do
      local n = math.max(5, math.floor(FULL * level + 0.5))
      local samples, cost = {}, 0
      for s = 1, n do
        local u1, u2 = math.max(rng.float(), 1e-12), rng.float()
        samples[s] = truth[index] * math.exp(0.02 * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2))
        cost = cost + samples[s]
      end
      results[i] = {value = gpuexp.stats(samples).median, samples = samples, cost_s = cost / 1000}
    end
    return results
  end
end
T.near(regret.z(0.975), 1.959964, 1e-5, "the normal quantile")
T.near(regret.z(0.001), -3.090232, 1e-5, "in its tail")
local covered, widths, missed, runs = 0, {}, 0, 0
for _, cfg in ipairs({{"racing", 0.02}, {"racing", 0.05}, {"model", 0.02}, {"model", 0.05}, {"random", 0.05}}) do
  local here = 0
  for seed = 1, 10 do
    local r = search.run{count = #points, coords = coords, sizes = sizes, strategy = cfg[1], seed = seed,
      max_evals = math.floor(#points * cfg[2]), evaluate = evaluator(seed * 31)}
    local winner = r.finalists[r.ties.best].index
    local true_regret = truth[winner] / truth[optimum] - 1
    runs = runs + 1
    if true_regret > 0.01 then missed = missed + 1 end
    if r.regret.bound >= true_regret then covered = covered + 1; here = here + 1 end
    T.ok(r.regret.confidence == 0.9 and r.regret.selection >= 0 and r.regret.exploration >= 0, "the bound's parts")
    widths[#widths + 1] = r.regret.bound
  end
  print(string.format("%s at %g of the space: covered in %d of 10", cfg[1], cfg[2], here))
end
table.sort(widths)
local median = (widths[25] + widths[26]) / 2
print(string.format("covered in %d of %d; median bound %.1f%%; %d searches missed the optimum by more than 1%%",
  covered, runs, median * 100, missed))
T.ok(covered >= 45, "the 90% bound covers the true regret in at least 45 of 50 searches: " .. covered)
T.ok(median < 0.5, "and says something: its median is under 50%: " .. median)
T.ok(missed >= 10, "the searches miss by enough to test it: " .. missed)
T.done()
