-- The synthetic tuning space of test_tune_search.lua and test_tune_regret.lua, with known truth:
-- 6 x 5 x 4 x 4 x 3 axes, a thread-count filter (1,152 configurations), a true time that is a bowl
-- around bx*by = 256, tile 4, unroll 4, vec 4 with a rugged bump of up to `rough` per
-- configuration (a hash of its position, so neighbours are not simply ordered; unroll barely
-- matters, so several configurations are truly tied), and samples with 2% lognormal noise.
--   local S = dofile(gpuexp.script_dir .. "/synthetic_space.lua")(rough, full, min_samples)
--   S.points, S.axes, S.coords, S.sizes, S.truth, S.optimum, S.evaluator(seed) -> evaluate, spent
local search = require("gpuexp.api.search")

return function(rough, full, min_samples)
  local axes = {{name = "bx", values = {8, 16, 32, 64, 128, 256}}, {name = "by", values = {1, 2, 4, 8, 16}},
    {name = "tile", values = {1, 2, 4, 8}}, {name = "unroll", values = {1, 2, 4, 8}}, {name = "vec", values = {1, 2, 4}}}
  local sweep_axes = {}
  for i, a in ipairs(axes) do sweep_axes[i] = {a.name, a.values} end
  local points = gpuexp.points(sweep_axes, function(p) return p.bx * p.by >= 32 and p.bx * p.by <= 1024 end)
  local coords, sizes = search.space(points, axes)
  local function log2(x) return math.log(x, 2) end
  local truth = {}
  for i, p in ipairs(points) do
    local h = ((i * 2654435761) % 1000) / 1000
    truth[i] = 0.1 * (1 + 0.08 * (log2(p.bx * p.by) - 8) ^ 2) * (1 + 0.1 * (log2(p.tile) - 2) ^ 2)
      * (1 + 0.002 * (log2(p.unroll) - 2) ^ 2) * (p.vec == 4 and 1 or p.vec == 2 and 1.06 or 1.15) * (1 + rough * h)
  end
  local optimum = 1
  for i = 2, #points do if truth[i] < truth[optimum] then optimum = i end end
  -- Samples of a configuration at a level: full x level of them (at least min_samples), 2% lognormal
  -- noise (Box-Muller from a per-call generator); spent() is the sum of every sample taken.
  local function evaluator(seed)
    local rng = search.generator(seed)
    local spent = 0
    return function(batch, level)
      local results = {}
      for i, index in ipairs(batch) do
        local n = math.max(min_samples, math.floor(full * level + 0.5))
        local samples, cost = {}, 0
        for s = 1, n do
          local u1, u2 = math.max(rng.float(), 1e-12), rng.float()
          samples[s] = truth[index] * math.exp(0.02 * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2))
          cost = cost + samples[s]
        end
        spent = spent + cost
        results[i] = {value = gpuexp.stats(samples).median, samples = samples, cost_s = cost / 1000}
      end
      return results
    end, function() return spent end
  end
  return {points = points, axes = axes, coords = coords, sizes = sizes, truth = truth, optimum = optimum,
    evaluator = evaluator}
end
