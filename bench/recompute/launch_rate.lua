-- bench/run.sh's figures from its printout (bench/h200/bench_run_h200.txt), recomputed as run.sh
-- computes them: the launch rate of each alternation against the C loop's (median, min, max), the
-- SAXPY medians' difference (the means of each side's medians), script start to first launch.
--   RECORD=bench/h200/bench_run_h200.txt gx bench/recompute/launch_rate.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")
local function ratios(key)
  local list, c = {}, nil
  for line in R.text():gmatch("[^\n]+") do
    local name, value = line:match("^(%S+) (%d+)$")
    if name == "c_launches_per_second" then c = tonumber(value) end
    if name == key then list[#list + 1] = tonumber(value) / c end
  end
  table.sort(list)
  assert(#list > 0, "no " .. key)
  return list
end
local bound, tabled = ratios("lua_bound_launches_per_second"), ratios("lua_table_launches_per_second")
local function middle(list) return list[(#list + 1) // 2] end
print(string.format("bound median: %.3f", middle(bound)))
print(string.format("bound range: min %.3f, max %.3f", bound[1], bound[#bound]))
print(string.format("table median: %.3f", middle(tabled)))
local c, g = R.mean(R.lines(nil, "^c_saxpy_median_ms ([%d.]+)")), R.mean(R.lines(nil, "^gpuexp_saxpy_median_ms ([%d.]+)"))
print(string.format("saxpy: %+.2f%%", 100 * (g - c) / c))
local starts = R.lines(nil, "^start_to_first_launch_seconds ([%d.]+)")
print(string.format("first launch: %.3f-%.3f s", R.min(starts), R.max(starts)))
