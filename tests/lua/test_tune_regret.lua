-- The regret bound (api/regret.lua) on a synthetic space with known truth: 1,152 configurations,
-- a bowl with a rugged +-2.5% bump per configuration, 100 samples per full measurement with 2%
-- lognormal noise. 50 searches (racing at 2% of the space, the model and random sampling at 2% and
-- 5%, 10 seeds each): the 90% bound must cover the true regret (the winner's true time over the
-- optimum's, - 1) in at least 45, and say something (its median under 50%). Enough of the searches
-- (random sampling's: racing and the model find the optimum) miss it by more than 1% that a bound
-- without its exploration part fails.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local search = require("gpuexp.api.search")
local regret = require("gpuexp.api.regret")
local S = dofile(gpuexp.script_dir .. "/synthetic_space.lua")(0.05, 100, 5)
local points, coords, sizes, truth, optimum, evaluator = S.points, S.coords, S.sizes, S.truth, S.optimum, S.evaluator
T.near(regret.z(0.975), 1.959964, 1e-5, "the normal quantile")
T.near(regret.z(0.001), -3.090232, 1e-5, "in its tail")
local covered, widths, missed, runs = 0, {}, 0, 0
for _, cfg in ipairs({{"racing", 0.02}, {"model", 0.02}, {"model", 0.05}, {"random", 0.02}, {"random", 0.05}}) do
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
