-- One line of bench/tune/wall_repeat.sh's wall.tsv from a study.lua record:
--   gpuexp --quiet --inline bench/tune/wall_row.lua RECORD.json HELPERS CORES
-- space, run, helpers, wall s, GPU s, compile CPU s, cores, the target 1.3 x max(GPU, compile / cores).
local json = require("gpuexp.store.json")
local file = assert(io.open(assert(arg[1], "usage: wall_row.lua RECORD.json HELPERS CORES"), "r"))
local r = json.decode(file:read("a"))
file:close()
local compile_s = r.compile and r.compile.compile_s or 0
local cores = assert(tonumber(arg[3]), "CORES")
print(string.format("%s\t%s\t%s\t%.1f\t%.2f\t%.1f\t%d\t%.1f", r.space, r.run, arg[2], r.wall_s, r.gpu_s, compile_s, cores,
  1.3 * math.max(r.gpu_s, compile_s / cores)))
