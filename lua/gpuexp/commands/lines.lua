-- gpuexp lines BASE NEW: a regression explained to the source line. BASE and NEW are line profiles
-- (X.lines.json) or the folders a run with --lines DIR fills; each pair of profiles of one kernel
-- and launch is aligned line by line and its lines ranked by the time they gained
-- (judge/lines.lua). Also what the nightly's confirm stage and bisect call to profile a regressed
-- point at two commits: M.night_stage and M.bisect_culprit, bounded in time.
local csv = require("gpuexp.store.csv")
local json = require("gpuexp.store.json")
local text = require("gpuexp.store.text")
local line_profile = require("gpuexp.store.line_profile")
local judge = require("gpuexp.judge.lines")
local catalog = require("gpuexp.catalog")

local EXIT = catalog.EXIT
local M = {}

M.NIGHT_TIMEOUT_S = catalog.LINES_TIMEOUT_S -- the nightly's line stage: all its runs together (--lines-timeout)

local function fail(code, message)
  io.stderr:write("gpuexp lines: " .. text.message(message) .. "\n")
  return code
end

-- The profile files of a --lines folder (sorted), or nil and why: X.lines.json (its SASS counts,
-- X.sass.lines.json, are read with it), or X.sass.lines.json alone where X has no PC samples.
local function folder_profiles(folder)
  local code, _, _, listing = gpuexp._process.run({"ls", "-1", "--", folder}, {capture = true})
  if code ~= 0 then return nil, "cannot list " .. folder end
  local files, names = {}, {}
  for name in listing:gmatch("[^\n]+") do names[name] = true end
  for name in pairs(names) do
    local launch = line_profile.launch_path(name)
    if launch ~= name and not names[launch] or launch == name and name:sub(-#line_profile.SUFFIX) == line_profile.SUFFIX then
      files[#files + 1] = name
    end
  end
  table.sort(files)
  if #files == 0 then return nil, folder .. " holds no line profile (*" .. line_profile.SUFFIX .. ")" end
  return files
end

-- M.pairs_of(base, new) -> {{name, base = profile, new = profile}...}: two files, or the profiles
-- of two folders paired by file name (the kernel and its launch's shape), then by kernel name
-- where one of each is left; or nil and why.
function M.pairs_of(base, new)
  local found = {}
  for _, path in ipairs({base, new}) do
    local file = io.open(path, "rb")
    if file then file:close() elseif not gpuexp._is_directory(path) then return nil, path .. " does not exist or cannot be read" end
  end
  if not gpuexp._is_directory(base) and not gpuexp._is_directory(new) then
    local b, why = line_profile.read_with_counts(base)
    if not b then return nil, why end
    local n, why_new = line_profile.read_with_counts(new)
    if not n then return nil, why_new end
    return {{name = n.kernel, base = b, new = n}}
  end
  if not gpuexp._is_directory(base) or not gpuexp._is_directory(new) then
    return nil, "give two profiles or two --lines folders (" .. base .. " and " .. new .. " are one of each)"
  end
  local base_files, why = folder_profiles(base)
  if not base_files then return nil, why end
  local new_files, why_new = folder_profiles(new)
  if not new_files then return nil, why_new end
  -- a launch's files by its name (its SASS counts alone under the name of its PC samples)
  local launch_of = line_profile.launch_path
  local in_base, left_base, left_new = {}, {}, {}
  for _, name in ipairs(base_files) do in_base[launch_of(name)] = name end
  for _, name in ipairs(new_files) do
    local partner = in_base[launch_of(name)]
    if partner then
      found[#found + 1] = {name = name, base_path = base .. "/" .. partner, new_path = new .. "/" .. name}
      in_base[launch_of(name)] = nil
    else
      left_new[#left_new + 1] = name
    end
  end
  for _, name in ipairs(base_files) do if in_base[launch_of(name)] then left_base[#left_base + 1] = name end end
  local pairs_list = {}
  for _, f in ipairs(found) do
    local b, why_b = line_profile.read_with_counts(f.base_path)
    if not b then return nil, why_b end
    local n, why_n = line_profile.read_with_counts(f.new_path)
    if not n then return nil, why_n end
    pairs_list[#pairs_list + 1] = {name = n.kernel, base = b, new = n}
  end
  -- a launch whose shape changed (a smaller grid): one profile of the kernel left on each side
  local by_kernel = {}
  for _, side in ipairs({{"base", base, left_base}, {"new", new, left_new}}) do
    for _, name in ipairs(side[3]) do
      local p, why_p = line_profile.read_with_counts(side[2] .. "/" .. name)
      if not p then return nil, why_p end
      by_kernel[p.kernel] = by_kernel[p.kernel] or {base = {}, new = {}}
      table.insert(by_kernel[p.kernel][side[1]], p)
    end
  end
  for kernel, sides in pairs(by_kernel) do
    if #sides.base == 1 and #sides.new == 1 then
      pairs_list[#pairs_list + 1] = {name = kernel, base = sides.base[1], new = sides.new[1], shapes_differ = true}
    end
  end
  if #pairs_list == 0 then return nil, "no profile of " .. new .. " has a partner in " .. base end
  table.sort(pairs_list, function(x, y) return x.name < y.name end)
  return pairs_list
end

-- M.compare(base, new, options) -> {{name, diff, summary, shapes_differ}...}, or nil and why.
-- options: measured_pct, top.
function M.compare(base, new, options)
  options = options or {}
  local pairs_list, why = M.pairs_of(base, new)
  if not pairs_list then return nil, why end
  for _, p in ipairs(pairs_list) do
    local measured = options.measured_pct
    if not measured and p.base.time_ms and p.new.time_ms and p.base.time_ms > 0 then
      measured = (p.new.time_ms / p.base.time_ms - 1) * 100
    end
    p.diff = judge.diff(p.base, p.new, {measured_pct = measured})
    if p.shapes_differ then
      p.diff.notes[#p.diff.notes + 1] = "the launch changed between the builds (another grid, block or arguments): " ..
        "paired by the kernel's name"
    end
    p.summary = judge.summary(p.diff, options.top)
  end
  return pairs_list
end

-- gpuexp lines (commands/runner.lua): o, its fields.
function M.run(o)
  if #o.positional ~= 2 then return fail(EXIT.USAGE, "needs BASE and NEW: two line profiles or two --lines folders " ..
    "(see gpuexp lines --help)") end
  local compared, problem = M.compare(o.positional[1], o.positional[2], {measured_pct = o.measured, top = o.top or judge.TOP})
  if not compared then return fail(EXIT.USAGE, problem) end
  local format = o.format or "text"
  local function print_to(file)
    if format == "json" then
      local list = {}
      for i, p in ipairs(compared) do list[i] = p.summary end
      file:write(json.encode(list), "\n")
      return
    end
    for i, p in ipairs(compared) do
      if i > 1 then file:write("\n") end
      if format == "markdown" then judge.markdown(p.summary, file)
      elseif format == "html" then judge.html(p.summary, file, require("gpuexp.judge.printers").html)
      else judge.text(p.summary, file) end
    end
  end
  if o.output then
    local written, failure = pcall(csv.write_printed, o.output, print_to)
    if not written and not csv.is_write_error(failure) then error(failure, 0) end
    if not written then return fail(EXIT.WRITE, failure.message) end
  else
    print_to(io.stdout)
  end
  return EXIT.OK
end

-- ---- a point profiled at two commits: the nightly's confirm stage, bisect's culprit ----

local worktree = require("gpuexp.commands.worktree")

-- Why a point's run profiled nothing, from its log (which goes with the stage's folder): --lines'
-- own message (CUPTI refused), the first failed point's, then for a run that failed the last line
-- that is not gpuexp's nor a traceback's (a script's error), else an offline plan's notice; "" when
-- it said none of them.
local function said_in(log_path, failed)
  local log = require("gpuexp.store.meta").read_all(log_path) or ""
  local error_line
  for line in log:gmatch("[^\n]+") do
    if not line:find("^gpuexp") and not line:find("^%s") and line ~= "stack traceback:" then error_line = line end
  end
  local said = log:match("gpuexp %-%-lines: ([^\n]+)") or log:match("gpuexp: the first: ([^\n]+)")
    or (failed and error_line) or log:match("(gpuexp: [^\n]*does nothing[^\n]*)") or error_line
  return said and (" (" .. text.cut(said, 400) .. ")") or ""
end

-- Runs the point (an --only text) of script with --lines folder, in a worktree of commit when
-- given (else the script where it is), within timeout_s. Returns true, or nil and why (and the
-- exit code of a stop signal).
local function profile_point(o, script_in_repo, script_args, commit, folder, step, timeout_s)
  local script, tree = o.script, nil
  if commit then
    tree = string.format("%s/lines-tree-%s", o.work, step)
    local added, why, interrupted = worktree.add(o.repo, tree, commit, o.work, o.build,
      string.format("%s/lines-build-%s.log", o.work, step), o.build_timeout)
    if not added then worktree.remove(o.repo, tree) return nil, why, interrupted end
    script = tree .. "/" .. script_in_repo
  end
  local argv = {gpuexp.executable or "gpuexp", "--quiet", "--only", o.point, "--lines", folder, "--out",
    string.format("%s/lines-point-%s.csv", o.work, step), "--point-timeout", tostring(math.max(1, math.floor(timeout_s)))}
  for _, a in ipairs(o.pass or {}) do argv[#argv + 1] = a end
  argv[#argv + 1] = "--"
  argv[#argv + 1] = script
  for _, a in ipairs(script_args or {}) do argv[#argv + 1] = a end
  local log = string.format("%s/lines-point-%s.log", o.work, step)
  local code, stop, timed_out = gpuexp._process.run(argv, {output = log, timeout_s = timeout_s,
    record = o.work .. "/running.pid"})
  if tree then worktree.remove(o.repo, tree) end
  if stop ~= 0 then return nil, "interrupted", 128 + stop end
  if timed_out then return nil, string.format("its run passed the %g s left for line profiles", timeout_s) end
  if code ~= 0 and code ~= EXIT.INCOMPLETE then return nil, string.format("its run failed (exit %d)%s", code, said_in(log, true)) end
  -- no profile written: the run said why (CUPTI not loadable, the point failed, an offline plan...)
  if not folder_profiles(folder) then return nil, "its run wrote no line profile" .. said_in(log) end
  return true
end

-- M.profile_commits(o, good, bad, budget_s) -> the compared pairs of the point at commits good
-- and bad (bad = nil: the script where it is), or nil and why, and the exit code of a stop signal.
-- o: {repo, script (its path), script_in_repo, script_args, point, work, pass, build, build_timeout}.
function M.profile_commits(o, good, bad, budget_s, measured_pct)
  local started = gpuexp.clock()
  gpuexp.mkdir(o.work)
  local base_dir, new_dir = o.work .. "/lines-base", o.work .. "/lines-new"
  local ok, why, stop = profile_point(o, o.script_in_repo, o.script_args, good, base_dir, "base", budget_s)
  if not ok then return nil, "the base commit's point: " .. why, stop end
  local left = budget_s - (gpuexp.clock() - started)
  if left <= 1 then return nil, string.format("the %g s for line profiles were spent on the base commit", budget_s) end
  ok, why, stop = profile_point(o, o.script_in_repo, o.script_args, bad, new_dir, "new", left)
  if not ok then return nil, "the new commit's point: " .. why, stop end
  return M.compare(base_dir, new_dir, {measured_pct = measured_pct, top = judge.TOP})
end

-- The summary of the pairs to show: the one whose kernel moved most.
local function main_pair(compared)
  local best
  for _, p in ipairs(compared) do
    if not best or (p.diff.total_pct or -math.huge) > (best.diff.total_pct or -math.huge) then best = p end
  end
  return best
end

-- The nightly's confirm stage, last step: each newly confirmed slower regression of the result is
-- profiled line by line at the last good night's commit and at this one (one point each, --only),
-- all within o.lines_timeout seconds; its summary goes in e.lines, a sentence in its explanation.
-- Where it cannot be done (no git, the same commit, CUPTI refusing, the time spent), the
-- explanation says why; the night's verdict is never changed. tools: the nightly's {only_spec}.
-- Returns the exit code of a stop signal, if any.
function M.night_stage(night, experiment, result, tools)
  local o = night.options
  local budget = o.lines_timeout or M.NIGHT_TIMEOUT_S
  local wanted = {}
  for _, e in ipairs(result.regressions or {}) do
    if e.verdict == "slower" and not e.open then wanted[#wanted + 1] = e end
  end
  if #wanted == 0 or budget <= 0 or not o.confirm or o.arch then return nil end
  local function note(e, why)
    e.lines_note = why
    e.explanation = (e.explanation and (e.explanation .. "; ") or "") .. "line profiles: " .. why
  end
  local repo, script_in_repo = worktree.locate(experiment.path)
  if not repo then for _, e in ipairs(wanted) do note(e, "not taken (" .. script_in_repo .. ")") end return nil end
  local here = worktree.commit(repo, "HEAD")
  local started, summaries = gpuexp.clock(), {}
  local work, why = worktree.work_folder("lines", repo)
  if not work then for _, e in ipairs(wanted) do note(e, "not taken (" .. why .. ")") end return nil end
  if not o.quiet then io.stderr:write(string.format("gpuexp nightly: line profiles of %d regression(s) of %s (at most %g s)\n",
    #wanted, result.name, budget)) end
  local stop_code
  for n, e in ipairs(wanted) do
    local left = budget - (gpuexp.clock() - started)
    local good = M.good_commit(night.db, result.state, e.state and e.state.since or result.run_id)
    local only = tools.only_spec(result.run, {e})
    if left <= 1 then note(e, string.format("not taken: the %g s for line profiles (--lines-timeout) were spent", budget))
    elseif not good then note(e, "not taken: the last good night has no git commit recorded")
    elseif good == here then note(e, "not taken: the code is the last good night's (" .. good:sub(1, 10) ..
      "): the time moved without a change of the kernel's source")
    elseif not only then note(e, "not taken (an axis value holds , ; or =, which --only cannot name)")
    else
      local point_started = gpuexp.clock()
      local compared, problem, stop = M.profile_commits({repo = repo, script = experiment.path, script_in_repo = script_in_repo,
        script_args = experiment.args, point = only, work = work .. "/" .. n, pass = o.pass}, good, nil, left, e.change_pct)
      if stop then stop_code = stop break end
      local seconds = gpuexp.clock() - point_started
      if not compared then note(e, "not taken: " .. problem)
      else
        local pair = main_pair(compared)
        e.lines = pair.summary
        e.lines.base_commit, e.lines.new_commit, e.lines.seconds = good, here, seconds
        e.explanation = (e.explanation and (e.explanation .. "; ") or "") .. string.format(
          "line profiles (%s..%s, %.0f s): %s", good:sub(1, 10), here and here:sub(1, 10) or "?", seconds, judge.sentence(e.lines))
        summaries[#summaries + 1] = {point = e.point, key = e.key, summary = e.lines}
      end
    end
  end
  worktree.clean(repo, work)
  if #summaries > 0 then
    local written, problem = pcall(csv.write_file, judge.night_path(night.out_dir, experiment.name), json.encode(summaries))
    if not written then io.stderr:write("gpuexp nightly: the line profiles could not be written: ",
      tostring(type(problem) == "table" and problem.message or problem), "\n") end
  end
  return stop_code
end

-- The git commit of the night before `since` among the state's nights, or nil.
function M.good_commit(db, state, since)
  local good_id
  for _, id in ipairs(state and state.nights or {}) do if id < since then good_id = id end end
  if not good_id then return nil end
  local row = db:rows("SELECT git_commit FROM runs WHERE id = ?", good_id)[1]
  return row and row.git_commit ~= "" and row.git_commit or nil
end

-- bisect's last step: the first bad commit's point against the last good commit's, line by line
-- (printed). o: bisect's options. Never changes bisect's answer; says why when it cannot.
function M.bisect_culprit(o, good, bad)
  local budget = o.lines_timeout or M.NIGHT_TIMEOUT_S
  if budget <= 0 then return nil end
  for _, a in ipairs(o.pass or {}) do
    if a == "--arch" or a == "-a" then print("no line profiles in an offline plan (--arch)") return nil end
  end
  print(string.format("line profiles of %s: %s (last good) against %s (first bad), at most %g s", o.point, good:sub(1, 10),
    bad:sub(1, 10), budget))
  local started = gpuexp.clock()
  local compared, problem, stop = M.profile_commits({repo = o.repo, script = o.script, script_in_repo = o.script_in_repo,
    script_args = o.script_args, point = o.point, work = o.work, pass = o.pass, build = o.build,
    build_timeout = o.build_timeout}, good, bad, budget)
  if stop then return stop end
  if not compared then print("no line profiles: " .. problem) return nil end
  for _, p in ipairs(compared) do judge.text(p.summary, io.stdout) end
  print(string.format("(line profiles took %.0f s)", gpuexp.clock() - started))
  return nil
end

return M
