-- Does dropping throttled batches lower the noise? The same kernel measured alternately with the
-- policy's throttle handling on (throttle_pct 90) and off (0), several rounds, on the kernels most
-- likely to meet the power cap (FP16 tensor chains, then FP32 FMA chains) and a DRAM triad. Per
-- measurement: noise, median time and cycles, the clock's range, samples dropped, NVML's reasons.
--   gpuexp --inline bench/throttle.lua [ROUNDS]
local dev = gpuexp.device()
local rounds = tonumber(arg[1]) or 4
local sms = dev.sm_count
local nightly = gpuexp.compile{file = "../kernels/nightly.cu"}
local tensor_program = gpuexp.compile{file = "../kernels/tensor_cores.cu"}
local N = 64 * 1024 * 1024
local a, b, c = dev:alloc("f32", N), dev:alloc("f32", N):random{seed = 1}, dev:alloc("f32", N):random{seed = 2}
local out = dev:alloc("f32", sms * 8 * 256)
local ones = dev:alloc("f32", 256):fill(1)
local cases = {
  {"fp16_tensor", tensor_program:kernel("rate_f16"), sms * 8, {ones, ones, out, gpuexp.i32(4096)}},
  {"fp32_fma", nightly:kernel("fma_chain"), sms * 8, {out, gpuexp.i32(16384), gpuexp.f32(0.999), gpuexp.f32(0.001)}},
  {"triad", nightly:kernel("triad"), sms * 32, {a, b, c, gpuexp.f32(1.5), gpuexp.u64(N), gpuexp.i32(1)}},
}
local rows = {}
for _, case in ipairs(cases) do
  local name, kernel, grid, args = table.unpack(case)
  for round = 1, rounds do
    for _, pct in ipairs({90, 0}) do
      local t = kernel:measure{grid = grid, block = 256, args = args, mode = "hot", min_time_ms = 3000, max_noise_pct = 0,
        timeout_s = 3, throttle_pct = pct, telemetry = true}
      rows[#rows + 1] = {kernel = name, round = round, throttle_pct = pct, median_ms = t.median_ms, noise_pct = t.noise_pct,
        median_cycles = t.median_cycles, samples = t.samples, throttled_samples = t.throttled_samples,
        clock_min = t.sm_clock_min_mhz, clock_median = t.sm_clock_mhz, power_w = t.power_w,
        reasons = t.throttle_reasons or t.telemetry_note}
    end
  end
end
gpuexp.print_table(rows, {"kernel", "round", "throttle_pct", "median_ms", "noise_pct", "median_cycles", "samples",
  "throttled_samples", "clock_min", "clock_median", "power_w", "reasons"})
for _, case in ipairs(cases) do
  local on, off, dropped = {}, {}, 0
  for _, r in ipairs(rows) do
    if r.kernel == case[1] then
      if r.throttle_pct == 90 then on[#on + 1] = r.noise_pct; dropped = dropped + r.throttled_samples
      else off[#off + 1] = r.noise_pct end
    end
  end
  print(string.format("%s: median noise %.3f%% with throttled batches dropped (%d samples dropped), %.3f%% with all kept",
    case[1], gpuexp.stats(on).median, dropped, gpuexp.stats(off).median))
end
