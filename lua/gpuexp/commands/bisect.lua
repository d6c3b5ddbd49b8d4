-- gpuexp bisect: the commit that made a point slower. Measures the point (--only) at the good and
-- the bad commit, then halves the commits between them, each step in a temporary git worktree (an
-- optional build command first), judged against the good commit's value with compare's rule. A
-- commit that does not build or run is skipped, as git bisect skip does; a step whose change is
-- close to the threshold is measured again before it decides. Prints every step and the first bad
-- commit.
local csv = require("gpuexp.store.csv")
local text = require("gpuexp.store.text")
local history = require("gpuexp.store.history")
local json = require("gpuexp.store.json")
local meta = require("gpuexp.store.meta")
local rule = require("gpuexp.judge.rule")
local catalog = require("gpuexp.catalog")
local options_parser = require("gpuexp.engine.options")
local parse_args = require("gpuexp.engine.args")
local verdict = require("gpuexp.judge.verdict")

local EXIT = catalog.EXIT
local M = {}

M.MAX_MEASUREMENTS = 3 -- of one commit, while its change stays close to the threshold

local function say(message) io.stderr:write("gpuexp bisect: " .. text.message(message) .. "\n") end

local worktree = require("gpuexp.commands.worktree")
local git = worktree.git


-- The command line: the catalog's fields (commands/runner.lua parsed them) with bisect's
-- defaults, and the options handed on to every measurement (pass).
local function parse(o, given)
  o.pass = parse_args.passed(given)
  return o
end

