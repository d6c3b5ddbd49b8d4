-- The atomics study's counters beside ncu's, on the seed's float kernels (v1: an atomic per thread,
-- v4: shuffles and an atomic per block) and their integer twins:
--   ncu --clock-control none --csv --page raw --metrics $(gpuexp --inline bench/atomics_ncu.lua names) \
--       --log-file DIR/ncu_atomics.csv gpuexp --inline bench/atomics_ncu.lua launch
--   gpuexp --out DIR/reduction_atomics.csv experiments/reduction_atomics.lua
--   gpuexp --inline bench/atomics_ncu.lua compare DIR
-- (bench/h200/atomics/ holds a run.)
local METRICS = {"gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
  "lts__t_sector_hit_rate.pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
  "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
  "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"}
local COLUMNS = {nil, "dram_throughput_pct", "l2_hit_rate_pct", "achieved_occupancy_pct", "stall_lg_throttle",
  "stall_long_scoreboard"}
local KERNELS = {"float_atomic_per_thread", "float_atomic_per_block", "atomic_per_thread", "atomic_per_block"}
local mode, dir = arg[1], arg[2]
if mode == "names" then print(table.concat(METRICS, ",")) return end
if mode == "launch" then -- the study's launches, once each, in KERNELS order
  local N, BLOCK = 4 * 1024 * 1024, 256
  local dev = gpuexp.device()
  local program = gpuexp.compile{file = "kernels/reduction.cu"}
  local host = gpuexp.host("f32", N)
  for i = 1, N do host[i] = (i * 7919) % 4 end
  local float_in, int_in = dev:alloc("f32", N):copy_from(host), dev:alloc("i32", N):random{seed = 4, min = 0, max = 9}
  local float_total, int_total = dev:alloc("f32", 1):fill(0), dev:alloc("i32", 1):fill(0)
  for _, name in ipairs(KERNELS) do
    local float = name:sub(1, 6) == "float_"
    program:kernel(name):launch{grid = N // BLOCK, block = BLOCK,
      args = {float and float_total or int_total, float and float_in or int_in, gpuexp.i32(N)}}
  end
  dev:synchronize()
  return
end
assert(mode == "compare" and dir, "usage: gpuexp bench/atomics_ncu.lua names | launch | compare DIR")
local lines = {}
for line in io.lines(dir .. "/ncu_atomics.csv") do if line:sub(1, 1) == '"' then lines[#lines + 1] = line end end
local function split(line) local t = {} for f in line:gmatch('"([^"]*)"') do t[#t + 1] = f end return t end
local header = split(lines[1])
local ours = {}
for _, row in ipairs(gpuexp.csv.read(dir .. "/reduction_atomics.csv")) do ours[row.kernel] = row end
local rows = {}
for k, name in ipairs(KERNELS) do
  local values = {}
  for i, field in ipairs(split(lines[2 + k])) do values[header[i]] = tonumber((field:gsub(",", ""))) end
  for m, metric in ipairs(METRICS) do
    local mine = COLUMNS[m] and ours[name][COLUMNS[m]] or (ours[name].median_ms and ours[name].median_ms * 1e6)
    rows[#rows + 1] = {kernel = name, metric = metric, gpuexp = mine, ncu = values[metric],
      note = m == 1 and "gpuexp: event-timed median (ns); ncu: one profiled launch" or ""}
  end
end
gpuexp.print_table(rows, {"kernel", "metric", "gpuexp", "ncu", "note"})
