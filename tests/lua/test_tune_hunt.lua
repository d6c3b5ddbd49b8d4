-- gpuexp.tune against the hostile-input hunt's cases (issue 34) and the tuning issue's limits
-- (issue 37), through the binary with no GPU:
--   a space of 10^6 configurations, and of 10^7 with a `where` filter, with max_evals 20: every
--   strategy ends in seconds and bounded memory (the space is lazy: api/space.lua);
--   --resume of a finished tune measures nothing (a racing tune measured 20 again);
--   seeds up to 2^63-1, in the script and as --seed 9223372036854775807; 2^63 is refused;
--   a damaged tune_winners record is skipped with a clear line; an unreadable table refuses
--   start = "stored" with a clear error, not a crash;
--   the GPU is part of the stored winners' key.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local winners = require("gpuexp.store.winners")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

-- 10^6 and 10^7 configurations, max_evals 20
ws.write("big.lua", [[
local v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
local axes = {{"a", v}, {"b", v}, {"c", v}, {"d", v}, {"e", v}, {"f", v}}
if arg[2] == "7" then axes[7] = {"g", v} end
local started = gpuexp.clock()
local r = gpuexp.tune{name = "big", axes = axes, quiet = true, strategy = arg[1], max_evals = 20,
  where = arg[2] == "7" and function(p) return (p.a + p.b + p.c) % 3 ~= 0 end or nil,
  run = function(p)
    local s = {}
    for i = 1, 8 do s[i] = 1 + ((p.a - 3) ^ 2 + (p.b - 7) ^ 2 + p.c + p.d + p.e) / 100 + i * 1e-4 end
    return {median_ms = gpuexp.stats(s).median, samples_ms = s}
  end}
local status = io.open("/proc/self/status"):read("a")
print(string.format("MEASURED %d OF %d SECONDS %.2f PEAK_KB %d", r.measured, r.configurations, gpuexp.clock() - started,
  tonumber(status:match("VmHWM:%s*(%d+)"))))
]])
for _, case in ipairs({{"6", "random"}, {"6", "model"}, {"6", "racing"}, {"7", "brute"}, {"7", "random"},
  {"7", "model"}, {"7", "racing"}}) do
  local code, out, err = ws.run(string.format("--quiet --no-plan --out big%s%s.csv big.lua %s %s", case[1], case[2],
    case[2], case[1]))
  local what = string.format("10^%s configurations, %s, max_evals 20", case[1], case[2])
  T.eq(code, 0, what .. ": " .. err)
  local measured, total, seconds, peak = out:match("MEASURED (%d+) OF (%d+) SECONDS (%S+) PEAK_KB (%d+)")
  T.ok(measured and tonumber(seconds) < 20, what .. " ends in seconds: " .. out)
  T.ok(tonumber(peak) < 300 * 1024, what .. " in bounded memory (under 300 MB): " .. tostring(peak) .. " KB")
  if case[2] == "racing" or case[2] == "model" then -- short levels: 1/27 of a full measurement at the least
    T.ok(tonumber(measured) > 20 and tonumber(measured) <= 27 * 20, what .. ": 20 full-measurement equivalents: " .. measured)
  else
    T.eq(tonumber(measured), 20, what .. ": 20 measured")
  end
  T.ok(tonumber(total) >= (case[1] == "7" and 6000000 or 1000000), what .. ": the space's size is said: " .. out)
end

