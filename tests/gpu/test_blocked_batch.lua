-- Batch timing behind the blocking kernel (issue 26 item 3), on the GPU: a ~3 µs kernel and a
-- 3-kernel sequence timed in blocked batches of N runs read per run what the GPU takes back to back,
-- measured in-process as the marginal cost of a run: (total of 200 runs - total of 40 runs) / 160,
-- which no fixed per-sample cost (events, the host's enqueue of the first launch) can reach. Within
-- 10%, no blocking-kernel timeout, and the result says it was blocked; hold = false is not held.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local program = gpuexp.compile{source = [[
extern "C" __global__ void scale(float *out, const float *in, float factor, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) out[i] = factor * in[i]; }
extern "C" __global__ void add(float *out, const float *in, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) out[i] += in[i]; }
]]}
local n = 512 * 1024 -- about 3 µs on an H100 or H200
local a, c = dev:alloc("f32", n):fill(1), dev:alloc("f32", n)
local grid = dev.sm_count * 8
local scale, add = program:kernel("scale"), program:kernel("add")
local bound = scale:bind{grid = grid, block = 256, args = {c, a, gpuexp.f32(2), gpuexp.u64(n)}}
local sequence = gpuexp.sequence(function()
  scale:launch{grid = grid, block = 256, args = {c, a, gpuexp.f32(2), gpuexp.u64(n)}}
  add:launch{grid = grid, block = 256, args = {c, a, gpuexp.u64(n)}}
  add:launch{grid = grid, block = 256, args = {c, a, gpuexp.u64(n)}}
end, {name = "blocked_sequence"})

local function check(what, timer, big)
  local small = 40
  local t_small = timer:time{warmup = 5, reps = 31, batch = small}
  local t_big = timer:time{warmup = 5, reps = 31, batch = big}
  T.eq(t_big.mode, "batch", what .. ": mode batch")
  T.eq(t_big.blocked, true, what .. ": the stream was held (no timeout)")
  T.eq(t_big.block_timeouts, nil, what .. ": no blocking-kernel timeout")
  T.eq(t_small.blocked, true, what .. ": the small batch was held too")
  T.eq(t_big.launches_per_sample, big, what .. ": runs per sample")
  local marginal = (t_big.median_ms * big - t_small.median_ms * small) / (big - small)
  local pct = 100 * (t_big.median_ms / marginal - 1)
  print(string.format("%s: blocked batch of %d %.5f ms per run, marginal run %.5f ms (%+.2f%%)", what, big,
    t_big.median_ms, marginal, pct))
  T.ok(marginal > 0.0005, what .. ": a real kernel time")
  T.ok(math.abs(pct) <= 10, string.format("%s: blocked batch %.5f ms within 10%% of the marginal run %.5f ms (%+.2f%%)",
    what, t_big.median_ms, marginal, pct))
  local unblocked = timer:time{warmup = 1, reps = 3, batch = small, hold = false}
  T.eq(unblocked.blocked, false, what .. ": hold = false is not held")
end
check("single kernel", bound, 200)
check("3-kernel sequence", sequence, 200)

-- the policy: auto on the ~3 µs kernel never picks a graph when batch timing works
local r = scale:measure{grid = grid, block = 256, args = {c, a, gpuexp.f32(2), gpuexp.u64(n)}}
T.ok(r.mode == "hot" or r.mode == "batch", "auto picks hot or a blocked batch: " .. r.mode)
if r.mode == "batch" then T.eq(r.block_timeouts, 0, "auto batch: no timeout") end
local forced = scale:measure{grid = grid, block = 256, args = {c, a, gpuexp.f32(2), gpuexp.u64(n)}, mode = "batch"}
T.eq(forced.mode, "batch", "batch on request"); T.eq(forced.block_timeouts, 0, "no timeout")
T.done()
