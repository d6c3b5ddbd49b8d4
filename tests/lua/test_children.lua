-- Child processes and stop signals (issue 25): an in-process run (--inline) stops on SIGINT or
-- SIGTERM between points and within its 1 s grace when stuck in a call, with exit 128 + N and the
-- interrupted point left for --resume; a setup that ends its worker stops the sweep once; every
-- child (here bisect's build and nightly's hook) starts with an empty signal mask, default
-- dispositions and a process group of its own, is ended with its group on a stop signal and has a
-- time limit; bisect's --point-timeout applies; a killed bisect's folder is removed by the next.
-- covers: src/core/gx_process.c, lua/gpuexp/engine/inline.lua
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run

local quote = T.quote

-- Starts `gpuexp arguments` in the background from a non-interactive shell (which starts it with
-- SIGINT ignored, as a CI job's `cmd &` does), waits until the file `ready` exists (or the shell
-- test `ready` holds, when it starts with "["), sends the signal and waits for the end. Returns the exit code, the seconds from the signal to the end and
-- stderr.
local function interrupt(arguments, signal, ready, environment)
  os.remove(work .. "/code")
  local script = string.format("cd %s && { %s %s %s > stdout 2> stderr & pid=$!; i=0; " ..
    "while ! %s && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; " ..
    "start=$(date +%%s%%N); kill -%s $pid; wait $pid; code=$?; " ..
    "echo \"$code $(( ($(date +%%s%%N) - start) / 1000000 ))\" > code; }", quote(work), environment or "", binary,
    arguments, ready:sub(1, 1) == "[" and ready or "[ -e " .. quote(ready) .. " ]", signal)
  os.execute(script)
  local code, milliseconds = (read("code") or ""):match("^(%d+) (%d+)")
  return tonumber(code), milliseconds and tonumber(milliseconds) / 1000, read("stderr") or ""
end

local function rows(path)
  local text = read(path) or ""
  local count = 0
  for _ in text:gmatch("\n") do count = count + 1 end
  return count - 1 -- the header
end

-- 1. a sweep spinning in Lua, run --inline: SIGINT ends it after the current point, exit 130; the
--    interrupted point has no row and --resume runs the rest
write("spin.lua", [[
gpuexp.sweep{name = "spin", axes = {{"n", {1, 2, 3, 4, 5, 6}}},
  run = function(p)
    if p.n == 2 then io.open(gpuexp.script_dir .. "/started", "w"):close() end
    local t = gpuexp.clock()
    while gpuexp.clock() - t < 0.5 do end
    return {median_ms = p.n}
  end}
]])
local code, seconds, stderr = interrupt("--quiet --inline --arch sm_90 -o spin.csv spin.lua", "INT", work .. "/started")
T.eq(code, 130, "--inline and SIGINT: the interrupted exit code (" .. stderr .. ")")
T.ok(seconds < 5, string.format("and promptly (%.2f s)", seconds))
T.ok(stderr:find("spin.lua:1: interrupted by SIGINT", 1, true), "the message names the script: " .. stderr)
T.eq(rows("spin.csv"), 1, "the point that was running has no row; the ones after it never ran")
T.eq(require("gpuexp.store.meta").read_json(work .. "/spin.meta.json").parts[1].ended, "interrupted by SIGINT",
  "the sweep is closed as a supervised run closes it, saying why")
T.eq(run("--quiet --inline --arch sm_90 --resume -o spin.csv spin.lua"), 0, "--resume")
T.eq(rows("spin.csv"), 6, "--resume ran the other five points")

-- 1b. a point inside a command of the script (os.execute, io.popen), --inline and profile: SIGINT
--     reaches the command and stops the run, exit 130 (the C library's system() ignored SIGINT
--     while it waited, so the run finished every point and exited 0); the command is ended
for _, case in ipairs({{"execute", "os.execute('echo $$ >> ' .. gpuexp.script_dir .. '/pids; exec sleep 2')"},
                       {"popen", "local f = io.popen('echo $$ >> ' .. gpuexp.script_dir .. '/pids; exec sleep 2'); " ..
                                 "f:read('a'); f:close()"}}) do
  for _, mode in ipairs({"--inline", "profile"}) do
    os.remove(work .. "/started")
    os.remove(work .. "/pids")
    write("command.lua", string.format([[
gpuexp.sweep{name = "command", axes = {{"n", {1, 2, 3}}},
  run = function(p)
    io.open(gpuexp.script_dir .. "/started", "w"):close()
    %s
    return {median_ms = p.n}
  end}
]], case[2]))
    local what = case[1] .. " under " .. mode
    code, seconds, stderr = interrupt(mode .. " --quiet --arch sm_90 -o command.csv command.lua", "INT",
      work .. "/started")
    T.eq(code, 130, what .. ": SIGINT's exit code (" .. stderr .. ")")
    T.ok(seconds < 1, string.format("%s: at once (%.2f s)", what, seconds))
    T.ok(stderr:find("command.lua:1: interrupted by SIGINT", 1, true), what .. ": " .. stderr)
    T.eq(rows("command.csv"), 0, what .. ": the interrupted point has no row, and no other point ran")
    local pid = (read("pids") or ""):match("%d+")
    T.ok(pid and not os.execute("kill -0 " .. pid .. " 2>/dev/null"), what .. ": the command was ended")
    os.remove(work .. "/command.csv")
    os.remove(work .. "/command.meta.json")
  end
