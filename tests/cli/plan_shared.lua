local k = gpuexp.compile{source = 'extern "C" __global__ void k(float *x) { extern __shared__ float s[]; s[threadIdx.x] = 1; x[0] = s[0]; }'}:kernel("k")
local x = gpuexp.device():alloc("f32", 4)
k:launch{grid = 1, block = 32, shared = 1000000000, args = {x}}
