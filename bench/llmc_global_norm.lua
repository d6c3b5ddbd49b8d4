-- A public project's kernels, unmodified: karpathy/llm.c's dev/cuda/global_norm.cu (cooperative
-- groups, templates instantiated by host code in the same file, a launcher of two kernels), with
-- its common.h. Not in this repository: give the folder holding both files.
--   run DIR OUT   NVRTC's answer to the file; gpuexp.compile{compiler = "nvcc"}; the project's own
--                 nvcc -cubin and -fatbin builds loaded with gpuexp.load; every kernel verified
--                 against a double-precision sum; cold timings of every build (OUT/gpuexp.csv)
--   ncu DIR       each configuration launched once from the cubin, for ncu's gpu__time_duration
--   compare OUT   gpuexp's cold medians against ncu's (OUT/ncu.csv) and llm.c's own harness
--                 (OUT/llmc_K.txt, the output of `global_norm K` built with nvcc)
-- bench/run_llmc.sh runs them.
local mode, dir, out = arg[1] or "run", arg[2], arg[3] or "."
local ncu_csv = dofile(gpuexp.script_dir .. "/ncu_csv.lua")

local C, L = 768, 12
local n = (C * 4 * C + C * C) * 2 * L -- llm.c's num_params: 70,778,880 bf16 values
local blocks = {32, 64, 128, 256, 512, 768, 1024}

-- llm.c's launchers: kernels 1-3 fill the GPU (threads per SM x SMs / block); 4 raises small
-- blocks to 128 and asserts fewer than 1024 blocks, then runs the aggregate kernel
local function configurations(dev)
  local threads = dev:attribute("max_threads_per_multiprocessor") * dev.sm_count
  local list = {}
  for k = 1, 4 do
    for _, block in ipairs(blocks) do
      local b = (k == 4 and block <= 64) and 128 or block
      local grid = threads // b
      list[#list + 1] = {kernel = k, block = block, launch_block = b, grid = grid,
        skipped = k == 4 and grid >= 1024 and "llm.c asserts grid_size < 1024" or nil}
    end
  end
  return list
end

