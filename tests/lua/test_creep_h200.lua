-- The creep detector on recorded H200 data (bench/nightly_rule/h200/nightly_data.tgz: ten no-change
-- nights of the shipped nightly suite, 12 points, recorded by gpuexp nightly in a history of
-- schema 1, and nights with injected slowdowns):
--   * asv's step detection (judge/steps.lua) finds no step of 2% or more in any point's ten nights,
--     nor in any prefix of them (each night as the newest);
--   * the history, brought from schema 1 to 4, judged night by night as the nightly judges
--     (judge/verdict.lua): no no-change night is a regression, a creep or any regression state;
--   * the same nights followed by the night with the triad's injected 5% slowdown: the step is
--     found at that night, for every point of the triad and no other.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local steps = require("gpuexp.judge.steps")
local verdict = require("gpuexp.judge.verdict")
local history = require("gpuexp.store.history")
local csv = require("gpuexp.store.csv")

local dir = T.temporary_directory()
local data = gpuexp.script_dir .. "/../../bench/nightly_rule/h200/nightly_data.tgz"
T.eq(os.execute(string.format("tar xzf '%s' -C '%s'", data, dir)), true, "the recorded data unpacked")

local function point_of(row) return row.case .. " " .. tostring(row.block_size) end
local series, order = {}, {}
for n = 1, 10 do
  for _, row in ipairs(csv.read(string.format("%s/nr/aa/%d/kernels.csv", dir, n))) do
    local name = point_of(row)
    if not series[name] then series[name] = {}; order[#order + 1] = name end
    table.insert(series[name], row.median_ms)
  end
end
T.eq(#order, 12, "twelve points")
for _, name in ipairs(order) do
  local y = series[name]
  T.eq(#y, 10, name .. ": ten nights")
  for last = 3, #y do
    local prefix = {table.unpack(y, 1, last)}
    local found = steps.regressions(steps.segments(prefix), 0.02)
    T.ok(not found, string.format("%s: no step of 2%% in nights 1-%d (%s)", name, last, table.concat(prefix, " ")))
  end
end

-- the history itself, judged as the nightly does
local copy = dir .. "/aa.sqlite"
os.execute(string.format("cp '%s/nr/aa.sqlite' '%s'", dir, copy))
local db = assert(history.open(copy))
T.eq(db:rows("SELECT version FROM gpuexp_schema")[1].version, history.SCHEMA_VERSION, "schema 1 brought to 4")
local ids = history.series_ids(db, 10)
T.eq(#ids, 10, "ten nights in the series")
local _, nights = verdict.replay(db, 10, true)
T.eq(#nights, 10, "each judged")
local judged = 0
for _, night in ipairs(nights) do
  for _, e in ipairs(night.comparison.points) do
    judged = judged + 1
    T.ok(e.verdict ~= "slower", string.format("run %d %s: not slower (%s)", night.id, e.point, e.basis or ""))
    T.ok(not e.creep and not e.state, string.format("run %d %s: no creep, no state", night.id, e.point))
  end
end
T.eq(judged, 120, "120 point-nights judged")
db:close()

-- an injected 5% slowdown of the triad after the ten nights: a step at the last night
local injected = {}
for _, row in ipairs(csv.read(dir .. "/nr/inject/triad_5/kernels.csv")) do injected[point_of(row)] = row.median_ms end
for _, name in ipairs(order) do
  local y = {table.unpack(series[name])}
  y[#y + 1] = injected[name]
  local found = steps.regressions(steps.segments(y), 0.02)
  if name:match("^triad") then
    T.ok(found and found.steps[1].after == 11, name .. ": the step is found at the injected night")
  else
    T.ok(not found, name .. ": no step")
  end
end
T.done()
