-- Impossible launches and wrong arguments are clear errors, and the process goes on working.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local program = gpuexp.compile{source = [[
extern "C" __global__ void k(float *y, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a; }
extern "C" __global__ void bounded(float *y) __launch_bounds__(128);
extern "C" __global__ void __launch_bounds__(128) bounded(float *y) { y[threadIdx.x] = 1; }
]]}
local k = program:kernel("k")
local y = dev:alloc("f32", 4096):fill(1)
local args = {y, gpuexp.f32(1), gpuexp.i32(4096)}
T.raises(function() k:launch{grid = 2, block = 2048, args = args} end,
  "launch of 'k' with a block of 2048 threads: this kernel allows at most 1024 per block")
T.raises(function() program:kernel("bounded"):launch{grid = 1, block = 256, args = {y}} end, "allows at most 128 per block")
T.raises(function() k:launch{grid = 1, block = 32, shared = dev.shared_per_block_optin_bytes + 1, args = args} end,
  "bytes of dynamic shared memory")
T.raises(function() k:launch{grid = 1, block = {32, 32, 2}, args = args} end, "a block of 2048 threads")
T.raises(function() k:launch{grid = 0, block = 32, args = args} end, "must be an integer from 1 to 2^31-1")
-- the driver's own refusal, in the one error form
T.raises(function() k:launch{grid = {1, 70000}, block = 32, args = args} end,
  "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid argument) launching 'k'")
T.raises(function() k:launch{grid = 1, block = 32, args = {y, gpuexp.f32(1)}} end, "kernel 'k' takes 3 arguments (float*, float, int), got 2")
T.raises(function() k:launch{grid = 1, block = 32, args = {y, gpuexp.f64(1), gpuexp.i32(4)}} end,
  "argument 2 of 'k' is f64, but the kernel expects float (PTX .f32) (give gpuexp.f32(x))")
T.raises(function() k:launch{grid = 1, block = 32, args = {y, 1.0, gpuexp.i32(4)}} end,
  "argument 2 of 'k' is a number; pass a device buffer or a typed scalar such as gpuexp.f32(1.0)")
T.raises(function() k:launch{grid = 1, block = 32, args = {gpuexp.f32(1), gpuexp.f32(1), gpuexp.i32(4)}} end,
  "argument 1 of 'k' is f32, but the kernel expects float* (PTX .u64)")
T.raises(function() k:launch{grid = 1, block = 32, args = {gpuexp.host("f32", 4), gpuexp.f32(1), gpuexp.i32(4)}} end,
  "is a pageable host buffer; kernels take device buffers")
T.raises(function() k:launch{grid = 1, block = 32, args = args, stream = 1} end, "'stream' must be a gpuexp.stream{}, got number")
T.raises(function() k:launch{grid = 1, block = 32, args = args, streams = 1} end, "unknown option 'streams'")
local freed = dev:alloc("f32", 4)
freed:free()
T.raises(function() k:launch{grid = 1, block = 32, args = {freed, gpuexp.f32(1), gpuexp.i32(4)}} end, "freed")
T.raises(function() program:kernel("nope") end, "no kernel 'nope' in source.cu; nearest: k, bounded. It has: k, bounded")
T.raises(function() dev:alloc("f32", 1 << 50) end, "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY")
T.raises(function() dev:attribute("warp_sized") end, "unknown device attribute 'warp_sized'")
T.raises(function() gpuexp.device(999) end, "no GPU 999")
-- after all that, the context still works
k:launch{grid = 4096 // 256, block = 256, args = args}
T.eq(y[4096], 2.0, "context still usable")
T.eq(dev:attribute("warp_size"), 32, "attribute by name")
T.ok(dev:attributes().multiprocessor_count == dev.sm_count, "all attributes")
T.done()
