-- The judgments issue's five cases on a GPU, each a kernel in a good version and a bad one (the
-- same work): diagnose must name the bad one's cause, the explainer (judge/explain.lua over the
-- nightly's counter set, api/counters.lua) must name it first as what accounts for the slowdown,
-- and the explainer run on the good version against itself (a no-change point) must name nothing:
--   FP64 for FP32     an FMA loop in double                      -> FP64 ARITHMETIC; "FP64 pipe active"
--   local memory      a per-thread array indexed at run time     -> LOCAL MEMORY; "local memory: stack frame"
--   too few blocks    the same work in 1/16 of the blocks        -> TOO FEW BLOCKS; "launch shape"
--   atomics           an atomicAdd per thread on one address     -> CONTENDED ATOMICS; "atomic requests"
--   barrier           a __syncthreads() per iteration with a     -> BARRIER STALLS; "warp cycles per issued
--                     shared-memory exchange, no global reads       instruction ... barrier"
-- Prints each case's times, verdict, price tag (the speedup diagnose expects if fixed) against the
-- realized gain (bad / good), and explanation. About 10-20 s on an H100.
-- usage: gpuexp test_why_cases.lua GPUEXP [KEEP_DIR]: with KEEP_DIR, why_cases.md (the table) and
-- why_counters.csv (every counter row: the raw records) are written there.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local counters = require("gpuexp.api.counters")
local explain = require("gpuexp.judge.explain")
local csv = require("gpuexp.store.csv")
local keep = arg[2]

local source = [==[
// the five cases of the judgments issue: each kernel in a good version and, with its define, the bad one
extern "C" __global__ void fma_loop(float *out, int iterations, float a, float b)
{
#ifdef FP64
    double x0 = threadIdx.x * 1e-3, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, da = a, db = b;
#else
    float x0 = threadIdx.x * 1e-3f, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, da = a, db = b;
#endif
    for (int k = 0; k < iterations; k++) {
        x0 = x0 * da + db; x1 = x1 * da + db; x2 = x2 * da + db; x3 = x3 * da + db;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = (float)(x0 + x1 + x2 + x3);
}
extern "C" __global__ void small_array(float *y, const float *x, const int *index, int n, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a[16];
#pragma unroll
    for (int k = 0; k < 16; k++) a[k] = x[i] * (k + 1);
    float s = 0.0f;
#ifdef RUNTIME_INDEX
    int j = index[i];
    for (int r = 0; r < rounds; r++) { s += a[(j + r) & 15]; a[(j + 3 * r) & 15] = s * 0.5f; }
#else
    for (int r = 0; r < rounds; r += 16) {
#pragma unroll
        for (int q = 0; q < 16; q++) { s += a[q]; a[(3 * q) & 15] = s * 0.5f; }
    }
#endif
    y[i] = s;
}
extern "C" __global__ void grid_stride(float *y, const float *x, long long n, float a, float b)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float v0 = x[i], v1 = v0 + 1.0f, v2 = v0 + 2.0f, v3 = v0 + 3.0f;
        for (int k = 0; k < 64; k++) { v0 = v0 * a + b; v1 = v1 * a + b; v2 = v2 * a + b; v3 = v3 * a + b; }
        y[i] = v0 + v1 + v2 + v3;
    }
}
extern "C" __global__ void sum_values(float *total, float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i] * 2.0f;
#ifdef ATOMIC
    atomicAdd(total, v);
#else
    y[i] = v;
#endif
}
extern "C" __global__ void exchange(float *out, int iterations, float a, float b)
{
    __shared__ float shared[256];
    float x = threadIdx.x * 1e-3f;
    for (int k = 0; k < iterations; k++) {
        x = x * a + b;
        x = x * a + b;
#ifdef BARRIER
        shared[threadIdx.x] = x;
        __syncthreads();
        x = x + shared[threadIdx.x ^ 1] * 1e-6f;
        __syncthreads();
#endif
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
]==]
local good = gpuexp.compile{name = "why.cu", source = source}
local bad = gpuexp.compile{name = "why.cu", source = source,
  defines = {FP64 = 1, RUNTIME_INDEX = 1, ATOMIC = 1, BARRIER = 1}}
T.eq(bad:kernel("small_array"):resources().stack_frame_bytes, 64, "the run-time indexed array is a 64-byte stack frame")
T.eq(good:kernel("small_array"):resources().stack_frame_bytes, 0, "indexed with constants, it lives in registers")

local sms = dev.sm_count or 132 -- (an offline plan has no SM count)
local N = 4 * 1024 * 1024
local x = dev:alloc("f32", N):random{seed = 5}
local y = dev:alloc("f32", N)
local index = dev:alloc("i32", N):fill(5)
local total = dev:alloc("f32", 1):fill(0)
local out = dev:alloc("f32", sms * 8 * 256)
local full = sms * 8 -- 8 blocks of 256 threads an SM: every SM full (1056 blocks on 132 SMs)

