-- The run engine against hostile input and faults, without a GPU (offline plans): each case a
-- new user hit, with a right answer, nothing lost, and a documented exit code. The numbers in
-- the comments are the exit codes of the README's table.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local json = require("cjson")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run

local function lines_of(path)
  local n = 0
  for _ in (read(path) or ""):gmatch("[^\n]+") do n = n + 1 end
  return n
end

-- ---- several sweeps in one script ----
write("two.lua", [[
local slow = tonumber(os.getenv("SLOW") or "1")
local function sweep(name, out)
  gpuexp.sweep{name = name, out = out, axes = {{"k", {1, 2, 3, 4}}}, columns = {"median_ms", "noise_pct", "samples"},
    run = function(p) return {median_ms = (name == "a" and slow or 1) * p.k, noise_pct = 0.5, samples = 1000} end}
end
sweep("a", os.getenv("OUT_A"))
sweep("b", os.getenv("OUT_B"))
]])
-- with -o (as nightly runs every experiment) and no out of their own: both run, both written
local code, _, stderr = run("--arch sm_90 --quiet -o both.csv two.lua")
T.eq(code, 0, "two sweeps under -o: " .. stderr)
T.eq(lines_of("both.csv"), 5, "the first sweep's rows in both.csv")
T.eq(lines_of("both.b.csv"), 5, "the second sweep ran and wrote beside it")
-- two sweeps naming one file: the script's error (exit 1), named at its line
code, _, stderr = run("--arch sm_90 --quiet two.lua", "OUT_A=same.csv OUT_B=same.csv")
T.eq(code, 1, "two sweeps, one out")
T.ok(stderr:find("two.lua:3: sweep 'b'", 1, true), stderr)
T.ok(stderr:find("same.csv is written by sweep 'a' of this script already", 1, true), stderr)
-- nightly judges every sweep of an experiment: sweep a 1.5x slower is a regression (exit 1)
gpuexp.mkdir(work .. "/suite")
write("suite/two.lua", read("two.lua"))
local function night(n, environment)
  return run(string.format("nightly suite --arch sm_90 --quiet --history h.sqlite --out night%d --no-confirm", n),
    "GPUEXP_LOCK_DIR=" .. work .. " " .. (environment or ""))
end
for n = 1, 3 do T.eq(night(n), 0, "clean night " .. n) end
local stdout
code, stdout = night(4, "SLOW=1.5")
T.eq(code, 1, "sweep a 1.5x slower: a regression")
T.ok(stdout:find("REGRESSIONS (4)", 1, true), "every point of sweep a: " .. stdout)
T.ok(stdout:find("two / a", 1, true), "named by its sweep: " .. stdout)
T.ok(stdout:find("8 points", 1, true), "the points of both sweeps counted: " .. stdout)

