-- No orphans (issue 34): whatever kills gpuexp, kill -9 included, nothing it started runs on (the
-- runs of nightly, tune and ab, their workers, and a command a point started in the background),
-- and the next run never measures beside a leftover: the nightly's GPU lock is held by everything
-- the night started, so the next night takes it over only once all of it has ended, and ends what
-- still holds it when even the guards were killed. docs/explanation/child-processes.md says so.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read = ws.dir, ws.write, ws.read

local quote = T.quote
local function alive(pid) return pid and os.execute("kill -0 " .. pid .. " 2>/dev/null") end
-- The pid a file holds (written by a measurement), once the file exists (up to 30 s).
local function pid_in(name)
  for _ = 1, 600 do
    local pid = (read(name) or ""):match("^(%d+)\n")
    if pid then return pid end
    os.execute("sleep 0.05")
  end
end
-- Whether every pid is gone within seconds.
local function all_gone(pids, seconds)
  local deadline = gpuexp.clock() + seconds
  repeat
    local any = false
    for _, pid in ipairs(pids) do any = any or alive(pid) end
    if not any then return true end
    os.execute("sleep 0.05")
  until gpuexp.clock() > deadline
  return false
end
-- The parent of a process, and its name.
local function ppid(pid)
  local file = io.open("/proc/" .. pid .. "/stat")
  local text = file and file:read("a") or ""
  if file then file:close() end
  return text:match("^%d+ %b() %a (%d+)")
end
local function name_of(pid)
  local file = io.open("/proc/" .. pid .. "/comm")
  local name = file and file:read("l")
  if file then file:close() end
  return name
end

-- A measurement that says who measures: its process (the worker) and a command it left running in
-- the background; it finds out whether the measurement of an earlier run (ORPHAN_BEFORE) still
-- runs beside it, then spins ORPHAN_SPIN seconds.
local measure = [[
local dir = os.getenv("ORPHAN_DIR")
local function put(name, text) local f = assert(io.open(dir .. "/" .. name, "w")); f:write(text); f:close() end
local function self_pid() local f = io.open("/proc/self/stat"); local pid = f:read("n"); f:close(); return pid end
local function measure(tag)
  local before = os.getenv("ORPHAN_BEFORE")
  local f = before and io.open(dir .. "/" .. before .. ".worker")
  local other = f and f:read("n")
  if f then f:close() end
  put(tag .. ".beside", (other and os.execute("kill -0 " .. other .. " 2>/dev/null")) and "a leftover\n" or "alone\n")
  os.execute("sleep 3600 & echo $! > " .. dir .. "/" .. tag .. ".background")
  put(tag .. ".worker", self_pid() .. "\n")
  local t = gpuexp.clock()
  while gpuexp.clock() - t < tonumber(os.getenv("ORPHAN_SPIN") or "0") do end
end
]]

-- 1. nightly killed with -9 in the middle of a measurement: its run, the run's worker and the
--    command the point started end with it (their guards end them), with no other gpuexp around
gpuexp.mkdir(work .. "/suite")
write("suite/slow.lua", measure .. [[
gpuexp.sweep{name = "slow", axes = {{"n", {1}}},
  run = function(p) measure(os.getenv("ORPHAN_TAG")) return {median_ms = 1, noise_pct = 1, samples = 10} end}
]])
local function night_command(tag, spin, before)
  return string.format("ORPHAN_DIR=%s ORPHAN_TAG=%s ORPHAN_SPIN=%d %s GPUEXP_LOCK_DIR=%s %s nightly suite " ..
    "--arch sm_90 --quiet --history h.sqlite --out night-%s", quote(work), tag, spin,
    before and ("ORPHAN_BEFORE=" .. before) or "", quote(work), binary, tag)
end
-- Starts a command in the background, waits until the measurement named tag has started, and
-- then runs the shell text then (which may use $pid).
local function start(command, tag, then_text)
  os.execute(string.format("cd %s && { %s > %s.out 2> %s.err & pid=$!; i=0; " ..
    "while [ ! -s %s.worker ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; %s; }", quote(work), command, tag,
    tag, tag, then_text))
end
start(night_command("one", 60), "one", "kill -KILL $pid")
local worker, background = pid_in("one.worker"), pid_in("one.background")
T.ok(worker and background, "the first night's measurement started")
T.ok(all_gone({worker, background, ppid(worker)}, 5),
  "its run, the run's worker and the command it started ended with the nightly")

