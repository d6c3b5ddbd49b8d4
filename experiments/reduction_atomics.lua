-- Seed 004, phase 2: why a contended atomic is slow, seen in the counters. The seed's case is a
-- float sum of 4M elements: its v1 adds every element to one total with an atomic (4M atomics on
-- one address) and its v4 sums each warp with shuffles, then each block in shared memory, then
-- does one atomic per block. The seed measured v1 218x slower on an L4, with the slowness in the
-- counters as lg_throttle (the load/store unit held back on the atomic path), an L2 hit rate near
-- 89% (every thread hits the total's line) and an idle DRAM, at the same achieved occupancy.
--
-- The same three shapes on 4M integers are kept as a second, different lesson: the hardware merges
-- same-address integer atomics, so an integer atomic per thread costs only a few times more.
--
--   gpuexp experiments/reduction_atomics.lua [elements] [block]

local N = math.tointeger(tonumber(arg[1] or "")) or 4 * 1024 * 1024
local BLOCK = math.tointeger(tonumber(arg[2] or "")) or 256
local plan = gpuexp.plan
local dev = gpuexp.device()
local program = gpuexp.compile{file = "kernels/reduction.cu"}
local shapes = {"atomic_per_block", "atomic_per_warp", "atomic_per_thread"} -- per block first: the reference

-- Inputs whose sum is exact in any order: integers 0..3, so every partial sum is an integer below
-- 2^24 and a float holds it exactly. The float and integer sums must both be the host's sum.
local host = gpuexp.host("f32", N)
local expected = 0
for i = 1, N do
  local v = (i * 7919) % 4
  host[i] = v
  expected = expected + v
end
assert(expected < 2 ^ 24, "the float sum is exact only below 2^24: use fewer elements")
local inputs = {float = dev:alloc("f32", N):copy_from(host), int = dev:alloc("i32", N):random{seed = 4, min = 0, max = 9}}
local totals = {float = dev:alloc("f32", 1), int = dev:alloc("i32", 1)}
local int_expected
if not plan then
  int_expected = 0
  local values = gpuexp.host("i32", N):copy_from(inputs.int)
  for i = 1, N do int_expected = int_expected + values[i] end
end

local reasons = gpuexp.stall_reasons
local columns = {"kernel", "median_ms", "slowdown_vs_per_block", "sum", "verified", "dram_throughput_pct",
  "l2_hit_rate_pct", "achieved_occupancy_pct", "theoretical_occupancy_pct", "warp_cycles_per_issue", "dominant_stall",
  "lg_throttle_pct"}
for _, reason in ipairs(reasons) do columns[#columns + 1] = "stall_" .. reason end

local block_ms = {} -- each type's atomic_per_block time, the reference for its slowdowns
local rows = gpuexp.sweep{
  name = "reduction_atomics",
  axes = {{"type", {"float", "int"}}, {"shape", shapes}},
  columns = columns,
  meta = {elements = N, block = BLOCK},
  run = function(p)
    local name = (p.type == "float" and "float_" or "") .. p.shape
    local kernel = program:kernel(name)
    local total = totals[p.type]
    local launch = {grid = (N + BLOCK - 1) // BLOCK, block = BLOCK, args = {total, inputs[p.type], gpuexp.i32(N)}}
    total:fill(0)
    kernel:launch(launch)
    local row = {kernel = name}
    local want = p.type == "float" and expected or int_expected
    if not plan then
      row.sum = total[1]
      row.verified = row.sum == want
    end
    local t = kernel:time{grid = launch.grid, block = launch.block, args = launch.args, warmup = 5, reps = 50}
    row.median_ms = t.median_ms
    if p.shape == "atomic_per_block" then block_ms[p.type] = t.median_ms end
    if t.median_ms and block_ms[p.type] then row.slowdown_vs_per_block = t.median_ms / block_ms[p.type] end
    total:fill(0)
    launch.metrics = {"memory", "occupancy", "warp_stalls"}
    local m, why = kernel:metrics(launch)
    if m then
      gpuexp.check(total[1] == want, "after the replay passes the total is one launch's sum (%s), got %s", want, total[1])
      row.dram_throughput_pct = m["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
      row.l2_hit_rate_pct = m["lts__t_sector_hit_rate.pct"]
      row.achieved_occupancy_pct = m.achieved_occupancy_pct
      row.theoretical_occupancy_pct = m.theoretical_occupancy_pct
      row.warp_cycles_per_issue = m["smsp__average_warp_latency_per_inst_issued.ratio"]
      row.dominant_stall = m.dominant_stall
      local all = 0
      for _, reason in ipairs(reasons) do
        local value = m["smsp__average_warps_issue_stalled_" .. reason .. "_per_issue_active.ratio"]
        row["stall_" .. reason] = value
        if value and reason ~= "selected" then all = all + value end
      end
      -- as ncu's stall chart shows it: lg_throttle's share of all stall cycles
      row.lg_throttle_pct = all > 0 and 100 * (row.stall_lg_throttle or 0) / all or nil
    elseif not plan then
      row.status, row.error = "no_metrics", why
    end
    return row
  end,
}

local by = {}
for _, row in ipairs(rows) do by[row.type .. "/" .. row.shape] = row end
gpuexp.print_table(rows, {"type", "shape", "median_ms", "slowdown_vs_per_block", "verified", "dram_throughput_pct",
  "l2_hit_rate_pct", "achieved_occupancy_pct", "dominant_stall", "lg_throttle_pct", "status"})
if plan then
  print("OFFLINE PLAN: kernels compiled and launches checked; no counters or timings")
  return
end
if gpuexp.run_options and gpuexp.run_options.only then -- the lesson compares every point
  print("a partial run (--only): the table above, no lesson")
  return
end
for _, row in ipairs(rows) do gpuexp.check(row.verified, "%s gives the exact sum (%s), got %s", row.kernel,
  row.type == "float" and expected or int_expected, row.sum) end

-- The seed's lesson, on the seed's case (float, v1 = atomic_per_thread, v4 = atomic_per_block)
local v1, v4 = by["float/atomic_per_thread"], by["float/atomic_per_block"]
local lesson = gpuexp.lesson()
lesson:claim(v1.slowdown_vs_per_block > 100, string.format("float: an atomic per thread is over 100x slower than " ..
  "shuffles and one atomic per block (%.0fx; the seed: 218x)", v1.slowdown_vs_per_block))
if v1.dominant_stall then
  lesson:claim((v1.stall_lg_throttle or 0) >= 10 and (v4.stall_lg_throttle or 0) < 1, string.format("lg_throttle, " ..
    "the load/store unit held back on the atomic path, appears in v1 and not in v4 (%.1f and %.1f cycles per issue; " ..
    "the seed: 31.1%% and 0%% of stalls)", v1.stall_lg_throttle or 0, v4.stall_lg_throttle or 0))
  lesson:claim(v4.dominant_stall == "long_scoreboard", string.format("float v4's dominant stall is long_scoreboard " ..
    "(%s; the seed: 84.6%%)", v4.dominant_stall))
  lesson:claim(v1.l2_hit_rate_pct > v4.l2_hit_rate_pct + 50, string.format("v1 hits the L2 (%.1f%% against v4's " ..
    "%.1f%%; the seed: 88.7%% and 0.95%%)", v1.l2_hit_rate_pct, v4.l2_hit_rate_pct))
  lesson:claim(v4.dram_throughput_pct > 10 * v1.dram_throughput_pct, string.format("v1 leaves DRAM idle (%.2f%% " ..
    "against v4's %.1f%%; the seed: 0.46%% and 88.2%%)", v1.dram_throughput_pct, v4.dram_throughput_pct))
  lesson:claim(v1.achieved_occupancy_pct >= v4.achieved_occupancy_pct - 5, string.format("the slowness is not " ..
    "occupancy: v1's warps are resident (%.1f%% achieved against v4's %.1f%%; the seed: 91.2%% and 91.9%%)",
    v1.achieved_occupancy_pct, v4.achieved_occupancy_pct))
  print(string.format("\nv1's dominant stall on this GPU is %s (lg_throttle is %.1f%% of its stall cycles). The seed's L4 " ..
    "(sm_89) showed lg_throttle dominant at 31.1%%.", v1.dominant_stall, v1.lg_throttle_pct or 0))
end
local int1 = by["int/atomic_per_thread"]
print(string.format("\nSecond lesson, integers: an integer atomic per thread is only %.1fx slower than one per block " ..
  "(dominant stall %s): the hardware merges same-address integer atomics, which it cannot do for float adds.",
  int1.slowdown_vs_per_block or 0, tostring(int1.dominant_stall)))
lesson:report(string.format("float sum: an atomic per thread is %.0fx slower than warp shuffles with one atomic per " ..
  "block; the counters show the serialization on one L2 line (lg_throttle in v1 only, L2 hits, DRAM idle), not a " ..
  "lack of occupancy", v1.slowdown_vs_per_block))
