-- gpuexp.tune end to end through the binary, with no GPU (a synthetic objective read from a
-- "kernel" file): the tie set printed and returned; a crashing and a hanging configuration become
-- rows and are skipped (supervised); --resume replays the finished rounds without measuring them
-- again; --history stores the winners keyed by the source hash, and a later tune that starts from
-- them after the kernel changed reports tuning drift (the nightly's hook lists it); the offline
-- plan checks a few configurations and times nothing; bad options are errors at the script's line.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local dir = ws.dir

local script = [[
local optimum = dofile(gpuexp.script_dir .. "/kernel.lua") -- {a =, b =}: where the objective is lowest
local counter = gpuexp.script_dir .. "/measured.txt"
local r = gpuexp.tune{
  name = "toy", sources = {"kernel.lua"},
  axes = {{"a", {1, 2, 3, 4, 5}}, {"b", {1, 2, 3, 4}}},
  where = function(p) return p.a + p.b <= 8 end,
  run = function(p)
    local log = io.open(counter, "a"); log:write(p.a, ",", p.b, "\n"); log:close()
    if gpuexp.plan then return {} end -- offline: nothing to time
    if p.a == 5 and p.b == 3 then os.exit(9) end -- a crash
    if p.a == 4 and p.b == 4 then while true do end end -- a hang
    local s = {}
    for i = 1, 40 do
      s[i] = 1 + 0.2 * ((p.a - optimum.a) ^ 2 + (p.b - optimum.b) ^ 2) + 0.001 * math.sin(i * 7 + p.a * 3 + p.b)
    end
    return {median_ms = gpuexp.stats(s).median, samples_ms = s, verified = not (p.a == 1 and p.b == 1)}
  end,
  condition = "verified", strategy = "brute", timeout_s = 1, start = arg[1] == "stored" and "stored" or nil,
}
if r then
  local samples = 0
  for _, e in ipairs(r.evaluated) do
    if e.point.a == r.best.a and e.point.b == r.best.b then samples = e.samples and #e.samples or 0 end
  end
  print(string.format("BEST %d %d TIES %d DRIFT %d SAMPLES %d", r.best.a, r.best.b, #r.ties, #r.drift, samples))
end
]]
ws.write("tune.lua", script)
ws.write("kernel.lua", "return {a = 3, b = 2}\n")
local history = dir .. "/h.sqlite"

local function count_measured()
  local text = ws.read("measured.txt") or ""
  local n = 0
  for _ in text:gmatch("\n") do n = n + 1 end
  return n
end

local code, out, err = ws.run("--quiet --no-plan --history h.sqlite tune.lua")
T.eq(code, 5, "finished with crashed/timed-out points: exit 5 (" .. err .. ")")
T.ok(out:find("BEST 3 2 TIES 1 DRIFT 0", 1, true), "the best and its tie set: " .. out)
T.ok(out:find("tie set of 1", 1, true) and out:find("Holm", 1, true), "the table says how ties were decided")
local rounds = ws.read("results/tune.toy.round-001.csv")
T.ok(rounds and rounds:find("crashed", 1, true) and rounds:find("timeout", 1, true), "the crash and the hang are rows")
T.ok(ws.read("results/tune.toy.round-001.samples.csv"), "the samples are kept beside the round")
local measured = count_measured()
T.eq(measured, 19, "every configuration measured once (a + b <= 8: 19 of them)")

-- resume: the finished round is replayed from its CSV and samples, nothing is measured again
code, out, err = ws.run("--quiet --no-plan --resume tune.lua")
T.ok(code == 0 or code == 5, "the resumed tune ends (" .. code .. "): " .. err)
T.ok(out:find("BEST 3 2 TIES 1", 1, true), "the same result from the replayed round: " .. out)
T.ok(out:find("SAMPLES 40", 1, true), "with the samples read back from the round's samples file: " .. out)
T.eq(count_measured(), measured, "nothing measured again")

-- the winners are in the history, keyed by the source hash
local db = gpuexp._db.open(history, true)
local stored = db:rows("SELECT * FROM tune_winners")
db:close()
T.eq(#stored, 1, "one stored winner")
T.eq(stored[1].name, "toy", "by the tune's name")
T.ok(#stored[1].source_hash > 8 and stored[1].arch ~= nil and stored[1].cuda ~= nil, "with its key")
T.ok(stored[1].best:find('"a":3', 1, true) and stored[1].best:find('"b":2', 1, true), "and its best: " .. stored[1].best)

-- the kernel changes: the optimum moves; a tune that starts from the stored winners reports drift
ws.write("kernel.lua", "return {a = 1, b = 3}\n")
code, out, err = ws.run("--quiet --no-plan --history h.sqlite --out second.csv tune.lua stored")
T.ok(code == 5, "the second tune ran (" .. code .. "): " .. err)
T.ok(out:find("BEST 1 3", 1, true) and out:find("DRIFT 1", 1, true), "the new best, and one drift: " .. out)
T.ok(err:find("TUNING DRIFT", 1, true) and err:find("source_hash: ", 1, true), "drift names what changed: " .. err)
local lines = require("gpuexp.store.winners").drift_lines(history)
T.eq(#lines, 1, "the nightly's hook lists the drift")
T.ok(lines[1]:find("tuning drift in `toy`", 1, true) and lines[1]:find("source_hash", 1, true), lines[1])

-- gpuexp tune: its options win over the script's, the run's are passed on
code, out, err = ws.run("tune --strategy random --max-evals 5 --seed 2 --quiet --no-plan --out third.csv tune.lua")
T.ok(code == 0 or code == 5, "gpuexp tune runs the script (" .. code .. "): " .. err)
T.ok(out:find("'toy': random, 5 of 19 configurations measured", 1, true), "with its strategy and budget: " .. out)
T.eq(ws.run("tune --strategy annealing tune.lua"), 2, "a bad strategy on the command line is a usage error")
T.eq(ws.run("tune --max-evals 0 tune.lua"), 2, "as --max-evals 0 is")

-- --shard splits brute force and random only: racing and model refuse it, saying why
code, _, err = ws.run("tune --strategy racing --shard 0/2 --quiet --no-plan --out shard.csv tune.lua")
T.eq(code, 1, "racing refuses --shard")
T.ok(err:find("--shard splits brute force and random sampling only", 1, true), err)

-- brute force shards: each share measures its part and says so
code, out, err = ws.run("--quiet --no-plan --shard 0/2 --out shard0.csv tune.lua")
T.ok(code == 0 or code == 5, "a share of brute force runs (" .. code .. "): " .. err)
local share = tonumber(out:match("%(shard 0/2: its share of the configurations only%): brute, (%d+) of 19"))
T.ok(share and share >= 9 and share <= 10, "it measured its half: " .. out)

-- the offline plan: a few configurations compiled and checked, nothing timed, exit 0
code, out, err = ws.run("--quiet --arch sm_90 --out plan.csv tune.lua")
T.eq(code, 0, "the plan runs: " .. err)
T.ok(err:find("offline plan", 1, true) and err:find("nothing timed", 1, true), "and says what it does: " .. err)
T.ok(not out:find("BEST", 1, true), "no result in a plan")

-- bad options: a script error (exit 1, as a sweep's) at the script's line
ws.write("bad.lua", "gpuexp.tune{axes = {{'a', {1}}}, run = function() return {} end, strategy = 'annealing'}\n")
code, _, err = ws.run("--quiet --no-plan bad.lua")
T.eq(code, 1, "a bad strategy is a script error, as a bad sweep option is")
T.ok(err:find("bad.lua:1:", 1, true) and err:find("brute, random, racing or model", 1, true), err)
ws.write("bad2.lua", "gpuexp.tune{axes = {{'a', {1}}}, run = function() return {} end, budget = 3}\n")
code, _, err = ws.run("--quiet --no-plan bad2.lua")
T.eq(code, 1, "an unknown option too")
T.ok(err:find("bad2.lua:1: tune: unknown option 'budget' (did you mean 'budget_s'?) (known: alpha, axes,", 1, true), err)
ws.write("bad3.lua", "gpuexp.tune{axes = {{'a', {1}}}, run = function() return {x = 1} end, objective = 'x'}\n")
code, _, err = ws.run("--quiet --no-plan bad3.lua")
T.eq(code, 1, "an objective of unknown direction must say its goal")
T.ok(err:find("goal = 'min'", 1, true), err)
ws.write("bad4.lua", "gpuexp.tune{axes = {{'a', {1, 2}}}, run = function() return {other = 1} end}\n")
code, _, err = ws.run("--quiet --no-plan bad4.lua")
T.eq(code, 1, "no configuration with a value is a script error")
T.ok(err:find("bad4.lua:1: tune 'tune': no configuration gave a value for 'median_ms'", 1, true), err)
-- the condition: a configuration that breaks it, or whose condition raises, is not a candidate
-- (here the best two by the objective), whatever its value
ws.write("cond.lua", [[
local r = gpuexp.tune{name = "cond", axes = {{"a", {1, 2, 3, 4}}}, strategy = "brute", quiet = true,
  run = function(p)
    local s = {}
    for i = 1, 12 do s[i] = p.a + 0.001 * math.sin(i + p.a) end
    return {median_ms = gpuexp.stats(s).median, samples_ms = s}
  end,
  condition = function(row)
    if row.a == 1 then error("no verdict for 1") end
    return row.a ~= 2
  end}
print(string.format("BEST %d TIES %d", r.best.a, #r.ties))
]])
code, out, err = ws.run("--quiet --no-plan --out cond.csv cond.lua")
T.eq(code, 0, "the tune with a condition runs: " .. err)
T.ok(out:find("BEST 3 TIES 1", 1, true), "the best that holds the condition: " .. out)
T.done()
