-- The nightly's explanations without a GPU (the fake experiment of test_nightly, whose counters the
-- test sets): a regression that its counters account for is explained by them and diagnoses
-- nothing; one that no counter accounts for says so and carries gpuexp diagnose's verdict and
-- evidence, from a --diagnose re-run of that point alone in the confirm stage, which the history
-- does not record; the nights it stays open do not run it again; --no-confirm skips it.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws, fake_night = T.fake_nights(binary)
local work, read, run = ws.dir, ws.read, ws.run
local history = work .. "/history.sqlite"
local function night(n, environment, extra) return fake_night(history, n, environment, extra) end
local function runs_recorded()
  local _, listing = run("history --history " .. history .. " list --limit 100")
  local count = 0
  for _ in listing:gmatch("\n%s*%d+%s") do count = count + 1 end
  return count
end
for n = 1, 4 do T.eq(night(n), 0, "clean night " .. n) end

-- accounted for: +5% instructions for +5% time; no diagnosis is run
local code, stdout, stderr = night(5, "FAKE_SLOW=b=5")
T.eq(code, 1, "a regression: " .. stderr)
T.ok(stdout:find("fake case=b: instructions +5.0% (the time moved +5.", 1, true), "explained by its counter: " .. stdout)
T.ok(not stdout:find("diagnose says", 1, true), "no diagnosis when a counter accounts: " .. stdout)
T.eq(read("night5/confirm/fake.diagnose.csv"), nil, "no diagnose run")

T.eq(night(51), 0, "the change reverted: the regression is fixed")

-- nothing accounts: the time +20%, the instructions unchanged
local before = runs_recorded()
code, stdout, stderr = night(6, "FAKE_UNEXPLAINED=b=20")
T.eq(code, 1, "a regression: " .. stderr)
T.ok(stdout:find("fake case=b: counters unchanged %(2 compared%): the time moved %+20%.%d%% alone; look at the clocks " ..
  "or the machine; gpuexp diagnose says LATENCY%-BOUND: fake evidence for case b\n"), "the diagnosis attached: " .. stdout)
T.ok(stderr:find("diagnosing 1 regression(s) of fake that no counter accounts for", 1, true), "said: " .. stderr)
local diagnosed = gpuexp.csv.read(work .. "/night6/confirm/fake.diagnose.csv")
T.eq(#diagnosed, 1, "the diagnose run measured the regressed point alone")
T.eq(diagnosed[1].case, "b", "that point")
T.eq(runs_recorded() - before, 2, "the night and its re-measure are recorded, the diagnose run is not")
T.ok(read("night6/report.md"):find("gpuexp diagnose says LATENCY-BOUND", 1, true), "in the report")
local json = require("cjson").decode(read("night6/report.json"))
T.ok(json.regressions[1].explanation:find("gpuexp diagnose says LATENCY-BOUND", 1, true), "in the JSON")

-- the site explains the night as the nightly did, the diagnosis from the night's folder included
code, stdout, stderr = run("history --history " .. history .. " site site")
T.eq(code, 0, "site: " .. stderr)
local page = read("site/series-1.html")
T.ok(page:find("counters unchanged (2 compared): the time moved +20.", 1, true) and
  page:find("gpuexp diagnose says LATENCY-BOUND: fake evidence for case b", 1, true), "the site's explanation: " .. page)
T.ok(page:find("instructions +5.0% (the time moved +5.", 1, true), "and night 5's")

-- the next night, still open: not diagnosed again
code, stdout = night(61, "FAKE_UNEXPLAINED=b=20")
T.eq(code, 1, "still a regression")
T.ok(stdout:find("(open since an earlier night: gpuexp diagnose runs on the night a regression is confirmed)", 1, true),
  "said why there is no diagnosis: " .. stdout)
T.eq(read("night61/confirm/fake.diagnose.csv"), nil, "no diagnose run for an open regression")
T.eq(night(62), 0, "reverted: fixed")

-- --no-confirm: no confirm stage, so no diagnosis
code, stdout = night(7, "FAKE_UNEXPLAINED=b=20", "--no-confirm")
T.eq(code, 1, "a regression")
T.ok(stdout:find("fake case=b: counters unchanged (2 compared)", 1, true), "said: " .. stdout)
T.ok(not stdout:find("diagnose says", 1, true), "no diagnosis without the confirm stage: " .. stdout)
T.done()