end

-- 1c. gpuexp ab, whose measurement calls a command: SIGINT ends it with 130 (it was lost in the
--     measuring child, which ab then killed after its grace: 137)
write("ab.lua", [[
gpuexp.ab{name = "toy", budget_s = 20,
  variant = function(v)
    return function(reps)
      io.open(gpuexp.script_dir .. "/started", "w"):close()
      os.execute("sleep 0.3")
      local samples = {}
      for i = 1, reps do samples[i] = 0.1 + 0.001 * (i % 3) end
      return samples
    end
  end}
]])
os.remove(work .. "/started")
code, seconds, stderr = interrupt("ab --no-plan ab.lua", "INT", work .. "/started", "TMPDIR=" .. quote(work))
T.eq(code, 130, "ab stopped by SIGINT: " .. stderr)
T.ok(seconds < 2, string.format("promptly (%.2f s)", seconds))
T.ok(stderr:find("ab.lua:5: interrupted by SIGINT", 1, true), stderr)

-- 1d. gpuexp tune: SIGINT is passed to its run, which stops; tune ends with 130
write("tune.lua", [[
gpuexp.tune{name = "toy", axes = {{"a", {1, 2, 3}}}, strategy = "brute",
  run = function(p)
    io.open(gpuexp.script_dir .. "/started", "w"):close()
    local t = gpuexp.clock()
    while gpuexp.clock() - t < 30 do end
    return {median_ms = p.a, samples_ms = {p.a, p.a, p.a}}
  end}
]])
os.remove(work .. "/started")
code, seconds, stderr = interrupt("tune --no-plan --quiet tune.lua", "INT", work .. "/started")
T.eq(code, 130, "tune stopped by SIGINT: " .. stderr)
T.ok(seconds < 5, string.format("promptly (%.2f s)", seconds))

-- 2. a point stuck in a call that never returns (a kernel spinning on the GPU is one): the
--    watchdog ends the process 1 s after SIGTERM, exit 143, with the rows written so far
os.execute("mkfifo " .. quote(work .. "/fifo"))
write("stuck.lua", [[
gpuexp.sweep{name = "stuck", axes = {{"n", {1, 2}}},
  run = function(p)
    if p.n == 1 then return {median_ms = 1} end
    io.open(gpuexp.script_dir .. "/blocked", "w"):close()
    io.open(gpuexp.script_dir .. "/fifo") -- open(2) of a FIFO with no writer: blocks for ever
    return {median_ms = p.n}
  end}
]])
code, seconds, stderr = interrupt("--quiet --inline --arch sm_90 -o stuck.csv stuck.lua", "TERM", work .. "/blocked")
T.eq(code, 143, "stuck in a call: SIGTERM's exit code (" .. stderr .. ")")
T.ok(seconds < 5, string.format("within the grace (%.2f s)", seconds))
T.ok(stderr:find("did not return within the grace time", 1, true), "the watchdog says why: " .. stderr)
T.eq(rows("stuck.csv"), 1, "the finished point's row is kept")

-- 3. a setup that ends its process: one message naming the sweep, no crashed rows, exit 1; once
--    the setup is fixed, --resume runs every point
write("setup.lua", [[
gpuexp.sweep{name = "fragile", axes = {{"n", {1, 2, 3}}},
  setup = function() if not os.getenv("FIXED") then os.exit(3) end end,
  run = function(p) return {median_ms = p.n} end}
]])
local stdout
code, stdout, stderr = run("--quiet --arch sm_90 -o setup.csv setup.lua")
T.eq(code, 1, "a setup that exits: the script failed (" .. stderr .. ")")
local _, said = stderr:gsub("sweep 'fragile': its setup ended the worker %(exited with code 3%)", "")
T.eq(said, 1, "said once, naming the sweep and how: " .. stderr)
T.ok(not (read("setup.csv") or ""):find("crashed", 1, true), "no crashed rows: " .. tostring(read("setup.csv")))
code, stdout, stderr = run("--quiet --arch sm_90 --resume -o setup.csv setup.lua", "FIXED=1")
T.eq(code, 0, "--resume with the setup fixed: " .. stderr .. stdout)
T.eq(rows("setup.csv"), 3, "every point ran")

