-- Seed 003, phase 5: async copy. A block streams tiles of its input through shared memory and
-- works on each; synchronously (load, wait, work) or with cp.async in 1 to 4 stages, the loads of
-- the next tiles in flight while this one is worked on. One block of 256 threads per SM, so there
-- are too few warps to hide DRAM latency by switching: the pipeline has to. Time, achieved
-- bandwidth, and the stall shift (long_scoreboard, waiting on loads, to barrier and other),
-- every sum checked against the host. On sm_90 and newer also the TMA unit's bulk copy
-- (cp.async.bulk, one thread per tile, an mbarrier per stage) in 2 and 4 stages.
--
--   gpuexp experiments/async_copy.lua [work]

local plan = gpuexp.plan
local dev = gpuexp.device()
local WORK = math.tointeger(tonumber(arg[1] or "")) or 4
local BLOCK, TILES = 256, 256
local sms = plan and 132 or dev.sm_count
local arch = plan and gpuexp.offline_arch or dev.arch
local cc = tonumber(arch:match("sm_(%d+)"))
local has_async, has_bulk = cc >= 80, cc >= 90 -- cp.async came with sm_80, the TMA unit with sm_90
local programs = {sync = gpuexp.compile{file = "kernels/async_copy.cu", defines = {STAGES = 0}}}
for stages = 1, has_async and 4 or 0 do
  programs["async_" .. stages] = gpuexp.compile{file = "kernels/async_copy.cu", defines = {STAGES = stages}}
end
for _, stages in ipairs(has_bulk and {2, 4} or {}) do
  programs["tma_" .. stages] = gpuexp.compile{file = "kernels/async_copy.cu", defines = {STAGES = stages, BULK = 1}}
end
local elements = sms * TILES * BLOCK * 4 -- floats; 16 bytes per thread per tile
local input = dev:alloc("f32", elements):random{seed = 9, min = 0, max = 1}
local output = dev:alloc("f32", sms * BLOCK)
local bytes = elements * 4

-- the host's sum for a few threads of a few blocks
local function expected(block, thread)
  local other = (thread * 7 + 3) % BLOCK
  local acc = 0
  for k = 0, TILES - 1 do
    local first = ((block * TILES + k) * BLOCK + other) * 4
    local values = input:to_table(first + 1, 4)
    local s = values[1] + values[2] + values[3] + values[4]
    for _ = 1, WORK do s = s * 0.999 + 0.001 end
    acc = acc + s
  end
  return acc
