-- Event timing: statistics are consistent, and twice the work takes about twice the time.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local program = gpuexp.compile{source = [[
extern "C" __global__ void work(float *y, const float *x, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = y[i]; for (int r = 0; r < rounds; r++) v = v * 0.999f + x[i]; y[i] = v; } }
extern "C" __global__ void empty() {}
]]}
local n = 16 * 1024 * 1024 -- 64 MB per array, larger than any L2
local x = dev:alloc("f32", n):random{seed = 1}
local y = dev:alloc("f32", n):random{seed = 2}
local k = program:kernel("work")
local function time(rounds)
  return k:time{grid = n // 256, block = 256, args = {y, x, gpuexp.i32(n), gpuexp.i32(rounds)}, warmup = 3, reps = 30}
end
local t = time(2000)
T.eq(t.samples, 30, "sample count"); T.eq(#t.samples_ms, 30, "raw samples")
T.ok(t.min_ms > 0 and t.min_ms <= t.median_ms and t.median_ms <= t.max_ms, "min <= median <= max")
T.ok(t.p10_ms <= t.median_ms and t.median_ms <= t.p90_ms, "quantiles ordered")
T.ok(t.noise_pct >= 0 and t.noise_pct < 20, "noise under 20%: " .. t.noise_pct)
T.eq(t.timer, "cuda_events", "timer")
local t2 = time(4000)
local ratio = t2.median_ms / t.median_ms
T.ok(ratio > 1.7 and ratio < 2.3, "twice the rounds, about twice the time: " .. ratio)
local stats = gpuexp.stats(t.samples_ms, "_ms")
T.near(stats.median_ms, t.median_ms, 1e-9, "gpuexp.stats agrees")
-- an empty kernel takes microseconds, not zero and not milliseconds
local e = program:kernel("empty"):time{grid = 1, block = 32, args = {}, reps = 200}
T.ok(e.median_ms > 0 and e.median_ms < 0.05, "empty kernel median " .. e.median_ms .. " ms")
T.done()
