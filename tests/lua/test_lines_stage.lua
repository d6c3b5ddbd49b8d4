-- The nightly's line stage and bisect's (commands/lines.lua) without a GPU: a git repository with
-- two commits of an experiment whose run, given --lines DIR, writes a recorded profile into DIR (the
-- base build's at the first commit, the new one's at the second: tests/fixtures/lines), the point
-- profiled at the good commit in a worktree and at this one in place, its lines ranked into the
-- regression's explanation and summary, the night's file the site reads; the night's Markdown, HTML
-- and JSON reports and the history site showing them (checked by tests/gpu/test_nightly_lines.lua's
-- own checks); and why it is not taken (CUPTI refused in the point's run, said in the reports; the
-- same commit, no commit recorded, the time spent, no git). Nothing changes a verdict.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local lines = require("gpuexp.commands.lines")
local judge = require("gpuexp.judge.lines")
local json = require("gpuexp.store.json")
local binary = arg[1]
gpuexp.executable = binary
local fixtures = gpuexp.script_dir .. "/../fixtures/lines"

local ws = T.workspace(binary)
local repo = ws.dir .. "/repo"
gpuexp.mkdir(repo)
local function git(...)
  local argv = {"git", "-C", repo, "-c", "user.email=t@t", "-c", "user.name=t", ...}
  local code = gpuexp._process.run(argv, {output = "/dev/null"})
  T.eq(code, 0, "git " .. table.concat({...}, " "))
end
local EXPERIMENT = [[
-- writes the recorded %s profile where --lines asks (an offline plan profiles nothing itself)
local broken = io.open("%s/broken", "rb")
if broken then broken:close() error("this commit's experiment is broken") end
gpuexp.sweep{name = "exp", axes = {{"x", {1, 2}}}, run = function(p)
  local folder = gpuexp.run_options.lines
  local refused = io.open("%s/refuse", "rb")
  if refused then refused:close() end
  if folder and refused then
    -- as a run whose CUPTI cannot be loaded says it (api/lines.lua), and no profile written
    io.stderr:write("gpuexp --lines: no line profile of fixture: CUPTI not found (tried /nowhere/libcupti.so): " ..
      "install the CUDA toolkit's CUPTI or set GX_LIBCUPTI\n")
  elseif folder then
    gpuexp.mkdir(folder)
    local from = assert(io.open("%s/added.%s.lines.json", "rb"))
    local to = assert(io.open(folder .. "/fixture-1.lines.json", "wb"))
    to:write(from:read("a"))
    from:close()
    to:close()
  end
  return {median_ms = 1}
end}
]]
git("init", "-q")
T.write(repo .. "/exp.lua", EXPERIMENT:format("base", ws.dir, ws.dir, fixtures, "base"))
git("add", "exp.lua")
git("commit", "-q", "-m", "good")
local good = io.popen("git -C " .. repo .. " rev-parse HEAD"):read("l")
T.write(repo .. "/exp.lua", EXPERIMENT:format("new", ws.dir, ws.dir, fixtures, "new"))
git("commit", "-q", "-a", "-m", "bad")
local bad = io.popen("git -C " .. repo .. " rev-parse HEAD"):read("l")

-- a night as nightly.lua holds it, its history answering the good night's commit
local function night_of(commit_of_good, options)
  options = options or {}
  local night = {out_dir = ws.dir .. "/night", options = {confirm = true, quiet = true, pass = {"--arch", "sm_90"},
    lines_timeout = options.timeout}, db = {rows = function() return {{git_commit = commit_of_good}} end}}
  gpuexp.mkdir(night.out_dir .. "/confirm")
  local e = {verdict = "slower", key = "x=1", point = "x=1", change_pct = 24, explanation = "instructions +20%",
    state = {since = 2}, metric = "median_ms", base = 1, new = 1.24, baseline = {1}, threshold_pct = 2}
  local result = {name = "exp", run_id = 2, state = {nights = {1}}, regressions = {e}, run = {}}
  return night, e, result
end
local tools = {only_spec = function() return "x=1" end}
local experiment = {name = "exp", path = repo .. "/exp.lua", args = {}}

local night, e, result = night_of(good)
local stop = lines.night_stage(night, experiment, result, tools)
T.eq(stop, nil, "no stop")
T.ok(e.lines, "the regression's lines: " .. tostring(e.explanation))
T.eq(e.lines.lines[1].where, "fixture.cu:8", "the added line first")
T.eq(e.lines.base_commit, good, "against the good night's commit")
T.eq(e.lines.new_commit, bad, "this night's")
T.ok(e.explanation:find("instructions +20%; line profiles (" .. good:sub(1, 10) .. ".." .. bad:sub(1, 10), 1, true),
  "the explanation's sentence: " .. e.explanation)
T.ok(e.explanation:find("fixture.cu:8", 1, true), "names the line")
T.ok(not e.explanation:find(";;", 1, true) and e.explanation:find(": `", 1, true), "the line's text quoted: " .. e.explanation)
local written = json.decode(T.read(judge.night_path(night.out_dir, "exp")))
T.eq(written[1].key, "x=1", "the night's file: the point")
T.eq(judge.recorded(e, {info = {sweep = {output = night.out_dir .. "/exp.csv"}}, record = {experiment = "exp"}}, {}).lines[1].where,
  "fixture.cu:8", "the site reads it back")
