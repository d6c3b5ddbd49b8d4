-- Script start to first launch: compile (a warm cache makes this a file read), load, launch,
-- synchronize, then print the time since arg[1], the shell's clock (ns since the epoch) taken
-- just before gpuexp started.
local started_ns = tonumber(arg[1])
local dev = gpuexp.device()
local kernel = gpuexp.compile{file = "kernels/saxpy.cu"}:kernel("minimal")
local y = dev:alloc("f32", 1024):fill(1)
kernel:launch{grid = 4, block = 256, args = {y, y, gpuexp.f32(1), gpuexp.i32(1024)}}
dev:synchronize()
if started_ns then
  print(string.format("start_to_first_launch_seconds %.3f", gpuexp.clock("realtime") - started_ns / 1e9))
end
