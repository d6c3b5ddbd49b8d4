-- The tuning study's rounds in time, from bench/tune/run.sh's records alone (each round's metadata
-- says when it started and finished, to the second):
--   gpuexp --quiet --inline bench/tune/rounds.lua RECORDS [SPACE...]
-- One line a round: space, run, round, configurations, level, seconds and milliseconds a
-- configuration. docs/howto/tune.md ("Where the wall time goes") reads the conv's racing from it:
-- the first round, while the helpers compile, against the second, when they are done.
local json = require("gpuexp.store.json")
local meta = require("gpuexp.store.meta")

local RECORDS = assert(arg[1], "usage: gpuexp bench/tune/rounds.lua RECORDS [SPACE...]")
local wanted = {}
for i = 2, #arg do wanted[#wanted + 1] = arg[i] end
if #wanted == 0 then wanted = {"conv", "transpose", "matmul"} end

local function seconds(utc) -- 2026-11-27T17:36:38Z -> seconds (of a day count: differences only)
  local y, mo, d, h, mi, s = utc:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z$")
  if not y then return nil end
  return os.time{year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi),
    sec = tonumber(s), isdst = false}
end

print("space run round configurations level seconds ms_per_configuration")
for _, space in ipairs(wanted) do
  for _, run in ipairs({"brute", "racing", "model"}) do
    for round = 1, 999 do
      local text = meta.read_all(string.format("%s/%s/%s.tune.round-%03d.meta.json", RECORDS, space, run, round))
      if not text then break end
      local m = json.decode(text)
      local started, finished = seconds(m.time_utc or ""), seconds(m.sweep and m.sweep.finished_utc or "")
      local took = started and finished and finished - started
      print(string.format("%s %s %d %d %.4g %s %s", space, run, round, m.sweep.points, m.user.level,
        took and tostring(took) or "?", took and string.format("%.1f", 1000 * took / m.sweep.points) or "?"))
    end
  end
end
