-- Regression state in the history (issue 24, part 1), offline: whole nights of a fake experiment
-- (tests/fixtures/fake_night.lua, times set by the test) recorded into histories of their own.
--   * five good nights, then a 2x slowdown of point b for five nights: each of the five exits 1
--     and says since which night and commit, for how many nights, and the change against the
--     accepted level; `history accept` makes the level intended (the next night is clean);
--     `history unaccept` takes it back (the regression is open again); accept by point;
--   * a revert closes an open regression: the report says FIXED, the next night has no state;
--   * a creep of +0.5% a night is caught on the night its total passes the threshold, with the
--     night it began named;
--   * a history of schema 3 is brought to schema 4 and its nights judged the same.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws, fake_night = T.fake_nights(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run
local json = require("cjson")

local number = 0
-- one night into a history: exit code, stdout, stderr, the report's JSON, the night's run id
local function night(history, environment, extra)
  number = number + 1
  local code, stdout, stderr = fake_night(history, number, environment, "--quiet " .. (extra or ""))
  local report = read("night" .. number .. "/report.json")
  local _, listed = run("history --history " .. history .. " list --limit 30")
  local id
  for line in listed:gmatch("[^\n]+") do
    local run_id, kind = line:match("^%s*(%d+)%s+%S+%s+(%a+)")
    if kind == "nightly" and not id then id = tonumber(run_id) end
  end
  return code, stdout, stderr, report and json.decode(report), id
end

-- 1. five good nights, then b twice as slow for five nights
local h = work .. "/h.sqlite"
for n = 1, 5 do
  local code, _, stderr = night(h)
  T.eq(code, 0, "good night " .. n .. " (" .. stderr .. ")")
end
local first_bad, last_bad
for n = 1, 5 do
  local code, stdout, stderr, report, id = night(h, "FAKE_SLOW=b=100")
  first_bad, last_bad = first_bad or id, id
  T.eq(code, 1, "slow night " .. n .. ": exit 1 (" .. stderr .. ")\n" .. stdout)
  local says = string.format("fake case=b: OPEN since run %d %%([^)]+, commit unknown%%), %d nights?, %%+1?[09]%%d%%.%%d+%%%% " ..
    "against the accepted level [12]%%.%%d+", first_bad, n)
  T.ok(stdout:find(says), "slow night " .. n .. " says since when, how many nights and the change: " .. stdout)
  T.eq(#report.regressions, 1, "the JSON has the regression")
  T.eq(report.regressions[1].state, "open", "the JSON says open")
  T.eq(report.regressions[1].open_since, first_bad, "since the first slow night")
  T.eq(report.regressions[1].open_nights, n, "for n nights")
  T.ok(read("night" .. number .. "/report.md"):find("## Regression states", 1, true), "the Markdown says it")
  T.ok(read("night" .. number .. "/report.html"):find("<li class='bad'>fake case=b: OPEN since run", 1, true), "and the HTML")
  T.ok(read("night" .. number .. "/report.xml"):find('<failure message="slower median_ms: [^"]*">OPEN since run'), "and JUnit")
end
local stderr, report
local code, stdout = run("history --history " .. h .. " list --limit 30")
local _, open_listed = stdout:gsub("1 open", "")
T.eq(open_listed, 5, "history list shows the five open nights: " .. stdout)
code, stdout, stderr = run("history --history " .. h .. " show " .. last_bad)
T.ok(stdout:find("case=b: OPEN since run " .. first_bad, 1, true), "history show says it: " .. stdout .. stderr)

-- the new level is intended: accept the last slow night; the next 2x night is clean
code, stdout = run("history --history " .. h .. " accept " .. last_bad)
T.eq(code, 0, "accept: " .. stdout)
T.ok(stdout:find("case=b: ACCEPTED at run " .. last_bad, 1, true), "accept says what it did: " .. stdout)
code, stdout, stderr, report = night(h, "FAKE_SLOW=b=100")
T.eq(code, 0, "after accept, the 2x level is the baseline: clean (" .. stdout .. stderr .. ")")
T.eq(#report.regressions, 0, "no regression")
T.ok(not stdout:find("OPEN", 1, true), "nothing open: " .. stdout)
code, stdout = run("history --history " .. h .. " list --limit 30")
T.ok(stdout:find("1 accepted", 1, true), "history list shows the accepted night: " .. stdout)
-- taken back: the regression is open again, counted from its first night
code = run("history --history " .. h .. " unaccept " .. last_bad)
T.eq(code, 0, "unaccept")
code, stdout = night(h, "FAKE_SLOW=b=100")
T.eq(code, 1, "unaccepted: open again")
T.ok(stdout:find("OPEN since run " .. first_bad .. " %([^)]+%), 7 nights"), "since its first night, 7 nights: " .. stdout)
T.eq(run("history --history " .. h .. " unaccept " .. last_bad), 2, "nothing left to take back")
-- by point
local _, _, _, _, id = night(h, "FAKE_SLOW=b=100")
code, stdout = run("history --history " .. h .. " accept " .. id .. " --point case=b --note 'b does twice the work now'")
T.eq(code, 0, "accept by point: " .. stdout)
T.ok(stdout:find("case=b: ACCEPTED at run " .. id, 1, true), stdout)
T.eq(night(h, "FAKE_SLOW=b=100"), 0, "after accepting b, clean")
-- an acceptance travels with its run when histories are merged
code, stdout = run("history merge " .. work .. "/merged.sqlite " .. h)
T.eq(code, 0, "merged: " .. stdout)
code, stdout = run("history --history " .. work .. "/merged.sqlite list --limit 3")
T.ok(stdout:find("1 accepted", 1, true), "the merged history has the acceptance: " .. stdout)
T.eq(run("history --history " .. h .. " accept " .. id .. " --point case=z"), 2, "no such point")
T.eq(run("history --history " .. h .. " accept " .. id .. " --point nosuch=b"), 2, "no such axis")
T.eq(run("history --history " .. h .. " accept 99999"), 2, "no such run")
code, stdout = run("history --history " .. h .. " unaccept " .. (first_bad + 1))
T.eq(code, 2, "a re-measure stands for its night, which has no acceptance: " .. stdout)
T.ok(stdout:find("run " .. (first_bad + 1) .. " is a re-measure of run " .. first_bad, 1, true), stdout)
write("plain.csv", "case,median_ms\nx,1\n")
write("plain.meta.json", '{"sweep": {"name": "s", "axes": [{"name": "case", "values": ["x"]}]}}\n')
code, stdout = run("history --history " .. h .. " record plain.csv")
code, stdout = run("history --history " .. h .. " accept " .. stdout:match("as run (%d+)"))
T.eq(code, 2, "a plain run sets no level")

-- 2. a revert closes it
local r = work .. "/revert.sqlite"
for _ = 1, 5 do T.eq(night(r), 0, "good night") end
local opened
code, stdout, stderr, report, opened = night(r, "FAKE_SLOW=b=100")
T.eq(code, 1, "slow")
T.eq(night(r, "FAKE_SLOW=b=100"), 1, "still slow")
code, stdout, stderr, report = night(r)
T.eq(code, 0, "reverted: clean (" .. stderr .. ")")
T.ok(stdout:find("fake case=b: FIXED: back at the accepted level [12]%.?%d* %([-+]0%.%d+%%%); it was open since run " ..
  opened .. " %([^)]+%) for 2 nights"), "the report says it is fixed: " .. stdout)
T.eq(report.states[1].state, "fixed", "the JSON says fixed")
T.ok(read("night" .. number .. "/report.md"):find("FIXED: back at the accepted level", 1, true), "and the Markdown")
code, stdout = night(r)
T.eq(code, 0, "the next night")
T.ok(not stdout:find("REGRESSION STATES", 1, true), "has no state left: " .. stdout)
-- the regressed nights were no baselines: a night 1% slower than the good level is judged on it
code, stdout, stderr, report = night(r, "FAKE_SLOW=b=3")
T.eq(code, 1, "3% slower than the good nights: a regression (the 2x nights did not widen the threshold)")

-- 3. a creep of +0.5% a night, threshold 2.25%: +2.0% is within it, +2.5% the night it passes
local c = work .. "/creep.sqlite"
for _ = 1, 5 do T.eq(night(c, nil, "--threshold 2.25"), 0, "good night") end
local creep_start
for k = 1, 5 do
  local _
  code, stdout, stderr, report, id = night(c, string.format("FAKE_SLOW=b=%.1f", 0.5 * k), "--threshold 2.25")
  creep_start = creep_start or id
  if k < 5 then
    T.eq(code, 0, string.format("+%.1f%% in total: within the threshold (%s)", 0.5 * k, stdout))
  else
    T.eq(code, 1, "+2.5% in total: past the threshold, a creep: " .. stdout .. stderr)
    local basis = report.regressions[1].basis
    T.ok(basis:find("^creep: %+2%.%d+%% against the accepted level [12]%.?%d* over 5 night%(s%) since run " .. creep_start),
      "names the night it began: " .. basis)
    T.ok(basis:find("asv's L1 step detection", 1, true), "and how it was found: " .. basis)
    T.ok(stdout:find("OPEN since run " .. creep_start .. " %([^)]+%), 5 nights"), "open since the creep began: " .. stdout)
  end
end
code, stdout = night(c, "FAKE_SLOW=b=3.0", "--threshold 2.25")
T.eq(code, 1, "the creep goes on: still open")
T.ok(stdout:find("OPEN since run " .. creep_start .. " %([^)]+%), 6 nights"), stdout)

-- 4. a history of schema 3 (before regression states): brought up to date, its nights judged alike
local old = work .. "/old.sqlite"
os.execute(string.format("cp %s %s", r, old))
local db = gpuexp._db.open(old)
db:exec("DROP TABLE acceptances")
db:exec("ALTER TABLE runs DROP COLUMN judge")
db:exec("UPDATE gpuexp_schema SET version = 3")
db:close()
code, stdout = run("history --history " .. old .. " list --limit 30")
T.eq(code, 0, "a schema-3 history is read as it is")
local _, fixed_listed = stdout:gsub("1 fixed", "")
T.eq(fixed_listed, 1, "and judged: the fixed night is listed: " .. stdout)
T.eq(night(old), 0, "a night into it (migrated to schema 4)")
db = gpuexp._db.open(old)
T.eq(db:rows("SELECT version FROM gpuexp_schema")[1].version, 4, "schema 4")
T.ok(db:rows("SELECT count(*) AS n FROM runs WHERE judge IS NOT NULL")[1].n == 1, "the new night's options are recorded")
db:close()
T.done()
