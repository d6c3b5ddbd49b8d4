-- The nightly's explainer on a GPU, judged as the rule was: nights where the answer is known.
-- A suite of three kernels (a copy, an FMA chain, a register-hungry kernel) runs ten nights:
-- three clean ones, then for each known change a night with it (a commit's edit, chosen here by
-- EXPLAIN_VARIANT) and a night with it reverted:
--   instructions: the FMA chain does 8% more iterations  -> first "instructions +8%"
--   traffic:      the copy also reads 1/8 of a third array -> first "DRAM bytes +6%"
--   spills:       the register-hungry kernel capped at 24 registers -> first "spilled bytes 0 -> N"
-- Every changed night must be a regression explained by its counter; every other night must be
-- clean (0 regressions, so 0 explanations, right or wrong). A lowered clock is not injected:
-- gpuexp never changes a GPU's settings (the offline test_explain covers that case).
-- usage: gpuexp test_explain_night.lua GPUEXP [KEEP_DIR]: with KEEP_DIR, the history, the nights'
-- reports and a table of expected against got are left there (bench/h200/explain/).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local keep = arg[2]
local ws = T.workspace(binary)
local out = keep or ws.dir
if keep then gpuexp.mkdir(keep) end

gpuexp.mkdir(ws.dir .. "/suite")
ws.write("suite/explain.cu", [[
extern "C" __global__ void copy(float *y, const float *x, const float *w, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
#ifdef EXTRA_READ
    if (i < n / 8) v += w[i] * 0.0f + 0.0f * v; // a commit that reads 1/8 of another array
#endif
    y[i] = v;
}
extern "C" __global__ void fma_chain(float *out, int iterations, float a, float b)
{
    float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f;
#ifdef FMA_EXTRA
    iterations += iterations / 12; // a commit that does 8% more work
#endif
    for (int k = 0; k < iterations; k++) { x = x * a + b; y = y * a + b; }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
}
extern "C" __global__ void pressure(float *out, const float *in, long long n, int rounds)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[24];
#pragma unroll
    for (int j = 0; j < 24; j++) v[j] = in[(i + j * 4099) % n];
    for (int r = 0; r < rounds; r++) {
#pragma unroll
        for (int j = 0; j < 24; j++) v[j] = v[j] * v[(j + 1) % 24] + v[(j + 7) % 24] * 0.5f;
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 24; j++) s += v[j];
    out[i] = s;
}
]])
ws.write("suite/explain.lua", [[
local variant = os.getenv("EXPLAIN_VARIANT") or ""
local dev = gpuexp.device()
local defines = {EXTRA_READ = variant == "traffic" and 1 or nil, FMA_EXTRA = variant == "instructions" and 1 or nil}
local program = gpuexp.compile{file = "explain.cu", defines = defines}
local capped = gpuexp.compile{file = "explain.cu", options = variant == "spills" and {"-maxrregcount=24"} or {}}
local N = 32 * 1024 * 1024 -- 128 MB arrays: several times the L2
local x = dev:alloc("f32", N):random{seed = 1}
local y, w = dev:alloc("f32", N), dev:alloc("f32", N):random{seed = 2}
local sms = dev.sm_count or 132 -- (an offline plan has no SM count)
local out = dev:alloc("f32", sms * 8 * 256)
local cases = {
  copy = {kernel = program:kernel("copy"), grid = N // 256, args = {y, x, w, gpuexp.i64(N)}},
  fma = {kernel = program:kernel("fma_chain"), grid = sms * 8, args = {out, gpuexp.i32(4096), gpuexp.f32(0.999), gpuexp.f32(0.001)}},
  pressure = {kernel = capped:kernel("pressure"), grid = (N // 4) // 256, args = {y, x, gpuexp.i64(N // 4), gpuexp.i32(16)}},
}
gpuexp.sweep{
  name = "explain",
  axes = {{"case", {"copy", "fma", "pressure"}}},
  columns = {"median_ms", "noise_pct", "samples", "sm_clock_mhz"},
  run = function(p)
    local c = cases[p.case]
    local t = c.kernel:measure{grid = c.grid, block = 256, args = c.args, min_time_ms = 150, max_noise_pct = 0.5, timeout_s = 2}
    return {median_ms = t.median_ms, noise_pct = t.noise_pct, samples = t.samples, sm_clock_mhz = t.sm_clock_mhz,
      samples_ms = t.samples_ms}
  end,
}
]])

local history = out .. "/history.sqlite"
local nights = {
  {variant = ""}, {variant = ""}, {variant = ""},
  {variant = "instructions", point = "case=fma", expect = "^instructions %+[789]%.%d%% %(the time moved"},
  {variant = ""},
  {variant = "traffic", point = "case=copy", expect = "^DRAM bytes %+[5-8]%.%d%%"},
  {variant = ""},
  {variant = "spills", point = "case=pressure", expect = "^spilled bytes 0 %-> %d+"},
  {variant = ""},
  {variant = ""},
}
local table_rows = {"| night | change | expected | exit | got |", "| --- | --- | --- | --- | --- |"}
local wrong = {}
for n, night in ipairs(nights) do
  local started = gpuexp.clock()
  local code, stdout, stderr = ws.run(string.format("nightly suite --quiet --history %s --out %s/night%02d", history, out, n),
    string.format("GPUEXP_LOCK_DIR=%s EXPLAIN_VARIANT=%s", ws.dir, night.variant))
  local explained = {}
  for point, line in stdout:gmatch("explain (case=%w+): ([^\n]+)") do explained[point] = line end
  local got = {}
  for point, line in pairs(explained) do got[#got + 1] = point .. ": " .. line end
  table.sort(got)
  local expected = night.point and (night.point .. " regressed, explained as " .. night.expect) or "clean"
  table_rows[#table_rows + 1] = string.format("| %d | %s | %s | %d | %s |", n, night.variant == "" and "none" or night.variant,
    expected, code, #got > 0 and table.concat(got, "; ") or "(none)")
  print(string.format("night %d (%s): exit %d in %.1f s", n, night.variant == "" and "no change" or night.variant, code,
    gpuexp.clock() - started))
  if night.point then
    local line = explained[night.point]
    if code ~= 1 or not line or not line:find(night.expect) then
      wrong[#wrong + 1] = string.format("night %d (%s): exit %d, explanation %s\n%s%s", n, night.variant, code, tostring(line),
        stdout, stderr)
    end
    for point in pairs(explained) do
      if point ~= night.point then wrong[#wrong + 1] = string.format("night %d: %s also explained", n, point) end
    end
  elseif code ~= 0 or next(explained) then
    wrong[#wrong + 1] = string.format("night %d (no change): exit %d\n%s%s", n, code, stdout, stderr)
  end
end
print(table.concat(table_rows, "\n"))
if keep then
  local file = assert(io.open(keep .. "/explain_table.md", "w"))
  file:write(table.concat(table_rows, "\n"), "\n")
  file:close()
end
-- the counters are in the history: the last night's rows have them, with real values
local _, listing = ws.run(string.format("history --history %s list --limit 1", history))
local last = listing:match("\n%s*(%d+)%s")
local code, _, stderr = ws.run(string.format("history --history %s export %s -o last.csv", history, tostring(last)))
T.eq(code, 0, "history export of run " .. tostring(last) .. ": " .. stderr)
local rows = gpuexp.csv.read(ws.dir .. "/last.csv")
T.eq(#rows, 3, "the last night's rows")
for _, row in ipairs(rows) do
  T.ok(type(row.ctr_instructions) == "number" and row.ctr_instructions > 0, row.case .. ": instructions recorded")
  T.ok(type(row.ctr_occupancy_pct) == "number" and row.ctr_occupancy_pct > 0 and row.ctr_occupancy_pct <= 100, row.case .. ": occupancy")
  T.ok(type(row.ctr_stall) == "string" and row.ctr_stall ~= "", row.case .. ": the dominant stall")
  T.ok(type(row.ctr_registers) == "number" and row.ctr_registers > 0, row.case .. ": registers")
end
-- the copy moves what it should: 8 bytes per element through DRAM, less the written lines the
-- L2 still holds when the kernel ends (an H200 measured 0.93)
for _, row in ipairs(rows) do
  if row.case == "copy" then
    local ratio = row.ctr_dram_bytes / (8 * 32 * 1024 * 1024)
    T.ok(ratio > 0.85 and ratio < 1.02, "copy: DRAM bytes per 8 bytes an element moves: " .. ratio)
  end
end
T.eq(#wrong, 0, "nights explained wrongly or flagged wrongly:\n" .. table.concat(wrong, "\n"))
T.done()
