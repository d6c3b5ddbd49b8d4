-- The duration and effect grid of the detectors (compare, the nightly's rule, ab): two kernels
-- whose time is set by one parameter, calibrated on the GPU to about 2 us, 20 us, 200 us and
-- 2 ms, each with slowdowns of 0.5, 1, 2 and 5% injected as more work of the same kind (the
-- parameter grown by effect x time / slope, the slope measured: the realized size is the injected
-- one by construction, and recompute.lua verifies it from the nights). Effect 0 is the kernel
-- itself (A/A). And a creep: the 200 us FMA kernel doing 0.8% more work every night from
-- CREEP_FROM on.
local M = {}

M.KINDS = {"fma", "stream"}
M.DURATIONS_MS = {0.002, 0.02, 0.2, 2.0}
M.EFFECTS_PCT = {0, 0.5, 1, 2, 5}
M.NIGHTS = 10
M.CREEP_FROM = 7        -- the first night of the creep (nights before it are its level)
M.CREEP_PCT = 0.8       -- more work a night, compounded
M.CREEP_KIND, M.CREEP_DURATION_MS = "fma", 0.2

M.SOURCE = [[
// the grid's kernels (bench/corpus/grid.lua)
// four independent FMA chains a thread, one block of 128 threads an SM: its time is `iterations`
extern "C" __global__ void grid_fma(float *__restrict__ out, int iterations)
{
    float a = threadIdx.x * 1e-3f, b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
    for (int k = 0; k < iterations; k++) {
        a = fmaf(a, 0.9999f, 0.001f);
        b = fmaf(b, 0.9999f, 0.002f);
        c = fmaf(c, 0.9999f, 0.003f);
        d = fmaf(d, 0.9999f, 0.004f);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}
// y = 1.0001 x + 0.5 over n elements, reps times: its time is n x reps
extern "C" __global__ void grid_stream(float *__restrict__ y, const float *__restrict__ x, long long n, int reps)
{
    for (int rep = 0; rep < reps; rep++)
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
            y[i] = fmaf(x[i], 1.0001f, 0.5f + rep);
}
]]

M.ELEMENTS = 1 << 26 -- the stream kernel's largest n (the buffers the corpus allocates)

-- A point's name: kind, duration (us) and effect.
function M.point_id(kind, duration_ms, effect_pct)
  return string.format("%s.%gus.%g", kind, duration_ms * 1000, effect_pct)
end

-- The launch of a kind at parameter `amount` (FMA iterations; elements x reps for the stream),
-- given the SM count: {kernel, grid, block, args} with buffers as {"buffer", name}.
function M.launch(kind, amount, sm_count)
  if kind == "fma" then
    return {kernel = "grid_fma", grid = sm_count, block = 128,
      args = {{"buffer", "Y"}, {"i32", math.max(1, math.floor(amount + 0.5))}}}
  end
  local total = math.max(1024, math.floor(amount + 0.5))
  local reps = (total + M.ELEMENTS - 1) // M.ELEMENTS
  local n = (total + reps - 1) // reps
  return {kernel = "grid_stream", grid = sm_count * 8, block = 256,
    args = {{"buffer", "Y"}, {"buffer", "X"}, {"i64", n}, {"i32", reps}}}
end

-- The first guess of the parameter for a duration (an H100's rates), refined by the calibration.
function M.guess(kind, duration_ms)
  if kind == "fma" then return math.max(16, duration_ms * 1.98e6 / 4) end -- 4 cycles an iteration
  return math.max(4096, duration_ms * 2.5e9 / 8) -- 8 bytes an element at ~2.5 TB/s
end

-- The parameter of the creep on a night (its level before CREEP_FROM).
function M.creep_amount(level, night)
  local nights = math.max(0, night - M.CREEP_FROM + 1)
  return level * (1 + M.CREEP_PCT / 100) ^ nights
end

return M
