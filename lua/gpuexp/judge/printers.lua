-- Printers of a comparison (judge/compare.lua's result): an aligned table, Markdown, JSON and
-- JUnit XML, each writing to a file (or anything with a write method). Measuring, judging and
-- printing never touch.
local json = require("gpuexp.store.json")
local compare = require("gpuexp.judge.compare")
local text = require("gpuexp.store.text")

local M = {}

local is_regression = compare.is_regression

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
    is_regression(e) and e.verdict:upper() or e.verdict, e.basis or ""}
end

-- The cells for a terminal: names from data shown with their control characters escaped.
local function terminal_row(e)
  local cells = table_row(e)
  for c, cell in ipairs(cells) do cells[c] = text.terminal(cell) end
  return cells
end

function M.format_table(result, file)
  local widths = {}
  for c, name in ipairs(COLUMNS) do widths[c] = #name end
  for _, e in ipairs(result.points) do
    for c, cell in ipairs(terminal_row(e)) do widths[c] = math.max(widths[c], text.width(cell)) end
  end
  local function line(cells)
    for c, cell in ipairs(cells) do cells[c] = c == #COLUMNS and cell or text.pad(cell, widths[c], c <= 2) end
    file:write(table.concat(cells, "  "), "\n")
  end
  line({table.unpack(COLUMNS)})
  for _, e in ipairs(result.points) do line(terminal_row(e)) end
  file:write(M.summary_line(result.counts), "\n")
end

function M.format_markdown(result, file)
  file:write("| ", table.concat(COLUMNS, " | "), " |\n|")
  for c = 1, #COLUMNS do file:write(c >= 3 and c <= 6 and " ---: |" or " --- |") end
  file:write("\n")
  for _, e in ipairs(result.points) do
    local cells = table_row(e)
    for c, cell in ipairs(cells) do
      cell = text.markdown(cell)
      if COLUMNS[c] == "verdict" and cell ~= cell:lower() then cell = "**" .. cell .. "**" end
      cells[c] = cell
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
      basis = e.basis, baseline_values = e.baseline, throttled = e.throttled, p_value = plain(e.p_value),
      ci_low_pct = plain(e.ci_low_pct), ci_high_pct = plain(e.ci_high_pct)}
  end
  local document = {points = points, counts = result.counts}
  for k, v in pairs(header or {}) do document[k] = v end
  file:write(json.encode(document), "\n")
end

local xml = text.xml
M.xml = xml
M.html = text.html

function M.format_junit(result, file, suite_name)
  local failures, skipped = 0, 0
  for _, e in ipairs(result.points) do
    if is_regression(e) then failures = failures + 1 elseif e.verdict == "new" or e.verdict == "missing" then skipped = skipped + 1 end
  end
  file:write('<?xml version="1.0" encoding="UTF-8"?>\n')
  file:write(string.format('<testsuites><testsuite name="%s" tests="%d" failures="%d" errors="0" skipped="%d">\n',
    xml(suite_name or "gpuexp compare"), #result.points, failures, skipped))
  for _, e in ipairs(result.points) do
    file:write(string.format('  <testcase classname="%s" name="%s %s">', xml(suite_name or "gpuexp"), xml(e.point), xml(e.metric)))
    local message = string.format("%s: base %s, new %s, change %s, threshold %s (%s)", e.verdict, number_text(e.base),
      number_text(e.new), change_text(e), threshold_text(e), e.basis or "")
    if is_regression(e) then
      file:write(string.format('<failure type="%s" message="%s"/>', e.verdict, xml(message)))
    elseif e.verdict == "new" or e.verdict == "missing" then
      file:write(string.format('<skipped message="%s"/>', xml(message)))
    else
      file:write(string.format("<system-out>%s</system-out>", xml(message)))
    end
    file:write("</testcase>\n")
  end
  file:write("</testsuite></testsuites>\n")
end

return M
