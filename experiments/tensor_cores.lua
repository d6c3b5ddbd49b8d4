-- Seed 003, phase 5: tensor cores against CUDA cores. mma.sync in FP16, BF16, TF32, INT8 and
-- FP8 (E4M3), each first checked on one 16x8 tile against the host's product (the inputs are
-- small integers, exact in every type), then run by every warp in independent chains for its
-- rate, beside FP32 FMA on the CUDA cores. The tensor pipe's counters (the `tensor` preset) say
-- how busy the pipe was. Types this GPU lacks are skipped with the reason. (mma.sync is not
-- Hopper's fastest path: wgmma is; the rates here are mma.sync's.)
--
--   gpuexp experiments/tensor_cores.lua

local plan = gpuexp.plan
local dev = gpuexp.device()
local arch = plan and gpuexp.offline_arch or dev.arch
local cc = tonumber(arch:match("sm_(%d+)"))
local program = gpuexp.compile{file = "kernels/tensor_cores.cu"}
local sms = plan and 132 or dev.sm_count
local BLOCK, BLOCKS = 256, sms * 4

local tensor = dofile(gpuexp.resolve("kernels/tensor_types.lua"))
local types, names = {}, {}
for _, t in ipairs(tensor.TYPES) do types[#types + 1] = t end
types[#types + 1] = {name = "fp32_fma", kernel = "fp32_fma", cuda_cores = true, min_cc = 0}
for i, t in ipairs(types) do names[i] = t.name end

local function a_value(r, c) return (r * 3 + c * 5) % 5 - 2 end
local function b_value(k, n) return (k * 7 + n * 3) % 5 - 2 end
local D = dev:alloc("f32", 128)
local out = dev:alloc("f32", BLOCKS * BLOCK)

local function check(t)
  local A, B = gpuexp.host("f32", 16 * t.k), gpuexp.host("f32", t.k * 8)
  for r = 0, 15 do for c = 0, t.k - 1 do A[r * t.k + c + 1] = a_value(r, c) end end
  for k = 0, t.k - 1 do for n = 0, 7 do B[k * 8 + n + 1] = b_value(k, n) end end
  local dA, dB = dev:alloc("f32", 16 * t.k):copy_from(A), dev:alloc("f32", t.k * 8):copy_from(B)
  D:fill(-999)
  program:kernel("check_" .. t.kernel):launch{grid = 1, block = 32, args = {dA, dB, D}}
  if plan then return nil, dA, dB end
  local wrong = 0
  for r = 0, 15 do
    for n = 0, 7 do
      local want = 0
      for k = 0, t.k - 1 do want = want + a_value(r, k) * b_value(k, n) end
      if D[r * 8 + n + 1] ~= want then wrong = wrong + 1 end
    end
  end
  return wrong == 0, dA, dB, wrong
end

local rows = gpuexp.sweep{
  name = "tensor_cores",
  axes = {{"type", names}},
  columns = {"unit", "mma_shape", "verified", "wrong_elements", "median_ms", "tflops", "vs_fp32_fma", "tensor_pipe_active_pct",
    "math_pipe_throttle", "mode", "samples", "noise_pct", "sm_clock_mhz", "clock_throttled", "stop_reason"},
  run = function(p)
    local t
    for _, candidate in ipairs(types) do if candidate.name == p.type then t = candidate end end
    if cc < t.min_cc then return {status = "skipped", error = t.why .. "; this is " .. arch} end
    local row = {unit = t.cuda_cores and "CUDA cores" or "tensor cores", mma_shape = t.k and ("m16n8k" .. t.k) or nil}
    local dA, dB
    if t.cuda_cores then
      dA, dB = dev:alloc("f32", 16):fill(1), dev:alloc("f32", 1):fill(0.001)
    else
      row.verified, dA, dB, row.wrong_elements = check(t)
      if row.verified == false then row.status = "wrong" end
    end
    local iterations = t.cuda_cores and 4096 or 2048
    local kernel = program:kernel("rate_" .. t.kernel)
    local launch = {grid = BLOCKS, block = BLOCK, args = {dA, dB, out, gpuexp.i32(iterations)}}
    local spec = {mode = "hot", min_time_ms = 100, timeout_s = 3}
    for k, v in pairs(launch) do spec[k] = v end
    local m = kernel:measure(spec)
    for _, c in ipairs(gpuexp.measure_columns) do row[c] = m[c] end
    row.median_ms = m.median_ms
    local flops = t.cuda_cores and BLOCKS * BLOCK * iterations * 8 * 2 or tensor.flops(t, BLOCKS, BLOCK, iterations)
    if m.median_ms then row.tflops = flops / (m.median_ms * 1e-3) / 1e12 end
    launch.metrics = "tensor"
    local counters = kernel:metrics(launch)
    if counters then
      row.tensor_pipe_active_pct = counters["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"]
      row.math_pipe_throttle = counters["smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio"]
    end
    return row
  end,
}
local fma
for _, row in ipairs(rows) do if row.type == "fp32_fma" then fma = row end end
for _, row in ipairs(rows) do
  if row.tflops and fma and fma.tflops then row.vs_fp32_fma = row.tflops / fma.tflops end
end
gpuexp.print_table(rows, {"type", "unit", "mma_shape", "verified", "tflops", "vs_fp32_fma", "tensor_pipe_active_pct",
  "math_pipe_throttle", "status"})
if plan then print("OFFLINE PLAN: kernels compiled for " .. arch .. ", launches checked; no rates") return end
for _, row in ipairs(rows) do
  gpuexp.check(row.status == "skipped" or row.type == "fp32_fma" or row.verified,
    "%s mma gives the host's product (%s wrong elements)", row.type, tostring(row.wrong_elements))
end
if gpuexp.run_options and gpuexp.run_options.only then print("a partial run (--only): the table above, no lesson") return end
local by = {}
for _, row in ipairs(rows) do by[row.type] = row end
local lesson = gpuexp.lesson()
if by.fp16.tflops then
  lesson:claim(by.fp16.tflops > 2 * fma.tflops, string.format("FP16 tensor cores outrun FP32 FMA on CUDA cores " ..
    "(%.0f against %.0f TFLOP/s, %.1fx)", by.fp16.tflops, fma.tflops, by.fp16.tflops / fma.tflops))
  lesson:claim(by.tf32.tflops < by.fp16.tflops, string.format("TF32 runs at a fraction of FP16 (%.0f against %.0f TFLOP/s)",
    by.tf32.tflops, by.fp16.tflops))
  lesson:claim(by.int8.tflops > by.fp16.tflops, string.format("INT8 doubles FP16's rate (%.0f TOP/s against %.0f)",
    by.int8.tflops, by.fp16.tflops))
  if by.fp16.tensor_pipe_active_pct then
    lesson:claim(by.fp16.tensor_pipe_active_pct > 50, string.format("the tensor pipe is busy (%.0f%% of active cycles " ..
      "for FP16)", by.fp16.tensor_pipe_active_pct))
  end
end
lesson:report("tensor cores multiply the throughput of CUDA cores, more the narrower the type")