local function read_lines(path)
  local file = io.open(path)
  if not file then return nil end
  local lines = {}
  for line in file:lines() do lines[#lines + 1] = line end
  file:close()
  return lines
end

if mode == "compare" then
  local ours = gpuexp.csv.read(out .. "/gpuexp.csv")
  local ncu = {}
  local csv = ncu_csv.read(out .. "/ncu.csv")
  for _, launch in ipairs(csv and csv.launches or {}) do
    if launch["Kernel Name"]:match("norm") then -- llm.c's kernels, not the data set-up's
      ncu[#ncu + 1] = {name = launch["Kernel Name"], ms = ncu_csv.time_ms(csv, launch)}
    end
  end
  -- ncu saw the cubin build's configurations in order; kernel 4 is two launches
  local at = 1
  local rows = {}
  for _, row in ipairs(ours) do
    if row.build == "cubin" and row.status == "ok" then
      local ms = 0
      for _ = 1, row.kernel == 4 and 2 or 1 do
        ms = ms + (ncu[at] and ncu[at].ms or 0 / 0)
        at = at + 1
      end
      rows[#rows + 1] = {kernel = row.kernel, block = row.block, gpuexp_us = row.median_ms * 1e3, ncu_us = ms * 1e3,
        difference_us = (row.median_ms - ms) * 1e3}
    end
  end
  for k = 1, 4 do -- llm.c's harness: "block_size %4d | time %.4f ms"
    for _, line in ipairs(read_lines(string.format("%s/llmc_%d.txt", out, k)) or {}) do
      local block, ms = line:match("block_size%s+(%d+)%s+|%s+time%s+([%d.]+) ms")
      for _, r in ipairs(rows) do
        if block and r.kernel == k and r.block == tonumber(block) then
          r.llmc_us = tonumber(ms) * 1e3
          r.llmc_minus_ncu_us = r.llmc_us - r.ncu_us
        end
      end
    end
  end
  gpuexp.print_table(rows, {"kernel", "block", "gpuexp_us", "ncu_us", "difference_us", "llmc_us", "llmc_minus_ncu_us"})
  return
end

assert(dir, "usage: gpuexp --inline bench/llmc_global_norm.lua run|ncu|compare DIR [OUT]")
local source = dir .. "/global_norm.cu"
local dev = gpuexp.device()
local toolkit = assert(gpuexp.toolkit().nvcc, "no nvcc found")

-- bf16 data as llm.c makes it (uniform in -1e-3..1e-3), converted on the GPU; the reference sums
-- the bf16 values' squares in double precision, in a kernel of its own
local helpers = gpuexp.compile{source = [[
#include <cuda_bf16.h>
extern "C" __global__ void to_bf16(__nv_bfloat16 *out, const float *in, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
    out[i] = __float2bfloat16(in[i]); }
extern "C" __global__ void reference(double *out, const __nv_bfloat16 *in, unsigned long long n) {
  double acc = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
    double v = __bfloat162float(in[i]); acc += v * v; }
  atomicAdd(out, acc); }
]]}
local values = dev:alloc("f32", n):random{seed = 1, min = -1e-3, max = 1e-3}
local data = dev:alloc("u8", 2 * n) -- __nv_bfloat16[n]
helpers:kernel("to_bf16"):launch{grid = dev.sm_count * 8, block = 256, args = {data, values, gpuexp.u64(n)}}
values:free()
local sum = dev:alloc("f64", 1):fill(0)
helpers:kernel("reference"):launch{grid = dev.sm_count * 8, block = 256, args = {sum, data, gpuexp.u64(n)}}
local reference = sum[1]
local result = dev:alloc("f32", 1024)

local function build(flags, name)
  local path = out .. "/" .. name
  assert(os.execute(string.format("%s %s -o %s %s > %s.log 2>&1", toolkit, flags, path, source, path)), "nvcc " .. flags)
  return path
end

local programs = {}
if mode == "run" then
  local ok, why = pcall(gpuexp.compile, {file = source})
  local message = ok and "compiled" or (type(why) == "table" and why.message or tostring(why))
  print("NVRTC on the file as it is: " .. (message:match("[^\n]*error[^\n]*") or message:match("[^\n]*")))
  programs[#programs + 1] = {build = "compile_nvcc",
    program = gpuexp.compile{file = source, compiler = "nvcc", options = {"-O3", "--use_fast_math"}}}
end
local gencode = string.format("-gencode arch=compute_%s,code=%s", dev.arch:sub(4), dev.arch)
programs[#programs + 1] = {build = "cubin", program = gpuexp.load{file = build("-O3 --use_fast_math -cubin -arch=" .. dev.arch, "global_norm.cubin")}}
if mode == "run" then
  programs[#programs + 1] = {build = "fatbin", program = gpuexp.load{file = build("-O3 --use_fast_math -fatbin " .. gencode, "global_norm.fatbin")}}
end

-- one configuration of llm.c's global_norm(k, ...): a sequence (kernel 4 is two launches)
local function operation(program, c)
  local name = string.format("norm_kernel%d<__nv_bfloat16>", c.kernel)
  local k = program:kernel(name)
  local args = {result, data, gpuexp.u64(n)}
  if c.kernel < 4 then
    return gpuexp.sequence(function() k:launch{grid = c.grid, block = c.launch_block, args = args} end, {name = name})
  end
  local aggregate = program:kernel("global_norm_aggregate_kernel")
  return gpuexp.sequence(function()
    k:launch{grid = c.grid, block = c.launch_block, args = args}
    aggregate:launch{grid = 1, block = 1024, args = {result, gpuexp.u64(c.grid)}}
  end, {name = name .. " + aggregate"})
end

local rows = {}
for _, p in ipairs(programs) do
  print(p.build .. ": " .. table.concat(p.program:kernels(), ", "))
  for _, c in ipairs(configurations(dev)) do
    local row = {build = p.build, kernel = c.kernel, block = c.block, grid = c.grid}
    if c.skipped then
      row.status = "skipped: " .. c.skipped
    else
      local op = operation(p.program, c)
      if mode == "ncu" then
        op:run()
      else
        result:fill(0)
        op:run()
        row.norm2 = result[1]
        row.relative_error = math.abs(row.norm2 - reference) / reference
        row.verified = row.relative_error < 1e-2 -- llm.c's own tolerance for bf16 (validate_result, 1e-2 + eps)
        local t = op:measure{mode = "cold", min_time_ms = 100, max_noise_pct = 1, timeout_s = 3}
        row.median_ms, row.noise_pct = t.median_ms, t.noise_pct
        row.status = "ok"
      end
    end
    rows[#rows + 1] = row
  end
end
if mode == "run" then
  local writer = gpuexp.csv.open(out .. "/gpuexp.csv")
  local columns = {"build", "kernel", "block", "grid", "norm2", "relative_error", "verified", "median_ms", "noise_pct", "status"}
  writer:header(columns)
  for _, r in ipairs(rows) do writer:row(r) end
  writer:close()
  print(string.format("reference norm^2 (double) %.6g over %d bf16 values", reference, n))
  gpuexp.print_table(rows, {"build", "kernel", "block", "grid", "relative_error", "verified", "median_ms", "noise_pct", "status"})
  -- the builds run the same code: their medians agree
  local by = {}
  for _, r in ipairs(rows) do if r.median_ms then by[r.build .. r.kernel .. "_" .. r.block] = r.median_ms end end
  local worst = 0
  for _, r in ipairs(rows) do
    if r.median_ms and r.build ~= "cubin" then
      worst = math.max(worst, math.abs(r.median_ms / by["cubin" .. r.kernel .. "_" .. r.block] - 1))
    end
  end
  print(string.format("largest difference between builds: %.2f%%", 100 * worst))
end
