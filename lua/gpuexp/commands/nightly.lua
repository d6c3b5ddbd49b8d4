-- gpuexp nightly SUITE: runs every experiment of a suite through the supervisor (a crashing or
-- hanging kernel is a row, not a dead night), records each run in the history, compares every
-- point with a baseline drawn from the history, re-measures the suspects before calling anything
-- a regression, prints a one-screen summary, writes a Markdown and an HTML report and exits with
-- a code a scheduler understands.
local csv = require("gpuexp.store.csv")
local suite_file = require("gpuexp.store.suite")
local text = require("gpuexp.store.text")
local history = require("gpuexp.store.history")
local compare = require("gpuexp.judge.compare")
local explain = require("gpuexp.judge.explain")
local report = require("gpuexp.judge.report")
local verdict = require("gpuexp.judge.verdict")
local catalog = require("gpuexp.catalog")
local parse_args = require("gpuexp.engine.args")

local EXIT = catalog.EXIT
local M = {}


local function say(message) io.stderr:write("gpuexp nightly: " .. text.message(message) .. "\n") end
local release_locks

local shell_quote = text.shell

-- nightly's own value types: --metric COL[:lower|higher] as compare reads it.
M.TYPES = {metric = function(_, t) return compare.parse_metric(t) end}

-- The command line: the catalog's fields (commands/runner.lua parsed them) with the night's
-- defaults, the suite, and the options handed on to every experiment (pass); or nil and why.
local function parse(o, given)
  if #o.positional > 1 then
    return nil, "one suite at a time (got '" .. o.positional[1] .. "' and '" .. o.positional[2] .. "')"
  end
  o.suite, o.pass = o.positional[1], parse_args.passed(given)
  return o
end

-- An experiment ended by a stop signal (Ctrl-C, SIGTERM, SIGHUP), not by a crash of its own.
local function stopped_by_signal(code)
  return code == EXIT.INTERRUPTED or code == EXIT.TERMINATED or code == EXIT.HANGUP
end