end
local probes = {{0, 0}, {0, 255}, {sms // 2, 17}, {sms - 1, 128}}
local references = {}
if not plan then for i, p in ipairs(probes) do references[i] = expected(p[1], p[2]) end end

local variants = {"sync", "async_1", "async_2", "async_3", "async_4", "tma_2", "tma_4"}
local rows = gpuexp.sweep{
  name = "async_copy",
  axes = {{"variant", variants}},
  columns = {"stages", "median_ms", "gbps", "speedup_vs_sync", "verified", "long_scoreboard_pct", "barrier_pct",
    "dominant_stall", "achieved_occupancy_pct", "mode", "samples", "noise_pct", "sm_clock_mhz", "clock_throttled",
    "stop_reason"},
  run = function(p)
    local stages = p.variant == "sync" and 0 or tonumber(p.variant:match("%d"))
    if not programs[p.variant] then
      return {stages = stages, status = "skipped", error = (p.variant:match("^tma") and "the TMA unit (cp.async.bulk) " ..
        "needs sm_90" or "cp.async needs sm_80") .. " or newer; this is " .. arch}
    end
    local kernel = programs[p.variant]:kernel("tiled")
    local launch = {grid = sms, block = BLOCK, shared = 16 * BLOCK * math.max(stages, 1),
      args = {input, output, gpuexp.i32(TILES), gpuexp.i32(WORK)}}
    kernel:launch(launch)
    local row = {stages = stages}
    if not plan then
      local ok = true
      for i, probe in ipairs(probes) do
        local got = output[probe[1] * BLOCK + probe[2] + 1]
        ok = ok and math.abs(got - references[i]) <= 1e-4 * math.abs(references[i]) + 1e-3
      end
      row.verified = ok
    end
    local spec = {mode = "hot", min_time_ms = 100, timeout_s = 3}
    for k, v in pairs(launch) do spec[k] = v end
    local t = kernel:measure(spec)
    for _, c in ipairs(gpuexp.measure_columns) do row[c] = t[c] end
    row.median_ms = t.median_ms
    if t.median_ms then row.gbps = bytes / (t.median_ms * 1e-3) / 1e9 end
    launch.metrics = {"warp_stalls", "occupancy"}
    local m = kernel:metrics(launch)
    if m then
      local total = 0
      for _, reason in ipairs(gpuexp.stall_reasons) do
        local v = m["smsp__average_warps_issue_stalled_" .. reason .. "_per_issue_active.ratio"]
        if v and reason ~= "selected" then total = total + v end
      end
      local function share(reason)
        local v = m["smsp__average_warps_issue_stalled_" .. reason .. "_per_issue_active.ratio"] or 0
        return total > 0 and 100 * v / total or nil
      end
      row.long_scoreboard_pct, row.barrier_pct = share("long_scoreboard"), share("barrier")
      row.dominant_stall, row.achieved_occupancy_pct = m.dominant_stall, m.achieved_occupancy_pct
    end
    return row
  end,
}
local sync = rows[1]
for _, row in ipairs(rows) do
  if row.median_ms and sync.median_ms then row.speedup_vs_sync = sync.median_ms / row.median_ms end
end
gpuexp.print_table(rows, {"variant", "median_ms", "gbps", "speedup_vs_sync", "verified", "long_scoreboard_pct", "barrier_pct",
  "dominant_stall", "achieved_occupancy_pct", "status"})
if plan then print("OFFLINE PLAN: the builds this architecture has compiled, launches checked; no timings or counters") return end
for _, row in ipairs(rows) do
  gpuexp.check(row.status == "skipped" or row.verified, "%s computes the sums", row.variant)
end
if not has_async then print("no lesson: " .. arch .. " has no cp.async") return end
if gpuexp.run_options and gpuexp.run_options.only then print("a partial run (--only): the table above, no lesson") return end
local best = rows[1]
for _, row in ipairs(rows) do if row.median_ms and row.median_ms < best.median_ms then best = row end end
local lesson = gpuexp.lesson()
lesson:claim(rows[3].median_ms < sync.median_ms / 1.2, string.format("two stages of cp.async are faster than loading " ..
  "synchronously (%.3f against %.3f ms, %.2fx)", rows[3].median_ms, sync.median_ms, sync.median_ms / rows[3].median_ms))
lesson:claim(rows[2].median_ms > rows[3].median_ms, string.format("one stage overlaps nothing (%.3f ms); two overlap " ..
  "(%.3f ms)", rows[2].median_ms, rows[3].median_ms))
if sync.long_scoreboard_pct and best.long_scoreboard_pct then
  lesson:claim(best.long_scoreboard_pct < sync.long_scoreboard_pct, string.format("the wait on loads shrinks: " ..
    "long_scoreboard %.0f%% of stalls synchronously, %.0f%% with %s", sync.long_scoreboard_pct, best.long_scoreboard_pct,
    best.variant))
end
local tma = rows[7]
if tma.median_ms then
  lesson:claim(tma.median_ms < sync.median_ms / 1.2, string.format("the TMA unit's bulk copies in 4 stages are faster " ..
    "than loading synchronously too (%.3f against %.3f ms, %.2fx; cp.async in 4 stages %.3f ms)", tma.median_ms,
    sync.median_ms, sync.median_ms / tma.median_ms, rows[5].median_ms))
end
lesson:report(string.format("a cp.async pipeline hides the load latency that too few warps cannot (%s: %.0f GB/s against " ..
  "%.0f synchronously)", best.variant, best.gbps, sync.gbps))
