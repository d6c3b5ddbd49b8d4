-- gpuexp compare BASE.csv [MORE_BASE.csv...] NEW.csv: joins the rows of runs of one sweep on its
-- axes and gives each point a verdict per metric (same, slower, faster, new, missing, error) by the
-- rule of gpuexp.rule; a table, Markdown, JSON or JUnit XML. The nightly command uses the same
-- functions with baselines drawn from the history.
local csv = require("gpuexp.csv")
local json = require("gpuexp.json")
local result = require("gpuexp.result")
local rule = require("gpuexp.rule")

local M = {}

M.EXIT_REGRESSION = 1
M.EXIT_USAGE = 2
M.EXIT_DIFFERENT_GPU = 3
M.EXIT_WRITE = 7


local help = [[
usage: gpuexp compare [options] BASE.csv [MORE_BASE.csv...] NEW.csv

Joins the rows of NEW.csv and the baseline run(s) on the sweep's axes (from the .meta.json written
beside each CSV) and gives every point a verdict per metric: same, slower, faster, new (no
baseline row), missing (no new row) or error (the new row's status is not ok).

The rule: a point is slower when it is worse than the baseline's median by more than its threshold.
  3 or more baselines: threshold = max(--threshold, 3 x the baselines' spread: the largest
                       deviation of a baseline's value from their median, the single largest
                       ignored when there are 4 or more)
  1 or 2 baselines:    threshold = max(--threshold, 2 x the larger within-run noise (noise_pct))
  and never below 3 standard errors of the new median (noise_pct and samples columns).
--rule nvbench applies NVBench's rule instead (nvbench_compare.py: same when the change is within
the smaller of the two runs' noise, against the last baseline), for comparison.

options:
  --metric COL[:lower|:higher]  column to judge (repeatable); default the time column (median_ms,
                                else the first *_ms column). Which way is better is known for
                                *_ms/*_us/*_s/time (lower) and gbps/gflops/*_per_s (higher); say it
                                for other columns
  --threshold PCT               the smallest change ever called a regression (default 2)
  --rule gpuexp|nvbench         (default gpuexp)
  --markdown | --json | --junit output format (default an aligned table)
  -o, --output FILE             write the output there instead of stdout
  --axes A,B                    the axis columns, for CSVs with no .meta.json
  --allow-different-gpu         compare runs from different GPU models, drivers or clocks (warns)

A CSV is read strictly: a BOM and CRLF are fine; an unclosed quote, a row with another number of
cells than the header, a second row for one point, or a metric cell that is not a number is an
error naming the file and line. A baseline value that is 0, negative or not finite is not used.

exit codes: 0 no regression, 1 regression found (a point slower, or a point ok in the baseline now
            failing; one failing in the baseline too is not), 2 usage or unreadable input (also a
            NEW.csv with no rows), 3 refused: the runs come from different GPUs, drivers or clock
            settings, 7 the output file could not be written]]

local function fail(code, message)
  io.stderr:write("gpuexp compare: " .. message .. "\n")
  return code
end

-- Runs are gpuexp.result values (one model for CSVs, the history and the ledger).
M.new_run = result.new
M.load = result.read

-- The default metric: median_ms, else the first *_ms column that is not an axis.
function M.default_metric(run)
  local is_axis = {}
  for _, axis in ipairs(run.axes) do is_axis[axis] = true end
  for _, name in ipairs(run.columns) do if name == "median_ms" then return name end end
  for _, name in ipairs(run.columns) do if name:match("_ms$") and not is_axis[name] then return name end end
  return nil
end

-- "col", "col:lower" or "col:higher" -> {name, direction}, or nil and why.
function M.parse_metric(text)
  local name, direction = text:match("^(.-):(%a+)$")
  if not name then name = text; direction = rule.direction(text) end
  if direction ~= "lower" and direction ~= "higher" then
    return nil, string.format("--metric %s: say which way is better (%s:lower or %s:higher)", text, name, name)
  end
  return {name = name, direction = direction}
end

-- The differences between the machines of two runs that make timings incomparable.
function M.gpu_differences(base, new)
  local found = {}
  local a, b = base or {}, new or {}
  local ga, gb = a.gpu or {}, b.gpu or {}
  local function differ(what, x, y)
    if x ~= nil and y ~= nil and x ~= y then
      found[#found + 1] = string.format("%s: %s vs %s", what, tostring(x), tostring(y))
    end
  end
  differ("GPU", ga.name, gb.name)
  differ("driver", a.driver_version, b.driver_version)
  differ("CUDA driver", a.versions and a.versions.driver_cuda, b.versions and b.versions.driver_cuda)
  differ("maximum SM clock (kHz)", ga.sm_clock_max_khz, gb.sm_clock_max_khz)
  differ("maximum memory clock (kHz)", ga.memory_clock_max_khz, gb.memory_clock_max_khz)
  differ("ECC", ga.ecc_enabled, gb.ecc_enabled)
  return found
end

-- The fields compare reads of a point's row (converted from its cells), or nil when it has none.
local function fields(run, key, metric)
  if not run:has(key) then return nil end
  return {status = run:value(key, "status"), error = run:value(key, "error"), value = run:value(key, metric),
    noise_pct = tonumber(run:value(key, "noise_pct")), samples = tonumber(run:value(key, "samples")),
    clock_throttled = run:value(key, "clock_throttled")}
end

-- An entry of a comparison: its own fields are the verdict and numbers; what many entries share
-- (the result it is read from, the metric and its direction) is in its metatable, and its point's
-- text and cells and its baseline's values are made when read (a printer, a report). A run of
-- 200k points keeps 200k small tables, not 200k copies of all that.
local entry_kinds = {}
local function entry_kind(result, metric)
  local by_metric = entry_kinds[result] or setmetatable({}, {__mode = "k"})
  entry_kinds[result] = by_metric
  local kind = by_metric[metric]
  if kind then return kind end
  local shared = {result = result, metric = metric.name, direction = metric.direction}
  kind = {__index = function(entry, field)
    if shared[field] ~= nil then return shared[field]
    elseif field == "point" then return result:describe(entry.key)
    elseif field == "cells" then return result:axis_cells(entry.key)
    elseif field == "baseline" then
      local values = {}
      for i, b in ipairs(rawget(entry, "judged_baseline")) do values[i] = b.value end
      return values
    end
  end}
  by_metric[metric] = kind
  return kind
end
setmetatable(entry_kinds, {__mode = "k"})

local function ok_row(row) return row and (row.status == nil or row.status == "ok") end

-- A value a change can be computed against: a finite positive number (times and rates).
local function usable(value) return type(value) == "number" and value > 0 and value < math.huge end

-- M.compare(bases, new, options) -> {points = {...}, counts}; options: metrics ({name, direction}
-- list; {name = "status", status_only = true} judges only whether each point still succeeds),
-- floor_pct, rule. Each entry: key, point (text), cells, metric, verdict, base (centre), new,
-- change_pct, threshold_pct, basis, baseline (values), throttled.
function M.compare(bases, new, options)
  local entries, counts = {}, {same = 0, slower = 0, faster = 0, new = 0, missing = 0, error = 0}
  local keys, seen = {}, {}
  for _, key in ipairs(new.order) do keys[#keys + 1] = key; seen[key] = true end
  for _, base in ipairs(bases) do
    for _, key in ipairs(base.order) do
      if not seen[key] then keys[#keys + 1] = key; seen[key] = true end
    end
  end
  for _, key in ipairs(keys) do
    local labelled = new:has(key) and new or nil
    if not labelled then for _, base in ipairs(bases) do if base:has(key) then labelled = base end end end
    for _, metric in ipairs(options.metrics) do
      local new_row = fields(new, key, metric.name)
      local entry = setmetatable({key = key}, entry_kind(labelled, metric))
      local baseline, unusable = {}, {}
      for _, base in ipairs(bases) do
        local row = fields(base, key, metric.name)
        if ok_row(row) and (metric.status_only or type(row.value) == "number") then
          local value = metric.status_only and 1 or row.value
          if usable(value) then
            baseline[#baseline + 1] = {value = value, noise_pct = tonumber(row.noise_pct)}
          else
            unusable[#unusable + 1] = tostring(value) -- 0, negative, infinite or NaN: no change can be computed
          end
        end
      end
      entry.judged_baseline = baseline -- with their noise, for a re-judge (entry.baseline: the values)
      local value = new_row and new_row.value
      if ok_row(new_row) and value == nil and #baseline == 0 then
        entry = nil -- a column this point does not fill (e.g. gbps of a compute kernel)
      elseif not new_row then
        entry.verdict = "missing"
      elseif not ok_row(new_row) then
        entry.verdict, entry.status = "error", new_row.status
        entry.basis = string.format("status %s: %s", tostring(new_row.status), tostring(new_row.error or ""))
      elseif metric.status_only then
        entry.verdict = "same" -- ok now; its status is all that is judged
      elseif type(value) ~= "number" or value ~= value then
        entry.verdict = "error"
        entry.basis = string.format("no %s value in the new row", metric.name)
      elseif not usable(value) then
        entry.verdict, entry.new = "error", value
        entry.basis = string.format("the new %s is %s: no change can be computed from it (a time or rate is a " ..
          "finite positive number)", metric.name, tostring(value))
      elseif #baseline == 0 then
        entry.verdict = "new"
        entry.new = value
        if #unusable > 0 then
          entry.basis = string.format("no usable baseline value (%s: not finite and positive)", table.concat(unusable, ", "))
        end
      else
        local judged = rule.judge{value = value, noise_pct = tonumber(new_row.noise_pct),
          samples = tonumber(new_row.samples), baseline = baseline, direction = metric.direction,
          rule = options.rule, floor_pct = options.floor_pct}
        entry.verdict, entry.base, entry.new = judged.verdict, judged.center, value
        entry.change_pct, entry.threshold_pct, entry.basis = judged.change_pct, judged.threshold_pct, judged.basis
        if new_row.clock_throttled == true then
          entry.throttled = true
          entry.basis = entry.basis .. "; clock throttled during the new run"
        end
      end
      if entry then
        counts[entry.verdict] = counts[entry.verdict] + 1
        entries[#entries + 1] = entry
      end
    end
  end
  return {points = entries, counts = counts}
end

-- A regression: slower, or failing now where the baseline had an ok row (a point that failed in
-- the baseline too is failing, not newly broken).
function M.is_regression(entry)
  return entry.verdict == "slower" or (entry.verdict == "error" and #entry.judged_baseline > 0)
end

local function number_text(value)
  if type(value) ~= "number" then return "" end
  return string.format("%.5g", value)
end
M.number_text = number_text

local function change_text(entry)
  if not entry.change_pct then return "" end
  return string.format("%+.2f%%", entry.change_pct)
end
M.change_text = change_text

local function threshold_text(entry)
  return entry.threshold_pct and string.format("%.2f%%", entry.threshold_pct) or ""
end

function M.summary_line(counts)
  return string.format("%d slower, %d faster, %d same, %d error, %d new, %d missing", counts.slower, counts.faster,
    counts.same, counts.error, counts.new, counts.missing)
end

local COLUMNS = {"point", "metric", "base", "new", "change", "threshold", "verdict", "basis"}

-- An entry's cells for the printed table, in COLUMNS order: made one line at a time, never all
-- held at once (a comparison of 200k points prints 200k lines).
local function table_row(e)
  return {e.point, e.metric, number_text(e.base), number_text(e.new), change_text(e), threshold_text(e),
    M.is_regression(e) and e.verdict:upper() or e.verdict, e.basis or ""}
end

function M.format_table(result, file)
  local widths = {}
  for c, name in ipairs(COLUMNS) do widths[c] = #name end
  for _, e in ipairs(result.points) do
    for c, text in ipairs(table_row(e)) do if #text > widths[c] then widths[c] = #text end end
  end
  local formats = {}
  for c = 1, #COLUMNS do formats[c] = c == #COLUMNS and "%s" or ((c <= 2 and "%-" or "%") .. widths[c] .. "s") end
  local function line(cells)
    for c, text in ipairs(cells) do cells[c] = string.format(formats[c], text) end
    file:write(table.concat(cells, "  "), "\n")
  end
  line({table.unpack(COLUMNS)})
  for _, e in ipairs(result.points) do line(table_row(e)) end
  file:write(M.summary_line(result.counts), "\n")
end

local function markdown_cell(text) return (tostring(text):gsub("|", "\\|")) end

function M.format_markdown(result, file)
  file:write("| ", table.concat(COLUMNS, " | "), " |\n|")
  for c = 1, #COLUMNS do file:write(c >= 3 and c <= 6 and " ---: |" or " --- |") end
  file:write("\n")
  for _, e in ipairs(result.points) do
    local cells = table_row(e)
    for c, text in ipairs(cells) do
      text = markdown_cell(text)
      if COLUMNS[c] == "verdict" and text ~= text:lower() then text = "**" .. text .. "**" end
      cells[c] = text
    end
    file:write("| ", table.concat(cells, " | "), " |\n")
  end
  file:write("\n", M.summary_line(result.counts), "\n")
end

local function plain(value)
  if type(value) == "number" and (value ~= value or value == math.huge or value == -math.huge) then return nil end
  return value
end

function M.format_json(result, file, header)
  local points = {}
  for i, e in ipairs(result.points) do
    points[i] = {point = e.point, cells = e.cells, metric = e.metric, direction = e.direction, verdict = e.verdict,
      base = plain(e.base), new = plain(e.new), change_pct = plain(e.change_pct), threshold_pct = plain(e.threshold_pct),
      basis = e.basis, baseline_values = e.baseline, throttled = e.throttled}
  end
  local document = {points = points, counts = result.counts}
  for k, v in pairs(header or {}) do document[k] = v end
  file:write(json.encode(document), "\n")
end

local function xml(text)
  return (json.valid_utf8(tostring(text))
    :gsub("[&<>\"]", {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;"})
    :gsub("[%z\1-\8\11\12\14-\31]", ""))
end

function M.format_junit(result, file, suite_name)
  local failures, skipped = 0, 0
  for _, e in ipairs(result.points) do
    if M.is_regression(e) then failures = failures + 1 elseif e.verdict == "new" or e.verdict == "missing" then skipped = skipped + 1 end
  end
  file:write('<?xml version="1.0" encoding="UTF-8"?>\n')
  file:write(string.format('<testsuites><testsuite name="%s" tests="%d" failures="%d" errors="0" skipped="%d">\n',
    xml(suite_name or "gpuexp compare"), #result.points, failures, skipped))
  for _, e in ipairs(result.points) do
    file:write(string.format('  <testcase classname="%s" name="%s %s">', xml(suite_name or "gpuexp"), xml(e.point), xml(e.metric)))
    local text = string.format("%s: base %s, new %s, change %s, threshold %s (%s)", e.verdict, number_text(e.base),
      number_text(e.new), change_text(e), threshold_text(e), e.basis or "")
    if M.is_regression(e) then
      file:write(string.format('<failure type="%s" message="%s"/>', e.verdict, xml(text)))
    elseif e.verdict == "new" or e.verdict == "missing" then
      file:write(string.format('<skipped message="%s"/>', xml(text)))
    else
      file:write(string.format("<system-out>%s</system-out>", xml(text)))
    end
    file:write("</testcase>\n")
  end
  file:write("</testsuite></testsuites>\n")
end

function M.main(args)
  local paths, metrics, format, output, axes = {}, {}, "table", nil, nil
  local options = {floor_pct = rule.FLOOR_PCT, rule = "gpuexp"}
  local allow_different = false
  local i = 1
  while i <= #args do
    local a = args[i]
    local function value()
      i = i + 1
      if args[i] == nil then error({usage = a .. " needs a value"}) end
      return args[i]
    end
    local ok, problem = pcall(function()
      if a == "-h" or a == "--help" then format = "help"
      elseif a == "--metric" then
        local metric, why = M.parse_metric(value())
        if not metric then error({usage = why}) end
        metrics[#metrics + 1] = metric
      elseif a == "--threshold" then
        options.floor_pct = tonumber(value())
        if not options.floor_pct or options.floor_pct < 0 then error({usage = "--threshold takes a percentage >= 0"}) end
      elseif a == "--rule" then
        options.rule = value()
        if options.rule ~= "gpuexp" and options.rule ~= "nvbench" then error({usage = "--rule is gpuexp or nvbench"}) end
      elseif a == "--markdown" or a == "--json" or a == "--junit" then format = a:sub(3)
      elseif a == "-o" or a == "--output" then output = value()
      elseif a == "--axes" then
        axes = {}
        for name in value():gmatch("[^,]+") do
          name = name:match("^%s*(.-)%s*$")
          if name ~= "" then axes[#axes + 1] = name end
        end
        if #axes == 0 then error({usage = "--axes needs at least one column name (A,B)"}) end
      elseif a == "--allow-different-gpu" then allow_different = true
      elseif a:sub(1, 1) == "-" and a ~= "-" then error({usage = "unknown option '" .. a .. "'"})
      else paths[#paths + 1] = a end
    end)
    if not ok then return fail(M.EXIT_USAGE, type(problem) == "table" and problem.usage or tostring(problem)) end
    i = i + 1
  end
  if format == "help" then print(help) return 0 end
  if #paths < 2 then return fail(M.EXIT_USAGE, "needs BASE.csv and NEW.csv (see gpuexp compare --help)") end
  local runs = {}
  for n, path in ipairs(paths) do
    local run, why = M.load(path, axes)
    if not run then return fail(M.EXIT_USAGE, why) end
    if n > 1 and table.concat(run.axes, ",") ~= table.concat(runs[1].axes, ",") then
      return fail(M.EXIT_USAGE, string.format("%s has the axes %s, %s has %s: not runs of one sweep", path,
        table.concat(run.axes, ","), paths[1], table.concat(runs[1].axes, ",")))
    end
    runs[n] = run
  end
  local new = table.remove(runs)
  if #new.order == 0 then
    return fail(M.EXIT_USAGE, new.label .. " has no rows (a run stopped before its first point?): nothing to judge")
  end
  for _, base in ipairs(runs) do
    local differences = M.gpu_differences(base.info, new.info)
    if #differences > 0 then
      local text = string.format("%s and %s were measured on different machines (%s)", base.label, new.label,
        table.concat(differences, "; "))
      if not allow_different then
        return fail(M.EXIT_DIFFERENT_GPU, text .. "; their timings are not comparable (--allow-different-gpu compares anyway)")
      end
      io.stderr:write("gpuexp compare: WARNING: " .. text .. "; compared anyway (--allow-different-gpu)\n")
    end
  end
  if #metrics == 0 then
    local name = M.default_metric(new)
    if not name then return fail(M.EXIT_USAGE, new.label .. " has no time column (*_ms); choose one with --metric") end
    metrics[1] = {name = name, direction = "lower"}
  end
  for _, metric in ipairs(metrics) do
    local found = false
    for _, name in ipairs(new.columns) do found = found or name == metric.name end
    if not found then return fail(M.EXIT_USAGE, string.format("%s has no column '%s'", new.label, metric.name)) end
    for _, run in ipairs(runs) do
      local bad = run:check_numbers(metric.name)
      if bad then return fail(M.EXIT_USAGE, bad) end
    end
    local bad = new:check_numbers(metric.name)
    if bad then return fail(M.EXIT_USAGE, bad) end
  end
  options.metrics = metrics
  local result = M.compare(runs, new, options)
  -- to a file: written whole, through a temporary file and a rename (a full disk is exit 7)
  local file, parts = io.stdout, nil
  if output then
    parts = {}
    file = {write = function(self, ...) for _, text in ipairs({...}) do parts[#parts + 1] = text end return self end}
  end
  local bases = {}
  for n, base in ipairs(runs) do bases[n] = base.label end
  if format == "markdown" then M.format_markdown(result, file)
  elseif format == "json" then M.format_json(result, file, {baseline_runs = bases, new_run = new.label, rule = options.rule,
    floor_pct = options.floor_pct, gpu = new.info.gpu and new.info.gpu.name})
  elseif format == "junit" then M.format_junit(result, file, new.info.sweep and new.info.sweep.name)
  else M.format_table(result, file) end
  if output then
    local written, problem = pcall(csv.write_file, output, table.concat(parts))
    if not written then return fail(M.EXIT_WRITE, type(problem) == "table" and problem.message or tostring(problem)) end
  end
  for _, e in ipairs(result.points) do if M.is_regression(e) then return M.EXIT_REGRESSION end end
  return 0
end

return M
