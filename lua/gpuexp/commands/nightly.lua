-- gpuexp nightly SUITE: runs every experiment of a suite through the supervisor (a crashing or
-- hanging kernel is a row, not a dead night), records each run in the history, compares every
-- point with a baseline drawn from the history, re-measures the suspects before calling anything
-- a regression, prints a one-screen summary, writes a Markdown and an HTML report and exits with
-- a code a scheduler understands.
local compare = require("gpuexp.judge.compare")
local printers = require("gpuexp.judge.printers")
local history = require("gpuexp.store.history")
local rule = require("gpuexp.judge.rule")
local catalog = require("gpuexp.catalog")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

M.DEFAULT_BASELINE_RUNS = 5

local function say(message) io.stderr:write("gpuexp nightly: " .. message .. "\n") end
local release_locks

local function shell_quote(text)
  text = tostring(text)
  if text:match("^[%w%./_,:=+@%-]+$") then return text end
  return "'" .. text:gsub("'", "'\\''") .. "'"
end

local function file_exists(path)
  local file = io.open(path, "r")
  if file then file:close() return true end
  return false
end

local function split_words(line)
  local words, i = {}, 1
  while i <= #line do
    local c = line:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif c == '"' or c == "'" then
      local close = line:find(c, i + 1, true)
      if not close then return nil, "an unclosed quote" end
      words[#words + 1] = line:sub(i + 1, close - 1)
      i = close + 1
    else
      local stop = line:find("%s", i) or #line + 1
      words[#words + 1] = line:sub(i, stop - 1)
      i = stop
    end
  end
  return words
end

-- M.read_suite(path) -> {name, experiments = {{name, path, args}...}}, or nil and why.
function M.read_suite(path)
  local experiments = {}
  if gpuexp._is_directory(path) then
    local pipe = io.popen("ls -1 " .. shell_quote(path) .. " 2>/dev/null")
    for name in pipe:lines() do
      if name:match("%.lua$") then experiments[#experiments + 1] = {path = path .. "/" .. name, args = {}} end
    end
    pipe:close()
    if #experiments == 0 then return nil, path .. ": no experiment (*.lua) in this folder" end
  else
    local file, message = io.open(path, "r")
    if not file then return nil, "cannot read the suite " .. path .. ": " .. tostring(message) end
    local dir = path:match("^(.*)/[^/]*$") or "."
    local number = 0
    for line in file:lines() do
      number = number + 1
      local text = line:gsub("#.*$", "")
      if text:match("%S") then
        local words, why = split_words(text)
        if not words then file:close() return nil, string.format("%s:%d: %s", path, number, why) end
        local script = table.remove(words, 1)
        if script:sub(1, 1) ~= "/" then script = dir .. "/" .. script end
        if not file_exists(script) then
          file:close()
          return nil, string.format("%s:%d: the experiment %s does not exist", path, number, script)
        end
        experiments[#experiments + 1] = {path = script, args = words, line = number}
      end
    end
    file:close()
    if #experiments == 0 then return nil, path .. ": the suite names no experiment" end
  end
  local used = {}
  for _, e in ipairs(experiments) do
    local name = e.path:match("([^/]+)%.lua$") or e.path
    if used[name] then
      used[name] = used[name] + 1
      name = name .. "-" .. used[name]
    else
      used[name] = 1
    end
    e.name = name
  end
  return {name = path:gsub("/+$", ""), experiments = experiments}
end

local function parse(args)
  local o = {baseline = M.DEFAULT_BASELINE_RUNS, floor_pct = rule.FLOOR_PCT, confirm = true, pass = {}}
  local i = 1
  local function value(name)
    i = i + 1
    if args[i] == nil then error({usage = name .. " needs a value"}) end
    return args[i]
  end
  while i <= #args do
    local a = args[i]
    if a == "-h" or a == "--help" then o.help = true
    elseif a == "--history" then o.history = value(a)
    elseif a == "--out" or a == "-o" then o.out = value(a)
    elseif a == "--baseline" then
      o.baseline = tonumber(value(a))
      if not o.baseline or o.baseline < 1 or math.type(o.baseline) ~= "integer" then error({usage = "--baseline takes a number of runs >= 1"}) end
    elseif a == "--threshold" then
      o.floor_pct = tonumber(value(a))
      if not o.floor_pct or o.floor_pct < 0 then error({usage = "--threshold takes a percentage >= 0"}) end
    elseif a == "--no-confirm" then o.confirm = false
    elseif a == "--on-regression" then o.on_regression = value(a)
    elseif a == "-q" or a == "--quiet" then o.quiet = true
    elseif a == "-d" or a == "--device" or a == "--devices" or a == "--point-timeout" then
      local v = value(a)
      o.pass[#o.pass + 1] = a; o.pass[#o.pass + 1] = v
      if a ~= "--point-timeout" then o.devices = v end
    elseif a == "--arch" or a == "-a" then o.arch = value(a)
    elseif a:sub(1, 1) == "-" then error({usage = "unknown option '" .. a .. "'"})
    elseif not o.suite then o.suite = a
    else error({usage = "one suite at a time (got '" .. o.suite .. "' and '" .. a .. "')"}) end
    i = i + 1
  end
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
  local list, why = {0}, nil
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

-- The counts of a comparison's verdicts, from its entries (after a re-judge as well).
local function recount(comparison)
  local counts = {same = 0, slower = 0, faster = 0, new = 0, missing = 0, error = 0}
  for _, e in ipairs(comparison.points) do counts[e.verdict] = counts[e.verdict] + 1 end
  comparison.counts = counts
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

local function runs_of_night(db, night, experiment, kind)
  local rows = db:rows("SELECT id FROM runs WHERE nightly = ? AND experiment = ? AND kind = ? ORDER BY id", night,
    experiment, kind)
  local ids = {}
  for i, r in ipairs(rows) do ids[i] = r.id end
  return ids
end

local function html_escape(text)
  return (tostring(text):gsub("[&<>\"]", {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;"}))
end

local function confidence_text(e)
  local parts = {}
  if e.confirmed_change then parts[#parts + 1] = string.format("re-measured %+.2f%%", e.confirmed_change) end
  if e.spread_multiple then parts[#parts + 1] = string.format("%.0fx spread", e.spread_multiple) end
  if e.verdict == "error" then parts[#parts + 1] = "ok in the baseline, now " .. tostring(e.status or "failing") end
  return table.concat(parts, "; ")
end

-- The report: Markdown and HTML, one history plot per regressed point.
local function write_reports(night, out_dir, db, results, context)
  local md_path, html_path = out_dir .. "/report.md", out_dir .. "/report.html"
  local md = assert(io.open(md_path, "w"))
  local html = assert(io.open(html_path, "w"))
  md:write(string.format("# gpuexp nightly %s\n\n", night))
  md:write(string.format("- suite: `%s`\n- GPU: %s, driver %s\n- result: **%s** (exit %d)\n- history: `%s`\n\n",
    context.suite, context.gpu or "?", context.driver or "?", context.verdict, context.exit_code, context.history))
  html:write("<!doctype html><html><head><meta charset='utf-8'><title>gpuexp nightly ", html_escape(night),
    "</title><style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}",
    "td,th{border:1px solid #ccc;padding:2px 8px;font-size:90%}td.n{text-align:right}.bad{color:#b00;font-weight:bold}",
    "</style></head><body>\n")
  html:write(string.format("<h1>gpuexp nightly %s</h1><p>suite <code>%s</code>; %s, driver %s; <b>%s</b> (exit %d)</p>\n",
    html_escape(night), html_escape(context.suite), html_escape(context.gpu or "?"), html_escape(context.driver or "?"),
    html_escape(context.verdict), context.exit_code))
  local regressions = {}
  for _, r in ipairs(results) do
    for _, e in ipairs(r.regressions or {}) do regressions[#regressions + 1] = {result = r, entry = e} end
  end
  md:write(string.format("## Regressions (%d)\n\n", #regressions))
  html:write(string.format("<h2>Regressions (%d)</h2>\n", #regressions))
  if #regressions > 0 then
    md:write("| experiment | point | metric | before | after | change | threshold | confidence |\n")
    md:write("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n")
    local plots = out_dir .. "/plots"
    gpuexp.mkdir(plots)
    for n, item in ipairs(regressions) do
      local e, r = item.entry, item.result
      md:write(string.format("| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name, e.point, e.metric,
        printers.number_text(e.base), printers.number_text(e.new), printers.change_text(e),
        e.threshold_pct and string.format("%.2f%%", e.threshold_pct) or "", confidence_text(e)))
      html:write(string.format("<h3>%s: %s (%s)</h3><p>before %s, after %s, change %s, threshold %s; %s</p>\n",
        html_escape(r.name), html_escape(e.point), html_escape(e.metric), printers.number_text(e.base),
        printers.number_text(e.new), printers.change_text(e), e.threshold_pct and string.format("%.2f%%", e.threshold_pct)
        or "", html_escape(confidence_text(e) .. (e.basis and ("; " .. e.basis) or ""))))
      if e.base and e.new then
        local series = history.series(db, r.run_id, e.key, e.metric, 60)
        local limit = e.direction == "higher" and e.base * (1 - e.threshold_pct / 100) or e.base * (1 + e.threshold_pct / 100)
        local png = string.format("%s/%02d.png", plots, n)
        local ok, problem = pcall(require("gpuexp.api.plot").history, {series = series, center = e.base, limit = limit,
          new = {id = r.run_id, value = e.new}, confirm = e.confirm_value and {id = r.run_id, value = e.confirm_value},
          out = png, title = r.name .. ": " .. e.point, ylabel = e.metric})
        if ok then
          html:write(string.format("<img src='plots/%02d.png' width='800'>\n", n))
          item.plot = string.format("plots/%02d.png", n)
        else
          local text = (type(problem) == "table" and problem.message or tostring(problem)):gsub("^[^:]+:%d+: ", "")
          html:write("<p>(no plot: ", html_escape(text), ")</p>\n")
        end
      end
    end
    md:write("\n")
    for _, item in ipairs(regressions) do
      if item.plot then md:write(string.format("![%s %s](%s)\n", item.result.name, item.entry.point, item.plot)) end
    end
    md:write("\n")
  end
  for _, r in ipairs(results) do
    md:write(string.format("## %s\n\n", r.name))
    html:write(string.format("<h2>%s</h2>\n", html_escape(r.name)))
    if r.failure then
      md:write("**", r.failure, "**\n\n")
      html:write("<p class='bad'>", html_escape(r.failure), "</p>\n")
    end
    if r.note then md:write(r.note, "\n\n"); html:write("<p>", html_escape(r.note), "</p>\n") end
    if r.comparison then
      printers.format_markdown(r.comparison, md)
      md:write("\n")
      html:write("<table><tr><th>point</th><th>metric</th><th>base</th><th>new</th><th>change</th><th>threshold</th>",
        "<th>verdict</th><th>basis</th></tr>\n")
      for _, e in ipairs(r.comparison.points) do
        local bad = compare.is_regression(e)
        html:write(string.format("<tr><td>%s</td><td>%s</td><td class='n'>%s</td><td class='n'>%s</td><td class='n'>%s</td>" ..
          "<td class='n'>%s</td><td%s>%s</td><td>%s</td></tr>\n", html_escape(e.point), html_escape(e.metric),
          printers.number_text(e.base), printers.number_text(e.new), printers.change_text(e),
          e.threshold_pct and string.format("%.2f%%", e.threshold_pct) or "", bad and " class='bad'" or "",
          html_escape(e.verdict), html_escape(e.basis or "")))
      end
      html:write("</table>\n")
    end
  end
  html:write("</body></html>\n")
  md:close()
  html:close()
  return md_path, html_path
end

local function print_summary(night, results, context, elapsed)
  local points, counts = 0, {same = 0, faster = 0, new = 0, missing = 0, error = 0, slower = 0, unconfirmed = 0}
  local regressions = {}
  for _, r in ipairs(results) do
    if r.comparison then
      for _, e in ipairs(r.comparison.points) do
        points = points + 1
        counts[e.verdict] = (counts[e.verdict] or 0) + 1
        if e.unconfirmed then counts.unconfirmed = counts.unconfirmed + 1 end
      end
    end
    for _, e in ipairs(r.regressions or {}) do regressions[#regressions + 1] = {r.name, e} end
  end
  print(string.format("gpuexp nightly %s: %s (driver %s), suite %s: %d experiment(s), %d points, %.0f s",
    night, context.gpu or "?", context.driver or "?", context.suite, #results, points, elapsed))
  if #regressions > 0 then
    print(string.format("REGRESSIONS (%d):", #regressions))
    local rows = {}
    for i, item in ipairs(regressions) do
      local e = item[2]
      rows[i] = {experiment = item[1], point = e.point, metric = e.metric, before = printers.number_text(e.base),
        after = printers.number_text(e.new), change = printers.change_text(e),
        threshold = e.threshold_pct and string.format("%.2f%%", e.threshold_pct) or "", confidence = confidence_text(e)}
    end
    require("gpuexp.store.csv").print_table(rows, {"experiment", "point", "metric", "before", "after", "change", "threshold",
      "confidence"})
  end
  for _, r in ipairs(results) do
    if r.failure then print("FAILED " .. r.name .. ": " .. r.failure) end
  end
  print(string.format("%d slower (regressions), %d faster, %d same (%d suspects not confirmed by the re-measure), " ..
    "%d failing, %d new, %d missing", counts.slower, counts.faster, counts.same, counts.unconfirmed, counts.error,
    counts.new, counts.missing))
end

local locks = {}
function release_locks()
  for _, path in ipairs(locks) do gpuexp._process.unlock(path) end
  locks = {}
end

function M.main(args)
  local code = M.night(args)
  release_locks()
  return code
end

function M.night(args)
  local ok, o = pcall(parse, args)
  if not ok then say(type(o) == "table" and o.usage or tostring(o)); return EXIT.USAGE end
  if o.help then io.write(catalog.help("nightly")) return EXIT.OK end
  if o.arch then
    local known, problem = pcall(gpuexp.arch_limits, o.arch)
    if not known then say(type(problem) == "table" and problem.message:gsub("^[^:]*:%d+: ", "") or tostring(problem)); return EXIT.USAGE end
  end
  gpuexp._process.init() -- a stop signal is taken while an experiment runs, and passed on to it
  if not o.suite then say("which suite? (gpuexp nightly --help)"); return EXIT.USAGE end
  -- a shipped suite by name: gpuexp nightly nightly
  if not file_exists(o.suite) and not gpuexp._is_directory(o.suite) and gpuexp.data_dir and not o.suite:find("/") then
    local shipped = gpuexp.data_dir .. "/experiments/" .. o.suite
    if gpuexp._is_directory(shipped) or file_exists(shipped) then o.suite = shipped end
  end
  local suite, why = M.read_suite(o.suite)
  if not suite then say(why); return EXIT.USAGE end
  if not o.arch then
    local found, count = pcall(gpuexp.device_count)
    if not found or count == 0 then
      say("no GPU found (" .. (found and "the driver reports 0 devices" or tostring(type(count) == "table" and
        count.message or count)) .. "); nothing measured (--arch ARCH checks the suite offline)")
      return EXIT.GPU
    end
  end
  local history_path = o.history or history.default_path()
  -- an offline plan records only into a history named explicitly (its runs have no GPU, so they
  -- never mix with a GPU's baselines): that is how the tests drive a whole night without a GPU
  local recording = not o.arch or o.history ~= nil
  local db
  if recording then
    db, why = history.open(history_path)
    if not db then say("the history cannot be used: " .. why); return EXIT.HISTORY end
    -- one nightly per GPU at a time, whatever names the GPU; the locks go when the night ends
    local lock_dir = os.getenv("GPUEXP_LOCK_DIR") or "/tmp"
    local gpus = {{ordinal = "0 (an offline plan)", uuid = "offline-plan"}}
    if not o.arch then
      gpus, why = night_gpus(o)
      if not gpus then say(why); db:close(); return EXIT.USAGE end
    end
    for _, gpu in ipairs(gpus) do
      local path = string.format("%s/gpuexp-nightly-%s.lock", lock_dir, gpu.uuid)
      local locked, note, kind = gpuexp._process.lock(path)
      if not locked then
        release_locks()
        db:close()
        if kind == "busy" then
          say("another nightly is running on GPU " .. gpu.ordinal .. " (" .. tostring(note) .. "); try later")
          return EXIT.BUSY
        end
        say("GPU " .. gpu.ordinal .. ": " .. tostring(note) .. " (GPUEXP_LOCK_DIR names another folder)")
        return EXIT.USAGE
      end
      if note then say(note) end
      locks[#locks + 1] = path
    end
  end
  -- the night's identity: its start time, and a tag that tells two nights of one second apart
  local night = os.date("!%Y-%m-%dT%H:%M:%SZ") .. "-" .. gpuexp.hash(string.format("%.9f %s", gpuexp.clock(),
    tostring({}))):sub(1, 6)
  local out_dir = o.out or ("gpuexp-nightly/" .. os.date("!%Y%m%d-%H%M%S"))
  local made, problem = pcall(gpuexp.mkdir, out_dir)
  if not made then say("cannot make " .. out_dir .. ": " .. tostring(type(problem) == "table" and problem.message or problem)); return EXIT.USAGE end
  local started = gpuexp.clock()
  local results, context = {}, {suite = suite.name, history = history_path}
  local exit_code, interrupted = EXIT.OK, nil

  local function common(kind, experiment)
    local arguments = {}
    if recording then arguments = {"--history", history_path} end
    if o.quiet then arguments[#arguments + 1] = "--quiet" end
    if o.arch then arguments[#arguments + 1] = "--arch"; arguments[#arguments + 1] = o.arch end
    for _, a in ipairs(o.pass) do arguments[#arguments + 1] = a end
    local environment = {GPUEXP_NIGHTLY_ID = night, GPUEXP_NIGHTLY_KIND = kind, GPUEXP_NIGHTLY_SUITE = suite.name,
      GPUEXP_NIGHTLY_EXPERIMENT = experiment}
    return arguments, environment
  end

  for _, experiment in ipairs(suite.experiments) do
    local result = {name = experiment.name}
    results[#results + 1] = result
    local arguments, environment = common("nightly", experiment.name)
    local csv_path = out_dir .. "/" .. experiment.name .. ".csv"
    for _, a in ipairs({"--out", csv_path, "--", experiment.path}) do arguments[#arguments + 1] = a end
    for _, a in ipairs(experiment.args) do arguments[#arguments + 1] = a end
    if not o.quiet then say("running " .. experiment.name .. " (" .. experiment.path .. ")") end
    local code, stop = run_gpuexp(arguments, environment)
    if stop ~= 0 then interrupted = 128 + stop break end
    if stopped_by_signal(code) then interrupted = code break end
    if code == EXIT.HISTORY then
      result.failure = "its run could not be recorded in the history (see the message above)"
      exit_code = EXIT.HISTORY
    elseif code ~= 0 and code ~= 5 then
      result.failure = string.format("the experiment failed (exit code %d; its message is above)", code)
    end
    local ids = db and runs_of_night(db, night, experiment.name, "nightly") or {}
    if db and #ids == 0 and not result.failure then result.failure = "the experiment wrote no sweep" end
    for n, run_id in ipairs(ids) do
      -- an experiment of several sweeps: each is judged and reported, none replaces another
      local new = history.load_run(db, run_id)
      if n > 1 or #ids > 1 then
        local part = {name = experiment.name .. " / " .. tostring(new.record.sweep)}
        if n == 1 then results[#results] = part else results[#results + 1] = part end
        part.failure, result = result.failure, part
      end
      result.run_id = run_id
      local baseline_ids = history.baseline_ids(db, run_id, o.baseline)
      local bases = {}
      for i, id in ipairs(baseline_ids) do bases[i] = history.load_run(db, id) end
      local metric = compare.default_metric(new)
      local metrics = {{name = metric, direction = "lower"}}
      if not metric then
        -- no time to compare, but a point that fails is still news: judged on its status alone
        result.note = "no time column (*_ms): points judged on their status only"
        metrics = {{name = "status", status_only = true}}
      end
      local comparison = compare.compare(bases, new, {metrics = metrics, floor_pct = o.floor_pct, rule = "gpuexp"})
      if metric then
        if #bases == 0 then
          result.note = "no baseline yet on this GPU model and driver: this night is the first (recorded as run " .. run_id .. ")"
        else
          result.note = string.format("baseline: runs %s", table.concat(baseline_ids, ", "))
        end
        -- the suspects, measured again in the same night
        local suspects = {}
        for _, e in ipairs(comparison.points) do if e.verdict == "slower" then suspects[#suspects + 1] = e end end
        if #suspects > 0 and o.confirm then
          local only = only_spec(new, suspects)
          local confirm_args, confirm_env = common("confirm", experiment.name)
          local confirm_csv = out_dir .. "/confirm/" .. experiment.name .. ".csv"
          for _, a in ipairs({"--out", confirm_csv}) do confirm_args[#confirm_args + 1] = a end
          if only then confirm_args[#confirm_args + 1] = "--only"; confirm_args[#confirm_args + 1] = only end
          confirm_args[#confirm_args + 1] = "--"
          confirm_args[#confirm_args + 1] = experiment.path
          for _, a in ipairs(experiment.args) do confirm_args[#confirm_args + 1] = a end
          if not o.quiet then say(string.format("re-measuring %d suspect point(s) of %s", #suspects, experiment.name)) end
          local confirm_code, confirm_stop = run_gpuexp(confirm_args, confirm_env)
          if confirm_stop ~= 0 then interrupted = 128 + confirm_stop end
          if stopped_by_signal(confirm_code) then interrupted = confirm_code end
          local confirm_ids = runs_of_night(db, night, experiment.name, "confirm")
          local confirm_run = #confirm_ids > 0 and history.load_run(db, confirm_ids[#confirm_ids]) or nil
          for _, e in ipairs(suspects) do
            local row = confirm_run and confirm_run:row(e.key)
            local value = row and (row.status == nil or row.status == "ok") and row[metric]
            if type(value) == "number" then
              local again = rule.judge{value = value, noise_pct = tonumber(row.noise_pct), samples = tonumber(row.samples),
                baseline = e.judged_baseline, direction = e.direction, floor_pct = o.floor_pct}
              e.confirm_value, e.confirmed_change = value, again.change_pct
              if again.verdict ~= "slower" then
                e.verdict, e.unconfirmed = "same", true
                e.basis = (e.basis or "") .. string.format("; suspect, not confirmed: re-measured %+.2f%%", again.change_pct)
              end
            else
              e.basis = (e.basis or "") .. "; the re-measure gave no value, so the first measurement stands"
            end
          end
        end
      end
      recount(comparison)
      result.regressions = {}
      for _, e in ipairs(comparison.points) do
        if e.verdict == "slower" then
          local spread = rule.spread(e.baseline, e.base)
          if #e.baseline >= rule.MIN_HISTORY and spread > 0 then e.spread_multiple = math.abs(e.change_pct) / spread end
          result.regressions[#result.regressions + 1] = e
        elseif e.verdict == "error" then
          if compare.is_regression(e) then -- ok in the baseline, failing now
            result.regressions[#result.regressions + 1] = e
          else
            result.failure = result.failure or "points failed (they had no ok baseline either)"
          end
        end
      end
      result.comparison = comparison
    end
    if interrupted then break end
  end

  if interrupted then
    say(string.format("interrupted (exit %d); the runs finished so far are recorded", interrupted))
    if db then db:close() end
    return interrupted
  end
  local any_regression, any_failure = false, false
  for _, r in ipairs(results) do
    if r.regressions and #r.regressions > 0 then any_regression = true end
    if r.failure then any_failure = true end
  end
  if any_regression then exit_code = EXIT.FAILED
  elseif exit_code == EXIT.OK and any_failure then exit_code = EXIT.INCOMPLETE end
  if db then
    local newest = db:rows("SELECT gpu_name, driver_version FROM runs WHERE nightly = ? ORDER BY id DESC LIMIT 1", night)[1]
    if newest then context.gpu, context.driver = newest.gpu_name, newest.driver_version end
  end
  context.exit_code = exit_code
  context.verdict = ({[0] = "clean", [1] = "REGRESSION", [5] = "incomplete", [6] = "history not written"})[exit_code]
    or ("exit " .. exit_code)
  if not db then
    print(string.format("gpuexp nightly: offline plan for %s: every experiment of %s ran (nothing measured, " ..
      "recorded or compared)", o.arch, suite.name))
    return exit_code
  end
  local report_ok, md_path, html_path = pcall(write_reports, night, out_dir, db, results, context)
  print_summary(night, results, context, gpuexp.clock() - started)
  if report_ok then
    print("report: " .. md_path .. " and " .. html_path)
  else
    say("the report could not be written: " .. tostring(type(md_path) == "table" and md_path.message or md_path))
    md_path, html_path = "", ""
  end
  db:close()
  if exit_code ~= EXIT.OK and o.on_regression then
    local command = string.format("GPUEXP_REPORT=%s GPUEXP_REPORT_HTML=%s GPUEXP_NIGHTLY_EXIT=%d %s %s",
      shell_quote(md_path), shell_quote(html_path), exit_code, o.on_regression, shell_quote(md_path))
    local hook_ok, _, hook_code = os.execute(command)
    if not hook_ok then say(string.format("--on-regression command failed (exit %s): %s", tostring(hook_code), o.on_regression)) end
  end
  return exit_code
end

return M