-- --resume of a finished tune measures nothing, for every strategy
ws.write("resume.lua", [[
local counter = gpuexp.script_dir .. "/measured.txt"
local r = gpuexp.tune{name = "toy", quiet = true, strategy = arg[1], max_evals = 30,
  axes = {{"a", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, {"b", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}},
  run = function(p)
    local log = io.open(counter, "a"); log:write(p.a, ",", p.b, "\n"); log:close()
    local s = {}
    for i = 1, 40 do s[i] = 1 + 0.02 * ((p.a - 3) ^ 2 + (p.b - 2) ^ 2) + 0.01 * math.sin(i * 7.3 + p.a * 3.1 + p.b) end
    return {median_ms = gpuexp.stats(s).median, samples_ms = s}
  end}
print(string.format("BEST %d %d", r.best.a, r.best.b))
]])
local function lines(name)
  local n = 0
  for _ in (ws.read(name) or ""):gmatch("\n") do n = n + 1 end
  return n
end
for _, strategy in ipairs({"racing", "model", "random", "brute"}) do
  os.remove(ws.dir .. "/measured.txt")
  local out_name = "resume_" .. strategy .. ".csv"
  local code, first = ws.run(string.format("--quiet --no-plan --out %s resume.lua %s", out_name, strategy))
  T.eq(code, 0, strategy .. " runs")
  local measured = lines("measured.txt")
  local code2, again, err = ws.run(string.format("--quiet --no-plan --resume --out %s resume.lua %s", out_name, strategy))
  T.eq(code2, 0, strategy .. " resumed: " .. err)
  T.eq(lines("measured.txt"), measured, strategy .. ": --resume of a finished tune measures nothing")
  T.eq(again:match("BEST %d+ %d+"), first:match("BEST %d+ %d+"), strategy .. ": and gives the same best")
end

-- seeds up to 2^63-1
ws.write("seed.lua", [[
local r = gpuexp.tune{name = "s", axes = {{"a", {1, 2, 3, 4, 5}}}, quiet = true, strategy = "random", max_evals = 3,
  seed = arg[1] == "max" and 2^63 - 1 or arg[1] == "int" and math.maxinteger or nil,
  run = function(p) return {median_ms = p.a} end}
print("SEED " .. tostring(r.seed))
]])
local code, out, err = ws.run("--quiet --no-plan --out s1.csv seed.lua max")
T.eq(code, 0, "seed = 2^63-1 (a float in Lua) runs: " .. err)
T.ok(out:find("SEED 9223372036854775807", 1, true), "as the seed 2^63-1: " .. out)
code, out, err = ws.run("--quiet --no-plan --out s2.csv seed.lua int")
T.ok(code == 0 and out:find("SEED 9223372036854775807", 1, true), "math.maxinteger too: " .. out .. err)
code, out, err = ws.run("tune --quiet --no-plan --seed 9223372036854775807 --out s3.csv seed.lua")
T.eq(code, 0, "gpuexp tune --seed 9223372036854775807 runs: " .. err)
T.ok(out:find("SEED 9223372036854775807", 1, true), "with that very seed (not its double): " .. out)
code, out, err = ws.run("tune --seed 9223372036854775808 seed.lua")
T.eq(code, 2, "2^63 is refused as a usage error")
T.ok(err:find("--seed takes a whole number", 1, true), err)
ws.write("badseed.lua", "gpuexp.tune{axes = {{'a', {1}}}, run = function() return {} end, seed = 1.5}\n")
code, out, err = ws.run("--quiet --no-plan badseed.lua")
T.eq(code, 1, "a seed that is not whole is the script's error")
T.ok(err:find("badseed.lua:1: tune: 'seed' must be a whole number from 0 to 2^63-1", 1, true), err)

-- stored winners: a damaged record is skipped, an unreadable table refuses start = "stored"
ws.write("stored.lua", [[
local r = gpuexp.tune{name = "st", axes = {{"a", {1, 2, 3, 4}}}, quiet = true, strategy = "brute",
  start = arg[1] == "stored" and "stored" or nil, run = function(p) return {median_ms = 1 + math.abs(p.a - 2)} end}
print(string.format("BEST %d DRIFT %d", r.best.a, #r.drift))
]])
code, out, err = ws.run("--quiet --no-plan --history h.sqlite --out st1.csv stored.lua")
T.eq(code, 0, "the first tune stores its winners: " .. err)
local db = gpuexp._db.open(ws.dir .. "/h.sqlite")
local stored = db:rows("SELECT regret FROM tune_winners")
T.ok(stored[1].regret and stored[1].regret:find('"confidence":0.9', 1, true), "with the regret bound: " ..
  tostring(stored[1].regret))
db:exec("UPDATE tune_winners SET best = '{\"a\":', ties = 'garbage'")
db:close()
code, out, err = ws.run("--quiet --no-plan --history h.sqlite --out st2.csv stored.lua stored")
T.eq(code, 0, "a damaged stored winner does not stop the tune: " .. err)
T.ok(err:find("a damaged stored winner is skipped: ", 1, true) and err:find("tune_winners record 1: best is not JSON",
  1, true), "and is named: " .. err)
T.ok(out:find("BEST 2", 1, true), out)
db = gpuexp._db.open(ws.dir .. "/h.sqlite")
db:exec("DROP TABLE tune_winners; CREATE TABLE tune_winners(x)")
db:close()
code, out, err = ws.run("--quiet --no-plan --history h.sqlite --out st3.csv stored.lua stored")
T.eq(code, 1, "an unreadable table refuses start = stored, as the script's error")
T.ok(err:find("stored.lua:1: tune 'st': start = \"stored\", but the stored winners in h.sqlite cannot be read", 1, true),
  "with a clear message at the script's line: " .. err)
T.ok(not err:find("internal error", 1, true) and not err:find("attempt to", 1, true), "not a crash: " .. err)

-- the GPU is part of the winners' key: two GPUs' winners are two records, and a change of GPU is named
local path = ws.dir .. "/key.sqlite"
local base = {name = "k", source_hash = "s", arch = "sm_90", driver = "580", cuda = "13.0", strategy = "brute",
  objective = "median_ms:min", best = {a = 1}, ties = {}, evaluations = 1, cost_s = 0}
for _, gpu in ipairs({"NVIDIA H100", "NVIDIA H200"}) do
  local record = {}
  for k, v in pairs(base) do record[k] = v end
  record.gpu = gpu
  T.ok(winners.store(path, record), "stored for " .. gpu)
end
local list = winners.latest(path, "k")
T.eq(#list, 2, "the winners of two GPUs are kept apart")
local changed = winners.differences(list[1], {source_hash = "s", arch = "sm_90", gpu = "NVIDIA B200", driver = "580",
  cuda = "13.0"})
T.eq(#changed, 1, "a change of GPU alone is a difference")
T.ok(changed[1]:find("^gpu: "), changed[1])
T.done()
