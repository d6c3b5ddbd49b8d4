-- The nightly's explainer on a GPU, judged as the rule was: nights where the answer is known.
-- A suite of seven kernels runs three clean nights, then for each known change a night with it (a
-- commit's edit of the kernel file, chosen here by EXPLAIN_VARIANT) and a night with it reverted:
--   instructions: the FMA chain does 8% more iterations          -> "instructions +8%"
--   traffic:      the copy also reads 1/8 of a third array         -> "DRAM bytes +6%"
--   spills:       the register-hungry kernel capped at 24 registers -> "spilled bytes 0 -> N"
--   shared:       the latency-bound copy given 100 KB of shared memory a block -> "shared memory
--                 bytes 0 -> 102400: achieved occupancy ..."
--   registers:    the same copy with a never-taken path that keeps 64 values live -> "registers
--                 N -> M: achieved occupancy ..."
--   bank:         the transpose's tile without its padding column  -> "shared wavefronts per request"
--   stores:       the scatter writes each lane 8 words from the next -> "sectors per global store"
--   divergence:   odd and even lanes of the FMA chain take two different loops -> "active lanes"
--   tensor:       the mma.sync loop done with FP32 FMAs             -> "tensor pipe active"
--   sleep:        the FMA chain sleeps 40 us first: the set's stall shares see the warps sleeping ->
--                 "warp cycles per issued instruction ... (stalls: sleeping ...)" (a set without them:
--                 "nothing the counters see accounts for", with diagnose's verdict from the confirm stage)
-- Every changed night must be a regression of its point explained first by its cause; every other
-- night must be clean (0 regressions, so 0 explanations, right or wrong). Then what the counter set
-- costs a night: the shipped nightly suite, two nights with counters and two without.
-- usage: gpuexp test_explain_night.lua GPUEXP [KEEP_DIR]: with KEEP_DIR, the history, the nights'
-- reports, explain_table.md (expected against got), counters_by_night.csv (every night's counters)
-- and counters_cost.txt are left there (copy the last three to bench/h200/explain/).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local keep = arg[2]
local ws = T.workspace(binary)
if keep then
  gpuexp.mkdir(keep)
  keep = gpuexp._realpath(keep) -- the nights run in the workspace: the folder by its absolute path
end
local out = keep or ws.dir

gpuexp.mkdir(ws.dir .. "/suite")
ws.write("suite/explain.cu", [==[
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
#ifdef SLEEP
    __nanosleep(40000); // a commit that waits: no counter of the set moves
#endif
#ifdef FMA_EXTRA
    iterations += iterations / 12; // a commit that does 8% more work
#endif
#ifdef DIVERGE
    if (threadIdx.x & 1) { // a commit that sends odd and even lanes down different loops
        for (int k = 0; k < iterations; k++) { x = x * a + b; y = y * a + b; }
    } else {
        for (int k = 0; k < iterations; k++) { x = x * b + a; y = y * b + a; }
    }
#else
    for (int k = 0; k < iterations; k++) { x = x * a + b; y = y * a + b; }
#endif
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
// a copy whose speed is the bytes its warps keep in flight: occupancy is its time
extern "C" __global__ void lean_copy(float *y, const float *x, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
#ifdef REGS
    if (n < 0) { // never taken, but its 64 live values set the kernel's registers
        float v[64];
#pragma unroll
        for (int j = 0; j < 64; j++) v[j] = x[(i * 64 + j) & 1023];
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int j = 0; j < 64; j++) v[j] = v[j] * v[(j + 5) & 63] + v[(j + 17) & 63];
#pragma unroll
        for (int j = 0; j < 64; j++) y[(i * 64 + j) & 1023] = v[j];
        return;
    }
#endif
    y[i] = x[i];
}
// out = in transposed, through a shared tile (rows padded by a word: no bank conflict)
extern "C" __global__ void transpose(float *out, const float *in, int width)
{
#ifdef NO_PAD
    __shared__ float tile[32][32]; // a commit that drops the padding: 32-way conflicts
#else
    __shared__ float tile[32][33];
#endif
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(long long)(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[(long long)(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}
extern "C" __global__ void scatter(float *y, const float *x, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
#ifdef STRIDED_STORE
    // a commit that writes a block's 256 words warp by warp 8 words apart: a sector for every lane
    long long j = (i & ~255LL) + ((i & 31) << 3) + ((i >> 5) & 7);
#else
    long long j = i;
#endif
    y[j] = x[i] * 2.0f;
}
// mma.sync m16n8k16 (FP16 in, FP32 accumulate), four chains a warp; or the same multiply-adds on
// the FMA pipe (64 a thread for each mma). Not in the build capped at 24 registers, which ptxas
// refuses for the mma loop.
#ifndef CAPPED
__device__ __forceinline__ unsigned pack_f16(float lo, float hi)
{
    unsigned d = 0;
#if __CUDA_ARCH__ >= 800
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
#endif
    return d;
}
extern "C" __global__ void matmul(float *out, const float *A, int iterations)
{
    float acc[4][4] = {};
#ifdef MMA_FMA
    float p[16], q[16];
    for (int k = 0; k < 16; k++) { p[k] = A[(threadIdx.x + k) & 255]; q[k] = A[(threadIdx.x * 3 + k) & 255]; }
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int c = 0; c < 4; c++)
#pragma unroll
            for (int e = 0; e < 4; e++)
#pragma unroll
                for (int k = 0; k < 16; k++) acc[c][e] = fmaf(p[k], q[(k + e) & 15], acc[c][e]);
    }
#else
    const int lane = threadIdx.x & 31;
    unsigned a[4], b[2];
    for (int r = 0; r < 4; r++) a[r] = pack_f16(A[(lane * 4 + r) & 255], A[(lane * 4 + r + 1) & 255]);
    for (int r = 0; r < 2; r++) b[r] = pack_f16(A[(lane * 2 + r + 7) & 255], A[(lane * 2 + r + 9) & 255]);
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int c = 0; c < 4; c++) {
#if __CUDA_ARCH__ >= 800
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                         "{%0,%1,%2,%3};"
                         : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
        }
    }
#endif
    float s = 0.0f;
    for (int c = 0; c < 4; c++) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#endif
]==])
ws.write("suite/explain.lua", [==[
local variant = os.getenv("EXPLAIN_VARIANT") or ""
local dev = gpuexp.device()
local flags = {traffic = "EXTRA_READ", instructions = "FMA_EXTRA", divergence = "DIVERGE", sleep = "SLEEP",
  registers = "REGS", bank = "NO_PAD", stores = "STRIDED_STORE", tensor = "MMA_FMA"}
local defines = {}
if flags[variant] then defines[flags[variant]] = 1 end
local program = gpuexp.compile{file = "explain.cu", defines = defines}
local capped = gpuexp.compile{file = "explain.cu", defines = {CAPPED = 1},
  options = variant == "spills" and {"-maxrregcount=24"} or {}}
local N = 32 * 1024 * 1024 -- 128 MB arrays: several times the L2
local W = 4096             -- the transposed matrix: W x W floats (64 MB)
local x = dev:alloc("f32", N):random{seed = 1}
local y, w = dev:alloc("f32", N), dev:alloc("f32", N):random{seed = 2}
local sms = dev.sm_count or 132 -- (an offline plan has no SM count)
local out = dev:alloc("f32", sms * 8 * 256)
local cases = {
  copy = {kernel = program:kernel("copy"), grid = N // 256, args = {y, x, w, gpuexp.i64(N)}},
  fma = {kernel = program:kernel("fma_chain"), grid = sms * 8, args = {out, gpuexp.i32(4096), gpuexp.f32(0.999), gpuexp.f32(0.001)}},
  pressure = {kernel = capped:kernel("pressure"), grid = (N // 4) // 256, args = {y, x, gpuexp.i64(N // 4), gpuexp.i32(16)}},
  lean = {kernel = program:kernel("lean_copy"), grid = N // 256, args = {y, x, gpuexp.i64(N)},
    shared = variant == "shared" and 100 * 1024 or 0},
  transpose = {kernel = program:kernel("transpose"), grid = {W // 32, W // 32}, block = {32, 8}, args = {y, x, gpuexp.i32(W)}},
  scatter = {kernel = program:kernel("scatter"), grid = N // 256, args = {y, x, gpuexp.i64(N)}},
  mma = {kernel = program:kernel("matmul"), grid = sms * 4, block = 128, args = {out, x, gpuexp.i32(512)}},
}
gpuexp.sweep{
  name = "explain",
  axes = {{"case", {"copy", "fma", "pressure", "lean", "transpose", "scatter", "mma"}}},
  columns = {"median_ms", "noise_pct", "samples", "sm_clock_mhz"},
  run = function(p)
    local c = cases[p.case]
    local t = c.kernel:measure{grid = c.grid, block = c.block or 256, shared = c.shared, args = c.args, min_time_ms = 150,
      max_noise_pct = 0.5, timeout_s = 2}
    return {median_ms = t.median_ms, noise_pct = t.noise_pct, samples = t.samples, sm_clock_mhz = t.sm_clock_mhz,
      samples_ms = t.samples_ms}
  end,
}
]==])

local history = out .. "/history.sqlite"
local nights = {{variant = ""}, {variant = ""}, {variant = ""}}
for _, change in ipairs({
  {"instructions", "case=fma", "^instructions %+[789]%.%d%% %(the time moved"},
  {"traffic", "case=copy", "^DRAM bytes %+[5-8]%.%d%%"},
  {"spills", "case=pressure", "^spilled bytes 0 %-> %d+"},
  {"shared", "case=lean", "^shared memory bytes 0 %-> 102400: achieved occupancy"},
  {"registers", "case=lean", "^registers %d+ %-> %d+: achieved occupancy"},
  {"bank", "case=transpose", "^shared wavefronts per request [%d.]+ %-> [%d.]+ %(bank conflicts%)"},
  {"stores", "case=scatter", "^sectors per global store [%d.]+ %-> [%d.]+ %(coalescing%)"},
  {"divergence", "case=fma", "^active lanes per instruction [%d.]+ %-> [%d.]+ %(divergence%)"},
  {"tensor", "case=mma", "^tensor pipe active [%d.]+%% %-> [%d.]+%% %(the tensor%-core path replaced"},
  -- (the set's stall shares see the sleep itself: the warps' cycles went to `sleeping`)
  {"sleep", "case=fma", {"^warp cycles per issued instruction [%d.]+ %-> [%d.]+ %(stalls: sleeping",
    "^nothing the counters see accounts for %+[%d.]+%%.*; gpuexp diagnose says %u",
    "^counters unchanged %(%d+ compared%): the time moved %+[%d.]+%% alone.*; gpuexp diagnose says %u"}},
}) do
  nights[#nights + 1] = {variant = change[1], point = change[2], expect = change[3]}
  nights[#nights + 1] = {variant = ""} -- the change reverted
end

local matches = T.matches -- (an explanation against a pattern or a list of them)
local table_rows = {"| night | change | expected | exit | got |", "| --- | --- | --- | --- | --- |"}
-- every night's counters, for bench/: the no-change nights are the counters' recorded noise
-- (tests/lua/test_explain.lua draws its no-change nights from them when the file is there)
local COUNTER_COLUMNS = {"median_ms", "sm_clock_mhz"}
for _, column in ipairs(require("gpuexp.api.counters").COLUMNS) do COUNTER_COLUMNS[#COUNTER_COLUMNS + 1] = column end
local csv = require("gpuexp.store.csv") -- the store's writer (scripts get only gpuexp.csv.read and open)
local by_night = {csv.line({"night", "variant", "case", table.unpack(COUNTER_COLUMNS)})}
local wrong, right_first, changed, clean_nights, clean_explained = {}, 0, 0, 0, 0
for n, night in ipairs(nights) do
  local started = gpuexp.clock()
  local code, stdout, stderr = ws.run(string.format("nightly suite --quiet --history %s --out %s/night%02d", history, out, n),
    string.format("GPUEXP_LOCK_DIR=%s EXPLAIN_VARIANT=%s", ws.dir, night.variant))
  -- the explanations are the lines under the regressions' table, before the regression states
  -- (whose lines, "explain case=x: OPEN since ..." or "FIXED ...", name points the same way)
  local explained = {}
  local regressions = stdout:match("REGRESSIONS %(%d+%):(.-)\nREGRESSION STATES:") or stdout:match("REGRESSIONS %(%d+%):(.*)$")
  for point, line in (regressions or ""):gmatch("explain (case=%w+): ([^\n]+)") do explained[point] = line end
  local got = {}
  for point, line in pairs(explained) do got[#got + 1] = point .. ": " .. line end
  table.sort(got)
  local expected = night.point and (night.point .. " regressed, explained as `" .. (type(night.expect) == "table" and
    table.concat(night.expect, "` or `") or night.expect) .. "`") or "clean"
  table_rows[#table_rows + 1] = string.format("| %d | %s | %s | %d | %s |", n, night.variant == "" and "none" or night.variant,
    expected, code, #got > 0 and table.concat(got, "; "):gsub("|", "\\|") or "(none)")
  print(string.format("night %d (%s): exit %d in %.1f s", n, night.variant == "" and "no change" or night.variant, code,
    gpuexp.clock() - started))
  local readable, night_rows = pcall(gpuexp.csv.read, string.format("%s/night%02d/explain.csv", out, n))
  for _, row in ipairs(readable and night_rows or {}) do
    local cells = {tostring(n), night.variant, row.case}
    for _, column in ipairs(COUNTER_COLUMNS) do cells[#cells + 1] = csv.format_value(row[column]) end
    by_night[#by_night + 1] = csv.line(cells)
  end
  if night.point then
    changed = changed + 1
    local line = explained[night.point]
    if code ~= 1 or not matches(line, night.expect) then
      wrong[#wrong + 1] = string.format("night %d (%s): exit %d, explanation %s\n%s%s", n, night.variant, code, tostring(line),
        stdout, stderr)
    else
      right_first = right_first + 1
    end
    for point in pairs(explained) do
      if point ~= night.point then wrong[#wrong + 1] = string.format("night %d: %s also explained", n, point) end
    end
  else
    clean_nights = clean_nights + 1
    if next(explained) then clean_explained = clean_explained + 1 end
    if code ~= 0 or next(explained) then
      wrong[#wrong + 1] = string.format("night %d (no change): exit %d\n%s%s", n, code, stdout, stderr)
    end
  end
end
table_rows[#table_rows + 1] = ""
table_rows[#table_rows + 1] = string.format("%d of %d known changes explained first by their cause; %d of %d no-change " ..
  "nights with an explanation (wrong by definition)", right_first, changed, clean_explained, clean_nights)
print(table.concat(table_rows, "\n"))

-- the counters are in the history: the last night's rows have them, with real values
local _, listing = ws.run(string.format("history --history %s list --limit 1", history))
local last = listing:match("\n%s*(%d+)%s")
local code, _, stderr = ws.run(string.format("history --history %s export %s -o last.csv", history, tostring(last)))
T.eq(code, 0, "history export of run " .. tostring(last) .. ": " .. stderr)
local rows = gpuexp.csv.read(ws.dir .. "/last.csv")
T.eq(#rows, 7, "the last night's rows")
local by_case = {}
for _, row in ipairs(rows) do
  by_case[row.case] = row
  T.ok(type(row.ctr_instructions) == "number" and row.ctr_instructions > 0, row.case .. ": instructions recorded")
  T.ok(type(row.ctr_occupancy_pct) == "number" and row.ctr_occupancy_pct > 0 and row.ctr_occupancy_pct <= 100, row.case .. ": occupancy")
  T.ok(type(row.ctr_stall) == "string" and row.ctr_stall ~= "", row.case .. ": the dominant stall")
  T.ok(type(row.ctr_registers) == "number" and row.ctr_registers > 0, row.case .. ": registers")
  T.ok(type(row.ctr_lanes_per_instruction) == "number" and row.ctr_lanes_per_instruction > 0, row.case .. ": lanes")
end
-- the copy moves what it should: 8 bytes per element through DRAM, less the written lines the
-- L2 still holds when the kernel ends (an H200 measured 0.93); a coalesced float access is 4
-- sectors a request, a full warp 32 lanes; the padded transpose has no bank conflict
local copy = by_case.copy
local ratio = copy.ctr_dram_bytes / (8 * 32 * 1024 * 1024)
T.ok(ratio > 0.85 and ratio < 1.02, "copy: DRAM bytes per 8 bytes an element moves: " .. ratio)
T.near(copy.ctr_load_sectors_per_request, 4, 0.1, "copy: sectors per load request")
T.near(copy.ctr_store_sectors_per_request, 4, 0.1, "copy: sectors per store request")
T.near(by_case.fma.ctr_lanes_per_instruction, 32, 0.5, "fma: lanes per instruction")
T.near(by_case.transpose.ctr_shared_wavefronts_per_request, 1, 0.2, "transpose: wavefronts per shared request")
T.ok(by_case.mma.ctr_tensor_pct > 20, "mma: the tensor pipe is busy: " .. tostring(by_case.mma.ctr_tensor_pct))

-- What the counter set costs a night: the shipped suite, alternately with and without counters
local cost_lines = {}
local seconds = {with = {}, without = {}}
local collecting = {}
for round = 1, 2 do
  for _, mode in ipairs({"without", "with"}) do
    local started = gpuexp.clock()
    local night_code, stdout = ws.run(string.format("nightly nightly --quiet --history %s/cost.sqlite --out %s/cost%d%s %s", ws.dir,
      ws.dir, round, mode, mode == "without" and "--no-counters" or ""), "GPUEXP_LOCK_DIR=" .. ws.dir)
    local elapsed = gpuexp.clock() - started
    seconds[mode][round] = elapsed
    local counted = stdout:match("%(counters ([%d.]+) s%)")
    if mode == "with" then collecting[round] = tonumber(counted) end
    cost_lines[#cost_lines + 1] = string.format("nightly %s counters, round %d: exit %d in %.1f s%s", mode, round, night_code,
      elapsed, counted and string.format(" (counters %s s)", counted) or "")
  end
end
local with_s, without_s = (seconds.with[1] + seconds.with[2]) / 2, (seconds.without[1] + seconds.without[2]) / 2
local counted_s = ((collecting[1] or 0) + (collecting[2] or 0)) / 2
cost_lines[#cost_lines + 1] = string.format("a night with the counter set (%d metrics): %.1f s, without: %.1f s (%+.1f%%); " ..
  "collecting them: %.2f s, %.1f%% of the night", #require("gpuexp.api.counters").names, with_s, without_s,
  (with_s / without_s - 1) * 100, counted_s, counted_s / with_s * 100)
print(table.concat(cost_lines, "\n"))
if keep then
  T.write(keep .. "/explain_table.md", table.concat(table_rows, "\n") .. "\n")
  T.write(keep .. "/counters_by_night.csv", table.concat(by_night, "\n") .. "\n")
  T.write(keep .. "/counters_cost.txt", table.concat(cost_lines, "\n") .. "\n")
end
T.eq(#by_night, 1 + 7 * #nights, "every night's counters")
T.ok(collecting[1] and collecting[2], "the nights say what the counters cost")
T.ok(counted_s / with_s <= 0.10, string.format("the counters cost %.1f%% of a night (at most 10%%)", counted_s / with_s * 100))
T.eq(#wrong, 0, "nights explained wrongly or flagged wrongly:\n" .. table.concat(wrong, "\n"))
T.done()
