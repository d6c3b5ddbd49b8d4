-- gpuexp's event-timed median of SAXPY (32M floats, block 256); peer: bench/saxpy_timing.c.
local n = tonumber(arg[1]) or 32 * 1024 * 1024
local dev = gpuexp.device()
local kernel = gpuexp.compile{file = "kernels/saxpy.cu"}:kernel("minimal")
local x = dev:alloc("f32", n):random{seed = 1, min = -0.5, max = 0.5}
local y = dev:alloc("f32", n):random{seed = 2, min = -0.5, max = 0.5}
local t = kernel:time{grid = (n + 255) // 256, block = 256, args = {y, x, gpuexp.f32(2.5), gpuexp.i32(n)}, warmup = 10, reps = 200}
print(string.format("gpuexp_saxpy_median_ms %.6f", t.median_ms))
