-- The WEAK cases of issue 25 that are about data, locks and environments (not child processes):
-- each with its right answer, one clear message and its documented exit code, nothing modified
-- that the command did not own.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run
local root = io.popen("id -u"):read("l") == "0"

local function exists(name) local f = io.open(work .. "/" .. name, "rb") if f then f:close() end return f ~= nil end
local function plain(stderr, what)
  T.ok(not stderr:find("traceback", 1, true) and not stderr:find("another run is writing", 1, true),
    what .. ": one plain message: " .. stderr)
end

write("k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1, 2}}}, run = function(p) return {median_ms = p.x} end}')

-- ---- locks that cannot be made are not "another run is writing it" ----
local long = string.rep("n", 300) .. ".csv"
local code, _, stderr = run("--arch sm_90 --quiet -o " .. long .. " k.lua")
T.eq(code, 7, "a 300-character output name: a write error")
T.ok(stderr:find("File name too long", 1, true), stderr)
plain(stderr, "a 300-character name")
write("two.lua", [[
gpuexp.sweep{name = "a", axes = {{"x", {1}}}, run = function() return {v = 1} end}
gpuexp.sweep{name = string.rep("s", 300), axes = {{"x", {1}}}, run = function() return {v = 1} end}
]])
code, _, stderr = run("--arch sm_90 --quiet -o two.csv two.lua")
T.ok(code ~= 0 and code ~= 75 and stderr:find("File name too long", 1, true), "a 300-character sweep name: " .. stderr)
plain(stderr, "a 300-character sweep name")
if not root then
  gpuexp.mkdir(work .. "/readonly")
  os.execute("chmod 555 " .. work .. "/readonly")
  code, _, stderr = run("--arch sm_90 --quiet -o readonly/r.csv k.lua")
  T.eq(code, 7, "a read-only folder: a write error")
  plain(stderr, "a read-only folder")
  os.execute("chmod 755 " .. work .. "/readonly")
end
-- a folder the user cannot write (as root on CI: run as nobody): the reason is the folder, not
-- "No such file or directory" (issue 34)
do
  gpuexp.mkdir(work .. "/closed")
  os.execute("chmod 755 " .. work .. " && chmod 555 " .. work .. "/closed")
  local as_user = root and "setpriv --reuid=nobody --regid=nogroup --clear-groups " or ""
  local _, _, exit_code = os.execute(string.format("cd %s && %s%s --arch sm_90 --quiet -o closed/r.csv k.lua " ..
    "> closed.out 2> closed.err", work, as_user, binary))
  stderr = read("closed.err") or ""
  T.eq(exit_code, 7, "a folder that cannot be written: a write error (" .. stderr .. ")")
  T.ok(stderr:find("cannot write closed/r.csv: cannot create the lock file closed/r.csv.lock: Permission denied " ..
    "(its folder is not writable)", 1, true), "the folder is the reason: " .. stderr)
  plain(stderr, "a read-only folder")
  os.execute("chmod 755 " .. work .. "/closed")
end
write("afile", "not a folder\n")
gpuexp.mkdir(work .. "/suite")
write("suite/k.lua", read("k.lua"))
code, _, stderr = run("nightly suite --arch sm_90 --quiet --out afile --history n.sqlite", "GPUEXP_LOCK_DIR=" .. work)
T.eq(code, 2, "nightly --out naming a file: " .. stderr)
T.ok(stderr:find("cannot make the folder afile: a file of that name is there", 1, true), stderr)
plain(stderr, "nightly --out naming a file")
T.eq(read("afile"), "not a folder\n", "the file is untouched")
-- an --inline run that fails to write (exit 7) lets go of its lock and removes it
os.execute(string.format("ln -s /dev/full %s/full.csv", work))
code, _, stderr = run("--arch sm_90 --quiet --inline -o full.csv k.lua")
T.eq(code, 7, "--inline on a full disk: " .. stderr)
T.ok(not exists("full.csv.lock"), "no full.csv.lock left behind")

-- ---- axes: a value twice, a name gpuexp writes itself ----
write("twice.lua", 'gpuexp.sweep{name = "t", axes = {{"n", {1, 2, 1.0}}}, run = function() return {v = 1} end}')
code, _, stderr = run("--arch sm_90 --quiet -o twice.csv twice.lua")
T.eq(code, 1, "an axis value twice: the script's error")
T.ok(stderr:find("twice.lua:1: sweep: axis 'n' has the value 1 twice (values 1 and 3)", 1, true), stderr)
T.ok(not exists("twice.csv"), "nothing written")
-- a NUL byte in an axis value, an axis name or a sweep name: refused at the script's line before
-- anything runs (it crashed the ledger and skipped the remaining points after a wrong
-- "interrupted ... grace time"; issue 34), supervised and inline
for _, case in ipairs({
  {'{{"v", {"a", "b\\0c", "d"}}}', 'sweep: axis \'v\' value 2 ("b\\0c") holds a NUL byte (\\0)'},
  {'{{"v\\0w", {1, 2}}}', 'sweep: axis "v\\0w" holds a NUL byte (\\0)'},
}) do
  write("nul.lua", 'gpuexp.sweep{name = "n", axes = ' .. case[1] .. ', run = function() return {v = 1} end}')
  for _, mode in ipairs({"", "--inline"}) do
    code, _, stderr = run("--arch sm_90 --quiet " .. mode .. " -o nul.csv nul.lua")
    T.eq(code, 1, "a NUL byte in the axes " .. mode .. ": the script's error (" .. stderr .. ")")
    T.ok(stderr:find("nul.lua:1: " .. case[2], 1, true), "said at the script's line: " .. stderr)
    T.ok(not stderr:find("interrupted", 1, true) and not stderr:find("ledger", 1, true), "and nothing else: " .. stderr)
    T.ok(not exists("nul.csv") and not exists("nul.meta.json"), "nothing written")
  end
end
write("nul.lua", 'gpuexp.sweep{name = "n\\0m", axes = {{"v", {1}}}, run = function() return {v = 1} end}')
code, _, stderr = run("--arch sm_90 --quiet -o nul.csv nul.lua")
T.ok(code == 1 and stderr:find([[nul.lua:1: sweep: 'name' "n\0m" holds a NUL byte (\0)]], 1, true), stderr)
-- a write that fails (a full disk) in a supervised run: the run says so, the worker it stops says
-- nothing of an interruption or a grace time
code, _, stderr = run("--arch sm_90 --quiet -o full.csv k.lua")
T.eq(code, 7, "a supervised run on a full disk: " .. stderr)
T.ok(stderr:find("cannot write full.csv", 1, true) and not stderr:find("interrupted", 1, true) and
  not stderr:find("grace", 1, true), "the write failure is the only reason given: " .. stderr)
write("status.lua", 'gpuexp.sweep{name = "s", axes = {{"status", {"a", "b"}}}, run = function() return {v = 1} end}')
code, _, stderr = run("--arch sm_90 --quiet -o status.csv status.lua")
T.eq(code, 1, "an axis named status")
T.ok(stderr:find("status.lua:1: sweep: an axis cannot be named 'status'", 1, true), stderr)

-- ---- SQLite files that are not gpuexp histories: refused, left byte for byte as they were ----
T.eq(run("--arch sm_90 --quiet -o r.csv k.lua"), 0, "a run to record")
local corrupt = string.rep("\0\1garbage", 600)
write("corrupt.db", corrupt)
do -- another program's database, made with SQLite (linked into gpuexp)
  local other = gpuexp._db.open(work .. "/foreign.db")
  other:exec("CREATE TABLE notes(text); INSERT INTO notes VALUES ('mine');")
  other:close()
end
local made_foreign = true
local foreign = made_foreign and read("foreign.db")
for _, case in ipairs({
  {"history --history corrupt.db record r.csv", "corrupt.db is not a gpuexp history: SQLite cannot read it"},
  {"history merge corrupt.db", "corrupt.db is not a gpuexp history"},
  {"--arch sm_90 --quiet --history corrupt.db -o r2.csv k.lua", "corrupt.db is not a gpuexp history"},
  {"history --history foreign.db record r.csv", "foreign.db is an SQLite database of another program", true},
  {"history merge foreign.db h1.db", "foreign.db is an SQLite database of another program", true},
  {"history merge out.db foreign.db", "foreign.db is an SQLite database of another program", true},
}) do
  if made_foreign or not case[3] then
    code, _, stderr = run(case[1])
    T.ok(code == 6 or code == 1, case[1] .. ": exit " .. tostring(code))
    T.ok(stderr:find(case[2], 1, true), case[1] .. ": " .. stderr)
    T.ok(not stderr:find("sqlite3_", 1, true), case[1] .. ": no raw SQLite call in the message: " .. stderr)
  end
end
T.eq(read("corrupt.db"), corrupt, "the corrupt file is as it was")
if foreign then T.eq(read("foreign.db"), foreign, "the foreign database is as it was (no table, no journal mode)") end
T.ok(not exists("out.db"), "merge OUT not created when nothing was merged")
T.eq(run("history --history h1.db record r.csv"), 0, "a history to merge")

-- a history on a read-only disk (where this machine lets the test mount one): a clear message
local disk = work .. "/rodisk"
gpuexp.mkdir(disk)
if os.execute(string.format("mount -t tmpfs -o size=1m tmpfs %s 2>/dev/null", disk)) then
  local ok, problem = pcall(function()
    T.eq(run("history --history rodisk/h.db record r.csv"), 0, "a history on the disk")
    os.execute("mount -o remount,ro " .. disk)
    for _, command in ipairs({"history --history rodisk/h.db record r.csv", "history merge rodisk/h.db h1.db",
      "--arch sm_90 --quiet --history rodisk/h.db -o r3.csv k.lua"}) do
      code, _, stderr = run(command)
      T.ok(code == 6, command .. ": exit " .. tostring(code))
      T.ok(stderr:find("the history rodisk/h.db cannot be written by this user (a read-only file, folder or disk)", 1,
        true) and not stderr:find("sqlite3_", 1, true), command .. ": " .. stderr)
    end
    T.eq(run("history --history rodisk/h.db list"), 0, "and it is read all the same")
  end)
  os.execute("umount " .. disk .. " 2>/dev/null")
  if not ok then error(problem, 0) end
end

-- ---- sites of one history written at once: every one finishes, the site whole ----
for n = 1, 2 do
  T.eq(run(string.format("nightly suite --arch sm_90 --quiet --history sites.db --out sites%d", n),
    "GPUEXP_LOCK_DIR=" .. work), 0, "a night for the site " .. n)
end
local writers = {}
for w = 1, 6 do
  writers[w] = string.format("(%s history --history sites.db site site > s%d.out 2>&1; echo $? > s%d.code) &", binary, w, w)
end
for round = 1, 5 do
  os.execute(string.format("cd %s && { %s wait; }", work, table.concat(writers, " ")))
  for w = 1, 6 do T.eq(read("s" .. w .. ".code"), "0\n", "round " .. round .. ", site " .. w .. ": " .. tostring(read("s" .. w .. ".out"))) end
end
T.ok(read("site/index.html"):find("</html>", 1, true) and read("site/series-1.html"):find("</html>", 1, true), "whole pages")

-- ---- Kubernetes Indexed Jobs ----
code, _, stderr = run("--arch sm_90 --quiet -o k8s.csv k.lua", "JOB_COMPLETION_INDEX=x JOB_COMPLETIONS=4")
T.ok(code == 2 and stderr:find("JOB_COMPLETION_INDEX='x' is not a whole number (Kubernetes sets it to the pod's index",
  1, true), "a bad index: advice about the index: " .. stderr)
code, _, stderr = run("--arch sm_90 --quiet -o k8s.csv k.lua", "JOB_COMPLETION_INDEX=0 JOB_COMPLETIONS=-3")
T.ok(code == 2 and stderr:find("JOB_COMPLETIONS=-3 is not a number of completions", 1, true), "-3 completions: " .. stderr)
code, _, stderr = run("nightly suite --arch sm_90 --quiet --history k8s.sqlite --out k8snight",
  "GPUEXP_LOCK_DIR=" .. work .. " JOB_COMPLETION_INDEX=1 JOB_COMPLETIONS=8")
T.eq(code, 2, "a nightly inside an Indexed Job: refused")
T.ok(stderr:find("JOB_COMPLETION_INDEX is set: a nightly runs every point of every experiment", 1, true), stderr)
T.ok(not exists("k8s.sqlite"), "no partial night recorded")

-- ---- a nightly experiment with no *_ms column: its first night's points are new ----
gpuexp.mkdir(work .. "/rates")
write("rates/g.lua", 'gpuexp.sweep{name = "g", axes = {{"k", {1, 2}}}, columns = {"gbps"}, ' ..
  'run = function(p) return {gbps = 100 * p.k} end}')
local stdout
for n = 1, 2 do
  code, stdout = run(string.format("nightly rates --arch sm_90 --quiet --history rates.sqlite --out rates%d", n),
    "GPUEXP_LOCK_DIR=" .. work)
  T.eq(code, 0, "night " .. n .. " of an experiment with no time column")
  T.ok(stdout:find(n == 1 and "0 same .* 2 new" or "2 same .* 0 new"), "night " .. n .. ": " .. stdout)
end

-- ---- bisect with one commit for both ends ----
gpuexp.mkdir(work .. "/repo")
os.execute(string.format("cd %s/repo && git init -q . && git config user.email t@example.com && git config user.name t " ..
  "&& cp ../k.lua exp.lua && git add exp.lua && git commit -qm one", work))
code, _, stderr = run("bisect --good HEAD --bad HEAD --point x=1 --arch sm_90 repo/exp.lua")
T.eq(code, 2, "bisect with good = bad")
T.ok(stderr:find("--good HEAD and --bad HEAD are the same commit", 1, true), stderr)

-- ---- a compile cache that cannot be written: one warning, the run goes on ----
write("compile.lua", [[
for i = 1, 3 do gpuexp.compile{source = "__global__ void k(float *x) { x[0] = " .. i .. "; }", name = "k" .. i .. ".cu"} end
print("compiled")
]])
code, stdout, stderr = run("--arch sm_90 --quiet compile.lua", "GPUEXP_CACHE_DIR=" .. work .. "/afile/cache")
if stderr:find("NVRTC", 1, true) and code ~= 0 then
  io.stderr:write("note: no NVRTC here; the unwritable cache was not tested\n")
else
  T.eq(code, 0, "an unwritable cache is no error: " .. stderr)
  local _, warnings = stderr:gsub("cannot be written", "")
  T.eq(warnings, 1, "warned once: " .. stderr)
  T.ok(stderr:find("the compile cache " .. work .. "/afile/cache/cubin cannot be written", 1, true), stderr)
end
T.done()
