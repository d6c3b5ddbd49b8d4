-- The cost of a worker's restart after a crash (bench/restart_cost.lua): every restart's seconds as
-- the supervisor recorded them in the sweep's metadata ($RECORD, restart_cost.meta.json).
--   RECORD=bench/remeasure/restart_cost/restart_cost.meta.json gx bench/recompute/restart_cost.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")
local info = require("cjson").decode(R.text())
local seconds = {}
for _, r in ipairs(info.parts[#info.parts].restarts or {}) do seconds[#seconds + 1] = r.seconds end
assert(#seconds > 0, "no restarts in " .. R.records[1])
print(string.format("restarts: %d", #seconds))
print(string.format("median: %.2f s", R.median(seconds)))
print(string.format("range: %.3f-%.3f s", R.min(seconds), R.max(seconds)))
