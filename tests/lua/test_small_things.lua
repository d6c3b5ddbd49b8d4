-- The small things of issue 28: the offline plan's header, merge naming missing points by their
-- axis values, history exclude/include saying what they did, and two nightlies started in the
-- same second writing to their own folders.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local ws = T.workspace(assert(arg[1], "the gpuexp binary is the first argument"))
local run, write, read = ws.run, ws.write, ws.read

-- the shipped experiment's header in a plan: the architecture, no "? SMs"
local code, _, stderr = run("--arch sm_90 --quiet -o occ.csv occupancy_sweep")
T.eq(code, 0, "occupancy_sweep plan: " .. stderr)
T.ok(stderr:find("^offline plan for sm_90, %d+ elements"), "the plan's header: " .. stderr)
T.ok(not stderr:find("?", 1, true), "no unknown shown as '?': " .. stderr)

-- merge: a missing shard's points are named by their axis values
write("grid.lua", [[
gpuexp.sweep{name = "grid", axes = {{"block", {64, 128}}, {"variant", {"a", "b"}}},
  run = function(p) return {value = p.block} end}
]])
T.eq(run("--arch sm_90 --quiet --shard 0/2 -o grid.csv grid.lua"), 0, "shard 0 of 2")
code, _, stderr = run("merge all.csv grid.shard-0-of-2.csv")
T.eq(code, 1, "incomplete merge: " .. stderr)
T.ok(stderr:find("block=64,variant=b (point 2: its share's part is missing)", 1, true) and
  stderr:find("block=128,variant=b (point 4: its share's part is missing)", 1, true), "named by axis values: " .. stderr)

-- history exclude and include say what became of each run; an unknown run changes nothing
T.eq(run("--arch sm_90 --quiet --history h.sqlite -o rec.csv grid.lua"), 0, "a run recorded")
local stdout
code, stdout = run("history --history h.sqlite exclude 1")
T.eq(code, 0, "exclude")
T.ok(stdout:find("^run 1 %(grid, sweep grid, [^)]+%): kept out of nightly baselines from now on\n$"), stdout)
code, stdout = run("history --history h.sqlite exclude 1")
T.ok(stdout:find("run 1 (grid, sweep grid,", 1, true) and stdout:find("already kept out of nightly baselines", 1,
  true), "a second exclude says so: " .. stdout)
code, stdout, stderr = run("history --history h.sqlite include 1 99")
T.eq(code, 2, "an unknown run: " .. stderr)
T.ok(stderr:find("no run 99 in the history (nothing changed)", 1, true), stderr)
code, stdout = run("history --history h.sqlite include 1")
T.ok(stdout:find(": back in nightly baselines\n$"), "include: " .. stdout)

-- two nightlies started in the same second get a folder each (the default out is by time + tag)
gpuexp.mkdir(ws.dir .. "/suite")
write("suite/fake.lua", [[gpuexp.sweep{name = "fake", axes = {{"i", {1}}}, run = function() return {median_ms = 1} end}]])
os.execute(string.format("cd %s && (GPUEXP_LOCK_DIR=%s/lock1 %s nightly suite --arch sm_90 --quiet > n1.out 2>&1 & " ..
  "GPUEXP_LOCK_DIR=%s/lock2 %s nightly suite --arch sm_90 --quiet > n2.out 2>&1; wait)", ws.dir, ws.dir, ws.binary or
  arg[1], ws.dir, arg[1]))
local folders = io.popen("ls " .. ws.dir .. "/gpuexp-nightly"):read("a")
local count = 0
for _ in folders:gmatch("[^\n]+") do count = count + 1 end
T.eq(count, 2, "two nightlies, two folders: " .. folders .. tostring(read("n1.out")) .. tostring(read("n2.out")))
T.done()
