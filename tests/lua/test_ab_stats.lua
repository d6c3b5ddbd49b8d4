-- gpuexp ab's paired statistics on synthetic samples of a ~0.1 ms kernel with per-block state
-- noise, drift shared by both sides and outliers: at most 1% false calls over 200 A/A pairs, a 1%
-- slowdown found with at least 80% power, the stopping rule's stated detectable effect, the
-- Wilcoxon test and the normal quantile against known values, and NVBench's rule on the same data.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local paired = require("gpuexp.judge.paired")
local ab = require("gpuexp.api.ab")
local search = require("gpuexp.api.search")

-- known values
T.near(paired.normal_quantile(0.975), 1.959964, 1e-5, "z(0.975)")
T.near(paired.normal_quantile(0.9), 1.281552, 1e-5, "z(0.9)")
T.near(paired.normal_quantile(0.0025), -2.807034, 1e-5, "z(0.0025)")
-- Wilcoxon: 1..10 all positive, W+ = 55, exact two-sided p = 0.001953; the normal approximation with
-- continuity correction: z = (55 - 27.5 - 0.5) / sqrt(96.25) = 2.7521, p = 0.00592
local p, plus, z = paired.wilcoxon({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
T.eq(plus, 55, "W+")
T.near(z, 2.7521, 1e-3, "z")
T.near(p, 0.00592, 1e-4, "p")
local p_sym = paired.wilcoxon({-1, 1, -2, 2, -3, 3})
T.near(p_sym, 1, 1e-9, "symmetric differences: p = 1")
T.eq(paired.wilcoxon({0, 0}), 1, "all zero: p = 1")

-- A synthetic GPU: a 0.1 ms kernel, 2% sample noise, 1% outliers at +50%, a state per side and
-- block (1.5%: clocks, caches, neighbours), a slow drift both sides share, and a clock that advances
-- by the GPU time spent (so budget_s is GPU seconds here)
local function world(seed, shift)
  local rng = search.generator(seed)
  local now, drift = 0, 1
  local function normal()
    local u1, u2 = math.max(rng.float(), 1e-12), rng.float()
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
  end
  local function side(center)
    return function(reps)
      local state = 1 + 0.015 * normal()
      drift = drift * (1 + 0.002 * normal())
      local samples = {}
      for i = 1, reps do
        local v = center * drift * state * (1 + 0.02 * normal())
        if rng.float() < 0.01 then v = v * 1.5 end
        samples[i] = v
        now = now + v / 1000
      end
      return samples
    end
  end
  return side(0.1), side(0.1 * (1 + shift)), function() return now end
end

local function run_pair(seed, shift)
  local a, b, clock = world(seed, shift)
  return ab.interleave{measure_a = a, measure_b = b, reps = 100, mde_pct = 1, budget_s = 30, min_blocks = 20,
    max_blocks = 2000, seed = seed, clock = clock}
end

local false_calls, nvbench_false, compare_false, blocks, gpu_s = 0, 0, 0, 0, 0
for seed = 1, 200 do
  local r = run_pair(seed, 0)
  if r.verdict ~= "same" then false_calls = false_calls + 1 end
  if r.nvbench.verdict ~= "same" then nvbench_false = nvbench_false + 1 end
  if r.compare.verdict ~= "same" then compare_false = compare_false + 1 end
  blocks = blocks + r.summary.blocks
  gpu_s = math.max(gpu_s, r.gpu_s)
  T.eq(r.stopped_by, "mde", "A/A seed " .. seed .. " stopped when +-1% was detectable")
  T.ok(r.summary.mde_pct <= 1, "and says so")
end
print(string.format("A/A: %d false calls of 200 (NVBench's rule on the same samples: %d, compare's: %d); %.1f " ..
  "blocks on average, at most %.1f s of GPU time", false_calls, nvbench_false, compare_false, blocks / 200, gpu_s))
T.ok(false_calls <= 2, "at most 1% false calls over 200 A/A pairs: " .. false_calls)

local found, nvbench_found = 0, 0
for seed = 1001, 1200 do
  local r = run_pair(seed, 0.01)
  if r.verdict == "slower" then found = found + 1 end
  if r.nvbench.verdict == "slower" then nvbench_found = nvbench_found + 1 end
  T.ok(r.gpu_s <= 30, "within 30 s of GPU time")
  T.ok(r.basis:find("could detect", 1, true), "every verdict states the effect it could detect")
end
print(string.format("1%% slowdown: found in %d of 200 (power %.0f%%; NVBench's rule on the same samples: %d)", found,
  found / 2, nvbench_found))
T.ok(found >= 160, "a 1% slowdown is found with at least 80% power: " .. found .. " of 200")
-- a faster B is "faster", not a regression
local faster = run_pair(7, -0.05)
T.eq(faster.verdict, "faster", "a 5% faster B")
-- a budget too small to reach the effect says so, and still states what it could detect
local short = (function()
  local a, b, clock = world(3, 0)
  return ab.interleave{measure_a = a, measure_b = b, reps = 200, mde_pct = 0.05, budget_s = 1, min_blocks = 20,
    seed = 3, clock = clock}
end)()
T.eq(short.stopped_by, "budget_s", "the budget ended it")
T.ok(short.basis:find("the budget ended before", 1, true), "and the basis says +-0.05% was not reached: " .. short.basis)
-- the printed forms are compare's
local judged = ab.as_comparison({{name = "k", verdict = "slower", basis = "x", a_median_ms = 0.1, b_median_ms = 0.101,
  summary = {change_pct = 1, mde_pct = 0.5, p = 0.001, ci_low = 1.005, ci_high = 1.015}}})
T.eq(judged.counts.slower, 1, "counted")
T.ok(require("gpuexp.judge.compare").is_regression(judged.points[1]), "a slower B is a regression for compare's exit code")
print("ok")