local cases = {
  {name = "FP64 for FP32", kernel = "fma_loop", verdict = "FP64 arithmetic",
    expect = "^FP64 pipe active [%d.]+%% %-> [%d.]+%% %(FP64 arithmetic%)",
    launch = function() return {grid = full, block = 256, args = {out, gpuexp.i32(2048), gpuexp.f32(0.999), gpuexp.f32(0.001)}} end},
  {name = "local memory", kernel = "small_array", verdict = "local memory",
    expect = {"^local memory: stack frame bytes 0 %-> 64, local memory requests", "^stack frame bytes 0 %-> 64"},
    launch = function() return {grid = N // 256, block = 256, args = {y, x, index, gpuexp.i32(N), gpuexp.i32(64)}} end},
  {name = "too few blocks", kernel = "grid_stride", verdict = "too few blocks",
    expect = "^launch shape %d+ blocks of 256 threads .-%-> %d+ blocks of 256 threads",
    launch = function(which) return {grid = which == "bad" and full // 16 or full, block = 256,
      args = {y, x, gpuexp.i64(N), gpuexp.f32(0.999), gpuexp.f32(0.001)}} end},
  {name = "contended atomics", kernel = "sum_values", verdict = "contended atomics",
    expect = "^atomic requests at the L2 [%d.e+]+ %-> [%d.e+]+ %(atomics%)",
    launch = function() return {grid = N // 256, block = 256, args = {total, y, x, gpuexp.i32(N)}} end},
  {name = "barrier and shared exchange", kernel = "exchange", verdict = "barrier stalls",
    expect = "^warp cycles per issued instruction [%d.]+ %-> [%d.]+ %(stalls: [^)]*barrier",
    launch = function() return {grid = full, block = 256, args = {out, gpuexp.i32(2048), gpuexp.f32(0.999), gpuexp.f32(0.001)}} end},
}

local function time_ms(kernel, spec)
  local t = kernel:measure{grid = spec.grid, block = spec.block, args = spec.args, min_time_ms = 40, max_noise_pct = 1,
    timeout_s = 1}
  return t.median_ms
end
-- a counter row of the nightly's set for one launch, with its time
local function counter_row(kernel, spec, ms)
  counters.remember(kernel, spec)
  local row = counters.take()
  T.ok(row and not row.ctr_note, "counters: " .. tostring(row and row.ctr_note))
  row.median_ms = ms
  return row
end

local matches = T.matches -- (an explanation against a pattern or a list of them)

local wrong, lines, raw = {}, {}, {}
lines[1] = "| case | good ms | bad ms | realized | diagnose | price tag | explanation (first finding) | no-change explanation |"
lines[2] = "| --- | ---: | ---: | ---: | --- | --- | --- | --- |"
for _, case in ipairs(cases) do
  local good_kernel, bad_kernel = good:kernel(case.kernel), bad:kernel(case.kernel)
  local good_spec, bad_spec = case.launch("good"), case.launch("bad")
  local good_ms, again_ms, bad_ms = time_ms(good_kernel, good_spec), time_ms(good_kernel, good_spec), time_ms(bad_kernel, bad_spec)
  local base = {}
  for r = 1, 4 do base[r] = counter_row(good_kernel, good_spec, good_ms) end
  local same = counter_row(good_kernel, good_spec, again_ms)
  local slow = counter_row(bad_kernel, bad_spec, bad_ms)
  for r, row in ipairs({base[1], base[2], base[3], base[4], same, slow}) do
    raw[#raw + 1] = {case = case.name, version = r == 6 and "bad" or "good", row = row}
  end
  local change_pct = (bad_ms / good_ms - 1) * 100
  local findings, accounted = explain.explain(base, slow, change_pct, base)
  local text = findings and table.concat(findings, "; ") or "(no counters)"
  if not (findings and matches(findings[1], case.expect) and accounted) then
    wrong[#wrong + 1] = string.format("%s: explained as '%s', expected first '%s'", case.name, text,
      type(case.expect) == "table" and table.concat(case.expect, "' or '") or case.expect)
  end
  local quiet = explain.explain(base, same, (again_ms / good_ms - 1) * 100, base)
  local quiet_text = quiet and table.concat(quiet, "; ") or "(no counters)"
  if not (quiet and #quiet == 1 and quiet[1]:find("^counters unchanged")) then
    wrong[#wrong + 1] = string.format("%s: the no-change point named a counter: %s", case.name, quiet_text)
  end
  local d, why = gpuexp.diagnose(bad_kernel, bad_spec)
  T.ok(d, case.name .. ": diagnose's counters (" .. tostring(why) .. ")")
  if d.verdict ~= case.verdict then
    wrong[#wrong + 1] = string.format("%s: diagnosed %s, expected %s\n%s", case.name, d.verdict, case.verdict, d.text)
  end
  local price = d.price and string.format("%.3gx (%.3gx-%.3gx)", d.price.speedup, d.price.low, d.price.high) or "none"
  print(string.format("%s: %.4f ms -> %.4f ms (%+.0f%%)\n  %s\n  explained: %s\n  no change: %s", case.name, good_ms,
    bad_ms, change_pct, d.text:gsub("\n", "\n  "), text, quiet_text))
  lines[#lines + 1] = string.format("| %s | %.4g | %.4g | %.2fx | %s | %s | %s | %s |", case.name, good_ms, bad_ms,
    bad_ms / good_ms, d.verdict, price, (findings and findings[1] or text):gsub("|", "/"), quiet_text:gsub("|", "/"))
end
print(table.concat(lines, "\n"))
if keep then
  gpuexp.mkdir(keep)
  local columns = {"case", "version", "median_ms"}
  for _, column in ipairs(counters.COLUMNS) do columns[#columns + 1] = column end
  local text = {csv.line(columns)}
  for _, r in ipairs(raw) do
    local cells = {r.case, r.version}
    for c = 3, #columns do cells[c] = csv.format_value(r.row[columns[c]]) end
    text[#text + 1] = csv.line(cells)
  end
  T.write(keep .. "/why_counters.csv", table.concat(text, "\n") .. "\n")
  T.write(keep .. "/why_cases.md", table.concat(lines, "\n") .. "\n")
end
T.eq(#wrong, 0, "cases judged wrongly:\n" .. table.concat(wrong, "\n"))
T.done()
