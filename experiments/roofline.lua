-- Seeds 001 and 003: the roofline. One kernel whose FLOPs per byte is a parameter (k FMAs on every
-- `every`-th element loaded; 16-byte loads, so its low-intensity points reach the copy bandwidth),
-- swept from 1/16 to 256 FLOP/byte in FP32 and FP64, against the roofs this GPU measured
-- (gpuexp calibrate). The knee, where the measured points leave the memory roof
-- for the compute roof, is compared with peak / bandwidth. FLOPs are counted as ncu counts them
-- (CUPTI roofline metrics) beside the analytic count.
--
--   gpuexp experiments/roofline.lua

local plan = gpuexp.plan
local dev = gpuexp.device()
local program = gpuexp.compile{file = "kernels/roofline.cu", names = {"intensity<float>", "intensity<double>"}}
local N = 32 * 1024 * 1024
local out = gpuexp.out or "results/roofline.csv"
local intensities = {1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8, 16, 32, 64, 128, 256}
local buffers = {
  fp32 = {x = dev:alloc("f32", N):random{seed = 1, min = 0, max = 1}, y = dev:alloc("f32", N), size = 4, scalar = gpuexp.f32},
  fp64 = {x = dev:alloc("f64", N):random{seed = 1, min = 0, max = 1}, y = dev:alloc("f64", N), size = 8, scalar = gpuexp.f64},
}
local ceilings = not plan and gpuexp.calibrate{} or nil

-- k FMAs on one element in `every` give (2k + 6) / (every x 2 x size) FLOP/byte
local roofline = dofile(gpuexp.resolve("kernels/roofline_shape.lua"))

local rows = gpuexp.sweep{
  name = "roofline", out = out,
  axes = {{"precision", {"fp32", "fp64"}}, {"intensity", intensities}},
  columns = {"k", "every", "flops", "bytes", "flop_per_byte", "median_ms", "gflops", "counted_flops", "dram_bytes",
    "measured_intensity", "verified", "mode", "samples", "noise_pct", "sm_clock_mhz", "clock_throttled", "stop_reason"},
  run = function(p)
    local b = buffers[p.precision]
    local k, every = roofline.shape(p.intensity, b.size)
    local kernel = program:kernel(p.precision == "fp32" and "intensity<float>" or "intensity<double>")
    local launch = {grid = N // 4 // 256, block = 256, args = {b.y, b.x, gpuexp.i32(N), gpuexp.i32(k), gpuexp.i32(every),
      b.scalar(roofline.A), b.scalar(roofline.B)}}
    local row = {k = k, every = every, flops = (2 * k + 6) * ((N + every - 1) // every), bytes = 2 * N * b.size}
    row.flop_per_byte = row.flops / row.bytes
    kernel:launch(launch)
    if not plan then row.verified = roofline.verify(b.y, b.x, N, k, every) end -- the chain in double on the host
    local t = kernel:measure{grid = launch.grid, block = launch.block, args = launch.args, mode = "hot", min_time_ms = 100,
      timeout_s = 3}
    for _, c in ipairs(gpuexp.measure_columns) do row[c] = t[c] end
    row.median_ms = t.median_ms
    if t.median_ms then row.gflops = row.flops / (t.median_ms * 1e-3) / 1e9 end
    launch.metrics = "roofline"
    local m = kernel:metrics(launch)
    if m then
      row.counted_flops = p.precision == "fp32" and m.fp32_flop or m.fp64_flop
      row.dram_bytes = m.dram_bytes
      row.measured_intensity = row.counted_flops / m.dram_bytes
    end
    return row
  end,
}
gpuexp.print_table(rows, {"precision", "intensity", "flop_per_byte", "k", "every", "median_ms", "gflops", "counted_flops", "flops",
  "measured_intensity", "verified", "status"})
if plan then print("OFFLINE PLAN: kernels compiled, launches checked; no timings or counters") return end
local plot, why = gpuexp.try_plot(gpuexp.roofline_plot, {rows = rows, flops = "flops", bytes = "bytes", time_ms = "median_ms",
  by = "precision", peak_gflops = ceilings.fp32_gflops, peak_gbps = ceilings.dram_copy_gbps, out = out:gsub("%.csv$", ".png"),
  ceiling_source = "measured by gpuexp calibrate"})
print("wrote " .. out .. (plot and (" and " .. plot) or (" (plot not written: " .. why .. ")")))

for _, row in ipairs(rows) do
  gpuexp.check(row.verified, "%s at %g FLOP/byte computes the FMA chain", row.precision, row.intensity)
end
-- the knee: the best memory-bound slope (GFLOP/s per FLOP/byte, i.e. GB/s) against the best rate
local roofs = {}
for _, precision in ipairs({"fp32", "fp64"}) do
  local bandwidth, peak = 0, 0
  for _, row in ipairs(rows) do
    if row.precision == precision then
      bandwidth = math.max(bandwidth, row.gflops / row.flop_per_byte)
      peak = math.max(peak, row.gflops)
    end
  end
  roofs[precision] = {bandwidth = bandwidth, peak = peak, knee = peak / bandwidth}
  print(string.format("%s: memory roof %.0f GB/s (copy ceiling %.0f), compute roof %.0f GFLOP/s, knee %.1f FLOP/byte%s",
    precision, bandwidth, ceilings.dram_copy_gbps, peak, peak / bandwidth, precision == "fp32" and
    string.format(" (calibrated peak / bandwidth: %.1f)", ceilings.fp32_gflops / ceilings.dram_copy_gbps) or ""))
end
local lesson = gpuexp.lesson()
local fp32, calibrated = roofs.fp32, ceilings.fp32_gflops / ceilings.dram_copy_gbps
lesson:claim(fp32.bandwidth >= 0.9 * ceilings.dram_copy_gbps, string.format("the low-intensity FP32 points sit on the " ..
  "memory roof: %.0f GB/s, within 10%% of the %.0f GB/s copy ceiling", fp32.bandwidth, ceilings.dram_copy_gbps))
lesson:claim(math.abs(fp32.knee - calibrated) <= 0.15 * calibrated, string.format("the measured FP32 knee " ..
  "(%.1f FLOP/byte) is within 15%% of the calibrated one (%.1f)", fp32.knee, calibrated))
local counted_ok = true
for _, row in ipairs(rows) do
  if row.counted_flops and math.abs(row.counted_flops - row.flops) > 0.001 * row.flops then counted_ok = false end
end
lesson:claim(counted_ok, "ncu's FLOP count equals the analytic one at every point")
lesson:report("the points follow the two roofs, and the knee is the GPU's")