-- The good and bad commits, script and point of a regressed run in the history, from the night's
-- judgement (judge/verdict.lua: the options it ran with, its re-measure, its regression states, as
-- the nightly and the site judge it): the regression's first night is bad, the night before it
-- good. Returns true; or nil, why and the exit code.
local function from_history(o)
  local db, why = history.open(o.history or history.default_path(), true)
  if not db then return nil, why, EXIT.USAGE end
  local judged, night, state = pcall(verdict.night, db, o.run)
  if not judged then db:close() error(night, 0) end
  if not night then db:close() return nil, state, EXIT.USAGE end
  local options = night.options
  local regressed = {}
  for _, e in ipairs(night.comparison.points) do if e.verdict == "slower" then regressed[#regressed + 1] = e end end
  print(text.format("gpuexp bisect: run %d as its night judged it (%s, threshold %.2f%%, baseline %d): %d regression(s)",
    o.run, night.comparison.metric.name, options.floor_pct, options.baseline, #regressed))
  for _, e in ipairs(regressed) do
    print(text.format("  %s  %+.2f%%  %s", e.point, e.change_pct or 0, e.state and e.state.text or e.basis or ""))
  end
  local chosen
  if o.point then
    local clauses = options_parser.parse_only(o.point)
    for _, e in ipairs(regressed) do
      local cells, matches = e.cells, true
      for a, axis in ipairs(night.run.axes) do
        if clauses and clauses[1][axis] ~= nil and clauses[1][axis] ~= cells[a] then matches = false end
      end
      if matches then chosen = e end
    end
  elseif #regressed == 1 then
    chosen = regressed[1]
  end
  if #regressed == 0 then
    db:close()
    return nil, string.format("run %d is no regression (as its night judged it): nothing to bisect", o.run), EXIT.INCOMPLETE
  end
  if not chosen then
    db:close()
    return nil, o.point and string.format("%s did not regress in run %d (the points above did)", o.point, o.run) or
      string.format("run %d regressed at %d points: say which with --point (as listed above)", o.run, #regressed),
      EXIT.USAGE
  end
  local since = chosen.state and chosen.state.since or o.run
  local good_id
  for _, id in ipairs(state.nights) do if id < since then good_id = id end end
  local run = db:rows("SELECT * FROM runs WHERE id = ?", since)[1]
  local good = good_id and db:rows("SELECT git_commit FROM runs WHERE id = ?", good_id)[1].git_commit
  db:close()
  if not run.git_commit or not good then
    return nil, string.format("run %d or the night before it has no git commit recorded (give --good and --bad)", since),
      EXIT.USAGE
  end
  o.bad, o.good = o.bad or run.git_commit, o.good or good
  o.threshold = o.threshold or options.floor_pct
  o.metric = o.metric or (chosen.metric .. ":" .. chosen.direction)
  if not o.point then
    local parts = {}
    for a, axis in ipairs(night.run.axes) do parts[a] = axis .. "=" .. tostring(chosen.cells[a]) end
    o.point = table.concat(parts, ",")
  end
  print(text.format("bisecting %s between run %d (good, %s) and run %d (bad, %s)", o.point, good_id, good:sub(1, 10),
    since, run.git_commit:sub(1, 10)))
  if not o.script then -- the run's script and its arguments (arg[1..], as recorded)
    o.script = run.script
    local recorded = json.decode(run.arguments or "null")
    o.script_args = {}
    for n = 1, math.huge do
      local a = type(recorded) == "table" and (recorded[n] or recorded[tostring(n)])
      if a == nil then break end
      o.script_args[n] = tostring(a)
    end
  end
  return true
end

-- Measures the point at a commit: {value, noise_pct, samples}, or nil and why (it did not build,
-- run or give a value).
local function measure(o, commit, step)
  local tree = string.format("%s/tree-%d", o.work, step)
  local function finish(...)
    worktree.remove(o.repo, tree)
    return ...
  end
  local added, why, interrupted = worktree.add(o.repo, tree, commit, o.work, o.build,
    string.format("%s/build-%d.log", o.work, step), o.build_timeout)
  if not added then return finish(nil, why, interrupted) end
  -- a supervised run: --point-timeout ends a point that hangs (its row says timeout)
  local out = string.format("%s/point-%d.csv", o.work, step)
  local argv = {gpuexp.executable or "gpuexp", "--quiet", "--only", o.point, "--out", out,
    "--point-timeout", tostring(o.point_timeout)}
  for _, a in ipairs(o.pass) do argv[#argv + 1] = a end
  argv[#argv + 1] = "--"
  argv[#argv + 1] = tree .. "/" .. o.script_in_repo
  for _, a in ipairs(o.script_args) do argv[#argv + 1] = a end
  local log = string.format("%s/point-%d.log", o.work, step)
  local code, stopped = gpuexp._process.run(argv, {output = log, record = o.work .. "/running.pid"})
  if stopped ~= 0 then return finish(nil, "interrupted", 128 + stopped) end
  local ok, rows = pcall(csv.read, out)
  local row = ok and rows[1]
  if row and row.status and row.status ~= "ok" then
    local why = tostring(row.error or ""):gsub("^.-/tree%-%d+/", "")
    if row.status == "timeout" then
      return finish(nil, string.format("the point ran past --point-timeout %g s", o.point_timeout))
    end
    return finish(nil, string.format("the point's row says %s: %s", row.status, why))
  end
  if code ~= 0 and not row then
    -- the script's own message: its first line that says what failed
    local text = meta.read_all(log) or ""
    local first = text:match("[^\n]*error[^\n]*") or text:match("([^\n]+)") or ""
    first = first:gsub("^.-/tree%-%d+/", "") -- the worktree's path (Lua may have shortened it to ".../")
    return finish(nil, string.format("the script failed (exit %d): %s", code, first))
  end
  local value = row and (row.status == nil or row.status == "ok") and row[o.metric]
  if type(value) ~= "number" or value <= 0 then return finish(nil, "no " .. o.metric .. " value for the point") end
  return finish({value = value, noise_pct = tonumber(row.noise_pct), samples = tonumber(row.samples)})
end

-- Judges a commit against the good one, measuring it again while the change is close to the
-- threshold. Returns the verdict ("slower" or "same"), the change and the values; or nil and why.
local function judge(o, commit, step, good)
  local values = {}
  local verdict, change
  for attempt = 1, M.MAX_MEASUREMENTS do
    local got, why, stop = measure(o, commit, step * 10 + attempt)
    if not got then return nil, why, stop end
    values[#values + 1] = got.value
    local center = rule.median(values)
    local judged = rule.judge{value = center, noise_pct = got.noise_pct, samples = got.samples,
      baseline = {{value = good.value, noise_pct = good.noise_pct}}, direction = o.direction, floor_pct = o.threshold}
    verdict, change = judged.verdict == "slower" and "slower" or "same", judged.change_pct
    -- close to the threshold: one measurement decides too little
    local worse = o.direction == "higher" and -change or change
    if math.abs(worse - judged.threshold_pct) > 0.5 * judged.threshold_pct then break end
  end
  return verdict, change, values
end

-- Bisects the commits (oldest first) between good and bad; prints each step. Returns the exit code.
local function search(o, good, bad, commits)
  local function subject(commit) return git(o.repo, "log", "-1", "--format=%s", commit) or "" end
  print(text.format("gpuexp bisect: %s, point %s, %s: %d commit(s) after %s", o.script_in_repo, o.point, o.metric,
    #commits, good:sub(1, 10)))
  local reference, problem, stop = measure(o, good, 0)
  if not reference then
    say("the good commit " .. good:sub(1, 10) .. " gives no value: " .. problem)
    return stop or EXIT.FAILED
  end
  print(text.format("  good %s  %.5g %s  %s", good:sub(1, 10), reference.value, o.metric, subject(good)))
  -- the bad end must be slower, or there is nothing to find
  local verdict, change, values = judge(o, bad, 1, reference)
  if not verdict then
    say("the bad commit " .. bad:sub(1, 10) .. " gives no value: " .. change)
    return values or EXIT.FAILED
  end
  print(text.format("  bad  %s  %.5g %s  %+.2f%% %s  %s", bad:sub(1, 10), rule.median(values), o.metric, change,
    verdict, subject(bad)))
  if verdict ~= "slower" then
    print(text.format("no regression: %s is %+.2f%% against %s, within the threshold", bad:sub(1, 10), change,
      good:sub(1, 10)))
    return EXIT.INCOMPLETE
  end
  -- commits[low] is the last known good (0: the good commit), commits[high] the first known bad
  local low, high, skipped, step = 0, #commits, {}, 1
  while high - low > 1 do
    -- the middle, or the nearest commit not skipped yet
    local middle = (low + high) // 2
    local candidate
    for distance = 0, high - low do
      for _, c in ipairs({middle - distance, middle + distance}) do
        if not candidate and c > low and c < high and not skipped[c] then candidate = c end
      end
      if candidate then break end
    end
    if not candidate then break end
    step = step + 1
    local commit = commits[candidate]
    local v, moved, measured = judge(o, commit, step, reference)
    if not v then
      if measured then return measured end -- interrupted
      skipped[candidate] = true
      print(text.format("  skip %s  (%s)  %s", commit:sub(1, 10), moved, subject(commit)))
    else
      print(text.format("  %-4s %s  %.5g %s  %+.2f%%%s  %s", v == "slower" and "bad" or "good", commit:sub(1, 10),
        rule.median(measured), o.metric, moved, #measured > 1 and string.format(" (%d measurements)", #measured) or "",
        subject(commit)))
      if v == "slower" then high = candidate else low = candidate end
    end
  end
  local first_bad = commits[high]
  local between = {}
  for c = low + 1, high - 1 do between[#between + 1] = commits[c]:sub(1, 10) end
  if #between > 0 then
    print(text.format("the first bad commit is one of %s %s (the ones between did not build or run)",
      table.concat(between, " "), first_bad:sub(1, 10)))
    return EXIT.INCOMPLETE
  end
  print(text.format("first bad commit: %s %s", first_bad, subject(first_bad)))
  -- the culprit explained to the line: its point against the last good commit's (--lines-timeout)
  local stopped = require("gpuexp.commands.lines").bisect_culprit(o, low == 0 and good or commits[low], first_bad)
  return stopped or EXIT.OK
end

function M.run(fields, given)
  local o = parse(fields, given)
  if o.run then
    local found, why, code = from_history(o)
    if not found then say(why); return code end
  end
  o.threshold = o.threshold or rule.FLOOR_PCT
  if not o.script then say("which script? (gpuexp bisect --help)"); return EXIT.USAGE end
  if not o.good or not o.bad then say("give --good REV and --bad REV, or --run ID of a regressed run"); return EXIT.USAGE end
  if not o.point then say("which point? --point 'A=V,B=W' (as --only takes it)"); return EXIT.USAGE end
  local clauses, why = options_parser.parse_only(o.point)
  if not clauses or #clauses ~= 1 then say(why or "--point names one point"); return EXIT.USAGE end
  local metric = o.metric or "median_ms"
  o.metric, o.direction = metric:match("^(.-):(%a+)$")
  if not o.metric then o.metric, o.direction = metric, rule.direction(metric) or "lower" end
  -- the repository and the script's place in it
  o.repo, o.script_in_repo = worktree.locate(o.script)
  if not o.repo then say(o.script_in_repo); return EXIT.USAGE end
  local good, bad = worktree.commit(o.repo, o.good), worktree.commit(o.repo, o.bad)
  if not good or not bad then say("unknown commit: " .. (good and o.bad or o.good)); return EXIT.USAGE end
  if good == bad then
    say(string.format("--good %s and --bad %s are the same commit (%s): there is nothing between them to search; " ..
      "give --good a commit before the regression", o.good, o.bad, good:sub(1, 12)))
    return EXIT.USAGE
  end
  local list = git(o.repo, "rev-list", "--reverse", "--first-parent", good .. ".." .. bad)
  local commits = {}
  for commit in (list or ""):gmatch("%x+") do commits[#commits + 1] = commit end
  if #commits == 0 then say(o.good .. " is not an ancestor of " .. o.bad); return EXIT.USAGE end
  -- the worktrees and measurements go in a folder of their own ($TMPDIR, else /tmp), locked while
  -- this bisect runs; folders left by killed bisects are removed first
  gpuexp._process.init()
  local problem
  o.work, problem = worktree.work_folder("bisect", o.repo, say)
  if not o.work then say(problem); return EXIT.FAILED end
  -- the search, then the worktrees and their folder removed whatever happened
  local searched, code = pcall(search, o, good, bad, commits)
  worktree.clean(o.repo, o.work)
  if not searched then error(code, 0) end
  return code
end

return M
