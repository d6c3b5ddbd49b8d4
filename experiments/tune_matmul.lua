-- Tune a tiled matrix multiply (kernels/tune_matmul.cu) over 1,392 configurations: block shape,
-- outputs per thread and unrolling. Every configuration's result is checked before it is timed
-- (condition = "verified"); the tie set of the fastest is printed. Try the strategies:
--   gpuexp tune --strategy racing experiments/tune_matmul.lua
--   gpuexp tune --strategy model --seed 3 --history h.sqlite experiments/tune_matmul.lua
--   gpuexp --arch sm_90 experiments/tune_matmul.lua      # offline: a few configurations checked
local space = dofile(gpuexp.resolve("kernels/tune_matmul.lua")).new{n = tonumber(arg[1]) or 1024}
-- a tuning measurement: short, many configurations (racing shortens it further for its first levels)
gpuexp.measure_defaults.min_time_ms = 40
gpuexp.measure_defaults.warmup = 2
gpuexp.measure_defaults.max_noise_pct = 2 -- a configuration stops at 2% noise, or after 0.3 s whatever its noise
gpuexp.measure_defaults.timeout_s = 0.3

local result = gpuexp.tune{
  name = "tune_matmul", axes = space.axes, where = space.where, setup = space.setup, run = space.run,
  compile = space.compile, -- compiled ahead on the CPU cores while the GPU measures
  objective = "median_ms", condition = "verified", sources = space.sources, options = space.options,
  strategy = "racing", seed = 1,
}
if result then
  local best = result.best
  print(string.format("best: bx=%d by=%d tm=%d tn=%d unroll=%d, %.4g ms", best.bx, best.by, best.tm, best.tn,
    best.unroll, result.ties[1].value))
end
