-- Energy per unit of work (NVML's total energy counter over each measurement): a memory-bound
-- triad, FP32 FMA chains on the CUDA cores and FP16 mma.sync chains on the tensor cores, each for
-- at least 2 s of samples. Mean power, energy per launch, and energy per byte moved or per FLOP.
-- The lesson: the tensor cores do a FLOP for several times less energy than the CUDA cores, and a
-- launch's energy is its power times its time (the counter and the clock agree).
--
--   gpuexp experiments/energy.lua
--
-- Without NVML (or without permission to read it) the energy columns stay empty and the
-- telemetry_note column says why; the times are measured either way.
local plan = gpuexp.plan
local dev = gpuexp.device()
local sms = plan and 132 or dev.sm_count
local nightly = gpuexp.compile{file = "kernels/nightly.cu"}
local tensor_program = gpuexp.compile{file = "kernels/tensor_cores.cu"}
local tensor = dofile(gpuexp.resolve("kernels/tensor_types.lua"))
local fp16 = tensor.TYPES[1]

local N = 64 * 1024 * 1024 -- 768 MB of arrays: over 10x the L2
local a, b, c = dev:alloc("f32", N), dev:alloc("f32", N):random{seed = 1}, dev:alloc("f32", N):random{seed = 2}
local BLOCK, BLOCKS = 256, sms * 8
local out = dev:alloc("f32", BLOCKS * BLOCK)
local ones = dev:alloc("f32", 256):fill(1)
local FMA_ITERATIONS, MMA_ITERATIONS = 16384, 4096

local cases = {
  triad = {unit = "GB", kernel = nightly:kernel("triad"), grid = math.min(N // BLOCK, sms * 32),
    args = {a, b, c, gpuexp.f32(1.5), gpuexp.u64(N), gpuexp.i32(1)}, work = 12 * N / 1e9},
  fp32_fma = {unit = "TFLOP", kernel = nightly:kernel("fma_chain"), grid = BLOCKS,
    args = {out, gpuexp.i32(FMA_ITERATIONS), gpuexp.f32(0.999), gpuexp.f32(0.001)},
    work = BLOCKS * BLOCK * FMA_ITERATIONS * 8 * 2 / 1e12},
  fp16_tensor = {unit = "TFLOP", kernel = tensor_program:kernel("rate_f16"), grid = BLOCKS,
    args = {ones, ones, out, gpuexp.i32(MMA_ITERATIONS)}, work = tensor.flops(fp16, BLOCKS, BLOCK, MMA_ITERATIONS) / 1e12},
}

local rows = gpuexp.sweep{
  name = "energy",
  axes = {{"kernel", {"triad", "fp32_fma", "fp16_tensor"}}},
  columns = {"unit", "median_ms", "noise_pct", "power_w", "energy_j", "j_per_unit", "power_x_time_j", "gpu_busy_pct",
    "temperature_c",
    "throttle_reasons", "sm_clock_mhz", "throttled_samples", "attempts", "telemetry_note"},
  run = function(p)
    local case = cases[p.kernel]
    local spec = {grid = case.grid, block = BLOCK, args = case.args, mode = "hot", min_time_ms = 2000, max_noise_pct = 0.5,
      timeout_s = 6, telemetry = true}
    local t = case.kernel:measure(spec)
    -- a window the GPU was not busy through (an H200 once ran the first kernel 52% of it) holds idle
    -- power: measured again, once
    local attempts = 1
    if t.gpu_busy_pct and t.gpu_busy_pct < 90 then t, attempts = case.kernel:measure(spec), 2 end
    local row = {unit = case.unit, median_ms = t.median_ms, noise_pct = t.noise_pct, power_w = t.power_w,
      energy_j = t.energy_j, gpu_busy_pct = t.gpu_busy_pct, temperature_c = t.temperature_c, throttle_reasons = t.throttle_reasons,
      sm_clock_mhz = t.sm_clock_mhz, throttled_samples = t.throttled_samples, telemetry_note = t.telemetry_note,
      attempts = attempts,
      samples_ms = t.samples_ms}
    if t.energy_j then row.j_per_unit = t.energy_j / case.work end
    if t.power_w and t.median_ms then row.power_x_time_j = t.power_w * t.median_ms / 1000 end
    return row
  end,
}
gpuexp.print_table(rows, {"kernel", "unit", "median_ms", "power_w", "energy_j", "j_per_unit", "power_x_time_j",
  "gpu_busy_pct", "temperature_c", "throttle_reasons", "telemetry_note"})
if plan then print("OFFLINE PLAN: the kernels compiled; power and energy need the GPU") return end

local by = {}
for _, row in ipairs(rows) do by[row.kernel] = row end
if not by.triad.energy_j then
  print("no energy here: " .. tostring(by.triad.telemetry_note) .. " (the times above are measured)")
  return
end
local lesson = gpuexp.lesson()
local fma, mma = by.fp32_fma.j_per_unit, by.fp16_tensor.j_per_unit
-- J per TFLOP is pJ per FLOP
lesson:claim(mma and fma and mma * 3 < fma, string.format("the tensor cores spend %.2f pJ per FP16 FLOP, the CUDA cores " ..
  "%.2f pJ per FP32 FLOP: %.1fx less per FLOP", mma or 0, fma or 0, (fma or 0) / math.max(mma or 1, 1e-9)))
print(string.format("the DRAM triad: %.3f J per GB moved at %.0f W; FP32 FMA %.0f W; FP16 tensor %.0f W", by.triad.j_per_unit,
  by.triad.power_w, by.fp32_fma.power_w, by.fp16_tensor.power_w))
for _, row in ipairs(rows) do
  lesson:claim(row.energy_j and row.power_x_time_j and math.abs(row.energy_j / row.power_x_time_j - 1) < 0.15,
    string.format("%s: energy per launch %.4g J is its mean power %.0f W x its median time %.4g ms (%.4g J)", row.kernel,
      row.energy_j or 0, row.power_w or 0, row.median_ms or 0, row.power_x_time_j or 0))
end
lesson:report("tensor cores are the frugal way to a FLOP, and energy follows power x time")
