-- One judge for a recorded night (issue 24, part 3): a history made with --threshold 5 --baseline 3
-- (a +4% night that the default 2% would call a regression, a +10% regression that stays open two
-- nights and is fixed, a suspect the re-measure clears, a regression of another point), and for
-- every night the nightly's report, the history site and `bisect --run` name the same regressed
-- points, and the site and bisect read the night's options from the history.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws, fake_night = T.fake_nights(binary)
local work, read, run = ws.dir, ws.read, ws.run
local json = require("cjson")
local history = require("gpuexp.store.history")
local site = require("gpuexp.judge.site")

local changes = {[4] = "FAKE_SLOW=b=4", [5] = "FAKE_SLOW=b=10", [6] = "FAKE_SLOW=b=10", [8] = "FAKE_FLAKY=c=7",
  [9] = "FAKE_SLOW=a=6"}
local expected = {[5] = "case=b", [6] = "case=b", [9] = "case=a"}
local nightly = {} -- run id -> the regressed points, as the night's report names them
local ids = {}
for n = 1, 10 do
  local code, _, stderr = fake_night("h.sqlite", n, changes[n], "--quiet --threshold 5 --baseline 3")
  T.eq(code, expected[n] and 1 or 0, "night " .. n .. " (" .. stderr .. ")")
  local report = json.decode(read("night" .. n .. "/report.json"))
  local points = {}
  for _, r in ipairs(report.regressions) do points[#points + 1] = r.point end
  local db = assert(history.open(work .. "/h.sqlite", true))
  local id = db:rows("SELECT max(id) AS id FROM runs WHERE kind = 'nightly'")[1].id
  db:close()
  ids[n] = id
  nightly[id] = table.concat(points, ",")
  T.eq(nightly[id], expected[n] or "", "night " .. n .. ": the report's regressions")
end

-- the options are in the history, with each night
local db = assert(history.open(work .. "/h.sqlite", true))
local recorded = json.decode(db:rows("SELECT judge FROM runs WHERE id = ?", ids[4])[1].judge)
T.eq(recorded.floor_pct, 5, "the threshold is recorded")
T.eq(recorded.baseline, 3, "the baseline is recorded")
-- the site
local model = site.model(db, 60)
db:close()
T.eq(#model.series, 1, "one series")
local series = model.series[1]
T.eq(#series.runs, 10, "ten nights on the site")
for n, night in ipairs(series.runs) do
  local points = {}
  for _, point in ipairs(series.points) do
    local v = point.values[n]
    if v and v.regression then points[#points + 1] = point.label end
  end
  table.sort(points)
  T.eq(table.concat(points, ","), nightly[night.id], "the site agrees with the nightly on run " .. night.id)
end
local code = run("history --history h.sqlite site site")
T.eq(code, 0, "the site is written")
local page = read("site/series-1.html")
local _, marked = page:gsub("<circle class='regression'", "")
T.eq(marked, 3, "three regressions marked (b twice, a once), not the +4% night")
-- bisect --run, night by night
for n = 1, 10 do
  local out
  code, out = run(string.format("bisect --run %d --history h.sqlite --arch sm_90", ids[n]))
  local count = out:match("threshold 5%.00%%, baseline 3%): (%d+) regression")
  T.ok(count, "bisect --run reads the night's options: " .. out)
  local points = {}
  for point in out:gmatch("\n  (case=%a)  ") do points[#points + 1] = point end
  T.eq(table.concat(points, ","), nightly[ids[n]], "bisect --run agrees with the nightly on night " .. n .. ": " .. out)
  if not expected[n] then T.eq(code, 5, "no regression: nothing to bisect (exit 5)") end
end
T.done()
