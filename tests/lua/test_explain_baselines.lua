-- What the explainer compares a regression with, through gpuexp nightly on the fake suite (no GPU;
-- the fake's slow work is more instructions): the level the verdict was judged against, never the
-- nights of the change itself.
--   * a creep (+0.8% a night, time and instructions) is flagged against the accepted level and
--     explained against that level's nights: "instructions +2.4%", not "counters unchanged" (which
--     the recent, already creeping nights gave: the judgments issue's H200 night); the state dates
--     it from its first creeping night, not from a night of the level;
--   * a regression left open for eight nights (more nights than its baseline had) is explained by
--     its counter on every one of them: the open nights are never the counters' baseline or noise.
-- The site explains those nights as the nightly did.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws, fake_night = T.fake_nights(binary)

-- the creep
local creep = ws.dir .. "/creep.sqlite"
for n = 1, 5 do T.eq(fake_night(creep, n), 0, "clean night " .. n) end
local flagged, explanation, state
for k = 1, 6 do
  local code, out, err = fake_night(creep, 5 + k, string.format("FAKE_SLOW=b=%.1f", 0.8 * k))
  if code == 1 then
    flagged, explanation = k, out:match("fake case=b: ([^\n]+)\nREGRESSION STATES")
    state = out:match("fake case=b: (OPEN since run %d+)")
    break
  end
  T.eq(code, 0, string.format("night %d (+%.1f%%): not yet a regression (%s)", 5 + k, 0.8 * k, err))
end
T.eq(flagged, 3, "the creep is flagged at +2.4%")
T.ok(explanation and explanation:find("^instructions %+2%.4%% %(the time moved %+2%.4%%%)"),
  "explained against the accepted level: " .. tostring(explanation))
T.eq(state, "OPEN since run 6", "dated from its first creeping night (run 6), not from a night of the level")

-- an open regression: the eighth open night still names its counter
local open = ws.dir .. "/open.sqlite"
for n = 1, 4 do T.eq(fake_night(open, 20 + n), 0, "clean night " .. n) end
local lines = {}
for n = 1, 8 do
  local code, out, err = fake_night(open, 30 + n, "FAKE_SLOW=b=10")
  T.eq(code, 1, "open night " .. n .. ": still a regression (" .. err .. ")")
  local line = out:match("fake case=b: ([^\n]+)\nREGRESSION STATES")
  lines[n] = line
  T.ok(line and line:find("^instructions %+10%.0%% %(the time moved %+%d+%.%d%%%)"),
    string.format("open night %d explained against the level, not its own nights: %s", n, tostring(line)))
end

-- the site: the same explanations, from the same judge
local code, _, err = ws.run("history --history " .. open .. " site site")
T.eq(code, 0, "site: " .. err)
local page = ws.read("site/series-1.html")
local _, count = page:gsub("instructions %+10%.0%% %(the time moved %+", "")
T.ok(count >= 8, "the site explains every open night by its counter: " .. count)
T.done()
