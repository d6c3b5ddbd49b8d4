-- gpuexp.tune and gpuexp.ab on the GPU. tune: kernels/tune_matmul.cu (n = 512) over 81
-- configurations of its space (bx, by in 8..32, tm, tn in 2..8, unroll 4), every output verified:
-- brute force and racing; racing measures a fraction of brute force's GPU time and its best is
-- within 5% of brute force's. ab: a SAXPY against itself is "same", against 10% more elements
-- "slower", each stating its detectable effect.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local work = T.temporary_directory()
local space = dofile(gpuexp.resolve(gpuexp.script_dir .. "/../../kernels/tune_matmul.lua")).new{n = 512}
gpuexp.measure_defaults.min_time_ms = 20
gpuexp.measure_defaults.warmup = 2
gpuexp.measure_defaults.max_noise_pct = 2 -- a configuration stops at 2% noise, or after 0.3 s whatever its noise
gpuexp.measure_defaults.timeout_s = 0.3
local function where(p)
  return space.where(p) and p.bx >= 8 and p.bx <= 32 and p.by >= 8 and p.by <= 32 and p.tm >= 2 and p.tn >= 2
    and p.unroll == 4
end
local function tune(strategy)
  return gpuexp.tune{name = strategy, axes = space.axes, where = where, setup = space.setup, run = space.run,
    condition = "verified", strategy = strategy, seed = 1, out = work .. "/" .. strategy .. ".csv", quiet = true}
end
local brute = tune("brute")
T.eq(brute.measured, 81, "brute force measured the space")
T.ok(#brute.ties >= 1 and brute.ties[1].value > 0, "a tie set")
local racing = tune("racing")
T.ok(racing.cost_s < 0.5 * brute.cost_s, string.format("racing took %.3f s of GPU time, brute force %.3f s",
  racing.cost_s, brute.cost_s))
T.ok(racing.ties[1].value <= 1.05 * brute.ties[1].value, string.format("racing's best %.4f ms within 5%% of %.4f ms",
  racing.ties[1].value, brute.ties[1].value))

local kernel = gpuexp.compile{file = gpuexp.script_dir .. "/../../kernels/saxpy.cu"}:kernel("minimal")
-- 128 MB a vector, several times the L2 (50 MB on H100 and H200): the time then grows with the
-- elements (4M elements fit in the L2, where 10% more elements read 23% slower on an H100)
local n = 32 * 1024 * 1024
local x, y = dev:alloc("f32", n * 11 // 10):fill(1), dev:alloc("f32", n * 11 // 10):fill(1)
local function launch(count)
  return kernel:bind{grid = (count + 255) // 256, block = 256, args = {y, x, gpuexp.f32(1e-7), gpuexp.i32(count)}}
end
local a = launch(n)
local same = gpuexp.ab{name = "aa", a = a, b = launch(n), budget_s = 10, quiet = true}
T.eq(same.verdict, "same", "A/A: " .. same.basis)
T.ok(same.basis:find("could detect", 1, true), "states its detectable effect")
local slower = gpuexp.ab{name = "slow", a = a, b = launch(n * 11 // 10), budget_s = 10, quiet = true}
T.eq(slower.verdict, "slower", "10% more elements: " .. slower.basis)
T.ok(slower.summary.change_pct > 5 and slower.summary.change_pct < 15, "about 10%: " .. slower.summary.change_pct)
T.done()