-- ---- the output is never the script; an --only with an unknown axis writes nothing ----
write("k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1}}}, run = function() return {v = 1} end}')
local script = read("k.lua")
code, _, stderr = run("--arch sm_90 --quiet -o k.lua k.lua")
T.eq(code, 2, "-o names the script")
T.eq(read("k.lua"), script, "the script is intact")
T.ok(stderr:find("--out names the script k.lua itself", 1, true), stderr)
code, _, stderr = run("--arch sm_90 --quiet --trace k.lua k.lua")
T.ok(code == 2 and read("k.lua") == script, "--trace naming the script: refused, the script intact: " .. stderr)
T.eq(run("--arch sm_90 --quiet -o kept.csv k.lua"), 0, "a run")
local kept = read("kept.csv")
code, _, stderr = run("--arch sm_90 --quiet -o kept.csv --only y=1 k.lua")
T.eq(code, 2, "--only with an axis the sweep lacks")
T.ok(stderr:find("--only names the axis 'y', which sweep 'k' does not have (its axes: x)", 1, true), stderr)
T.eq(read("kept.csv"), kept, "the CSV is untouched")

-- ---- values a cell cannot hold: an error row saying why, never dropped or half-written ----
write("values.lua", [[
gpuexp.sweep{name = "v", axes = {{"case", {"table", "function", "nul", "ok"}}},
  run = function(p)
    if p.case == "table" then return {info = {a = 1, b = "x"}} end
    if p.case == "function" then return {info = print} end
    if p.case == "nul" then return {info = "a\0b"} end
    return {info = "fine"}
  end}
]])
T.eq(run("--arch sm_90 --quiet -o values.csv values.lua"), 5, "values: points that failed exit 5")
local rows = {}
for _, row in ipairs(gpuexp.csv.read(work .. "/values.csv")) do rows[row.case] = row end
T.eq(json.decode(rows.table.info).b, "x", "a table field is kept as JSON")
T.eq(rows["function"].status, "error", "a function field: an error row")
T.ok(rows["function"].error:find("field 'info' is a function", 1, true), rows["function"].error)
T.ok(rows.nul.error:find("holds a NUL byte", 1, true), "a NUL byte: an error row")
-- and a resume finds every point done: nothing runs again, and the error rows still fail the run
-- (issue 34: a resumed run hid them with exit 0)
code, _, stderr = run("--arch sm_90 --resume -o values.csv values.lua")
T.eq(code, 5, "resume: " .. stderr)
T.ok(stderr:find("2 of 4 points failed (2 error)", 1, true), "the earlier failures are said: " .. stderr)
T.ok(not stderr:find("dropped", 1, true), "no row taken for a cut one: " .. stderr)

-- ---- a failing setup ends the sweep once: no crashed rows, resume runs every point ----
write("setup.lua", [[
gpuexp.sweep{name = "s", axes = {{"i", {1, 2, 3, 4, 5, 6}}},
  setup = function() if os.getenv("BROKEN") then error("the setup is broken") end end,
  run = function(p) return {v = p.i} end}
]])
code, _, stderr = run("--arch sm_90 --quiet -o setup.csv setup.lua", "BROKEN=1")
T.eq(code, 1, "a broken setup is the script's error")
local _, mentions = stderr:gsub("the setup is broken", "")
T.eq(mentions, 1, "said once: " .. stderr)
T.ok(stderr:find("setup.lua:2:", 1, true), "at the script's line: " .. stderr)
T.ok(not (read("setup.csv") or ""):find("crashed", 1, true), "no crashed rows")
T.eq(run("--arch sm_90 --quiet --resume -o setup.csv setup.lua"), 0, "resume once the setup works")
T.eq(lines_of("setup.csv"), 7, "every point ran")

-- ---- a damaged metadata file: resume and compare say what to do ----
write("setup.meta.json", "")
code, _, stderr = run("--arch sm_90 --quiet --resume -o setup.csv setup.lua")
T.eq(code, 2, "resume with an empty metadata file")
T.ok(stderr:find("setup.meta.json is empty", 1, true) and stderr:find("--allow-changed", 1, true), stderr)
code, _, stderr = run("compare setup.csv setup.csv")
T.eq(code, 2, "compare without metadata")
T.ok(stderr:find("--resume", 1, true), "compare suggests --resume: " .. stderr)

-- ---- compare on CSVs from other tools ----
write("base.csv", "\239\187\191p,median_ms\r\na,1.0\r\nb,2.0\r\n") -- a BOM and CRLF, as spreadsheets write
write("new.csv", "p,median_ms\na,1.0\nb,2.0\n")
code, stdout, stderr = run("compare --axes p base.csv new.csv")
T.eq(code, 0, "a BOM and CRLF: " .. stderr)
T.ok(stdout:find("2 same", 1, true), stdout)
write("quote.csv", 'p,median_ms\na,1.0\n"b,2.0\nc,3.0\n')
code, _, stderr = run("compare --axes p base.csv quote.csv")
T.eq(code, 2, "an unclosed quote")
T.ok(stderr:find("quote.csv:3: a quoted cell is never closed", 1, true), stderr)
write("ragged.csv", "p,median_ms\na,1.0\nb,2.0,7\n")
code, _, stderr = run("compare --axes p base.csv ragged.csv")
T.ok(code == 2 and stderr:find("ragged.csv:3: 3 cells where the header has 2", 1, true), "a ragged row: " .. stderr)
write("word.csv", "p,median_ms\na,1.0\nb,fast\n")
code, _, stderr = run("compare --axes p base.csv word.csv")
T.ok(code == 2 and stderr:find("word.csv:3: median_ms is 'fast', not a number", 1, true), "a word for a number: " .. stderr)
-- a point written twice (this hid a 4.5x slowdown: the last row won)
write("twice.csv", "p,median_ms\na,1.0\nb,9.0\nb,2.0\n")
code, _, stderr = run("compare --axes p base.csv twice.csv")
T.eq(code, 2, "a point with two rows")
T.ok(stderr:find("twice.csv:4: a second row for the point p=b", 1, true), stderr)
-- a run killed before its first row
write("empty.csv", "p,median_ms\n")
code, _, stderr = run("compare --axes p base.csv empty.csv")
T.ok(code == 2 and stderr:find("has no rows", 1, true), "a header-only NEW.csv: " .. stderr)
code, _, stderr = run("compare --axes '' base.csv new.csv")
T.ok(code == 2 and stderr:find("--axes needs at least one column", 1, true), "--axes '': " .. stderr)
-- failing before and now: not a regression (exit 0); ok before, failing now: exit 1
write("fail_base.csv", "p,median_ms,status\na,1.0,ok\nb,,error\n")
write("fail_new.csv", "p,median_ms,status\na,1.0,ok\nb,,error\n")
T.eq(run("compare --axes p fail_base.csv fail_new.csv"), 0, "failing in both: no regression")
write("fail_now.csv", "p,median_ms,status\na,,error\nb,,error\n")
T.eq(run("compare --axes p fail_base.csv fail_now.csv"), 1, "ok before, failing now")
-- baselines that are no number a change can be computed from
write("odd_base.csv", "p,median_ms\na,0\nb,-2\nc,inf\nd,nan\n")
write("odd_new.csv", "p,median_ms\na,1\nb,1\nc,1\nd,1\n")
code, stdout, stderr = run("compare --axes p odd_base.csv odd_new.csv")
T.eq(code, 2, "unusable baselines: nothing to judge against, refused (never '0 slower')")
T.ok(not stdout:find("nan%%") and not stdout:find("inf%%"), "no nan% or inf%: " .. stdout)
T.ok(stderr:find("no point of odd_new.csv has a baseline value in median_ms", 1, true), "judged as having no baseline: " ..
  stderr)
-- a folder, and metadata whose axes are not axes
gpuexp.mkdir(work .. "/folder.csv")
code, _, stderr = run("compare --axes p folder.csv new.csv")
T.ok(code == 2 and stderr:find("cannot read folder.csv", 1, true) and not stderr:find("traceback"), "a folder: " .. stderr)
write("axes.csv", "p,median_ms\na,1\n")
write("axes.meta.json", '{"sweep": {"axes": [1, 2]}}')
code, _, stderr = run("compare axes.csv axes.csv")
T.ok(code == 2 and stderr:find("sweep.axes[1] is not", 1, true), "numbers for axes: " .. stderr)
-- invalid UTF-8 in a cell: the JSON and JUnit outputs stay valid
write("bytes_base.csv", "p,median_ms\n\255x,1\n")
write("bytes_new.csv", "p,median_ms\n\255x,2\n")
code, stdout = run("compare --axes p --json bytes_base.csv bytes_new.csv")
T.ok(pcall(json.decode, stdout), "JSON with invalid UTF-8 in a point: " .. stdout)
code, stdout = run("compare --axes p --junit bytes_base.csv bytes_new.csv")
T.ok(utf8.len(stdout) ~= nil, "JUnit is valid UTF-8")

-- ---- merge: quoted newlines, mixed GPU models ----
local function part(name, gpu, index, cells)
  write(name .. ".csv", "k,note,status,error\n" .. cells)
  write(name .. ".meta.json", json.encode({script_hash = "h", gpu = {name = gpu}, gpus = {{name = gpu, uuid = gpu}},
    sweep = {name = "m", points = 2, axes = {{name = "k", values = {1, 2}}}, shard = {index = index, count = 2},
      share_cells = {{tostring(index + 1)}}}}))
end
part("p0", "H200", 0, '1,"two\nlines",ok,\n')
part("p1", "H200", 1, "2,plain,ok,\n")
code, _, stderr = run("merge merged.csv p0.csv p1.csv")
T.eq(code, 0, "merge: " .. stderr)
local merged = gpuexp.csv.read(work .. "/merged.csv")
T.eq(merged[1].note, "two\nlines", "a cell with a newline survives the merge")
T.eq(#merged, 2, "both rows")
part("p1", "A100", 1, "2,plain,ok,\n")
code, _, stderr = run("merge mixed.csv p0.csv p1.csv")
T.eq(code, 2, "parts from two GPU models")
T.ok(stderr:find("p1.csv was measured on A100, p0.csv on H200", 1, true), stderr)
T.eq(run("merge --allow-mixed mixed.csv p0.csv p1.csv"), 0, "--allow-mixed")
local mixed = json.decode(read("mixed.meta.json"))
T.eq(#mixed.gpus, 2, "both GPU models listed")

-- ---- tracebacks that were: now messages with exit 2 ----
for _, case in ipairs({
  {"--arch sm_90 --shard 0/99999999999999999999 k.lua", "--shard takes I/N"},
  {"--arch sm_90 --devices abc k.lua", "--devices takes GPU numbers"},
  {"history --history h.sqlite list --limit 1.5", "--limit takes a whole number"},
  {"nightly suite --arch sm_99", "sm_99"},
}) do
  code, _, stderr = run(case[1])
  T.eq(code, 2, case[1])
  T.ok(stderr:find(case[2], 1, true) and not stderr:find("stack traceback", 1, true), case[1] .. ": " .. stderr)
end
code, _, stderr = run("--arch sm_90 --quiet -o s.csv k.lua", "SLURM_ARRAY_TASK_ID=3.5 SLURM_ARRAY_TASK_COUNT=4")
T.ok(code == 2 and stderr:find("SLURM_ARRAY_TASK_ID='3.5' is not a whole number", 1, true), "Slurm 3.5: " .. stderr)
-- --array=0-6:2: tasks 0, 2, 4, 6 are shares 0..3 of 4
write("shard.lua", 'gpuexp.sweep{name = "sh", axes = {{"i", {1, 2, 3, 4, 5, 6, 7, 8}}}, run = function(p) return {v = p.i} end}')
code, _, stderr = run("--arch sm_90 --quiet -o step.csv shard.lua",
  "SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=2")
T.eq(code, 0, "a Slurm array with a step: " .. stderr)
local share = gpuexp.csv.read(work .. "/step.shard-3-of-4.csv")
T.eq(#share, 2, "task 6 is share 3 of 4")
T.eq(share[1].i, 4, "its first point")
T.eq(run("--arch sm_90 --quiet --point-timeout 1e20 -o big.csv k.lua"), 0, "--point-timeout 1e20")
-- a Kubernetes Indexed Job: JOB_COMPLETION_INDEX of JOB_COMPLETIONS (the manifest passes the count)
code, _, stderr = run("--arch sm_90 --quiet -o k8s.csv shard.lua", "JOB_COMPLETION_INDEX=2 JOB_COMPLETIONS=4")
T.eq(code, 0, "an Indexed Job's pod: " .. stderr)
local pod = gpuexp.csv.read(work .. "/k8s.shard-2-of-4.csv")
T.ok(#pod == 2 and pod[1].i == 3 and pod[2].i == 7, "index 2 of 4 runs points 3 and 7")
code, _, stderr = run("--arch sm_90 --quiet -o k8s.csv shard.lua", "JOB_COMPLETION_INDEX=2")
T.ok(code == 2 and stderr:find("JOB_COMPLETIONS is not set", 1, true), "no completions count: " .. stderr)
code, _, stderr = run("--arch sm_90 --quiet -o k8s.csv shard.lua", "JOB_COMPLETION_INDEX=4 JOB_COMPLETIONS=4")
T.ok(code == 2 and stderr:find("outside 0..3", 1, true), "an index past the count: " .. stderr)
local manifest = assert(io.open(gpuexp.script_dir .. "/../../experiments/kubernetes/sweep-job.yaml")):read("a")
T.eq(manifest:match("\n  completions: (%d+)"), manifest:match("name: JOB_COMPLETIONS%s+value: \"(%d+)\""),
  "the recipe passes its completions as JOB_COMPLETIONS")

-- ---- the history ----
local history = work .. "/h.sqlite"
code, stdout = run("history --history h.sqlite prune --run 999")
T.eq(code, 2, "prune of an unknown run")
T.ok(stdout:find("deleted 0 run(s)", 1, true), stdout)
T.eq(run("--arch sm_90 --quiet -o once.csv k.lua"), 0, "a run to record")
code, stdout = run("history --history h.sqlite record once.csv")
T.eq(code, 0, "record")
local first = stdout:match("as run (%d+)")
code, stdout = run("history --history h.sqlite record once.csv")
T.ok(code == 0 and stdout:find("was recorded already, as run " .. first, 1, true), "recorded twice: one run: " .. stdout)
-- listing opens the file read-only: no WAL files are made beside it
os.remove(history .. "-wal"); os.remove(history .. "-shm")
T.eq(run("history --history h.sqlite list"), 0, "list")
T.ok(read("h.sqlite-shm") == nil and read("h.sqlite-wal") == nil, "a read-only open: nothing written beside the history")
-- a history from a newer gpuexp
local newer = gpuexp._db.open(work .. "/newer.sqlite")
newer:exec("CREATE TABLE gpuexp_schema(version INTEGER NOT NULL); INSERT INTO gpuexp_schema VALUES (99);")
newer:close()
code, _, stderr = run("history --history newer.sqlite list")
T.eq(code, 6, "a newer schema")
T.ok(stderr:find("written by a newer gpuexp", 1, true) and not stderr:find("lua/gpuexp/", 1, true), stderr)

-- ---- one writer per output ----
write("slow.lua", [[
gpuexp.sweep{name = "slow", axes = {{"i", {1, 2}}},
  run = function(p) if p.i == 1 then os.execute("sleep 2") end return {v = p.i} end}
]])
local background = io.popen(string.format("cd %s && %s --arch sm_90 --quiet -o busy.csv slow.lua 2>&1; echo exit=$?", work,
  binary))
os.execute("sleep 0.7")
code, _, stderr = run("--arch sm_90 --quiet -o busy.csv k.lua")
T.eq(code, 75, "a second run on the same output: try later")
T.ok(stderr:find("busy.csv: another run is writing it", 1, true) and stderr:find("pid", 1, true), stderr)
local first_run = background:read("a")
background:close()
T.ok(first_run:find("exit=0", 1, true), "the first run finished: " .. first_run)
T.eq(lines_of("busy.csv"), 3, "with its rows")
T.eq(run("--arch sm_90 --quiet -o busy.csv k.lua"), 0, "the output is free again")

-- ---- a full disk: /dev/full, then a 64 KB tmpfs where this machine lets the test mount one ----
os.execute(string.format("ln -s /dev/full %s/full.csv", work))
code, _, stderr = run("--arch sm_90 --quiet --inline -o full.csv k.lua")
T.eq(code, 7, "a sweep writing to /dev/full")
T.ok(stderr:find("cannot write full.csv: ", 1, true) and stderr:find("No space left on device", 1, true), stderr)
-- compare, merge and export on a full disk (/dev/full written in place; a file size limit for a
-- regular file): exit 7, never a cut file; tests/lua/test_outputs.lua has the other cases
code, _, stderr = run("compare --axes p -o /dev/full base.csv new.csv")
T.ok(code == 7 and stderr:find("No space left on device", 1, true), "compare -o to a full disk: " .. stderr)
T.ok(io.popen("stat -c %F /dev/full"):read("l"):find("character", 1, true), "/dev/full is still the device")
T.eq(run("merge merged.csv p0.csv p1.csv --allow-mixed", "trap '' XFSZ; ulimit -f 0;"), 7, "merge to a full disk")
T.eq(#gpuexp.csv.read(work .. "/merged.csv"), 2, "the earlier merged.csv is intact")

T.eq(run("--arch sm_90 --quiet -o exported.csv k.lua"), 0, "a run to export")
T.eq(run("history --history h.sqlite record exported.csv"), 0, "recorded")
local _, listed = run("history --history h.sqlite list --limit 1")
local newest = listed:match("\n%s*(%d+)%s")
code, _, stderr = run("history --history h.sqlite export " .. newest .. " -o export.csv", "trap '' XFSZ; ulimit -f 0;")
T.eq(code, 7, "history export to a full disk: " .. stderr)
T.ok(read("export.csv") == nil, "no cut export left")

-- ---- a point time limit below a millisecond: raised to one, never a hang ----
local started = gpuexp.clock()
code = run("--arch sm_90 --quiet --point-timeout 1e-9 -o tiny.csv k.lua")
T.ok(code == 0 or code == 5, "--point-timeout 1e-9 ends (exit " .. tostring(code) .. ")")
T.ok(gpuexp.clock() - started < 10, "and ends quickly")

-- ---- SIGTERM to a nightly: the running experiment ends too, the GPU's lock is released ----
gpuexp.mkdir(work .. "/sleepy")
write("sleepy/sleepy_marker.lua", [[
gpuexp.sweep{name = "s", axes = {{"i", {1, 2}}}, run = function() os.execute("sleep 5") return {median_ms = 1} end}
]])
os.execute(string.format("cd %s && (GPUEXP_LOCK_DIR=%s %s nightly sleepy --arch sm_90 --quiet --history term.sqlite " ..
  "--out termnight > /dev/null 2> term.err & echo $! > term.pid; sleep 1.5; kill -TERM $(cat term.pid); " ..
  "wait $(cat term.pid); echo $? > term.code)", work, work, binary))
T.eq(read("term.code"), "143\n", "SIGTERM: exit 143: " .. tostring(read("term.err")))
local left = T.processes_in(work, "sleepy_marker.lua", 5)
T.eq(#left, 0, "no experiment process outlives the nightly: " .. table.concat(left, "; "))
T.ok(read("gpuexp-nightly-offline-plan.lock") == nil, "the lock file is gone")
local plan_lock = work .. "/gpuexp-nightly-offline-plan.lock"
T.ok(gpuexp._process.lock(plan_lock), "the next nightly can take the lock")
gpuexp._process.unlock(plan_lock)

-- a resume that must rewrite its CSV (a cut last row) on a full disk: exit 7, the CSV as it was
T.eq(run("--arch sm_90 --quiet -o cut.csv setup.lua"), 0, "a run to cut")
local cut = read("cut.csv"):gsub("[^\n]*\n$", "") .. "6,6"
write("cut.csv", cut)
code, _, stderr = run("--arch sm_90 --quiet --inline --resume -o cut.csv setup.lua", "trap '' XFSZ; ulimit -f 0;")
T.eq(code, 7, "resume on a full disk: " .. stderr)
T.eq(read("cut.csv"), cut, "the CSV is as it was, never emptied")
T.eq(run("--arch sm_90 --quiet --resume -o cut.csv setup.lua"), 0, "room again: the resume finishes")
T.eq(lines_of("cut.csv"), 7, "every point once")

local disk = work .. "/disk"
gpuexp.mkdir(disk)
if os.execute(string.format("mount -t tmpfs -o size=64k tmpfs %s 2>/dev/null", disk)) then
  local ok, problem = pcall(function()
    write("many.lua", [[
gpuexp.sweep{name = "many", axes = {{"i", (function() local t = {} for i = 1, 2000 do t[i] = i end return t end)()}},
  run = function(p) return {value = p.i * 1.5, label = "a label to fill the disk faster"} end}
]])
    code, _, stderr = run("--arch sm_90 --quiet -o disk/many.csv many.lua")
    T.eq(code, 7, "the disk filled up: exit 7")
    T.ok(stderr:find("No space left on device", 1, true) and stderr:find("--resume", 1, true), stderr)
    local text = read("disk/many.csv")
    T.ok(text and text:sub(-1) == "\n", "no cut last row")
    local before = lines_of("disk/many.csv")
    T.ok(before > 10 and before < 2001, "some rows written: " .. before)
    for _, row in ipairs(gpuexp.csv.read(disk .. "/many.csv")) do T.eq(row.status, "ok", "every row whole") end
    -- room again (a bigger disk): --resume finishes exactly once
    os.execute(string.format("cp -a %s %s/saved && umount %s && cp -a %s/saved/. %s/ && rm -rf %s/saved", disk, work, disk,
      work, disk, work))
    code, _, stderr = run("--arch sm_90 --quiet --resume -o disk/many.csv many.lua")
    T.eq(code, 0, "resume on a disk with room: " .. stderr)
    local seen, count = {}, 0
    for _, row in ipairs(gpuexp.csv.read(disk .. "/many.csv")) do
      T.ok(not seen[row.i], "point " .. row.i .. " once")
      seen[row.i], count = true, count + 1
    end
    T.eq(count, 2000, "every point exactly once")
  end)
  os.execute("umount " .. disk .. " 2>/dev/null")
  if not ok then error(problem, 0) end
else
  io.stderr:write("note: no tmpfs could be mounted here (not root, or no CAP_SYS_ADMIN); the small-disk case is " ..
    "skipped, /dev/full was tested\n")
end
T.done()