-- Runs gpuexp again with these arguments and environment additions, in a process group of its
-- own: a SIGTERM or Ctrl-C to the nightly is passed on to it and waited for, so no experiment is
-- left running and the GPU's lock is held until it has ended. Returns its exit code (128+N for a
-- signal), and the stop signal the nightly received meanwhile (0 when none).
local function run_gpuexp(arguments, environment)
  local argv = {gpuexp.executable or "gpuexp"}
  for _, a in ipairs(arguments) do argv[#argv + 1] = a end
  return gpuexp._process.run(argv, environment)
end

-- The GPUs a night uses (--device/--devices, default 0) by UUID: the lock is per GPU, whatever
-- names it (0, all, CUDA_VISIBLE_DEVICES). nil and why when one cannot be named.
local function night_gpus(o)
  local list, why = {0}
  if o.devices then
    list, why = require("gpuexp.engine.options").parse_devices(o.devices)
    if not list then return nil, why end
  end
  local gpus = {}
  for i, ordinal in ipairs(list) do
    local ok, name, uuid = pcall(gpuexp._device_name, ordinal)
    if not ok then return nil, "GPU " .. ordinal .. ": " .. tostring(type(name) == "table" and name.message or name) end
    gpus[i] = {ordinal = ordinal, name = name, uuid = uuid}
  end
  return gpus
end

-- The re-measure's --only text for these points, or nil when a value cannot be written in it.
local function only_spec(run, entries)
  local clauses, seen = {}, {}
  for _, e in ipairs(entries) do
    if not seen[e.key] then
      seen[e.key] = true
      local pairs_text = {}
      for a, axis in ipairs(run.axes) do
        local cell = tostring(run:axis_cells(e.key)[a])
        if cell:find("[,;=]") or axis:find("[,;=]") then return nil end
        pairs_text[#pairs_text + 1] = axis .. "=" .. cell
      end
      clauses[#clauses + 1] = table.concat(pairs_text, ",")
    end
  end
  return table.concat(clauses, ";")
end

local locks = {}
function release_locks()
  for _, path in ipairs(locks) do gpuexp._process.unlock(path) end
  locks = {}
end

-- ---- the stages of a night: set up, run, judge, confirm, report, hook ----

-- Set-up: the suite, the GPUs, the history and one lock per GPU. Returns the night, or nil and
-- the exit code (said on stderr).
local function set_up(o)
  if not o.suite then say("which suite? (gpuexp nightly --help)"); return nil, EXIT.USAGE end
  -- '' would name the shipped experiments' folder itself: every one of them run as the suite
  if o.suite == "" then say("the suite is an empty name: give a folder of experiments or a suite file"); return nil, EXIT.USAGE end
  o.suite = suite_file.locate(o.suite)
  local suite, why = suite_file.read(o.suite)
  if not suite then say(why); return nil, EXIT.USAGE end
  if not o.arch then
    local found, count = pcall(gpuexp.device_count)
    if not found or count == 0 then
      say("no GPU found (" .. (found and "the driver reports 0 devices" or tostring(type(count) == "table" and
        count.message or count)) .. "); nothing measured (--arch ARCH checks the suite offline)")
      return nil, EXIT.GPU
    end
  end
  -- the night's identity: its start time, and a tag that tells two nights of one second apart
  local night = {id = os.date("!%Y-%m-%dT%H:%M:%SZ") .. "-" .. gpuexp.hash(string.format("%.9f %s", gpuexp.clock(),
    tostring({}))):sub(1, 6), suite = suite, options = o, history = o.history or history.default_path(),
    started = gpuexp.clock(), results = {}}
  -- an offline plan records only into a history named explicitly (its runs have no GPU, so they
  -- never mix with a GPU's baselines): that is how the tests drive a whole night without a GPU
  if not o.arch or o.history ~= nil then
    night.db, why = history.open(night.history)
    if not night.db then say("the history cannot be used: " .. why); return nil, EXIT.HISTORY end
    -- one nightly per GPU at a time, whatever names the GPU; the locks go when the night ends
    local lock_dir = os.getenv("GPUEXP_LOCK_DIR") or "/tmp"
    local gpus = {{ordinal = "0 (an offline plan)", uuid = "offline-plan"}}
    if not o.arch then
      gpus, why = night_gpus(o)
      if not gpus then say(why); night.db:close(); return nil, EXIT.USAGE end
    end
    for _, gpu in ipairs(gpus) do
      local path = string.format("%s/gpuexp-nightly-%s.lock", lock_dir, gpu.uuid)
      -- shared: the night's runs (and all they start) hold it too, so that the next night takes
      -- it only once every one of them has ended, even after this nightly is killed
      local locked, note, kind = gpuexp._process.lock(path, true)
      if not locked then
        release_locks()
        night.db:close()
        if kind == "busy" then
          say("another nightly is running on GPU " .. gpu.ordinal .. " (" .. tostring(note) .. "); try later")
          return nil, EXIT.BUSY
        end
        say("GPU " .. gpu.ordinal .. ": " .. tostring(note) .. " (GPUEXP_LOCK_DIR names another folder)")
        return nil, EXIT.USAGE
      end
      if note then say(note) end
      locks[#locks + 1] = path
    end
  end
  -- the night's tag too: two nightlies started in the same second never share (and overwrite) a folder
  night.out_dir = o.out or ("gpuexp-nightly/" .. os.date("!%Y%m%d-%H%M%S") .. "-" .. night.id:match("%-(%x+)$"))
  -- the default folder is made with its parents; one named by --out must go in a folder that exists
  -- (either way no link of another user on the way is followed: gx_output.h)
  local made, problem = gpuexp._output_folder(night.out_dir, not o.out)
  -- an absolute path in the history's metadata: the site links each night's report from anywhere
  night.out_dir = made and gpuexp._realpath(night.out_dir) or night.out_dir
  if not made then
    say(tostring(type(problem) == "table" and problem.message or problem))
    if night.db then night.db:close() end
    return nil, EXIT.USAGE
  end
  return night
end

-- Runs an experiment (kind "nightly", or "confirm": a re-measure of suspects, with --only) as its
-- own gpuexp process, recorded in the history as part of the night (the --night options). Returns
-- its exit code and the ids of the runs it recorded (one per sweep); or nil and the exit code of
-- a stop signal.
local function run_stage(night, experiment, kind, out, only)
  local o = night.options
  local arguments = {}
  -- a diagnosis (gpuexp --diagnose on the confirmed regressions nothing accounts for) is read from
  -- its CSV, not recorded: its replayed launches are no night's times
  if kind == "diagnose" then arguments[#arguments + 1] = "--diagnose" end
  if night.db and kind ~= "diagnose" then
    for _, a in ipairs({"--history", night.history, "--night", night.id, "--night-kind", kind, "--night-suite",
      night.suite.name, "--night-experiment", experiment.name}) do arguments[#arguments + 1] = a end
  end
  if o.quiet then arguments[#arguments + 1] = "--quiet" end
  -- the night's counters explain a regression; a re-measure only re-times
  if o.counters and kind == "nightly" and not o.arch then arguments[#arguments + 1] = "--counters" end
  if o.arch then arguments[#arguments + 1] = "--arch"; arguments[#arguments + 1] = o.arch end
  for _, a in ipairs(o.pass) do arguments[#arguments + 1] = a end
  for _, a in ipairs({"--out", out}) do arguments[#arguments + 1] = a end
  -- the night's folder is the nightly's own: its subfolders (confirm/) are made here, as an
  -- experiment's --out must name a folder that exists
  local made, problem = gpuexp._output_folder(out:match("^(.*)/[^/]*$"), true)
  if not made then
    io.stderr:write("gpuexp nightly: " .. text.message(type(problem) == "table" and problem.message or problem) .. "\n")
    return EXIT.WRITE, {}
  end
  if only then arguments[#arguments + 1] = "--only"; arguments[#arguments + 1] = only end
  arguments[#arguments + 1] = "--"
  arguments[#arguments + 1] = experiment.path
  for _, a in ipairs(experiment.args) do arguments[#arguments + 1] = a end
  local code, stop = run_gpuexp(arguments)
  if stop ~= 0 then return nil, 128 + stop end
  if stopped_by_signal(code) then return nil, code end
  if kind == "diagnose" then return code, {} end
  return code, night.db and history.runs_of_night(night.db, night.id, experiment.name, kind) or {}
end

-- The options the night's runs are judged with (recorded with each run: the site and bisect --run
-- judge a night as it was judged).
local function judge_options(o)
  return {floor_pct = o.floor_pct, baseline = o.baseline, metric = o.metric, rule = "gpuexp"}
end

-- Judges a recorded run (one sweep) through judge/verdict.lua: its series replayed up to it (every
-- point's regression state), then the run against each point's baselines (its last --baseline
-- nights at the accepted level) or its open regression's accepted level. A result {name, run_id,
-- comparison, note}, named by the experiment (and the sweep, when the experiment has several).
local function judge_stage(night, run_id, experiment, several)
  local o, db = night.options, night.db
  local state = verdict.replay(db, run_id)
  local new = verdict.load(state, run_id)
  local name = several and (experiment .. " / " .. tostring(new.record.sweep)) or experiment
  local result = {name = name, run_id = run_id, run = new, state = state}
  result.comparison = verdict.judge(state, new, judge_options(o))
  local used, ids = {}, {}
  for _, e in ipairs(result.comparison.points) do
    for _, base in ipairs(e.base_runs or {}) do
      local id = base.record.id
      if not used[id] then used[id] = true; ids[#ids + 1] = id end
    end
  end
  table.sort(ids)
  if #result.comparison.points == 0 then
    -- nothing judged is said, never a clean "0 points" (an offline plan's time columns are empty)
    local name = result.comparison.metric.name
    local has_column = false
    for _, column in ipairs(new.columns) do has_column = has_column or column == name end
    result.unjudged = has_column and string.format("none of its %d points has a value in %s%s", #new.order, name, o.arch and " (an offline plan measures no time; --metric COL:lower|higher " ..
      "judges a column it fills, such as occupancy_pct:higher)" or "") or string.format("it has no column '%s'%s " ..
      "(its columns: %s)", name, gpuexp._did_you_mean(name, new.columns), table.concat(new.columns, ", "))
    result.note = "not judged: " .. result.unjudged
  elseif result.comparison.metric.status_only then
    -- no time to compare, but a point that fails is still news: judged on its status alone
    result.note = "no time column (*_ms): points judged on their status only"
  elseif #state.nights == 0 then
    result.note = "no baseline yet on this GPU model and driver: this night is the first (recorded as run " .. run_id .. ")"
  else
    result.note = string.format("baseline: runs %s (each point's last %d nights at its accepted level)",
      table.concat(ids, ", "), o.baseline)
  end
  return result
end

-- Re-measures the result's new suspects (slower, not already an open regression) the same night and
-- judges them again; a suspect the re-measure does not confirm is not a regression. Then the
-- night's verdicts move the points' regression states. Returns the stop code, if any.
local function confirm_stage(night, experiment, result)
  local suspects = verdict.suspects(result.comparison)
  local options = judge_options(night.options)
  if #suspects > 0 and night.options.confirm then
    if not night.options.quiet then
      say(string.format("re-measuring %d suspect point(s) of %s", #suspects, result.name))
    end
    local code, ids = run_stage(night, experiment, "confirm", night.out_dir .. "/confirm/" .. experiment.name .. ".csv",
      only_spec(result.run, suspects))
    if not code then return ids end
    local sweep = result.run.record.sweep
    local remeasure
    for _, id in ipairs(ids) do
      local run = history.load_run(night.db, id)
      if run.record.sweep == sweep then remeasure = run end
    end
    verdict.confirm(result.comparison, remeasure, options)
  end
  verdict.settle(result.state, result.comparison, result.run, options)
  return nil
end

-- The result's regressions (slower, or ok in the baseline and failing now), each slower one with
-- what its counters say changed, and a failure when points fail that had no ok baseline either.
-- The counters' noise is read from the point's baseline nights its judge named (explain.noise_of:
-- no night of an open regression or of the creep explained), loaded only when a point is slower.
local function classify(night, result)
  result.regressions = {}
  local function load(id) return verdict.load(result.state, id) end
  for _, e in ipairs(result.comparison.points) do
    if compare.is_regression(e) then
      if e.verdict == "slower" then
        local noise_runs = explain.noise_of(e, load) or explain.noise_runs(night.db, result.run_id)
        e.explanation, e.accounted = explain.entry(e, e.base_runs or {}, result.run, noise_runs)
      end
      result.regressions[#result.regressions + 1] = e
    elseif e.verdict == "error" then
      result.failure = result.failure or "points failed (they had no ok baseline either)"
    end
  end
end

-- The confirm stage's last step: the confirmed regressions that nothing in the counter set
-- accounts for get gpuexp diagnose's verdict and evidence for their point, measured now (one
-- re-run of those points with --diagnose), appended to their explanation. Returns the stop code, if any.
local function diagnose_stage(night, experiment, result)
  local o = night.options
  local unexplained = {}
  for _, e in ipairs(result.regressions or {}) do
    -- newly confirmed only: a regression open since an earlier night was diagnosed that night
    if e.explanation and e.accounted == false then
      if e.open then
        e.explanation = explain.with_diagnosis(e, result.run, e.explanation, false)
      else
        unexplained[#unexplained + 1] = e
      end
    end
  end
  if #unexplained == 0 or not o.confirm or not o.counters then return nil end
  local only = only_spec(result.run, unexplained)
  if not only then
    for _, e in ipairs(unexplained) do
      e.explanation = e.explanation .. "; gpuexp diagnose not run (an axis value holds , ; or =, which --only cannot name)"
    end
    return nil
  end
  if not o.quiet then
    say(string.format("diagnosing %d regression(s) of %s that no counter accounts for", #unexplained, result.name))
  end
  local path = explain.diagnoses_path(night.out_dir, experiment.name)
  local code, stop = run_stage(night, experiment, "diagnose", path, only)
  if not code then return stop end
  local readable, rows = pcall(csv.read, path)
  for _, e in ipairs(unexplained) do
    local text, found = explain.with_diagnosis(e, result.run, e.explanation, false, readable and rows or nil)
    e.explanation = found and text or string.format("%s; gpuexp diagnose gave no verdict (exit %d; see %s)", text, code, path)
  end
  return nil
end

-- The report files: a history plot per regressed point, then every printer over one model.
local function report_stage(night, model_of)
  local plots_made = 0
  for _, result in ipairs(night.results) do
    for _, e in ipairs(result.regressions or {}) do
      if e.base and e.new then
        plots_made = plots_made + 1
        local name = string.format("plots/%02d.png", plots_made)
        gpuexp._output_folder(night.out_dir .. "/plots") -- else the plot's write fails: no plot
        local limit = e.direction == "higher" and e.base * (1 - e.threshold_pct / 100) or e.base * (1 + e.threshold_pct / 100)
        local made = pcall(require("gpuexp.api.plot").history, {series = history.series(night.db, result.run_id, e.key,
          e.metric, 60), center = e.base, limit = limit, new = {id = result.run_id, value = e.new},
          confirm = e.confirm_value and {id = result.run_id, value = e.confirm_value}, out = night.out_dir .. "/" .. name,
          title = result.name .. ": " .. e.point, ylabel = e.metric})
        if made then e.plot = name end
      end
    end
  end
  local model = model_of()
  for _, file in ipairs(report.files) do
    csv.write_printed(night.out_dir .. "/" .. file[1], function(out) file[2](model, out) end)
  end
  return model
end

function M.run(o, given)
  local code = M.night(o, given)
  release_locks()
  return code
end

-- A job array's share would be taken from the environment by every experiment, and a night of 2
-- points in 8 recorded as complete: a nightly is one whole job. True (said) when it is a share.
local function in_job_array()
  for _, name in ipairs({"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"}) do
    if os.getenv(name) and os.getenv(name) ~= "" then
      say(string.format("%s is set: a nightly runs every point of every experiment, so it does not run as one share " ..
        "of a job array or Indexed Job (run it as a single job, or unset %s)", name, name))
      return true
    end
  end
  return false
end

-- One experiment of the night: run and record it, keep the options it is judged with, then judge,
-- confirm and diagnose each of its sweeps. Returns the stop's exit code when interrupted (else
-- nil), the night's exit code so far, and an exit code to end the night with at once (a history
-- that cannot be read), else nil.
local function night_experiment(night, experiment, exit_code)
  local o = night.options
  if not o.quiet then say("running " .. experiment.name .. " (" .. experiment.path .. ")") end
  local code, ids = run_stage(night, experiment, "nightly", night.out_dir .. "/" .. experiment.name .. ".csv")
  if not code then return ids, exit_code end
  local failure
  if code == EXIT.HISTORY then
    failure, exit_code = "its run could not be recorded in the history (see the message above)", EXIT.HISTORY
  elseif code ~= EXIT.OK and code ~= EXIT.INCOMPLETE then
    failure = string.format("the experiment failed (exit code %d; its message is above)", code)
  end
  if night.db and #ids == 0 then
    night.results[#night.results + 1] = {name = experiment.name, failure = failure or "the experiment wrote no sweep"}
  elseif not night.db then
    night.results[#night.results + 1] = {name = experiment.name, failure = failure}
  end
  -- the options its runs are judged with, kept with them (the site and bisect --run judge alike)
  if night.db and #ids > 0 then
    local kept, why = pcall(history.set_judge, night.db, ids, verdict.recorded(judge_options(o)))
    if not kept then
      say("the night's options could not be recorded: " .. tostring(type(why) == "table" and why.message or why))
      exit_code = EXIT.HISTORY
    end
  end
  -- an experiment of several sweeps: each is judged and reported, none replaces another
  for _, run_id in ipairs(ids) do
    -- the history read to judge (error values: a database that fails) is exit 6; a bug is 70
    local judged, result = pcall(judge_stage, night, run_id, experiment.name, #ids > 1)
    local confirmed, stop = judged, nil
    if judged then
      result.failure = failure
      confirmed, stop = pcall(confirm_stage, night, experiment, result)
    end
    if not judged or not confirmed then
      local problem = judged and stop or result
      if type(problem) ~= "table" then error(problem, 0) end
      say("the history could not be read to judge " .. experiment.name .. ": " .. tostring(problem.message))
      night.db:close()
      return nil, exit_code, EXIT.HISTORY
    end
    local interrupted = stop
    classify(night, result)
    interrupted = interrupted or diagnose_stage(night, experiment, result)
    -- a newly confirmed regression explained to the source line (commands/lines.lua, --lines-timeout)
    interrupted = interrupted or require("gpuexp.commands.lines").night_stage(night, experiment, result,
      {only_spec = only_spec})
    night.results[#night.results + 1] = result
    if interrupted then return interrupted, exit_code end
  end
  return nil, exit_code
end

-- The report (printed, written) and the --on-regression command of a judged night; its exit code.
local function finish_night(night, exit_code)
  local o = night.options
  local machine = history.night_machine(night.db, night.id)
  local function model_of()
    return report.model{id = night.id, suite = night.suite.name, history = night.history, gpu = machine.gpu,
      driver = machine.driver, exit_code = exit_code, elapsed_s = gpuexp.clock() - night.started, results = night.results}
  end
  local written, model = pcall(report_stage, night, model_of)
  night.db:close()
  if not written then
    say("the report could not be written: " .. tostring(type(model) == "table" and model.message or model))
    -- a failed write keeps the night's verdict; a bug in a printer is gpuexp's failure, never a clean night
    if not csv.is_write_error(model) then exit_code = EXIT.INTERNAL end
    model = model_of()
  end
  report.summary(model, io.stdout)
  for _, result in ipairs(night.results) do
    if result.unjudged then print(string.format("NOT JUDGED %s: %s", text.terminal(result.name), text.terminal(result.unjudged))) end
  end
  -- tuning drift: stored winners this night's tunes found out of their tie set (docs/howto/tune.md)
  for _, line in ipairs(require("gpuexp.store.winners").drift_lines(night.history, night.id:sub(1, 20))) do print(text.terminal(line)) end
  local md_path, html_path = night.out_dir .. "/report.md", night.out_dir .. "/report.html"
  if written then print(text.format("report: %s and %s (and report.xml, JUnit; report.json)", md_path, html_path)) end
  if exit_code == EXIT.OK or not o.on_regression then return exit_code end
  local command = string.format("GPUEXP_REPORT=%s GPUEXP_REPORT_HTML=%s GPUEXP_NIGHTLY_EXIT=%d %s %s",
    shell_quote(written and md_path or ""), shell_quote(written and html_path or ""), exit_code, o.on_regression,
    shell_quote(written and md_path or ""))
  -- the GPU is free while it runs (the night is over), and it has a time limit
  release_locks()
  local hook_code, stop, timed_out = gpuexp._process.run({"sh", "-c", command}, {timeout_s = o.hook_timeout})
  if stop ~= 0 then
    say(string.format("interrupted during the --on-regression command (exit %d)", 128 + stop))
    return 128 + stop
  elseif timed_out then
    say(string.format("--on-regression command ran past its %g s limit (--on-regression-timeout) and was ended: %s",
      o.hook_timeout, o.on_regression))
  elseif hook_code ~= 0 then
    say(string.format("--on-regression command failed (exit %d): %s", hook_code, o.on_regression))
  end
  return exit_code
end

function M.night(fields, given)
  local o, why = parse(fields, given)
  if not o then say(why); return EXIT.USAGE end
  if in_job_array() then return EXIT.USAGE end
  gpuexp._process.init() -- a stop signal is taken while an experiment runs, and passed on to it
  local night, refused = set_up(o)
  if not night then return refused end
  local exit_code, interrupted, fatal = EXIT.OK, nil, nil
  for _, experiment in ipairs(night.suite.experiments) do
    interrupted, exit_code, fatal = night_experiment(night, experiment, exit_code)
    if fatal then return fatal end
    if interrupted then break end
  end
  if interrupted then
    say(string.format("interrupted (exit %d); the runs finished so far are recorded", interrupted))
    if night.db then night.db:close() end
    return interrupted
  end
  local any_regression, any_failure = false, false
  for _, r in ipairs(night.results) do
    if r.regressions and #r.regressions > 0 then any_regression = true end
    if r.failure then any_failure = true end
  end
  if any_regression then exit_code = EXIT.FAILED
  elseif exit_code == EXIT.OK and any_failure then exit_code = EXIT.INCOMPLETE end
  if not night.db then
    print(text.format("gpuexp nightly: offline plan for %s: every experiment of %s ran (nothing measured, " ..
      "recorded or compared)", o.arch, night.suite.name))
    return exit_code
  end
  return finish_night(night, exit_code)
end

return M