-- 4. nvcc: options that print or stop early are refused at the script's line; SIGINT during a
--    compile ends nvcc's group and leaves no temporary folder
write("version.lua", [[
gpuexp.compile{source = "__global__ void k() {}", name = "k.cu", compiler = "nvcc", options = {"--version"}}
]])
code, stdout, stderr = run("--quiet --inline --arch sm_90 version.lua")
T.eq(code, 1, "an nvcc option that prints its version: the script's error (" .. stderr .. ")")
T.ok(stderr:find("version.lua:1: nvcc option '--version' is not accepted", 1, true), stderr)
local toolkit = gpuexp.toolkit()
if toolkit.nvcc then
  gpuexp.mkdir(work .. "/nvcc-tmp")
  write("slow.lua", string.format([[
gpuexp.compile{source = "#include <cub/cub.cuh>\n#include <thrust/sort.h>\n// %s\n__global__ void k() {}",
  name = "k.cu", compiler = "nvcc"}
]], gpuexp.hash(tostring(gpuexp.clock()))))
  code, seconds, stderr = interrupt("--quiet --inline --arch sm_90 slow.lua", "INT",
    "[ -n \"$(ls -A " .. quote(work .. "/nvcc-tmp") .. ")\" ]", "TMPDIR=" .. quote(work .. "/nvcc-tmp"))
  T.eq(code, 130, "SIGINT during an nvcc compile: " .. stderr)
  local pipe = io.popen("ls -A " .. quote(work .. "/nvcc-tmp"))
  local left = pipe:read("a")
  pipe:close()
  T.eq(left, "", "nvcc's temporary folder is removed")
else
  io.stderr:write("note: no nvcc here; the compile that is interrupted was skipped\n")
end

