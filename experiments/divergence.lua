-- Seed 003, phase 1: branch divergence. The same FMA work per thread routed through four
-- branches chosen in five ways: none, whole warps (warp-aligned), half warps, by lane, and by the
-- data. A warp whose lanes take d branches runs them one after another: time grows with d, and the
-- branch efficiency (ncu's smsp__sass_average_branch_targets_threads_uniform.pct) falls.
--
--   gpuexp experiments/divergence.lua

local plan = gpuexp.plan
local dev = gpuexp.device()
local program = gpuexp.compile{file = "kernels/divergence.cu"}
local kernel = program:kernel("branches")
local N, WORK = 16 * 1024 * 1024, 64
local input = dev:alloc("f32", N):random{seed = 2}
local keys = dev:alloc("i32", N):random{seed = 3, min = 0, max = 1000}
local output = dev:alloc("f32", N)
local patterns = {"none", "warp_aligned", "half_warp", "per_lane", "data_dependent"}
local expected_paths = {none = 1, warp_aligned = 1, half_warp = 2, per_lane = 4, data_dependent = 4}
local constants = {{0.999, 0.001}, {0.998, 0.002}, {0.997, 0.003}, {0.996, 0.004}}
local out = gpuexp.out or "results/divergence.csv"

local rows = gpuexp.sweep{
  name = "divergence", out = out,
  axes = {{"pattern", patterns}},
  columns = {"paths_per_warp", "median_ms", "slowdown", "branch_efficiency_pct", "threads_per_instruction",
    "verified", "mode", "samples", "noise_pct", "sm_clock_mhz", "clock_throttled", "stop_reason"},
  run = function(p)
    local code = 0
    for i, name in ipairs(patterns) do if name == p.pattern then code = i - 1 end end
    local launch = {grid = N // 256, block = 256, args = {output, input, keys, gpuexp.i64(N), gpuexp.i32(code), gpuexp.i32(WORK)}}
    local row = {paths_per_warp = expected_paths[p.pattern]}
    kernel:launch(launch)
    if not plan then
      local ok = true
      for probe = 0, 127 do
        local i = (probe * 104729) % N
        local lane, warp = i % 32, i // 32
        local branch = code == 0 and 0 or code == 1 and warp % 4 or code == 2 and lane // 16 or code == 3 and lane % 4
          or keys[i + 1] % 4
        local v = input[i + 1]
        for _ = 1, WORK do v = v * constants[branch + 1][1] + constants[branch + 1][2] end
        ok = ok and math.abs(output[i + 1] - v) <= 1e-4
      end
      row.verified = ok
    end
    local t = kernel:measure{grid = launch.grid, block = launch.block, args = launch.args, min_time_ms = 100, timeout_s = 3}
    for _, c in ipairs(gpuexp.measure_columns) do row[c] = t[c] end
    row.median_ms = t.median_ms
    launch.metrics = {"smsp__sass_average_branch_targets_threads_uniform.pct", "smsp__thread_inst_executed_per_inst_executed.ratio"}
    local m = kernel:metrics(launch)
    if m then
      row.branch_efficiency_pct = m["smsp__sass_average_branch_targets_threads_uniform.pct"]
      row.threads_per_instruction = m["smsp__thread_inst_executed_per_inst_executed.ratio"]
    end
    return row
  end,
}
if not plan then
  for _, row in ipairs(rows) do row.slowdown = row.median_ms / rows[1].median_ms end
end
gpuexp.print_table(rows, {"pattern", "paths_per_warp", "median_ms", "slowdown", "branch_efficiency_pct",
  "threads_per_instruction", "verified", "status"})
if plan then print("OFFLINE PLAN: kernel compiled, launches checked; no timings or counters") return end
if gpuexp.run_options and gpuexp.run_options.only then -- the lesson compares every point
  print("a partial run (--only): the table above, no lesson")
  return
end
local plot, why = gpuexp.try_plot(gpuexp.plot, {rows = rows, x = "paths_per_warp", y = "median_ms", by = "pattern", out = out:gsub("%.csv$", ".png"),
  title = "divergence: time vs branches per warp (" .. dev.name .. ")"})
print("wrote " .. out .. (plot and (" and " .. plot) or (" (plot not written: " .. why .. ")")))
local lesson = gpuexp.lesson()
local by = {}
for _, row in ipairs(rows) do
  gpuexp.check(row.verified, "%s computes the right chains", row.pattern)
  by[row.pattern] = row
  print(string.format("%-15s %d path(s) per warp: %.2fx the time of no divergence, %.1f active threads per instruction",
    row.pattern, row.paths_per_warp, row.slowdown, row.threads_per_instruction or 0))
end
lesson:expect(by.warp_aligned.slowdown < 1.1, "whole-warp branches cost (almost) nothing")
lesson:expect(by.half_warp.slowdown > 1.3, "two paths per warp cost time")
lesson:expect(by.per_lane.slowdown > by.half_warp.slowdown, "four paths per warp cost more than two")
if by.per_lane.threads_per_instruction then
  lesson:expect(by.per_lane.threads_per_instruction < by.half_warp.threads_per_instruction and
    by.half_warp.threads_per_instruction < by.none.threads_per_instruction, "fewer active threads per instruction as paths grow")
end
lesson:report("a warp pays for every branch its lanes take; whole-warp branches cost nothing")
