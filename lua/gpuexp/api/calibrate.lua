-- Ceilings measured on this GPU, not read from a datasheet: DRAM copy bandwidth (read + write
-- bytes), L2 read bandwidth (an L2-resident buffer), shared-memory (L1) bandwidth, FP32 and FP64
-- FMA rates, the FP16 tensor-core rate (mma.sync, sm_80+), and pinned host<->device bandwidth.
-- Cached per GPU UUID and driver in the cache folder, so derived columns can use them and say so.
local option_keys = require("gpuexp.api.option_keys")

local M = {}

local source = [[
extern "C" __global__ void copy4(float4 *dst, const float4 *src, unsigned long long n4)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (; i + stride < n4; i += 2 * stride) { /* two 16-byte loads in flight per thread */
        float4 a = src[i], b = src[i + stride];
        dst[i] = a;
        dst[i + stride] = b;
    }
    if (i < n4)
        dst[i] = src[i];
}

// 8 independent FMA chains per thread: 16 FLOP per iteration per thread
extern "C" __global__ void fma_rate(float *out, int iterations, float a, float b)
{
    float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    for (int i = 0; i < iterations; i++) {
        x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
        x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

// 8 independent DFMA chains per thread: 16 FLOP per iteration per thread
extern "C" __global__ void dfma_rate(double *out, int iterations, double a, double b)
{
    double x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    for (int i = 0; i < iterations; i++) {
        x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
        x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

// an L2-resident buffer read `passes` times with 16-byte loads (L1 bypassed: ld.global.cg)
extern "C" __global__ void l2_read(const float4 *src, unsigned long long n4, int passes, float *out)
{
    float acc = 0;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (int p = 0; p < passes; p++)
        for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
            float4 v = __ldcg(&src[i]);
            acc += v.x + v.y + v.z + v.w;
        }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// 16-byte shared loads, conflict-free (each quarter-warp reads 8 consecutive float4)
extern "C" __global__ void shared_read(float *out, int iterations)
{
    __shared__ float4 tile[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x)
        tile[i] = make_float4(i, i + 1, i + 2, i + 3);
    __syncthreads();
    float4 acc = make_float4(0, 0, 0, 0);
    int index = threadIdx.x;
    for (int i = 0; i < iterations; i++) {
        float4 v = tile[index];
        acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
        index = (index + 32) & 1023;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}
]]

M.VERSION = 3

-- The tensor-core types and their rate kernels' work (kernels/tensor_types.lua, shipped with
-- gpuexp), or nil where the shipped files are not found.
local function tensor_types()
  return gpuexp.data_dir and dofile(gpuexp.data_dir .. "/kernels/tensor_types.lua") or nil
end
M.tensor_types = tensor_types

local function cache_path(device)
  local base = gpuexp.cache_directory() or "."
  local facts = device.facts
  return base .. "/calibration", string.format("%s/calibration/%s-driver%s.lua", base, facts.uuid, facts.driver_cuda)
end

-- The ceilings cached for this GPU and driver, or nil.
function M.cached(device)
  if gpuexp.plan then return nil, "no measured ceilings in an offline plan (nothing runs on a GPU)" end
  device = device or gpuexp.device()
  local _, path = cache_path(device)
  local chunk = loadfile(path, "t", {})
  local cached = chunk and chunk() or nil
  if cached and (cached.version or 1) < M.VERSION then return nil end -- measured before the L2, FP64 or all tensor ceilings
  return cached
end

-- The ceilings as a Lua table in the cache, written whole (a unique temporary and a rename); a
-- cache that cannot be written only means measuring again next time.
local function save(device, ceilings)
  local dir, path = cache_path(device)
  if not pcall(gpuexp.mkdir, dir) then return end
  local lines = {"return {"}
  local keys = {}
  for key in pairs(ceilings) do keys[#keys + 1] = key end
  table.sort(keys)
  for _, key in ipairs(keys) do
    local value = ceilings[key]
    lines[#lines + 1] = string.format("  %s = %s,", key, type(value) == "string" and string.format("%q", value) or
      tostring(value))
  end
  lines[#lines + 1] = "}\n"
  gpuexp._write_file(path, table.concat(lines, "\n"))
end

-- gpuexp.calibrate{force = false, device = dev} -> {dram_copy_gbps, dram_copy_method, l2_gbps,
-- shared_gbps, fp32_gflops, fp64_gflops, tensor_{fp16,bf16,tf32,int8,fp8}_gflops (sm_80+; FP8
-- sm_89+; INT8 in GOP/s), h2d_pinned_gbps,
-- d2h_pinned_gbps, measured_utc, gpu, uuid, driver}
local measure_ceilings

local known_options = {force = true, device = true}
local function check_options(options)
  if options == nil then return end
  if type(options) ~= "table" then gpuexp.error("usage", "calibrate: expected a table of options, got " .. type(options)) end
  option_keys.check(options, known_options, "calibrate")
end

-- Calibration's own kernels are not the script's: gpuexp diagnose leaves them alone.
function M.run(options)
  check_options(options) -- wrong input is said in a plan too
  if gpuexp.plan then return nil, "no ceilings are measured in an offline plan (nothing runs on a GPU)" end
  local ok, result = require("gpuexp.api.kernel").gpuexps_own(measure_ceilings, options)
  if not ok then error(result, 0) end
  return result
end

-- Each ceiling below is measured into c from k: {device, facts, program (the kernels above), out (a
-- buffer of one float a thread of the rate kernels' grid), threads (that grid's size)}. The rate
-- kernels run 8 blocks of 256 threads on every SM.

-- DRAM: 1 GiB copied, read + write bytes; the best of the driver's copy and a 16-byte copy kernel
local function measure_dram(k, c)
  local n = 256 * 1024 * 1024
  local a = k.device:alloc("f32", n):random{seed = 1}
  local b = k.device:alloc("f32", n):fill(0)
  local moved = 2 * 4 * n
  local driver_copy = b:time_copy_from(a, {warmup = 3, reps = 20})
  local best_gbps, method = moved / (driver_copy.median_ms * 1e-3) / 1e9, "cuMemcpyDtoD"
  local copy4 = k.program:kernel("copy4")
  for _, blocks_per_sm in ipairs({2, 4, 8, 16}) do
    local t = copy4:time{grid = k.facts.sm_count * blocks_per_sm, block = 512,
      args = {b, a, gpuexp.u64(n // 4)}, warmup = 3, reps = 20}
    local gbps = moved / (t.median_ms * 1e-3) / 1e9
    if gbps > best_gbps then best_gbps, method = gbps, string.format("copy kernel, 16-byte, %d blocks/SM of 512", blocks_per_sm) end
  end
  c.dram_copy_gbps, c.dram_copy_method, c.dram_copy_bytes = best_gbps, method, moved
  a:free(); b:free()
end

local FMA_ITERATIONS = 4096

-- FP32: FMAs on every lane of every SM
local function measure_fp32(k, c)
  local t = k.program:kernel("fma_rate"):time{grid = k.facts.sm_count * 8, block = 256,
    args = {k.out, gpuexp.i32(FMA_ITERATIONS), gpuexp.f32(0.999), gpuexp.f32(0.001)}, warmup = 3, reps = 20}
  c.fp32_gflops = 16.0 * FMA_ITERATIONS * k.threads / (t.median_ms * 1e-3) / 1e9
end

-- FP64: the same with doubles
local function measure_fp64(k, c)
  local iterations = FMA_ITERATIONS // 4
  local dout = k.device:alloc("f64", k.threads)
  local d = k.program:kernel("dfma_rate"):time{grid = k.facts.sm_count * 8, block = 256,
    args = {dout, gpuexp.i32(iterations), gpuexp.f64(0.999), gpuexp.f64(0.001)}, warmup = 3, reps = 20}
  c.fp64_gflops = 16.0 * iterations * k.threads / (d.median_ms * 1e-3) / 1e9
  dout:free()
end

-- L2: a quarter of the L2 (one partition's worth stays near), read 64 times
local function measure_l2(k, c)
  local l2_elements = math.max(1024, k.facts.l2_bytes // 4 // 4)
  local l2_buffer = k.device:alloc("f32", l2_elements):fill(1)
  local passes = 64
  local l2 = k.program:kernel("l2_read"):time{grid = k.facts.sm_count * 8, block = 256,
    args = {l2_buffer, gpuexp.u64(l2_elements // 4), gpuexp.i32(passes), k.out}, warmup = 3, reps = 20}
  c.l2_gbps = 4.0 * l2_elements * passes / (l2.median_ms * 1e-3) / 1e9
  l2_buffer:free()
end

-- tensor cores (sm_80 and newer): the rate kernels of the tensor-core study (kernels/tensor_cores.cu,
-- shipped with gpuexp), every warp in 4 independent mma.sync chains
local function measure_tensor(k, c)
  local cc = tonumber(k.facts.arch:match("sm_(%d+)")) or 0
  if cc < 80 then return end
  local tensor = tensor_types()
  gpuexp.check(tensor, "gpuexp's shipped kernels (kernels/tensor_cores.cu) were not found")
  local program_tc = gpuexp.compile{file = gpuexp.data_dir .. "/kernels/tensor_cores.cu", device = k.device}
  local a, b = k.device:alloc("f32", 16 * 32):fill(1), k.device:alloc("f32", 32 * 8):fill(1)
  local blocks, block, iterations = k.facts.sm_count * 4, 256, 2048
  for _, t in ipairs(tensor.TYPES) do
    if cc >= t.min_cc then
      local r = program_tc:kernel("rate_" .. t.kernel):time{grid = blocks, block = block,
        args = {a, b, k.out, gpuexp.i32(iterations)}, warmup = 3, reps = 20}
      c["tensor_" .. t.name .. "_gflops"] = tensor.flops(t, blocks, block, iterations) / (r.median_ms * 1e-3) / 1e9
    end
  end
  a:free(); b:free()
end

-- shared memory: 16 bytes per thread per iteration
local function measure_shared(k, c)
  local iterations = 8192
  local s = k.program:kernel("shared_read"):time{grid = k.facts.sm_count * 8, block = 256,
    args = {k.out, gpuexp.i32(iterations)}, warmup = 3, reps = 20}
  c.shared_gbps = 16.0 * iterations * k.threads / (s.median_ms * 1e-3) / 1e9
end

-- host <-> device, pinned, 256 MiB
local function measure_host_copies(k, c)
  local m = 64 * 1024 * 1024
  local host = gpuexp.host("f32", m, {pinned = true}):fill(1)
  local dev_buffer = k.device:alloc("f32", m)
  c.h2d_pinned_gbps = dev_buffer:time_copy_from(host, {warmup = 2, reps = 10}).gbps
  c.d2h_pinned_gbps = host:time_copy_from(dev_buffer, {warmup = 2, reps = 10}).gbps
  host:free(); dev_buffer:free()
end

function measure_ceilings(options)
  options = options or {}
  local device = options.device or gpuexp.device()
  if not options.force then
    local cached = M.cached(device)
    if cached then cached.from_cache = true return cached end
  end
  local facts = device.facts
  local program = gpuexp.compile{source = source, name = "gpuexp_calibrate.cu", device = device}
  local c = {gpu = facts.name, uuid = facts.uuid, driver = facts.driver_cuda, measured_utc = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    version = M.VERSION}
  local threads = facts.sm_count * 8 * 256
  local k = {device = device, facts = facts, program = program, threads = threads}
  measure_dram(k, c)
  k.out = device:alloc("f32", threads)
  measure_fp32(k, c)
  -- FP64, L2 and tensor cores: measured when they can be; a failure here leaves that
  -- ceiling out (with a warning) rather than the ones above
  local extra_ok, extra_error = pcall(function()
    measure_fp64(k, c)
    measure_l2(k, c)
    measure_tensor(k, c)
  end)
  if not extra_ok then
    io.stderr:write("gpuexp calibrate: the L2, FP64 or tensor-core ceiling was not measured: " ..
      tostring(type(extra_error) == "table" and extra_error.message or extra_error) .. "\n")
  end
  measure_shared(k, c)
  k.out:free()
  measure_host_copies(k, c)
  save(device, c)
  c.from_cache = false
  return c
end

return M
