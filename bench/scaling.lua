-- Scaling of --devices: a 40-point sweep whose points each take about 1.2 s of GPU time (a triad
-- over 768 MB, 5000 launches), with a light setup. Run it with one GPU and with several:
--   time gpuexp bench/scaling.lua results/scaling.csv
--   time gpuexp --devices 0,1 bench/scaling.lua results/scaling2.csv
local dev = gpuexp.device()
local triad = gpuexp.compile{file = "kernels/nightly.cu"}:kernel("triad")
local n = 64 * 1024 * 1024
local a, b, c = dev:alloc("f32", n), dev:alloc("f32", n):fill(1), dev:alloc("f32", n):fill(2)
local grid = (dev.sm_count or 132) * 32
local points = {}
for i = 1, 40 do points[i] = i end
gpuexp.sweep{name = "scaling", out = arg[1] or "results/scaling.csv", axes = {{"i", points}},
  run = function(p)
    local t = triad:time{grid = grid, block = 256, args = {a, b, c, gpuexp.f32(p.i), gpuexp.u64(n)}, warmup = 5, reps = 5000}
    return {median_ms = t.median_ms, gbps = 12 * n / (t.median_ms * 1e-3) / 1e9}
  end}
