-- A night's report: one table model built from the night's judged results (M.model), and printers
-- over it: the terminal summary, Markdown, HTML, JUnit XML and JSON. Printers only render: every
-- number and verdict is in the model already, so the five outputs always agree.
local csv = require("gpuexp.store.csv")
local json = require("gpuexp.store.json")
local compare = require("gpuexp.judge.compare")
local lines = require("gpuexp.judge.lines")
local printers = require("gpuexp.judge.printers")
local rule = require("gpuexp.judge.rule")
local text = require("gpuexp.store.text")

local M = {}

local number_text, change_text = printers.number_text, printers.change_text

local function threshold_text(e) return e.threshold_pct and string.format("%.2f%%", e.threshold_pct) or "" end

-- How sure a regression is: its re-measure, its multiple of the night-to-night spread.
local function confidence_text(e)
  local parts = {}
  if e.confirmed_change then parts[#parts + 1] = string.format("re-measured %+.2f%%", e.confirmed_change) end
  if e.verdict == "slower" then
    local values = e.baseline
    local spread = e.base and rule.spread(values, e.base) or 0
    if #values >= rule.MIN_HISTORY and spread > 0 then
      parts[#parts + 1] = string.format("%.0fx spread", math.abs(e.change_pct) / spread)
    end
  end
  if e.verdict == "error" then parts[#parts + 1] = "ok in the baseline, now " .. tostring(e.status or "failing") end
  return table.concat(parts, "; ")
end

local function row_of(e, experiment)
  return {experiment = experiment, point = e.point, metric = e.metric, before = number_text(e.base),
    after = number_text(e.new), change = change_text(e), threshold = threshold_text(e), verdict = e.verdict,
    regression = compare.is_regression(e), confidence = confidence_text(e), basis = e.basis or "",
    unconfirmed = e.unconfirmed or nil, plot = e.plot, explanation = e.explanation, lines = e.lines,
    state = e.state and e.state.name or nil, state_text = e.state and e.state.text or nil,
    open_since = e.state and e.state.since or nil, open_nights = e.state and e.state.nights or nil}
end

-- night: {id, suite, history, gpu, driver, exit_code, elapsed_s, results = {{name, failure, note,
-- comparison, regressions}}} -> the model: the night's facts, its regressions (rows), each
-- result's rows and the counts of every verdict.
function M.model(night)
  local model = {id = night.id, suite = night.suite, history = night.history, gpu = night.gpu or "?",
    driver = night.driver or "?", exit_code = night.exit_code, elapsed_s = night.elapsed_s, regressions = {},
    states = {}, results = {}, points = 0,
    counts = {same = 0, faster = 0, new = 0, missing = 0, error = 0, slower = 0, unconfirmed = 0}}
  -- what the counters cost the night: their seconds over every point's row (api/counters.lua)
  for _, r in ipairs(night.results) do
    for _, key in ipairs(r.run and r.run.order or {}) do
      local seconds = r.run:value(key, "ctr_seconds")
      if type(seconds) == "number" then model.counters_s = (model.counters_s or 0) + seconds end
    end
  end
  model.verdict = ({[0] = "clean", [1] = "REGRESSION", [5] = "incomplete", [6] = "history not written"})[night.exit_code]
    or ("exit " .. tostring(night.exit_code))
  for _, r in ipairs(night.results) do
    local result = {name = r.name, failure = r.failure, note = r.note, rows = {}}
    model.results[#model.results + 1] = result
    for _, e in ipairs(r.comparison and r.comparison.points or {}) do
      local row = row_of(e, r.name)
      result.rows[#result.rows + 1] = row
      model.points = model.points + 1
      model.counts[e.verdict] = (model.counts[e.verdict] or 0) + 1
      if e.unconfirmed then model.counts.unconfirmed = model.counts.unconfirmed + 1 end
      if row.regression then model.regressions[#model.regressions + 1] = row end
      if row.state then model.states[#model.states + 1] = row end
    end
  end
  return model
end

local REGRESSION_COLUMNS = {"experiment", "point", "metric", "before", "after", "change", "threshold", "confidence"}

local function counts_line(model)
  local c = model.counts
  return string.format("%d slower (regressions), %d faster, %d same (%d suspects not confirmed by the re-measure), " ..
    "%d failing, %d new, %d missing", c.slower, c.faster, c.same, c.unconfirmed, c.error, c.new, c.missing)
end

-- The regression states of the night, a line each: open (since when, for how long, against which
-- level), fixed, accepted.
local function state_lines(model)
  local lines = {}
  for _, row in ipairs(model.states) do
    lines[#lines + 1] = string.format("%s %s: %s", row.experiment, row.point, row.state_text)
  end
  return lines
end

-- The terminal summary: the regressions first, then failures and the counts.
function M.summary(model, file)
  local term = text.terminal
  file:write(string.format("gpuexp nightly %s: %s (driver %s), suite %s: %d experiment(s), %d points, %.0f s%s\n",
    term(model.id), term(model.gpu), term(model.driver), term(model.suite), #model.results, model.points, model.elapsed_s or 0,
    model.counters_s and string.format(" (counters %.1f s)", model.counters_s) or ""))
  if #model.regressions > 0 then
    file:write(string.format("REGRESSIONS (%d):\n", #model.regressions))
    csv.print_table(model.regressions, REGRESSION_COLUMNS, file)
    for _, row in ipairs(model.regressions) do
      if row.explanation then
        file:write(string.format("  %s %s: %s\n", term(row.experiment), term(row.point), term(row.explanation)))
      end
    end
  end
  local states = state_lines(model)
  if #states > 0 then file:write("REGRESSION STATES:\n") end
  for _, line in ipairs(states) do file:write("  ", term(line), "\n") end
  for _, r in ipairs(model.results) do
    if r.failure then file:write("FAILED ", term(r.name), ": ", term(r.failure), "\n") end
  end
  file:write(counts_line(model), "\n")
end

local md_cell = text.markdown

function M.markdown(model, file)
  file:write(string.format("# gpuexp nightly %s\n\n", md_cell(model.id)))
  file:write(string.format("- suite: %s\n- GPU: %s, driver %s\n- result: **%s** (exit %d)\n- history: %s\n\n",
    md_cell(model.suite), md_cell(model.gpu), md_cell(model.driver), md_cell(model.verdict), model.exit_code,
    md_cell(model.history)))
  file:write(string.format("## Regressions (%d)\n\n", #model.regressions))
  if #model.regressions > 0 then
    file:write("| ", table.concat(REGRESSION_COLUMNS, " | "),
      " | what changed |\n| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n")
    for _, row in ipairs(model.regressions) do
      local cells = {}
      for c, name in ipairs(REGRESSION_COLUMNS) do cells[c] = md_cell(row[name]) end
      cells[#cells + 1] = md_cell(row.explanation or "")
      file:write("| ", table.concat(cells, " | "), " |\n")
    end
    file:write("\n")
    for _, row in ipairs(model.regressions) do
      -- the plot's name is gpuexp's own (plots/NN.png); the alt text is data
      if row.plot then file:write(string.format("![%s %s](%s)\n", md_cell(row.experiment), md_cell(row.point), row.plot)) end
    end
    file:write("\n")
    -- explained to the source line (commands/lines.lua's night stage): the ranked lines
    for _, row in ipairs(model.regressions) do
      if row.lines then
        file:write(string.format("### Lines: %s %s\n\n", md_cell(row.experiment), md_cell(row.point)))
        lines.markdown(row.lines, file)
      end
    end
  end
  local states = state_lines(model)
  if #states > 0 then
    file:write("## Regression states\n\n")
    for _, line in ipairs(states) do file:write("- ", md_cell(line), "\n") end
    file:write("\n")
  end
  for _, r in ipairs(model.results) do
    file:write(string.format("## %s\n\n", md_cell(r.name)))
    if r.failure then file:write("**", md_cell(r.failure), "**\n\n") end
    if r.note then file:write(md_cell(r.note), "\n\n") end
    if #r.rows > 0 then
      file:write("| point | metric | base | new | change | threshold | verdict | basis |\n")
      file:write("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n")
      for _, row in ipairs(r.rows) do
        local verdict = row.regression and ("**" .. row.verdict:upper() .. "**") or row.verdict
        file:write(string.format("| %s | %s | %s | %s | %s | %s | %s | %s |\n", md_cell(row.point), md_cell(row.metric),
          md_cell(row.before), md_cell(row.after), md_cell(row.change), md_cell(row.threshold), verdict,
          md_cell(row.basis)))
      end
      file:write("\n")
    end
  end
  file:write(counts_line(model), "\n")
end

local html = printers.html

function M.html(model, file)
  file:write("<!doctype html><html><head><meta charset='utf-8'><title>gpuexp nightly ", html(model.id),
    "</title><style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}",
    "td,th{border:1px solid #ccc;padding:2px 8px;font-size:90%}td.n{text-align:right}.bad{color:#b00;font-weight:bold}",
    "</style></head><body>\n")
  file:write(string.format("<h1>gpuexp nightly %s</h1><p>suite <code>%s</code>; %s, driver %s; <b>%s</b> (exit %d)</p>\n",
    html(model.id), html(model.suite), html(model.gpu), html(model.driver), html(model.verdict), model.exit_code))
  file:write(string.format("<h2>Regressions (%d)</h2>\n", #model.regressions))
  for _, row in ipairs(model.regressions) do
    file:write(string.format("<h3>%s: %s (%s)</h3><p>before %s, after %s, change %s, threshold %s; %s</p>\n",
      html(row.experiment), html(row.point), html(row.metric), row.before, row.after, row.change, row.threshold,
      html(row.confidence .. (row.basis ~= "" and ("; " .. row.basis) or ""))))
    if row.explanation then file:write("<p><b>What changed:</b> ", html(row.explanation), "</p>\n") end
    if row.lines then lines.html(row.lines, file, html) end
    if row.plot then file:write(string.format("<img src='%s' width='800'>\n", html(row.plot))) end
  end
  local states = state_lines(model)
  if #states > 0 then
    file:write("<h2>Regression states</h2><ul class='states'>")
    for n, line in ipairs(states) do
      file:write("<li", model.states[n].state == "open" and " class='bad'" or "", ">", html(line), "</li>")
    end
    file:write("</ul>\n")
  end
  for _, r in ipairs(model.results) do
    file:write(string.format("<h2>%s</h2>\n", html(r.name)))
    if r.failure then file:write("<p class='bad'>", html(r.failure), "</p>\n") end
    if r.note then file:write("<p>", html(r.note), "</p>\n") end
    if #r.rows > 0 then
      file:write("<table><tr><th>point</th><th>metric</th><th>base</th><th>new</th><th>change</th><th>threshold</th>",
        "<th>verdict</th><th>basis</th></tr>\n")
      for _, row in ipairs(r.rows) do
        file:write(string.format("<tr><td>%s</td><td>%s</td><td class='n'>%s</td><td class='n'>%s</td><td class='n'>%s</td>" ..
          "<td class='n'>%s</td><td%s>%s</td><td>%s</td></tr>\n", html(row.point), html(row.metric), row.before,
          row.after, row.change, row.threshold, row.regression and " class='bad'" or "", html(row.verdict), html(row.basis)))
      end
      file:write("</table>\n")
    end
  end
  file:write("<p>", html(counts_line(model)), "</p></body></html>\n")
end

local xml = printers.xml

-- JUnit XML: a test suite per experiment (a sweep of it), a test case per point and metric; a
-- regression is a failure, an experiment that failed is an error.
function M.junit(model, file)
  local failures, errors, tests = #model.regressions, 0, 0
  for _, r in ipairs(model.results) do
    tests = tests + math.max(#r.rows, r.failure and 1 or 0)
    if r.failure then errors = errors + 1 end
  end
  file:write('<?xml version="1.0" encoding="UTF-8"?>\n')
  file:write(string.format('<testsuites name="gpuexp nightly %s" tests="%d" failures="%d" errors="%d">\n', xml(model.id),
    tests, failures, errors))
  for _, r in ipairs(model.results) do
    local suite_failures = 0
    for _, row in ipairs(r.rows) do if row.regression then suite_failures = suite_failures + 1 end end
    file:write(string.format('  <testsuite name="%s" tests="%d" failures="%d" errors="%d">\n', xml(r.name),
      math.max(#r.rows, r.failure and 1 or 0), suite_failures, r.failure and 1 or 0))
    if r.failure then
      file:write(string.format('    <testcase classname="%s" name="the experiment"><error message="%s"/></testcase>\n',
        xml(r.name), xml(r.failure)))
    end
    for _, row in ipairs(r.rows) do
      file:write(string.format('    <testcase classname="%s" name="%s %s">', xml(r.name), xml(row.point), xml(row.metric)))
      if row.regression then
        file:write(string.format('<failure message="%s %s: %s -> %s (%s, threshold %s)">%s</failure>', xml(row.verdict),
          xml(row.metric), row.before, row.after, row.change, row.threshold,
          xml((row.state_text and (row.state_text .. "; ") or "") .. row.confidence .. "; " .. row.basis ..
          (row.explanation and ("; what changed: " .. row.explanation) or ""))))
      end
      file:write("</testcase>\n")
    end
    file:write("  </testsuite>\n")
  end
  file:write("</testsuites>\n")
end

function M.json(model, file)
  file:write(json.encode(model), "\n")
end

-- The printers by format, for the files of a night's report.
M.files = {{"report.md", M.markdown}, {"report.html", M.html}, {"report.xml", M.junit}, {"report.json", M.json}}

return M
