-- The measurement policy on the GPU: cold runs are slower than hot ones for data that fits in L2,
-- graphs remove launch gaps, the stopping rule stops, the SM clock is read, and the calibrated copy
-- ceiling agrees with an independent measurement.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local program = gpuexp.compile{source = [[
extern "C" __global__ void sum(float *out, const float4 *in, long long n4) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  float s = 0;
  for (; i < n4; i += (long long)gridDim.x * blockDim.x) { float4 v = in[i]; s += v.x + v.y + v.z + v.w; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s; }
extern "C" __global__ void empty() {}
]]}
local l2 = dev.l2_bytes
local n = l2 // 4 // 4           -- a quarter of the L2: fits, so hot runs hit in L2
local data = dev:alloc("f32", n):random{seed = 1}
local out = dev:alloc("f32", dev.sm_count * 4 * 256)
local launch = {grid = dev.sm_count * 4, block = 256, args = {out, data, gpuexp.i64(n // 4)}}
local sum = program:kernel("sum")
local hot = sum:measure{grid = launch.grid, block = launch.block, args = launch.args, mode = "hot", min_time_ms = 50}
local cold = sum:measure{grid = launch.grid, block = launch.block, args = launch.args, mode = "cold", min_time_ms = 50}
T.eq(hot.mode, "hot", "hot mode"); T.eq(cold.mode, "cold", "cold mode")
T.ok(cold.median_ms > 1.2 * hot.median_ms, string.format("cold %.4f ms slower than hot %.4f ms for L2-resident data",
  cold.median_ms, hot.median_ms))
T.ok(hot.samples >= 10 and hot.stop_reason, "stopped after enough samples: " .. tostring(hot.stop_reason))
T.ok(hot.sm_clock_mhz > 100 and hot.sm_clock_mhz < 1.2 * dev.sm_clock_khz / 1000, "SM clock " .. hot.sm_clock_mhz .. " MHz")
T.ok(hot.clock_throttled ~= nil, "throttle flag set")
local measured = dev:sm_clock()
T.ok(measured > 100, "dev:sm_clock()")

-- a kernel of a few µs: auto times back-to-back runs behind the blocking kernel (mode batch), and
-- per-launch time drops below the event-timed one
local empty = program:kernel("empty")
local auto = empty:measure{grid = 1, block = 32, args = {}, min_time_ms = 20, max_noise_pct = 5}
T.eq(auto.mode, "batch", "auto mode for a tiny kernel")
T.ok(auto.launches_per_sample > 1, "several launches per batch sample")
local single = empty:measure{grid = 1, block = 32, args = {}, mode = "hot", min_time_ms = 20, max_noise_pct = 5}
T.ok(auto.median_ms < single.median_ms, string.format("batch %.5f ms per launch < events around one launch %.5f ms",
  auto.median_ms, single.median_ms))

-- the calibrated copy ceiling against an independent copy of another size, timed separately
local c = gpuexp.calibrate{force = true}
T.eq(c.from_cache, false, "measured"); T.eq(gpuexp.calibrate{}.from_cache, true, "then cached")
local m = 128 * 1024 * 1024
local a, b = dev:alloc("f32", m):random{seed = 2}, dev:alloc("f32", m)
local independent = b:time_copy_from(a, {warmup = 3, reps = 20})
local independent_gbps = 2 * 4 * m / (independent.median_ms * 1e-3) / 1e9
T.ok(math.abs(c.dram_copy_gbps - independent_gbps) <= 0.05 * independent_gbps,
  string.format("copy ceiling %.0f GB/s within 5%% of an independent copy's %.0f GB/s", c.dram_copy_gbps, independent_gbps))
T.ok(c.fp32_gflops > 0.7 * dev.peak_fp32_gflops and c.fp32_gflops < 1.1 * dev.peak_fp32_gflops,
  string.format("FMA rate %.0f near the derived peak %.0f", c.fp32_gflops, dev.peak_fp32_gflops))
T.ok(c.h2d_pinned_gbps > 1 and c.d2h_pinned_gbps > 1, "host transfers measured")
-- every ceiling measured (none left out with a warning): L2 and shared memory above DRAM,
-- FP64 and the tensor cores (sm_80 and newer) with a rate
T.ok(c.l2_gbps and c.l2_gbps > c.dram_copy_gbps, string.format("L2 %s GB/s above DRAM %.0f", tostring(c.l2_gbps), c.dram_copy_gbps))
T.ok(c.shared_gbps and c.shared_gbps > c.dram_copy_gbps, string.format("shared %s GB/s above DRAM", tostring(c.shared_gbps)))
T.ok(c.fp64_gflops and c.fp64_gflops > 0, "FP64 rate measured: " .. tostring(c.fp64_gflops))
local tensor_rates = 0
for key, value in pairs(c) do if key:match("^tensor_.+_gflops$") and value > c.fp32_gflops then tensor_rates = tensor_rates + 1 end end
T.ok(tensor_rates >= 1, "tensor-core rates above the FP32 rate: " .. tensor_rates)
T.done()
