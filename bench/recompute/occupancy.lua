-- Model vs driver vs ncu for the SAXPY kernels' 15 launches (bench/occupancy_limits.lua under ncu):
-- blocks per SM, theoretical occupancy and the warp, block and register limits of each launch,
-- gpuexp's (driver and model, $RECORD2: occupancy_limits_h200.csv) against ncu's
-- launch__occupancy_limit_* ($RECORD: ncu's raw CSV), launch by launch in order.
--   RECORD=bench/h200/ncu_occupancy_h200.csv RECORD2=bench/h200/occupancy_limits_h200.csv gx bench/recompute/occupancy.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")
local ncu_csv = dofile(gpuexp.script_dir .. "/../ncu_csv.lua")
local ncu = assert(ncu_csv.read(R.records[1]))
local ours = R.csv(R.records[2])
assert(#ncu.launches == #ours, #ncu.launches .. " launches profiled, " .. #ours .. " rows")
local agree, barriers = 0, {}
for k, launch in ipairs(ncu.launches) do
  local row = ours[k]
  local function n(name) return ncu_csv.number(launch["launch__occupancy_limit_" .. name]) end
  local blocks = math.min(n("warps"), n("blocks"), n("registers"), n("shared_mem"), n("barriers"))
  local same = launch["Kernel Name"] == row.variant and blocks == tonumber(row.driver_blocks) and
    blocks == tonumber(row.model_blocks) and n("warps") == tonumber(row.limit_warps) and
    n("blocks") == tonumber(row.limit_blocks) and n("registers") == tonumber(row.limit_registers) and
    math.abs(ncu_csv.number(launch["sm__maximum_warps_per_active_cycle_pct"]) - tonumber(row.occupancy_pct)) < 0.01 -- ncu: 2 decimals
  if same then agree = agree + 1 end
  barriers[n("barriers")] = true
end
local values = {}
for v in pairs(barriers) do values[#values + 1] = tostring(v) end
table.sort(values)
print("launches: " .. #ours)
print("agree: " .. (agree == #ours and ("all " .. agree) or (agree .. " of " .. #ours)))
print("ncu barriers: " .. table.concat(values, ", "))
