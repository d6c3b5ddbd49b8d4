-- The cost of a worker restart after a crash: a new process, a CUDA context, cubins from the warm
-- cache, 384 MB of buffers and their seeded data, then the next point. Points 2, 4, 6, 8 and 10
-- crash with an illegal address; the supervisor records each restart in the metadata.
--   gpuexp bench/restart_cost.lua results/restart_cost.csv
local dev = gpuexp.device()
local saxpy = gpuexp.compile{file = "kernels/saxpy.cu"}:kernel("minimal")
local store = gpuexp.compile{file = "../tests/gpu/faults/faults.cu"}:kernel("store")
local n = 32 * 1024 * 1024
local x = dev:alloc("f32", n):random{seed = 1}
local y = dev:alloc("f32", n):random{seed = 2}
local z = dev:alloc("f32", n):fill(0)
local out = arg[1] or "results/restart_cost.csv"
gpuexp.sweep{name = "restart_cost", out = out, axes = {{"i", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}},
  run = function(p)
    saxpy:launch{grid = n // 256, block = 256, args = {y, x, gpuexp.f32(2), gpuexp.i32(n)}}
    store:launch{grid = 1, block = 32, args = {z, gpuexp.i32(p.i % 2 == 0 and 1 or 0)}}
    dev:synchronize()
    return {value = z[2]}
  end}
local info = require("cjson").decode(io.open((out:gsub("%.csv$", "")) .. ".meta.json"):read("a"))
local seconds = {}
for _, r in ipairs(info.parts[#info.parts].restarts or {}) do seconds[#seconds + 1] = r.seconds end
local s = gpuexp.stats(seconds)
print(string.format("restarts: %d, median %.3f s, min %.3f s, max %.3f s (target 0.5 s)", #seconds, s.median, s.min, s.max))
