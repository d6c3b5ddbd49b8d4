local dev = gpuexp.device()
local k = gpuexp.compile{source = 'extern "C" __global__ void k(float *y) { y[threadIdx.x] = 1; }'}:kernel("k")
print("plan")
local m, why = k:metrics{grid = 1, block = 32, args = {dev:alloc("f32", 32)}, metrics = "memory"}
print("offline " .. tostring(m) .. " " .. why)
