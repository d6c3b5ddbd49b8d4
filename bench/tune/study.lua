-- One tune of the tuning study (issue 37), run by bench/tune/run.sh on the GPU:
--   gpuexp --quiet bench/tune/study.lua SPACE RUN OUTDIR
-- SPACE: conv (Kernel Tuner's convolution, NVRTC per configuration: bench/tune/convolution.lua),
-- transpose (kernels/tune_transpose.cu, nvcc per configuration) or matmul (kernels/tune_matmul.cu);
-- RUN: brute, racing or model (max_evals a tenth of the space for racing and model); SEED: 1 unless
-- given (then the files are named RUN-SEED: bench/tune/kt_compare.sh's seeds).
-- Writes OUTDIR/SPACE/RUN.csv and its rounds (OUTDIR/SPACE/RUN.tune.round-NNN.csv, .samples.csv:
-- the raw samples of every configuration) and OUTDIR/SPACE/RUN.json: the result (best, ties, the
-- regret bound, every configuration measured at the final level with its samples), the wall time,
-- the GPU time (the sum of the timed samples), what the compile pool did, where the wall time went
-- (result.timing: docs/howto/tune.md), the GPU and the cores.
-- bench/tune/replay.lua recomputes the tables from these files alone. GPUEXP_STUDY_WORKERS sets the
-- compile pool's helpers (default: the cores less one).
local json = require("gpuexp.store.json")

local SPACE, RUN, OUTDIR, SEED = arg[1], arg[2], arg[3], arg[4]
assert(SPACE and RUN and OUTDIR, "usage: gpuexp bench/tune/study.lua conv|transpose|matmul brute|racing|model OUTDIR [SEED]")
local here = gpuexp.script_dir
local space = dofile(here .. "/spaces.lua")(SPACE)
local seed = math.tointeger(tonumber(SEED or "1")) or error("the seed is an integer: " .. tostring(SEED))
local name = SEED and RUN .. "-" .. seed or RUN -- a seed given: OUTDIR/SPACE/RUN-SEED.json

dofile(here .. "/policy.lua") -- the study's full measurement

local folder = OUTDIR .. "/" .. SPACE
gpuexp.mkdir(OUTDIR)
gpuexp.mkdir(folder)
local count = #gpuexp.points(space.axes, space.where)
local started = gpuexp.clock()
local result = gpuexp.tune{name = "tune", axes = space.axes, where = space.where, setup = space.setup, run = space.run,
  compile = space.compile, objective = "median_ms", condition = space.condition,
  sources = space.sources, options = space.options, strategy = RUN, seed = seed,
  max_evals = RUN ~= "brute" and math.ceil(count / 10) or nil, out = folder .. "/" .. name .. ".csv", quiet = true,
  compile_workers = math.tointeger(tonumber(os.getenv("GPUEXP_STUDY_WORKERS") or ""))} -- default: the cores less one
if not result then print("offline plan: nothing measured") return end
local wall = gpuexp.clock() - started

local function finite(v) if type(v) == "number" and v ~= math.huge and v == v then return v end end
local bound = {}
for k, v in pairs(result.regret or {}) do bound[k] = finite(v) or (type(v) == "number" and "unbounded" or v) end
local evaluated = {}
for i, e in ipairs(result.evaluated) do evaluated[i] = {point = e.point, value = e.value, samples = e.samples} end
local ties = {}
for i, t in ipairs(result.ties) do ties[i] = {point = t.point, value = t.value, ratio = t.ratio} end
local found, device = pcall(gpuexp.device)
local facts = found and device and device.facts or {name = "none (" .. SPACE .. ")", arch = "-"}
local record = {space = SPACE, run = RUN, strategy = result.strategy, seed = seed, configurations = result.configurations,
  measured = result.measured, evaluations = result.evaluations, gpu_s = result.cost_s, wall_s = wall,
  tune_wall_s = result.wall_s, best = result.best, ties = ties, regret = bound, compile = result.compile,
  timing = result.timing,
  cores = require("gpuexp.api.compile_pool").cores(), gpu = facts.name, arch = facts.arch,
  cache = os.getenv("GPUEXP_CACHE_STATE") or "?", evaluated = evaluated, axes = space.axes}
local file = assert(io.open(folder .. "/" .. name .. ".json", "w"))
file:write(json.encode(record), "\n")
file:close()
print(string.format("%s %s: seed %d, %d of %d measured, best %s, GPU %.2f s, wall %.1f s, compile %s", SPACE, RUN, seed,
  result.measured, count, json.encode(result.best), result.cost_s, wall,
  result.compile and string.format("%.1f s by %d workers, waited %.1f s", result.compile.compile_s,
    result.compile.workers, result.compile.wait_s) or "in the foreground"))
print(SPACE .. " " .. RUN .. ": " .. require("gpuexp.api.tune").timing_line(result.timing))
