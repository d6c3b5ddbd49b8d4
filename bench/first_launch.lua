-- Script start to first launch: compile (a warm cache makes this a file read), load, launch, sync.
local dev = gpuexp.device()
local kernel = gpuexp.compile{file = "kernels/saxpy.cu"}:kernel("minimal")
local y = dev:alloc("f32", 1024):fill(1)
kernel:launch{grid = 4, block = 256, args = {y, y, gpuexp.f32(1), gpuexp.i32(1024)}}
dev:synchronize()
