-- Seed 003, phase 0: the latency of every level of the memory hierarchy. One thread chases a
-- random cycle of 128-byte lines (each load depends on the last) over working sets from 4 KB to
-- four times the L2; the latency in cycles and ns steps up at L1, L2 and DRAM. A second series
-- keeps 4096 lines (512 KB: past L1, inside L2) but spreads them over larger and larger strides:
-- past the TLB's reach every load also pays for its translation.
--
--   gpuexp experiments/latency_ladder.lua

local plan = gpuexp.plan
local dev = gpuexp.device()
local program = gpuexp.compile{file = "kernels/latency.cu"}
local chase = program:kernel("chase")
local LINE = 128
local HOPS = 100000
local l2 = plan and 50 * 2 ^ 20 or dev.l2_bytes
local sizes = {4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 33554432, 67108864, 134217728, 268435456}
local strides = {128, 4096, 65536, 2097152}
local TLB_LINES = 4096 -- 512 KB of lines: past L1, well inside L2
local result = dev:alloc("u64", 4)
math.randomseed(7)

-- A random single cycle (Sattolo) through `lines` entries `stride` bytes apart, in a u32 array on
-- the device. Dense chains are built on the host; sparse ones (a few entries over gigabytes) are
-- written entry by entry.
local function build_chain(lines, stride)
  local order = {}
  for i = 1, lines do order[i] = i - 1 end
  for i = lines, 2, -1 do
    local j = math.random(1, i - 1)
    order[i], order[j] = order[j], order[i]
  end
  local step = stride // 4
  local elements = (lines - 1) * step + 1
  local device_chain = dev:alloc("u32", elements)
  if stride <= LINE then
    local host = gpuexp.host("u32", elements)
    for k = 1, lines do host[order[k] * step + 1] = order[k % lines + 1] * step end
    device_chain:copy_from(host)
  else
    for k = 1, lines do device_chain:copy_from({order[k % lines + 1] * step}, {offset = order[k] * step}) end
  end
  return device_chain, order[1] * step
end

-- cold: the working set is larger than the L2. The timed hops then go to lines never touched
-- before (the L2 keeps the first lines of a long scan, so revisiting them would time the L2).
local function measure(lines, stride, cold)
  local chain, start = build_chain(lines, stride)
  -- warm: a whole cycle when the working set fits a cache, so the timed hops (from the start
  -- again) find each line there; when it does not, all but the timed hops, which then continue
  -- into lines that were never loaded (their pages' translations are warm: the walk crossed them)
  local warm = cold and lines - HOPS or lines
  local launch = {grid = 1, block = 1, args = {chain, gpuexp.u32(start), gpuexp.i64(warm), result}}
  chase:launch(launch)
  if cold and not plan then
    dev:synchronize()
    launch.args[2] = gpuexp.u32(result[3])
  end
  launch.args[3] = gpuexp.i64(HOPS)
  local cycles, ns = {}, {}
  for r = 1, cold and 1 or 3 do -- a cold chain can be timed once
    chase:launch(launch)
    if not plan then
      dev:synchronize()
      cycles[r], ns[r] = result[1] / HOPS, result[2] / HOPS
    end
  end
  chain:free()
  if plan then return {} end
  table.sort(cycles); table.sort(ns)
  return {cycles_per_load = cycles[(#cycles + 1) // 2], ns_per_load = ns[(#ns + 1) // 2]}
end

local out = gpuexp.out or "results/latency_ladder.csv"
local rows = gpuexp.sweep{
  name = "latency_ladder", out = out,
  axes = {{"working_set_bytes", sizes}},
  columns = {"lines", "cycles_per_load", "ns_per_load", "level"},
  run = function(p)
    local row = measure(p.working_set_bytes // LINE, LINE, p.working_set_bytes >= 2 * l2)
    row.lines = p.working_set_bytes // LINE
    local b = p.working_set_bytes
    row.level = b <= 64 * 1024 and "L1" or b < 1024 * 1024 and "L1/L2" or b <= l2 // 2 and "L2"
      or b >= 2 * l2 and "DRAM" or "L2/DRAM"
    return row
  end,
}
-- the TLB: 4096 lines (512 KB: past L1, inside L2) spread farther and farther apart
local tlb_rows = gpuexp.sweep{
  name = "latency_tlb", out = out:gsub("%.csv$", "_tlb.csv"),
  axes = {{"stride_bytes", strides}},
  where = function(p) return plan or TLB_LINES * p.stride_bytes <= dev.memory_bytes // 4 end, -- a quarter of the memory
  columns = {"lines", "address_range_bytes", "cycles_per_load", "ns_per_load"},
  run = function(p)
    local row = measure(TLB_LINES, p.stride_bytes)
    row.lines, row.address_range_bytes = TLB_LINES, TLB_LINES * p.stride_bytes
    return row
  end,
}
gpuexp.print_table(rows, {"working_set_bytes", "lines", "cycles_per_load", "ns_per_load", "level"})
gpuexp.print_table(tlb_rows, {"stride_bytes", "address_range_bytes", "cycles_per_load", "ns_per_load"})
if plan then print("OFFLINE PLAN: the kernel compiled, launches checked; no latencies") return end
if gpuexp.run_options and gpuexp.run_options.only then print("a partial run (--only): the tables above, no lesson") return end

local level = {}
for _, row in ipairs(rows) do
  if row.level == "L1" or row.level == "L2" or row.level == "DRAM" then
    level[row.level] = level[row.level] or {}
    table.insert(level[row.level], row.cycles_per_load)
  end
end
local function median(list) table.sort(list) return list[(#list + 1) // 2] end
local l1, l2c, dram = median(level.L1 or {}), median(level.L2 or {}), median(level.DRAM or {})
local tlb_first, tlb_last = tlb_rows[1], tlb_rows[#tlb_rows]
if not (l1 and l2c and dram and tlb_first.cycles_per_load and tlb_last.cycles_per_load) then
  print("some points have no latency (see their status and error): no lesson") -- e.g. 8 GB did not fit
  return
end
print(string.format("L1 %.0f cycles, L2 %.0f cycles, DRAM %.0f cycles (%.0f ns); 4096 L2-resident lines %d B apart: %.0f " ..
  "cycles, %d MB apart: %.0f cycles", l1, l2c, dram, dram / (dev.sm_clock_khz / 1e6), tlb_first.stride_bytes,
  tlb_first.cycles_per_load, tlb_last.stride_bytes // 2 ^ 20, tlb_last.cycles_per_load))
local lesson = gpuexp.lesson()
lesson:claim(l2c > 2 * l1, string.format("L2 is over twice as far as L1 (%.0f against %.0f cycles)", l2c, l1))
lesson:claim(dram > 1.5 * l2c, string.format("DRAM is farther than L2 (%.0f against %.0f cycles)", dram, l2c))
lesson:claim(tlb_last.cycles_per_load > 1.02 * tlb_first.cycles_per_load, string.format("lines spread over %d MB " ..
  "strides cost more than the same lines packed (%.0f against %.0f cycles): page walks", tlb_last.stride_bytes // 2 ^ 20,
  tlb_last.cycles_per_load, tlb_first.cycles_per_load))
lesson:report("each level of the hierarchy is a step in latency, and the TLB adds its own")
