-- Offline plans are keyed by their architecture: a plan for sm_86 is never the baseline of a plan for
-- sm_90 (nightly, history, compare, the site), history list and show name the plan's architecture,
-- compare refuses plans of two architectures (as it refuses two GPUs), a history written before
-- plans carried their architecture gets it when opened, and a night that judges no point says so.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local history = require("gpuexp.store.history")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

-- 768 threads: 3 blocks of 24 warps hold all 48 warps of sm_86 (100%), 2 hold 48 of sm_90's 64 (75%)
gpuexp.mkdir(ws.dir .. "/suite")
ws.write("suite/occupancy.lua", [[
local k = gpuexp.compile{source = 'extern "C" __global__ void k(float *y) { y[threadIdx.x] = 1.0f; }'}:kernel("k")
gpuexp.sweep{name = "blocks", axes = {{"block_size", {128, 768}}}, columns = {"occupancy_pct", "median_ms"},
  run = function(p) return {occupancy_pct = k:occupancy{block = p.block_size}.occupancy_pct} end}
]])
local environment = "GPUEXP_LOCK_DIR=" .. ws.dir
local function night(arch, name, metric)
  return ws.run(string.format("nightly suite --quiet --arch %s --history h.sqlite --out %s %s", arch, name,
    metric and ("--metric " .. metric) or ""), environment)
end

-- 1. a night of sm_86 plans, then one of sm_90 plans: the second has no baseline (it used to be
-- judged against the first and exit 1: occupancy_pct 100 -> 75 at block 768)
local code, stdout, stderr = night("sm_86", "n86", "occupancy_pct:higher")
T.eq(code, 0, "the sm_86 night: " .. stdout .. stderr)
code, stdout, stderr = night("sm_90", "n90", "occupancy_pct:higher")
T.eq(code, 0, "the sm_90 night is not judged against the sm_86 one: " .. stdout .. stderr)
T.ok(stdout:find("offline plan for sm_90", 1, true), "the night names its plan's architecture: " .. stdout)
T.ok(stdout:find("0 slower (regressions), 0 faster, 0 same (0 suspects not confirmed by the re-measure), 0 failing, " ..
  "2 new", 1, true), "every point of the sm_90 night is new: " .. stdout)
T.ok(ws.read("n90/report.md"):find("no baseline yet", 1, true), "the report says the sm_90 night is the first")
-- a second sm_90 night has the first as its baseline
code, stdout = night("sm_90", "n90b", "occupancy_pct:higher")
T.eq(code, 0, "the second sm_90 night: " .. stdout)
T.ok(stdout:find("2 same", 1, true), "judged against the sm_90 night: " .. stdout)

-- 2. history list and show name the plan's architecture
code, stdout = ws.run("history --history h.sqlite list")
T.eq(code, 0, "history list")
T.ok(stdout:find("offline plan for sm_86", 1, true) and stdout:find("offline plan for sm_90", 1, true),
  "list names each plan's architecture: " .. stdout)
T.ok(not stdout:find("(plan)", 1, true), "not (plan) alone: " .. stdout)
code, stdout = ws.run("history --history h.sqlite show 1")
T.eq(code, 0, "history show")
T.ok(stdout:find("gpu_name         offline plan for sm_86", 1, true), "show names it: " .. stdout)

-- 3. the site: one series per architecture
code, stdout, stderr = ws.run("history --history h.sqlite site site")
T.eq(code, 0, "history site: " .. stderr)
local index = ws.read("site/index.html")
T.ok(index:find("offline plan for sm_86", 1, true) and index:find("offline plan for sm_90", 1, true),
  "the site's series are per architecture")

-- 4. compare refuses plans of two architectures (exit 3, as for two GPUs); --allow-different-gpu warns
code, stdout, stderr = ws.run("compare --metric occupancy_pct:higher n86/occupancy.csv n90/occupancy.csv")
T.eq(code, 3, "compare of an sm_86 plan with an sm_90 plan is refused: " .. stdout .. stderr)
T.ok(stderr:find("gpuexp compare: n86/occupancy.csv and n90/occupancy.csv are offline plans for different " ..
  "architectures (architecture: sm_86 vs sm_90); each holds the model's values for its own, not comparable " ..
  "(--allow-different-gpu compares anyway)", 1, true), "why: " .. stderr)
code, stdout, stderr = ws.run("compare --allow-different-gpu --metric occupancy_pct:higher n86/occupancy.csv " ..
  "n90/occupancy.csv")
T.eq(code, 1, "compared anyway: 100 -> 75 is slower")
T.ok(stderr:find("WARNING: n86/occupancy.csv and n90/occupancy.csv are offline plans for different architectures", 1,
  true), "with a warning: " .. stderr)
code = ws.run("compare --metric occupancy_pct:higher n90/occupancy.csv n90b/occupancy.csv")
T.eq(code, 0, "two plans of one architecture compare")

-- 5. a history written before plans carried their architecture: its plans are named when it is
-- opened for writing, so that a night of sm_90 plans no longer finds the sm_86 ones
local db = assert(history.open(ws.dir .. "/h.sqlite"))
db:run("UPDATE runs SET gpu_name = NULL")
db:close()
code, stdout = ws.run("history --history h.sqlite list")
T.ok(stdout:find("offline plan for sm_86", 1, true), "read only, the list takes the architecture from the metadata: " ..
  stdout)
db = assert(history.open(ws.dir .. "/h.sqlite"))
local named = db:rows("SELECT id, gpu_name FROM runs ORDER BY id")
db:close()
T.eq(named[1].gpu_name, "offline plan for sm_86", "the sm_86 run named again")
T.eq(named[2].gpu_name, "offline plan for sm_90", "the sm_90 run named again")
code, stdout = night("sm_90", "n90c", "occupancy_pct:higher")
T.eq(code, 0, "a night after the history was named: " .. stdout)

-- 6. a night that judges no point (plans have no times) says which sweep and why, exit 0
code, stdout = night("sm_90", "ntime")
T.eq(code, 0, "an offline night with the default metric: " .. stdout)
T.ok(stdout:find("NOT JUDGED occupancy: none of its 2 points has a value in median_ms (an offline plan measures no " ..
  "time; --metric COL:lower|higher judges a column it fills, such as occupancy_pct:higher)", 1, true),
  "says what it did not judge and why: " .. stdout)
T.ok(ws.read("ntime/report.md"):find("not judged: none of its 2 points", 1, true), "and the report says it")
T.done()
