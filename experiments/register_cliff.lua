-- Seed 003, phase 3: the register cliff. One kernel that wants about 40 registers, compiled with
-- -maxrregcount swept around it: registers, spills (ptxas), theoretical occupancy at 256 threads
-- (and its limiter), achieved occupancy, and time side by side. Below what it needs, it spills to
-- local memory; above 32 on sm_80/sm_90 it loses a quarter of its blocks.
--
--   gpuexp experiments/register_cliff.lua

local plan = gpuexp.plan
local dev = gpuexp.device()
local N, ROUNDS, BLOCK = 8 * 1024 * 1024, 16, 256
local input = dev:alloc("f32", N):random{seed = 4, min = 0.5, max = 1}
local output = dev:alloc("f32", N)
local reference = not plan and dev:alloc("f32", N) or nil
local out = gpuexp.out or "results/register_cliff.csv"
local caps = {16, 24, 32, 33, 40, 48, 64, 255}
local outputs = {} -- the first 1024 results of each cap, to compare with the uncapped build

local rows = gpuexp.sweep{
  name = "register_cliff", out = out,
  axes = {{"maxrregcount", caps}},
  columns = {"registers", "spill_store_bytes", "spill_load_bytes", "stack_frame_bytes", "theoretical_occupancy_pct",
    "limiter", "achieved_occupancy_pct", "median_ms", "verified", "mode", "samples", "noise_pct", "sm_clock_mhz",
    "clock_throttled", "stop_reason"},
  run = function(p)
    local program = gpuexp.compile{file = "kernels/register_cliff.cu", options = {"-maxrregcount=" .. p.maxrregcount}}
    local kernel = program:kernel("pressure")
    local r = kernel:resources()
    local o = kernel:occupancy{block = BLOCK}
    local row = {registers = r.registers, spill_store_bytes = r.spill_store_bytes, spill_load_bytes = r.spill_load_bytes,
      stack_frame_bytes = r.stack_frame_bytes, theoretical_occupancy_pct = o.occupancy_pct, limiter = o.limiter}
    local launch = {grid = N // BLOCK, block = BLOCK, args = {output, input, gpuexp.i64(N), gpuexp.i32(ROUNDS)}}
    kernel:launch(launch)
    if not plan then
      if p.maxrregcount == 255 then reference:copy_from(output) end
      row.verified = true
    end
    local t = kernel:measure{grid = launch.grid, block = launch.block, args = launch.args, min_time_ms = 100, timeout_s = 3}
    for _, c in ipairs(gpuexp.measure_columns) do row[c] = t[c] end
    row.median_ms = t.median_ms
    launch.metrics = "occupancy"
    local m = kernel:metrics(launch)
    if m then row.achieved_occupancy_pct = m.achieved_occupancy_pct end
    outputs[p.maxrregcount] = not plan and output:to_table(1, 1024) or nil
    return row
  end,
}
-- every cap must compute the same thing as the uncapped build (bit for bit: same instructions, spilled or not)
if not plan then
  local expected = reference:to_table(1, 1024)
  for _, row in ipairs(rows) do
    for i = 1, 1024 do if outputs[row.maxrregcount][i] ~= expected[i] then row.verified = false break end end
  end
end
gpuexp.print_table(rows, {"maxrregcount", "registers", "spill_store_bytes", "stack_frame_bytes", "theoretical_occupancy_pct",
  "limiter", "achieved_occupancy_pct", "median_ms", "verified", "status"})
if plan then print("OFFLINE PLAN: each cap compiled; registers, spills and occupancy from ptxas and the model") return end
local plot, why = gpuexp.try_plot(gpuexp.plot, {rows = rows, x = "registers", y = "median_ms", out = out:gsub("%.csv$", ".png"),
  title = "register cliff: time vs registers per thread (" .. dev.name .. ")"})
print("wrote " .. out .. (plot and (" and " .. plot) or (" (plot not written: " .. why .. ")")))
local fastest
for _, row in ipairs(rows) do
  gpuexp.check(row.verified, "maxrregcount %d computes what the uncapped build computes", row.maxrregcount)
  gpuexp.check(row.registers <= math.max(row.maxrregcount, 24), "maxrregcount %d is respected (%d registers)", row.maxrregcount, row.registers)
  if not fastest or row.median_ms < fastest.median_ms then fastest = row end
end
local spilled, cliff
for _, row in ipairs(rows) do
  if row.spill_store_bytes > 0 and not spilled then spilled = row end
  if row.registers > 32 and row.theoretical_occupancy_pct < 100 and not cliff then cliff = row end
end
print(string.format("fastest: maxrregcount %d (%d registers, %.0f%% theoretical occupancy, %.4f ms)", fastest.maxrregcount,
  fastest.registers, fastest.theoretical_occupancy_pct, fastest.median_ms))
if spilled then print(string.format("spills from maxrregcount %d: %d bytes stored, %.4f ms", spilled.maxrregcount,
  spilled.spill_store_bytes, spilled.median_ms)) end
if cliff then print(string.format("the cliff: %d registers drop theoretical occupancy to %.0f%% (%s)", cliff.registers,
  cliff.theoretical_occupancy_pct, cliff.limiter)) end
print((spilled and cliff) and "held on this GPU: too few registers spill, one register past the cliff costs blocks; the table says which hurts more"
  or "did NOT hold on this GPU: no spill or no occupancy cliff in the sweep")