-- 5. gnuplot: a plot that fails leaves no temporary file behind (its files live in a folder of its
--    own in $TMPDIR, removed whatever happens; os.tmpname's files in /tmp leaked)
if os.execute("command -v gnuplot >/dev/null 2>&1") then
  gpuexp.mkdir(work .. "/plot-tmp")
  write("plot.marker", "")
  write("plot.csv", "x,y,g\n987654.25,1,a\n987655.25,2,a\n987656.25,3,b\n")
  code, stdout, stderr = run("plot plot.csv --x x --y y --by g -o no/such/folder/p.png", "TMPDIR=" .. quote(work .. "/plot-tmp"))
  T.ok(code ~= 0, "a plot that cannot be written fails: " .. stderr)
  -- its folder in TMPDIR, and what os.tmpname made in /tmp since the marker
  local pipe = io.popen("ls -A " .. quote(work .. "/plot-tmp") .. "; find /tmp -maxdepth 1 -name 'lua_*' -type f " ..
    "-newer " .. quote(work .. "/plot.marker") .. " -exec grep -l 987654.25 {} + 2>/dev/null")
  local left = pipe:read("a")
  pipe:close()
  T.eq(left, "", "no data file, script or log left behind")
end

-- 6. nightly's --on-regression hook: the GPU's lock is free while it runs, and a hook that hangs is
--    ended with its group at --on-regression-timeout; the night keeps its exit code
gpuexp.mkdir(work .. "/suite")
write("suite/fake.lua", T.fixture("fake_night.lua"))
local function night(n, environment, extra)
  return run(string.format("nightly suite --arch sm_90 --quiet --history h.sqlite --out night%d %s", n, extra or ""),
    string.format("GPUEXP_LOCK_DIR=%s FAKE_NIGHT=%d %s", quote(work), n, environment or ""))
end
for n = 1, 3 do T.eq(night(n), 0, "clean night " .. n) end
write("hook.sh", string.format("echo $$ $(ps -o pgid= -p $$) > %s/hook.pid; flock -n %s/gpuexp-nightly-offline-plan.lock true " ..
  "&& echo free > %s/hook.txt || echo held > %s/hook.txt; sleep 3600 & sleep 3600\n", work, work, work, work))
code, stdout, stderr = night(4, "FAKE_SLOW=b=5", "--on-regression-timeout 1 --on-regression 'sh " .. work .. "/hook.sh'")
T.eq(code, 1, "a regressed night whose hook hangs keeps its exit code: " .. stderr)
T.eq(read("hook.txt"), "free\n", "the GPU's lock is released before the hook runs")
T.ok(stderr:find("--on-regression command ran past its 1 s limit (--on-regression-timeout) and was ended", 1, true),
  stderr)
-- A file written by a command as "$$ $(ps -o pgid= -p $$)": the command and its group are gone when
-- no process is left in either (within 5 s: the last ones may still be exiting).
local function probe(file)
  local pid, group = (read(file) or ""):match("(%d+)%s+(%d+)")
  return pid and string.format("/bin/kill -0 %s 2>/dev/null || /bin/kill -0 -- -%s 2>/dev/null", pid, group)
end
local function group_gone(file)
  local alive = probe(file)
  return alive and os.execute("for i in $(seq 50); do { " .. alive .. "; } || exit 0; sleep 0.1; done; exit 1")
end
T.ok(group_gone("hook.pid"), "the hook's group is gone, its background job too")
local function group_gone_now(file)
  local alive = probe(file)
  return alive and not os.execute(alive)
end
T.eq(night(5, nil, "--on-regression-timeout -1"), 2, "a negative time limit is refused")

-- 7. bisect: its build starts with an empty mask, default signals and a group of its own (the
--    bisect itself started with SIGINT ignored), a build past --build-timeout is ended with its
--    group and its commit skipped, --point-timeout ends a measurement that hangs
if not os.execute("git --version >/dev/null 2>&1") then
  io.stderr:write("note: no git here; the bisect and nightly parts were skipped\n")
  T.done()
  return
end
gpuexp.mkdir(work .. "/repo")
gpuexp.mkdir(work .. "/tmp")
local function sh(command) T.ok(os.execute("cd " .. quote(work .. "/repo") .. " && " .. command .. " >/dev/null 2>&1"), command) end
sh("git init -q . && git config user.email test@example.com && git config user.name test")
write("repo/exp.lua", [[
local hang = os.getenv("HANG")
gpuexp.sweep{name = "b", axes = {{"n", {1, 2}}},
  run = function(p)
    if hang then while true do end end
    return {median_ms = p.n, noise_pct = 0.5, samples = 100}
  end}
]])
sh("git add -A && git commit -qm good")
write("repo/notes.txt", "x\n")
sh("git add -A && git commit -qm bad")
local environment = "TMPDIR=" .. quote(work .. "/tmp")
local status = work .. "/status.txt"
local build = string.format("grep -E '^Sig(Blk|Ign)' /proc/self/status > %s; ps -o pgid= -p $$ >> %s; echo $$ >> %s; " ..
  "cat /proc/$(ps -o pgid= -p $$ | tr -d ' ')/comm >> %s", status, status, status, status)
os.execute(string.format("cd %s && { %s %s bisect --good HEAD~1 --bad HEAD --point n=2 --arch sm_90 --build %s " ..
  "repo/exp.lua > stdout 2> stderr & wait; }", quote(work), environment, binary, quote(build)))
local text = read("status.txt") or ""
-- signals 1 to 31 (32 and up are the C library's own)
local function low(name) return tonumber(text:match(name .. ":%s*(%x+)") or "ffffffff", 16) & 0x7fffffff end
T.eq(low("SigBlk"), 0, "the build's signal mask is empty: " .. text)
T.eq(low("SigIgn"), 0, "no signal is ignored in the build (its parent ignored SIGINT): " .. text)
local pgid, pid, leader = text:match("\n%s*(%d+)\n(%d+)\n(%S+)\n")
T.ok(pgid and pgid ~= pid and leader == "gpuexp-guard",
  "the build is in a process group of its own, led by its guard (which ends it if bisect dies): " .. text)

code, stdout, stderr = run("bisect --good HEAD~1 --bad HEAD --point n=2 --arch sm_90 --build-timeout 0.5 " ..
  "--build " .. quote("echo $$ $(ps -o pgid= -p $$) > " .. work .. "/build.pid; sleep 3600 & sleep 3600") .. " repo/exp.lua", environment)
T.eq(code, 1, "the good commit's build timed out: no value (" .. stderr .. ")")
T.ok(stderr:find("the build ran past its 0.5 s limit (--build-timeout) and was ended", 1, true), stderr)
T.ok(group_gone("build.pid"), "the build's group is gone, its background job too")

code, stdout, stderr = run("bisect --good HEAD --bad HEAD --point n=2 repo/exp.lua", environment)
T.eq(code, 2, "good and bad the same commit: usage")
T.ok(stderr:find("--good HEAD and --bad HEAD are the same commit", 1, true), stderr)
code, stdout, stderr = run("bisect --good HEAD~1 --bad HEAD --point n=2 --arch sm_90 --point-timeout 1 repo/exp.lua",
  environment .. " HANG=1")
T.eq(code, 1, "a measurement that hangs: the good commit gives no value (" .. stderr .. ")")
T.ok(stderr:find("gives no value: the point ran past --point-timeout 1 s", 1, true), stderr)

-- 8. bisect stopped during a build: SIGTERM ends the build's whole group and bisect exits 143,
--    its worktrees and folder removed
code, seconds, stderr = interrupt(string.format("bisect --good HEAD~1 --bad HEAD --point n=2 --arch sm_90 --build %s " ..
  "repo/exp.lua", quote("echo $$ $(ps -o pgid= -p $$) > " .. work .. "/build.pid; touch " .. work .. "/building; sleep 3600")), "TERM",
  work .. "/building", environment)
T.eq(code, 143, "bisect stopped during a build: " .. stderr)
T.ok(seconds < 10, string.format("promptly (%.2f s)", seconds))
T.ok(group_gone("build.pid"), "the build was ended with its group")
local pipe = io.popen("ls -A " .. quote(work .. "/tmp") .. " | wc -l")
T.eq(tonumber(pipe:read("l")), 0, "no temporary folder left")
pipe:close()

-- 9. a bisect killed with SIGKILL: its build ends with it (the build's guard ends the build's
--    group), and the next bisect removes the folder it left
os.remove(work .. "/building")
interrupt(string.format("bisect --good HEAD~1 --bad HEAD --point n=2 --arch sm_90 --build %s repo/exp.lua",
  quote("echo $$ $(ps -o pgid= -p $$) > " .. work .. "/build.pid; touch " .. work .. "/building; sleep 3600")), "KILL", work .. "/building",
  environment)
local function folders_left()
  local listing = io.popen("ls -A " .. quote(work .. "/tmp") .. " | wc -l")
  local count = tonumber(listing:read("l"))
  listing:close()
  return count
end
T.eq(folders_left(), 1, "a killed bisect leaves its folder")
T.ok(group_gone("build.pid"), "its build ended with it")
code, stdout, stderr = run("bisect --good HEAD~1 --bad HEAD --point n=2 --arch sm_90 repo/exp.lua", environment)
T.ok(not stderr:find("left running", 1, true), "nothing was left running: " .. stderr)
T.ok(stderr:find("gpuexp bisect: removed .*gpuexp%-bisect%.%w+, left by a bisect that was killed"), stderr)
T.eq(folders_left(), 0, "and it is gone")
pipe = io.popen("git -C " .. quote(work .. "/repo") .. " worktree list | wc -l")
T.eq(tonumber(pipe:read("l")), 1, "and so are its worktrees")
pipe:close()

-- 10. a bisect and its build's guard both killed (the bisect stopped, then the guard killed, then
--     the bisect): the build runs on; the next bisect ends it, proved by the build's pid and start
--     time recorded in the folder, and removes the folder
os.remove(work .. "/building")
os.execute(string.format("cd %s && { %s %s bisect --good HEAD~1 --bad HEAD --point n=2 --arch sm_90 --build %s " ..
  "repo/exp.lua > stdout 2> stderr & pid=$!; i=0; while [ ! -e building ] && [ $i -lt 600 ]; do sleep 0.05; " ..
  "i=$((i+1)); done; kill -STOP $pid; kill -KILL $(cut -d' ' -f2 build.pid); sleep 0.2; kill -KILL $pid; " ..
  "wait $pid; }", quote(work), environment, binary,
  quote("echo $$ $(ps -o pgid= -p $$) > " .. work .. "/build.pid; touch " .. work .. "/building; sleep 3600")))
T.ok(not group_gone_now("build.pid"), "with its guard killed first, the build outlives the bisect")
code, stdout, stderr = run("bisect --good HEAD~1 --bad HEAD --point n=2 --arch sm_90 repo/exp.lua", environment)
T.ok(stderr:find("gpuexp bisect: ended the build or measurement a killed bisect left running in ", 1, true), stderr)
T.ok(group_gone("build.pid"), "the next bisect ended the build it left running")
T.eq(folders_left(), 0, "and removed the folder")

T.done()
