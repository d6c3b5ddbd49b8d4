-- gpuexp nightly and gpuexp history without a GPU: an offline plan recorded into an explicit
-- history drives whole nights of a fake experiment whose times the test sets. Clean nights exit 0,
-- an injected 5% slowdown exits 1 naming the point (with its report, plot and hook), a suspect that
-- the re-measure does not confirm is not a regression, a point that starts failing is one; a bad
-- suite, an unwritable history and a held lock each get their exit code.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws, fake_night = T.fake_nights(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run
local history = work .. "/history.sqlite"
local function night(n, environment, extra) return fake_night(history, n, environment, extra) end

-- 1. four clean nights: the first has no baseline, the rest compare with it
for n = 1, 4 do
  local code, stdout, stderr = night(n)
  T.eq(code, 0, "clean night " .. n .. " exit code (" .. stderr .. ")")
  if n == 1 then T.ok(read("night1/report.md"):find("no baseline yet", 1, true), "the first night says it has no baseline") end
  if n == 4 then T.ok(stdout:find("0 slower (regressions), 0 faster, 3 same", 1, true), "night 4: 3 points same: " .. stdout) end
  T.ok(stdout:find("3 points, %d+ s %(counters 1%.5 s%)"), "what the counters cost the night: " .. stdout)
end
local code, stdout = run("history --history " .. history .. " list")
T.eq(code, 0, "history list")
local listed = 0
for _ in stdout:gmatch("nightly%s+fake") do listed = listed + 1 end
T.eq(listed, 4, "four nightly runs listed")

-- --metric: the column judged (a direction it cannot guess must be said)
T.eq(night(41, nil, "--metric noise_pct"), 2, "--metric with no known direction: a usage error")
code, stdout = night(42, nil, "--metric median_ms:lower")
T.eq(code, 0, "--metric median_ms:lower: " .. stdout)

-- 2. b 5% slower, in the first measurement and the re-measure: a regression, exit 1
write("hook.sh", "echo \"$GPUEXP_NIGHTLY_EXIT $1 $GPUEXP_REPORT_HTML\" > " .. work .. "/hook.txt\n")
code, stdout = night(5, "FAKE_SLOW=b=5", "--on-regression 'sh " .. work .. "/hook.sh'")
T.eq(code, 1, "exit code of a night with a 5% slowdown")
T.ok(stdout:find("REGRESSIONS (1):", 1, true), "the summary starts with the regressions: " .. stdout)
T.ok(stdout:find("case=b", 1, true) and stdout:find("+5.0", 1, true), "names the point and the change: " .. stdout)
T.ok(stdout:find("re-measured +5.0", 1, true), "the re-measure confirmed it: " .. stdout)
local report = read("night5/report.md")
T.ok(report and report:find("| fake | case=b | median_ms |", 1, true), "the report's regression table")
T.ok(stdout:find("fake case=b: instructions +5.0% (the time moved +5.", 1, true), "what changed, explained: " .. stdout)
T.ok(report:find("instructions +5.0%", 1, true), "and in the report")
T.ok(read("night5/report.html"):find("<img src='plots/01.png'", 1, true), "the HTML shows the history plot")
T.ok(read("night5/plots/01.png"), "the plot was drawn")
-- the same model printed as JUnit (one failure: the regression) and JSON
local junit = read("night5/report.xml")
local _, junit_failures = junit:gsub("<failure ", "")
T.eq(junit_failures, 1, "JUnit: one failing test case")
T.ok(junit:find('<testcase classname="fake" name="case=b median_ms"><failure', 1, true), "JUnit names the point: " .. junit)
local night5 = require("cjson").decode(read("night5/report.json"))
T.eq(#night5.regressions, 1, "JSON: one regression")
T.eq(night5.regressions[1].point, "case=b", "JSON: the point")
T.eq(night5.exit_code, 1, "JSON: the exit code")
T.eq(night5.counts.slower, 1, "JSON: the counts")
-- the HTML report as a browser reads it
local dom = ws.browser_dom("night5/report.html")
if dom then
  T.ok(dom:find("<h2>Regressions (1)</h2>", 1, true), "the browser's DOM has the regression: " .. dom:sub(1, 300))
  T.ok(dom:find('<img src="plots/01.png"', 1, true), "and its plot")
  local _, rows = dom:gsub("<tr>", "")
  T.ok(rows >= 4, "and the table of points (" .. rows .. " rows)")
end
local real_work = gpuexp._realpath(work)
T.eq(read("hook.txt"), string.format("1 %s/night5/report.md %s/night5/report.html\n", real_work, real_work),
  "the hook ran with the report (absolute paths)")
-- that night is now a run in the history: exclude it so it does not shift later baselines
local id = stdout:match("recorded as run (%d+)")
code, stdout = run("history --history " .. history .. " list --limit 1")
id = stdout:match("\n%s*(%d+)%s")
T.eq(run("history --history " .. history .. " exclude " .. id), 0, "exclude the bad night")

-- 3. c 8% slower in the first measurement only: a suspect, not confirmed, exit 0
code, stdout = night(6, "FAKE_FLAKY=c=8")
T.eq(code, 0, "a suspect the re-measure does not confirm is no regression")
T.ok(stdout:find("(1 suspects not confirmed by the re-measure)", 1, true), stdout)
T.ok(read("night6/report.md"):find("suspect, not confirmed", 1, true), "the report says why")
-- the same night with --no-confirm calls it a regression
code = night(7, "FAKE_FLAKY=c=8", "--no-confirm")
T.eq(code, 1, "--no-confirm: the first measurement decides")
code, stdout = run("history --history " .. history .. " list --limit 1")
T.eq(run("history --history " .. history .. " exclude " .. stdout:match("\n%s*(%d+)%s")), 0, "exclude night 7")

-- 4. a point that was ok starts failing: a regression
code, stdout = night(8, "FAKE_FAIL=a")
T.eq(code, 1, "a point failing now is a regression")
T.ok(stdout:find("ok in the baseline, now error", 1, true), stdout)

-- 4b. an experiment with no time column: its points are judged on their status
write("statuses.lua", [[
gpuexp.sweep{name = "statuses", axes = {{"i", {1, 2, 3}}}, run = function(p)
  if p.i == tonumber(os.getenv("FAKE_BREAK") or "0") then os.exit(134) end -- a worker dying at the point
  return {value = p.i}
end}
]])
write("statuses.suite", "statuses.lua\n")
local function status_night(n, environment)
  return run(string.format("nightly statuses.suite --arch sm_90 --history %s --out status%d", history, n),
    string.format("GPUEXP_LOCK_DIR=%s %s", work, environment or ""))
end
T.eq(status_night(1), 0, "a clean night of an experiment with no time column")
code, stdout = status_night(2, "FAKE_BREAK=2")
T.eq(code, 1, "its point 2 crashing is a regression")
T.ok(stdout:find("REGRESSIONS (1):", 1, true) and stdout:find("i=2%s+status.*ok in the baseline, now crashed"), stdout)
code, stdout = status_night(3, "FAKE_BREAK=2")
T.eq(code, 1, "still crashing: the baseline's earlier nights had it ok")
code, stdout = run("history --history " .. history .. " list --limit 2")
for runid in stdout:gmatch("\n%s*(%d+)%s") do T.eq(run("history --history " .. history .. " exclude " .. runid), 0, "exclude") end
code = status_night(4, "FAKE_BREAK=2")
T.eq(code, 1, "night 4 (baseline: night 1)")

-- 5. a suite file naming a missing experiment; an unwritable history; a held lock; no GPU
write("bad.suite", "# the nightly suite\nsuite/fake.lua\nsuite/missing.lua --size 4\n")
local stderr
code, _, stderr = run("nightly bad.suite --arch sm_90 --history " .. history)
T.eq(code, 2, "a suite naming a missing experiment")
T.ok(stderr:find("bad.suite:3: the experiment ./suite/missing.lua does not exist", 1, true), stderr)
write("good.suite", "suite/fake.lua   # one experiment\n")
code, _, stderr = run("nightly good.suite --arch sm_90 --history /proc/gpuexp/history.sqlite")
T.eq(code, 6, "an unwritable history")
T.ok(stderr:find("the history cannot be used", 1, true), stderr)
T.ok(gpuexp._process.lock(work .. "/gpuexp-nightly-offline-plan.lock"), "this test holds the plan's nightly lock (a GPU's is named by its UUID)")
code, _, stderr = night(9)
T.eq(code, 75, "another nightly holds the GPU")
T.ok(stderr:find("another nightly is running on GPU 0", 1, true), stderr)
local has_gpu = pcall(gpuexp.device_count) and gpuexp.device_count() > 0
if not has_gpu then
  code, _, stderr = run("nightly suite --history " .. history)
  T.eq(code, 3, "no GPU: exit 3")
end

-- 6. history export gives the CSV back; prune keeps the newest
code, stdout = run("history --history " .. history .. " list --limit 100")
local first = tonumber(stdout:match("(%d+)%s+%S+%s+nightly%s+fake%s+fake%s+offline plan for sm_90[^\n]*\n$"))
T.ok(first, "the oldest run is listed last: " .. stdout)
T.eq(run(string.format("history --history %s export %d -o export.csv", history, first)), 0, "export")
T.eq(read("export.csv"), read("night1/fake.csv"), "the exported run is the night's CSV byte for byte")
code, stdout = run("history --history " .. history .. " prune --keep 3")
T.eq(code, 0, "prune")
T.ok(stdout:find("kept the newest 3", 1, true), stdout)
T.eq(run(string.format("history --history %s show %d", history, first)), 2, "the pruned run is gone")

T.done()
