-- The history as a static site (gpuexp history site DIR): an index of the latest verdicts, and per
-- nightly series (experiment, sweep, GPU model, driver) a trend chart of every point across its
-- nights, drawn as inline SVG, each night's value with its run, GPU, driver and commit on hover,
-- regressions marked, links to each night's report. Plain files: it works from file:// with no
-- network, no script and no server. Each night is judged as nightly judged it, by the same module
-- (judge/verdict.lua: the options the night ran with, its re-measure, the points' regression
-- states: open, fixed, accepted).
local history = require("gpuexp.store.history")
local compare = require("gpuexp.judge.compare")
local explain = require("gpuexp.judge.explain")
local lines = require("gpuexp.judge.lines")
local printers = require("gpuexp.judge.printers")
local verdict = require("gpuexp.judge.verdict")

local M = {}

local html = printers.html

local function is_file(path)
  local file = path and io.open(path, "rb")
  if file then file:close() return true end
  return false
end

-- The model of the site: {generated_utc, series = {{title, experiment, sweep, gpu, driver, metric,
-- runs = {{id, started, commit, host, report, counts}}, points = {{label, values = {[n] = {value,
-- verdict, basis}}}}, latest = counts}}}.
function M.model(db, limit)
  local model = {generated_utc = os.date("!%Y-%m-%dT%H:%M:%SZ"), series = {}}
  for s, group in ipairs(history.nightly_series(db, limit)) do
    -- every night of the series judged as its nightly judged it (judge/verdict.lua), the last
    -- `limit` shown
    local _, judged_nights = verdict.replay(db, group.ids[#group.ids], true)
    local by_id = {}
    for _, night in ipairs(judged_nights) do by_id[night.id] = night end
    local series = {index = s, experiment = group.experiment, sweep = group.sweep, gpu = group.gpu_name or "(plan)",
      driver = group.driver_version or "", runs = {}, points = {}}
    series.title = group.experiment .. (group.sweep ~= group.experiment and (" / " .. group.sweep) or "")
    local point_of = {}
    for n, id in ipairs(group.ids) do
      local night = by_id[id]
      local new, judged = night.run, night.comparison
      local read = {} -- what the explainer read for this night (explain.recorded)
      series.metric = judged.metric.name
      local record = new.record
      local output = new.info.sweep and new.info.sweep.output
      local report = output and output:sub(1, 1) == "/" and (output:match("^(.*)/[^/]*$") .. "/report.html")
      series.runs[n] = {id = id, started = record.started_utc or record.recorded_utc, commit = record.git_commit,
        dirty = record.git_dirty == 1, host = record.host, nightly = record.nightly,
        report = is_file(report) and report or nil, counts = judged.counts, states = verdict.states_summary(judged)}
      for _, e in ipairs(judged.points) do
        local point = point_of[e.key]
        if not point then
          point = {label = e.point, values = {}}
          point_of[e.key] = point
          series.points[#series.points + 1] = point
        end
        point.values[n] = {value = type(e.new) == "number" and e.new or nil, verdict = e.verdict,
          regression = compare.is_regression(e), unconfirmed = e.unconfirmed, basis = e.basis,
          change = printers.change_text(e),
          explanation = compare.is_regression(e) and e.verdict == "slower" and explain.recorded(db, e, new, read) or nil,
          lines = compare.is_regression(e) and e.verdict == "slower" and lines.recorded(e, new, read) or nil,
          state = e.state and e.state.name, state_text = e.state and e.state.text}
      end
    end
    series.latest = series.runs[#series.runs] and series.runs[#series.runs].counts or {}
    model.series[#model.series + 1] = series
  end
  return model
end

local STYLE = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}" ..
  "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;font-size:90%}td.n{text-align:right}" ..
  ".bad{color:#b00;font-weight:bold}.good{color:#070}svg{background:#fafafa;border:1px solid #ddd;margin:4px 0}" ..
  "circle.regression{fill:#c00}circle.suspect{fill:#e90}circle.faster{fill:#090}circle.other{fill:#36c}polyline{fill:none;stroke:#36c}"

local function page(file, title, body)
  file:write("<!doctype html><html><head><meta charset='utf-8'><title>", html(title), "</title><style>", STYLE,
    "</style></head><body>\n", body, "</body></html>\n")
end

local function verdict_text(counts)
  local parts = {}
  for _, verdict in ipairs({"slower", "error", "faster", "same", "new", "missing"}) do
    if (counts[verdict] or 0) > 0 then parts[#parts + 1] = counts[verdict] .. " " .. verdict end
  end
  return #parts > 0 and table.concat(parts, ", ") or "no points"
end

function M.index(model, file)
  local out = {string.format("<h1>gpuexp history</h1><p>%d nightly series; built %s from the history.</p>\n",
    #model.series, html(model.generated_utc))}
  out[#out + 1] = "<table><tr><th>series</th><th>GPU</th><th>driver</th><th>nights</th><th>latest night</th>" ..
    "<th>commit</th><th>latest verdicts</th><th>regression states</th></tr>\n"
  local order = {}
  for _, s in ipairs(model.series) do order[#order + 1] = s end
  -- series with a regression in their latest night first
  table.sort(order, function(a, b)
    local ra, rb = (a.latest.slower or 0) + (a.latest.error or 0), (b.latest.slower or 0) + (b.latest.error or 0)
    if (ra > 0) ~= (rb > 0) then return ra > 0 end
    return a.index < b.index
  end)
  for _, s in ipairs(order) do
    local last = s.runs[#s.runs] or {}
    local bad = (s.latest.slower or 0) + (s.latest.error or 0) > 0
    out[#out + 1] = string.format("<tr><td><a href='series-%d.html'>%s</a></td><td>%s</td><td>%s</td><td class='n'>%d</td>" ..
      "<td>%s</td><td>%s</td><td%s>%s</td><td>%s</td></tr>\n", s.index, html(s.title), html(s.gpu), html(s.driver), #s.runs,
      html(last.started or ""), html((last.commit or ""):sub(1, 10)), bad and " class='bad'" or "", html(verdict_text(s.latest)),
      html(last.states or ""))
  end
  out[#out + 1] = "</table>\n"
  page(file, "gpuexp history", table.concat(out))
end

local function number(value) return string.format("%.5g", value) end

-- One point's values across the series' nights as an SVG line chart.
local function chart(series, point)
  local width, height, left, right, top, bottom = 720, 170, 70, 20, 20, 30
  local low, high = math.huge, -math.huge
  for _, v in pairs(point.values) do
    if v.value then low, high = math.min(low, v.value), math.max(high, v.value) end
  end
  if low == math.huge then return "<p>(no values)</p>" end
  if high - low < 1e-12 * math.max(1, math.abs(high)) then low, high = low * 0.99, high * 1.01 + 1e-12 end
  local pad = (high - low) * 0.1
  low, high = low - pad, high + pad
  local count = #series.runs
  local function x(n) return left + (count > 1 and (n - 1) / (count - 1) or 0.5) * (width - left - right) end
  local function y(value) return top + (high - value) / (high - low) * (height - top - bottom) end
  local out = {string.format("<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' viewBox='0 0 %d %d' " ..
    "role='img'><title>%s: %s</title>", width, height, width, height, html(point.label), html(series.metric))}
  out[#out + 1] = string.format("<text x='4' y='%d' font-size='11'>%s</text><text x='4' y='%d' font-size='11'>%s</text>",
    top + 4, number(high - pad), height - bottom, number(low + pad))
  local first, last = series.runs[1], series.runs[count]
  out[#out + 1] = string.format("<text x='%d' y='%d' font-size='11'>%s</text><text x='%d' y='%d' font-size='11' " ..
    "text-anchor='end'>%s</text>", left, height - 8, html((first.started or ""):sub(1, 10)), width - right, height - 8,
    html((last.started or ""):sub(1, 10)))
  local line = {}
  for n = 1, count do
    local v = point.values[n]
    if v and v.value then line[#line + 1] = string.format("%.1f,%.1f", x(n), y(v.value)) end
  end
  out[#out + 1] = "<polyline points='" .. table.concat(line, " ") .. "'/>"
  for n = 1, count do
    local v, run = point.values[n], series.runs[n]
    if v and v.value then
      local class = v.regression and "regression" or v.unconfirmed and "suspect" or v.verdict == "faster" and "faster"
        or "other"
      out[#out + 1] = string.format("<circle class='%s' cx='%.1f' cy='%.1f' r='%d'><title>run %d, %s: %s %s " ..
        "(%s%s)%s; %s, driver %s, commit %s%s, host %s</title></circle>", class, x(n), y(v.value), v.regression and 5 or 3,
        run.id, html(run.started or ""), number(v.value), html(series.metric),
        html(v.verdict .. (v.unconfirmed and ", a suspect the re-measure did not confirm" or "")),
        v.change ~= "" and (" " .. v.change) or "", v.explanation and (": " .. html(v.explanation)) or "", html(series.gpu), html(series.driver),
        html((run.commit or "unknown"):sub(1, 10)), run.dirty and " (with changes)" or "", html(run.host or "?"))
    end
  end
  out[#out + 1] = "</svg>"
  return table.concat(out)
end

function M.series_page(series, file)
  local out = {string.format("<p><a href='index.html'>all series</a></p><h1>%s</h1><p>%s, driver %s; %s across %d " ..
    "night(s); a red point is a regression (judged against its baseline nights, confirmed by that night's re-measure)" ..
    ", an orange one a suspect the re-measure did not confirm; hover a point for its run.</p>\n", html(series.title),
    html(series.gpu), html(series.driver ~= "" and series.driver or "?"), html(series.metric),
    #series.runs)}
  for _, point in ipairs(series.points) do
    local regressions = 0
    for _, v in pairs(point.values) do if v.regression then regressions = regressions + 1 end end
    out[#out + 1] = string.format("<h3%s>%s%s</h3>\n", regressions > 0 and " class='bad'" or "", html(point.label),
      regressions > 0 and string.format(" (%d regression%s)", regressions, regressions > 1 and "s" or "") or "")
    out[#out + 1] = chart(series, point) .. "\n"
    -- what changed, as the counters saw it, for each regression of the point
    local items = {}
    for n, run in ipairs(series.runs) do
      local v = point.values[n]
      if v and (v.regression or v.state) then
        items[#items + 1] = string.format("<li>run %d, %s: %s%s%s%s</li>", run.id, html(run.started or ""), html(v.change),
          v.explanation and (": " .. html(v.explanation)) or "", v.state_text and ("<br>" .. html(v.state_text)) or "",
          v.lines and ("<br>line profiles: " .. html(lines.sentence(v.lines))) or "")
      end
    end
    if #items > 0 then out[#out + 1] = "<ul class='changes'>" .. table.concat(items) .. "</ul>\n" end
  end
  out[#out + 1] = "<h2>Nights</h2><table><tr><th>run</th><th>started</th><th>commit</th><th>host</th><th>verdicts</th>" ..
    "<th>regression states</th><th>report</th></tr>\n"
  for n = #series.runs, 1, -1 do
    local run = series.runs[n]
    out[#out + 1] = string.format("<tr><td class='n'>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>" ..
      "<td>%s</td></tr>\n", run.id, html(run.started or ""), html((run.commit or ""):sub(1, 10) .. (run.dirty and "+" or "")),
      html(run.host or ""), html(verdict_text(run.counts)), html(run.states or ""),
      run.report and string.format("<a href='file://%s'>report</a>", html(run.report)) or "")
  end
  out[#out + 1] = "</table>\n"
  page(file, series.title, table.concat(out))
end

-- The site's files: {name, writer(file)} for the index and every series.
function M.files(model)
  local files = {{"index.html", function(file) M.index(model, file) end}}
  for _, series in ipairs(model.series) do
    files[#files + 1] = {string.format("series-%d.html", series.index), function(file) M.series_page(series, file) end}
  end
  return files
end

return M
