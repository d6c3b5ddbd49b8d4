-- Seed 004, phase 2: summing 4M integers with one atomic per thread, one per warp (after a warp
-- shuffle) and one per block (shuffles, then shared memory). Time, speed-up, DRAM throughput, L2
-- hit rate, achieved occupancy and the full warp-stall distribution per variant: a contended
-- atomic shows up as a stall fingerprint, not only as time.
--
--   gpuexp experiments/reduction_atomics.lua [elements] [block]

local N = math.tointeger(tonumber(arg[1] or "")) or 4 * 1024 * 1024
local BLOCK = math.tointeger(tonumber(arg[2] or "")) or 256
local plan = gpuexp.plan
local dev = gpuexp.device()
local program = gpuexp.compile{file = "kernels/reduction.cu"}
local variants = {"atomic_per_thread", "atomic_per_warp", "atomic_per_block"}

local input = dev:alloc("i32", N):random{seed = 4, min = 0, max = 9}
local total = dev:alloc("i32", 1)
local expected
if not plan then -- the exact sum, on the host
  expected = 0
  local host = gpuexp.host("i32", N):copy_from(input)
  for i = 1, N do expected = expected + host[i] end
end

local reasons = gpuexp.stall_reasons
local columns = {"median_ms", "speedup", "sum", "verified", "dram_throughput_pct", "l2_hit_rate_pct",
  "achieved_occupancy_pct", "theoretical_occupancy_pct", "warp_cycles_per_issue", "dominant_stall"}
for _, reason in ipairs(reasons) do columns[#columns + 1] = "stall_" .. reason end

local baseline_ms
local rows = gpuexp.sweep{
  name = "reduction_atomics",
  axes = {{"variant", variants}},
  columns = columns,
  meta = {elements = N, block = BLOCK},
  run = function(p)
    local kernel = program:kernel(p.variant)
    local launch = {grid = (N + BLOCK - 1) // BLOCK, block = BLOCK, args = {total, input, gpuexp.i32(N)}}
    total:fill(0)
    kernel:launch(launch)
    local row = {}
    if not plan then
      row.sum = total[1]
      row.verified = row.sum == expected
    end
    local t = kernel:time{grid = launch.grid, block = launch.block, args = launch.args, warmup = 5, reps = 50}
    row.median_ms = t.median_ms
    if t.median_ms then
      baseline_ms = baseline_ms or t.median_ms
      row.speedup = baseline_ms / t.median_ms
    end
    total:fill(0)
    launch.metrics = {"memory", "occupancy", "warp_stalls"}
    local m, why = kernel:metrics(launch)
    if m then
      gpuexp.check(total[1] == expected, "after the replay passes the total is one launch's sum (%d), got %d",
        expected, total[1])
      row.dram_throughput_pct = m["dram__throughput.avg.pct_of_peak_sustained_elapsed"]
      row.l2_hit_rate_pct = m["lts__t_sector_hit_rate.pct"]
      row.achieved_occupancy_pct = m.achieved_occupancy_pct
      row.theoretical_occupancy_pct = m.theoretical_occupancy_pct
      row.warp_cycles_per_issue = m["smsp__average_warp_latency_per_inst_issued.ratio"]
      row.dominant_stall = m.dominant_stall
      for _, reason in ipairs(reasons) do
        row["stall_" .. reason] = m["smsp__average_warps_issue_stalled_" .. reason .. "_per_issue_active.ratio"]
      end
    elseif not plan then
      row.status, row.error = "no_metrics", why
    end
    return row
  end,
}

gpuexp.print_table(rows, {"variant", "median_ms", "speedup", "verified", "dram_throughput_pct", "l2_hit_rate_pct",
  "achieved_occupancy_pct", "dominant_stall", "stall_lg_throttle", "stall_long_scoreboard", "status"})
if plan then
  print("OFFLINE PLAN: kernels compiled and launches checked; no counters or timings")
  return
end
local by = {}
for _, row in ipairs(rows) do by[row.variant] = row end
local lesson = gpuexp.lesson()
for _, name in ipairs(variants) do gpuexp.check(by[name].verified, "%s gives the exact sum", name) end
lesson:expect(by.atomic_per_block.speedup and by.atomic_per_block.speedup > 10,
  string.format("one atomic per block is over 10x faster than one per thread (%.1fx; the seed's L4: 218x)", by.atomic_per_block.speedup or 0))
if by.atomic_per_thread.dominant_stall then
  print(string.format("\nstall fingerprints: per thread %s (%.1f cycles per issue), per warp %s, per block %s; the seed's L4 " ..
    "showed lg_throttle for the atomics and long_scoreboard for the shuffle", by.atomic_per_thread.dominant_stall,
    by.atomic_per_thread.warp_cycles_per_issue, by.atomic_per_warp.dominant_stall, by.atomic_per_block.dominant_stall))
  lesson:expect(by.atomic_per_thread.dominant_stall ~= by.atomic_per_block.dominant_stall,
    "the atomic-per-thread kernel stalls on something else than the block reduction")
end
lesson:report(string.format("warp shuffles with one atomic per block are %.0fx faster than an atomic per thread",
  by.atomic_per_block.speedup or 0))
