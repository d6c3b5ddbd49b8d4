-- Seeds 001 and 003: the hierarchical roofline (ncu's). The roofline kernel at several FLOP per
-- byte, over a DRAM-sized working set and an L2-resident one; for each point, FLOPs against the
-- bytes moved at L1, L2 and DRAM (counters), and three memory roofs this GPU measured (gpuexp
-- calibrate: shared/L1, L2, DRAM copy). A point is bound by the level whose roof it sits on: the
-- L2-resident points run faster than DRAM could feed them, because the L2 does. The L2-resident
-- set (8 MB) is swept 64 times per launch, loads from the L2 past L1 (intensity_passes): one
-- sweep is a few microseconds, mostly launch and tail, and ran at 43% of the L2's bandwidth.
--
--   gpuexp experiments/hierarchical_roofline.lua

local plan = gpuexp.plan
local dev = gpuexp.device()
local program = gpuexp.compile{file = "kernels/roofline.cu", names = {"intensity_passes<float>"}}
local kernel = program:kernel("intensity_passes<float>")
local out = gpuexp.out or "results/hierarchical_roofline.csv"
-- floats per array, and sweeps per launch: 512 MB from DRAM (ten times the L2, so the writes a
-- launch leaves in the L2 are a small part of its DRAM bytes), and 8 MB 64 times from the L2
local sets = {dram = {n = 64 * 1024 * 1024, passes = 1}, l2 = {n = 1024 * 1024, passes = 64}}
for _, set in pairs(sets) do
  set.x, set.y = dev:alloc("f32", set.n):random{seed = 3, min = 0, max = 1}, dev:alloc("f32", set.n)
end
local ceilings = not plan and gpuexp.calibrate{} or nil
if ceilings then gpuexp.check(ceilings.l2_gbps, "gpuexp calibrate measured no L2 ceiling on this GPU (see its message)") end

-- k FMAs on one element in `every` give (2k + 6) / (every x 8) FLOP/byte for floats
local roofline = dofile(gpuexp.resolve("kernels/roofline_shape.lua"))

local rows = gpuexp.sweep{
  name = "hierarchical_roofline", out = out,
  axes = {{"working_set", {"dram", "l2"}}, {"intensity", {0.25, 1, 4, 16, 64}}},
  columns = {"k", "every", "passes", "flops", "median_ms", "gflops", "l1_bytes", "l2_bytes", "dram_bytes", "l1_intensity",
    "l2_intensity", "dram_intensity", "l2_gbps", "dram_gbps", "verified", "mode", "samples", "noise_pct", "sm_clock_mhz",
    "clock_throttled", "stop_reason"},
  run = function(p)
    local b = sets[p.working_set]
    local k, every = roofline.shape(p.intensity, 4)
    local launch = {grid = b.n // 4 // 256, block = 256, args = {b.y, b.x, gpuexp.i32(b.n), gpuexp.i32(k), gpuexp.i32(every),
      gpuexp.f32(roofline.A), gpuexp.f32(roofline.B), gpuexp.i32(b.passes)}}
    local row = {k = k, every = every, passes = b.passes, flops = (2 * k + 6) * ((b.n + every - 1) // every) * b.passes}
    kernel:launch(launch)
    if not plan then row.verified = roofline.verify(b.y, b.x, b.n, k, every) end -- the chain in double on the host
    local spec = {mode = "auto", min_time_ms = 100, timeout_s = 3}
    for key, value in pairs(launch) do spec[key] = value end
    local t = kernel:measure(spec)
    for _, c in ipairs(gpuexp.measure_columns) do row[c] = t[c] end
    row.median_ms = t.median_ms
    if t.median_ms then row.gflops = row.flops / (t.median_ms * 1e-3) / 1e9 end
    -- counters as the timed launches ran: the L2-resident set with a warm L2 (no flush)
    launch.metrics = "hierarchical_roofline"
    launch.flush_l2 = p.working_set == "dram"
    local m = kernel:metrics(launch)
    if m then
      row.l1_bytes, row.l2_bytes, row.dram_bytes = m["l1tex__t_bytes.sum"], m["lts__t_bytes.sum"], m["dram__bytes.sum"]
      for _, level in ipairs({"l1", "l2", "dram"}) do
        local bytes = row[level .. "_bytes"]
        row[level .. "_intensity"] = bytes and bytes > 0 and row.flops / bytes or nil
      end
      if t.median_ms then
        row.l2_gbps = row.l2_bytes / (t.median_ms * 1e-3) / 1e9
        row.dram_gbps = row.dram_bytes / (t.median_ms * 1e-3) / 1e9
      end
    end
    return row
  end,
}
gpuexp.print_table(rows, {"working_set", "intensity", "gflops", "l1_intensity", "l2_intensity", "dram_intensity", "l2_gbps",
  "dram_gbps", "verified"})
if plan then print("OFFLINE PLAN: the kernel compiled, launches checked; no timings or counters") return end
if gpuexp.run_options and gpuexp.run_options.only then print("a partial run (--only): the table above, no lesson") return end
for _, row in ipairs(rows) do
  gpuexp.check(row.verified, "the %s set at %g FLOP/byte computes the FMA chain", row.working_set, row.intensity)
end

-- one plotted point per level: FLOPs over that level's bytes
local plotted = {}
for _, row in ipairs(rows) do
  for _, level in ipairs({"l1", "l2", "dram"}) do
    plotted[#plotted + 1] = {series = row.working_set .. " set, " .. level:upper() .. " bytes", flops = row.flops,
      bytes = row[level .. "_bytes"], time_ms = row.median_ms}
  end
end
local plot, why = gpuexp.try_plot(gpuexp.roofline_plot, {rows = plotted, flops = "flops", bytes = "bytes", time_ms = "time_ms",
  by = "series", peak_gflops = ceilings.fp32_gflops, peak_gbps = ceilings.dram_copy_gbps, roof_name = "DRAM",
  roofs = {{name = "L2", gbps = ceilings.l2_gbps}, {name = "L1/shared", gbps = ceilings.shared_gbps}},
  out = out:gsub("%.csv$", ".png"), ceiling_source = "measured by gpuexp calibrate"})
print("wrote " .. out .. (plot and (" and " .. plot) or (" (plot not written: " .. why .. ")")))
print(string.format("roofs: DRAM %.0f GB/s, L2 %.0f GB/s, L1/shared %.0f GB/s, FP32 %.0f GFLOP/s", ceilings.dram_copy_gbps,
  ceilings.l2_gbps, ceilings.shared_gbps, ceilings.fp32_gflops))

local at = {}
for _, row in ipairs(rows) do at[row.working_set .. row.intensity] = row end
local dram_low, l2_low = at["dram0.25"], at["l20.25"]
if not (dram_low.dram_gbps and l2_low.l2_gbps) then print("no counters here: the table above, no lesson") return end
local lesson = gpuexp.lesson()
lesson:claim(dram_low.dram_gbps > 0.85 * ceilings.dram_copy_gbps, string.format("the DRAM-sized set at 1/4 FLOP/byte sits " ..
  "on the DRAM roof (%.0f GB/s of DRAM traffic against the %.0f GB/s roof)", dram_low.dram_gbps, ceilings.dram_copy_gbps))
lesson:claim(l2_low.l2_gbps > ceilings.dram_copy_gbps, string.format("the L2-resident set moves more through the L2 than " ..
  "DRAM could (%.0f GB/s against the %.0f GB/s DRAM roof)", l2_low.l2_gbps, ceilings.dram_copy_gbps))
lesson:claim(l2_low.dram_intensity == nil or l2_low.dram_intensity > 10 * l2_low.l2_intensity, string.format("its DRAM " ..
  "intensity is far right of its L2 intensity (%s against %.2f FLOP/byte): the L2 roof binds it, not DRAM's",
  l2_low.dram_intensity and string.format("%.1f", l2_low.dram_intensity) or "no DRAM bytes", l2_low.l2_intensity))
lesson:report("each point is bound by the level whose roof it sits on")
