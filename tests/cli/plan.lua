local dev = gpuexp.device()
print("plan " .. gpuexp.offline_arch .. " " .. dev.name .. " " .. dev.max_warps_per_sm)
local k = gpuexp.compile{source = 'extern "C" __global__ void minimal(float *y, int n) { if (threadIdx.x < n) y[threadIdx.x] += 1; }'}:kernel("minimal")
local o = k:occupancy{block = 1024}
local y = dev:alloc("f32", 1024)
k:launch{grid = 1, block = 1024, args = {y, gpuexp.i32(1024)}}
local t = k:time{grid = 1, block = 1024, args = {y, gpuexp.i32(1024)}}
print(k.name .. " " .. o.blocks_per_sm .. " " .. o.limiter .. " " .. o.occupancy_pct .. " " .. tostring(t.median_ms))