-- the night's reports (judge/report.lua's printers over its model), checked as
-- tests/gpu/test_nightly_lines.lua checks a GPU's night: its checks, run here on these
local report = require("gpuexp.judge.report")
local checks = assert(loadfile(gpuexp.script_dir .. "/../gpu/test_nightly_lines.lua"))({})
local function write_reports(night_dir, regression, result_of)
  local model = report.model{id = "night", suite = "suite", history = "h.sqlite", gpu = "GPU", driver = "1", exit_code = 1,
    elapsed_s = 2, results = {{name = "exp", comparison = {points = {regression}}, regressions = result_of.regressions}}}
  for _, file in ipairs(report.files) do
    require("gpuexp.store.csv").write_printed(night_dir .. "/" .. file[1], function(out) file[2](model, out) end)
  end
end
write_reports(night.out_dir, e, result)
local added_line = json.decode(T.fixture("lines/added.new.lines.json")).sources["fixture.cu"]:match("^" ..
  ("[^\n]*\n"):rep(7) .. "([^\n]*)")
checks.lines_night(night.out_dir, {point = "x=1", experiment = "exp", where = "fixture.cu:8", text = added_line,
  kind = "added", base_commit = good, new_commit = bad, timeout = lines.NIGHT_TIMEOUT_S})
-- the history site shows them: a regressed night of the fake suite, its night's file holding the
-- summary above for the regressed point
local site_ws, fake_night = T.fake_nights(binary)
for n = 1, 2 do T.eq(fake_night("h.sqlite", n), 0, "a fake night " .. n) end
T.eq(fake_night("h.sqlite", 3, "FAKE_SLOW=a=20"), 1, "the fake night that regressed")
T.write(judge.night_path(site_ws.dir .. "/night3", "fake"), json.encode({{point = "case=a",
  key = require("gpuexp.store.result").key({"a"}), summary = e.lines}}))
T.eq(site_ws.run("history --history h.sqlite site site"), 0, "history site")
checks.site_names(site_ws.dir .. "/site", {where = "fixture.cu:8", text = added_line})
T.eq(#T.processes_in(ws.dir, "gpuexp", 2), 0, "no process left")
local leftovers = io.popen("git -C " .. repo .. " worktree list | wc -l"):read("l")
T.eq(tonumber(leftovers), 1, "no worktree left")

-- CUPTI refused in the point's run: not taken, why said in the reports
T.write(ws.dir .. "/refuse", "")
os.remove(judge.night_path(ws.dir .. "/night", "exp")) -- (the night above's)
night, e, result = night_of(good)
lines.night_stage(night, experiment, result, tools)
os.remove(ws.dir .. "/refuse")
write_reports(night.out_dir, e, result)
checks.no_lines_night(night.out_dir, {point = "x=1", why = {"instructions +20%; line profiles: not taken: the base " ..
  "commit's point: its run wrote no line profile (no line profile of fixture: CUPTI not found (tried /nowhere/libcupti.so"}})
T.eq(T.read(judge.night_path(night.out_dir, "exp")), nil, "no night's lines file for the site to read")

-- the point's run failed: what it said (its log goes with the stage's folder)
T.write(ws.dir .. "/broken", "")
night, e, result = night_of(good)
lines.night_stage(night, experiment, result, tools)
os.remove(ws.dir .. "/broken")
T.ok(e.explanation:find("line profiles: not taken: the base commit's point: its run failed (exit 1) (", 1, true) and
  e.explanation:find("exp.lua:3: this commit's experiment is broken)", 1, true), "a failed run: " .. e.explanation)

-- not taken, and said
night, e, result = night_of(bad)
lines.night_stage(night, experiment, result, tools)
T.ok(e.lines == nil and e.explanation:find("the code is the last good night's", 1, true), "same commit: " .. e.explanation)
night, e, result = night_of(nil)
lines.night_stage(night, experiment, result, tools)
T.ok(e.explanation:find("no git commit recorded", 1, true), "no commit: " .. e.explanation)
night, e, result = night_of(good, {timeout = 0})
lines.night_stage(night, experiment, result, tools)
T.eq(e.explanation, "instructions +20%", "--lines-timeout 0: not taken, nothing said")
local outside = ws.dir .. "/outside.lua"
T.write(outside, "-- not in git\n")
night, e, result = night_of(good)
lines.night_stage(night, {name = "o", path = outside, args = {}}, result, tools)
T.ok(e.explanation:find("not in a git repository", 1, true), "no git: " .. e.explanation)
night, e, result = night_of(good)
e.open = true -- an open regression was profiled on the night it was confirmed
lines.night_stage(night, experiment, result, tools)
T.eq(e.explanation, "instructions +20%", "an open regression: not again")

-- bisect's culprit: printed (and in an offline plan, not taken)
local printed = {}
local saved_print = print
print = function(...) local parts = {} for i, v in ipairs({...}) do parts[i] = tostring(v) end printed[#printed + 1] = table.concat(parts, " ") end
local work = ws.dir .. "/bisect-work"
gpuexp.mkdir(work)
lines.bisect_culprit({repo = repo, script = repo .. "/exp.lua", script_in_repo = "exp.lua", script_args = {}, point = "x=1",
  work = work, pass = {"--arch", "sm_90"}}, good, bad)
print = saved_print
T.ok(table.concat(printed, "\n"):find("offline plan", 1, true), "bisect in a plan: " .. table.concat(printed, "\n"))
T.done()