-- 1b. the next night, started at once after a nightly is killed: it takes the GPU's lock over
--     and measures alone
start(night_command("two", 60), "two", "kill -KILL $pid; " .. night_command("three", 0, "two") ..
  " > three.out 2> three.err; echo $? > three.code")
T.eq(read("three.code"), "0\n", "the next night ran: " .. (read("three.err") or ""))
T.eq(read("three.beside"), "alone\n", "and measured alone")
T.ok((read("three.err") or ""):find("took over the lock " .. work .. "/gpuexp-nightly-offline-plan.lock left by process",
  1, true), "it says it took the lock over: " .. (read("three.err") or ""))

-- 2. even with the run's guard killed first (the nightly stopped, the guard killed, then the
--    nightly), so that the run goes on with nobody to end it: the next night ends it (it holds the
--    night's lock: the kernel says so), then measures alone
start(night_command("four", 60), "four", "echo $pid > four.nightly")
worker = pid_in("four.worker")
local nightly = pid_in("four.nightly")
local supervisor = ppid(worker)
local guard = supervisor and ppid(supervisor)
T.eq(guard and name_of(guard), "gpuexp-guard", "the run's parent is its guard")
local lock_text = read("gpuexp-nightly-offline-plan.lock") or ""
T.eq(lock_text:match("^(%d+) %d+\n$"), nightly, "the lock names its holder and its start time: " .. lock_text)
local stat_file = io.open("/proc/" .. nightly .. "/stat")
local started_at = stat_file:read("a"):match("^%d+ %b() %a" .. string.rep(" %S+", 18) .. " (%d+)")
stat_file:close()
T.eq(lock_text:match("^%d+ (%d+)\n$"), started_at, "its start time is /proc's (field 22)")
os.execute(string.format("kill -STOP %s; kill -KILL %s; sleep 0.2; kill -KILL %s", nightly, guard, nightly))
T.ok(not all_gone({worker}, 0.5), "with its guard killed first, the run outlives the nightly")
os.execute(string.format("cd %s && { %s > five.out 2> five.err; echo $? > five.code; }", quote(work),
  night_command("five", 0, "four")))
local stderr = read("five.err") or ""
T.eq(read("five.code"), "0\n", "the next night ran: " .. stderr)
T.eq(read("five.beside"), "alone\n", "and measured alone")
T.ok(stderr:find("took over the lock " .. work .. "/gpuexp-nightly-offline-plan.lock left by process " .. nightly ..
  ", which is gone (ended what it left running: pid ", 1, true), "it says what it ended: " .. stderr)
T.ok(all_gone({worker, supervisor, pid_in("four.background")}, 1), "what the killed night left is gone")

-- 3. tune killed with -9 while a configuration is measured: its run and the run's worker end with
--    it, and tune --resume, started at once, goes on (it exited 75 while the orphan held the
--    output) and measures alone
write("tune.lua", measure .. [[
gpuexp.tune{name = "toy", axes = {{"a", {1, 2, 3}}}, strategy = "brute",
  run = function(p)
    if p.a == 2 then measure(os.getenv("ORPHAN_TAG")) end
    local s = {}
    for i = 1, 20 do s[i] = 1 + 0.1 * p.a + 0.001 * (i % 3) end
    return {median_ms = gpuexp.stats(s).median, samples_ms = s}
  end}
]])
local function tune_command(tag, spin, before, resume)
  return string.format("ORPHAN_DIR=%s ORPHAN_TAG=%s ORPHAN_SPIN=%d %s %s tune --no-plan --quiet %s tune.lua", quote(work),
    tag, spin, before and ("ORPHAN_BEFORE=" .. before) or "", binary, resume and "--resume" or "")
end
start(tune_command("six", 60), "six", "kill -KILL $pid; " .. tune_command("seven", 0, "six", true) ..
  " > seven.out 2> seven.err; echo $? > seven.code")
T.eq(read("seven.code"), "0\n", "tune --resume at once after tune was killed: " .. (read("seven.err") or ""))
T.eq(read("seven.beside"), "alone\n", "it measured alone")
worker = pid_in("six.worker")
T.ok(all_gone({worker, pid_in("six.background")}, 5), "the killed tune's worker and command are gone")

-- 4. ab killed with -9 while it measures: its measuring run ends with it; the next ab removes the
--    folder it left
gpuexp.mkdir(work .. "/tmp")
write("ab.lua", measure .. [[
local measured = false
gpuexp.ab{name = "toy", budget_s = 5,
  variant = function(v)
    return function(reps)
      if not measured then measured = true; measure(os.getenv("ORPHAN_TAG")) end
      local samples = {}
      for i = 1, reps do samples[i] = 0.1 + 0.001 * (i % 3) end
      return samples
    end
  end}
]])
local function ab_command(tag, spin)
  return string.format("TMPDIR=%s/tmp ORPHAN_DIR=%s ORPHAN_TAG=%s ORPHAN_SPIN=%d %s ab --no-plan ab.lua", quote(work),
    quote(work), tag, spin, binary)
end
start(ab_command("eight", 60), "eight", "kill -KILL $pid")
worker = pid_in("eight.worker")
T.ok(all_gone({worker, pid_in("eight.background")}, 5), "ab's measuring run ended with it")
os.execute(string.format("cd %s && { %s > nine.out 2> nine.err; echo $? > nine.code; }", quote(work),
  ab_command("nine", 0)))
T.eq(read("nine.code"), "0\n", "the next ab: " .. (read("nine.err") or ""))
T.ok((read("nine.err") or ""):find("gpuexp ab: removed .*/tmp/gpuexp%-ab%.%w+, left by an ab that was killed"),
  "it removed the killed ab's folder: " .. (read("nine.err") or ""))
local listing = io.popen("ls -A " .. quote(work .. "/tmp"))
T.eq(listing:read("a"), "", "no folder is left")
listing:close()

-- 5. a script's commands: Lua's results, standard input /dev/null, their own group led by a
--    guard; a job a command leaves running runs on while gpuexp runs and ends when gpuexp ends,
--    a daemon that left the group with setsid too
write("commands.lua", [[
local dir = gpuexp.script_dir
local function text(name) local f = io.open(dir .. "/" .. name); local t = f and f:read("a"); if f then f:close() end return t end
print("execute", os.execute("exit 3"))
print("signal", os.execute("kill -TERM $$"))
print("true", os.execute("true"))
print("shell", os.execute())
local pipe = io.popen("echo out; readlink /proc/self/fd/0")
print("popen", (pipe:read("a"):gsub("\n", " ")))
print("close", pipe:close())
local writer = io.popen("cat > " .. dir .. "/written.txt", "w")
writer:write("through the pipe")
print("writer", writer:close(), text("written.txt"))
os.execute("readlink /proc/self/fd/0 > " .. dir .. "/stdin.txt; ps -o pgid= -p $$ > " .. dir .. "/group.txt; " ..
  "cat /proc/$(ps -o pgid= -p $$ | tr -d ' ')/comm > " .. dir .. "/leader.txt")
os.execute("sleep 3600 & echo $! > " .. dir .. "/job.pid")
os.execute("setsid sleep 3600 & echo $! > " .. dir .. "/daemon.pid")
os.execute("sleep 0.2")
local job, daemon = text("job.pid"):match("%d+"), text("daemon.pid"):match("%d+")
print("running", os.execute("kill -0 " .. job), os.execute("kill -0 " .. daemon))
]])
local _, stdout2, stderr2 = ws.run("--quiet --inline --arch sm_90 commands.lua")
T.ok(stdout2:find("execute\tnil\texit\t3\n", 1, true) and stdout2:find("signal\tnil\tsignal\t15\n", 1, true) and
  stdout2:find("true\ttrue\texit\t0\n", 1, true) and stdout2:find("shell\ttrue\n", 1, true),
  "os.execute gives Lua's results: " .. stdout2 .. stderr2)
T.ok(stdout2:find("popen\tout /dev/null \n", 1, true) and stdout2:find("close\ttrue\texit\t0\n", 1, true) and
  stdout2:find("writer\ttrue\tthrough the pipe\n", 1, true), "io.popen reads and writes: " .. stdout2)
T.eq(read("stdin.txt"), "/dev/null\n", "a command's standard input is /dev/null")
T.eq(read("leader.txt"), "gpuexp-guard\n", "its group is led by its guard")
T.ok(stdout2:find("running\ttrue\ttrue\texit\t0\n", 1, true), "the jobs ran on while gpuexp ran: " .. stdout2)
T.ok(all_gone({(read("job.pid") or ""):match("%d+"), (read("daemon.pid") or ""):match("%d+")}, 5),
  "and ended when gpuexp ended, the daemon too")

T.done()
