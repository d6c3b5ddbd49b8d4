-- The tuning study's scripts (bench/tune/study.lua, bench/tune/replay.lua), offline on their
-- synthetic space: each tune writes its record (the result, every configuration's samples, the
-- timings), and the replay rebuilds the tables from the records alone. The GPU run (bench/tune/run.sh)
-- uses the same two scripts on the real spaces.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local json = require("gpuexp.store.json")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local root = gpuexp.script_dir .. "/../.."
for _, run in ipairs({"brute", "racing", "model"}) do
  local code, out, err = ws.run(string.format("--quiet --no-plan %s/bench/tune/study.lua fake %s out", root, run))
  T.eq(code, 0, run .. " recorded: " .. err)
  T.ok(out:find("fake " .. run .. ": ", 1, true), out)
end
local record = json.decode(ws.read("out/fake/brute.json"))
T.eq(#record.evaluated, 192, "brute force's record holds every configuration")
T.ok(#record.evaluated[1].samples >= 50, "with its samples")
T.ok(record.regret.confidence == 0.9, "and the regret bound")
T.ok(ws.read("out/fake/brute.tune.round-001.samples.csv"), "the raw samples files are kept")
local parts = 0
for _, key in ipairs(require("gpuexp.api.tune").TIMING) do parts = parts + record.timing[key] end
T.ok(math.abs(parts - record.timing.wall_s) < 1e-6 and record.timing.runs == 192,
  "and where its wall time went (result.timing: its parts add up to the wall time)")
local code, out, err = ws.run(string.format("--quiet --no-plan --inline %s/bench/tune/replay.lua out fake", root))
T.eq(code, 0, "the replay runs: " .. err)
local model = json.decode(ws.read("out/fake/model.json"))
T.ok(out:find("| brute | 192 |", 1, true) and out:find(string.format("| model | %d |", model.measured), 1, true),
  "the real runs' table: " .. out)
local hits = tonumber(out:match("| model | (%d+) of 10 |"))
T.ok(hits and hits >= 9, "the model lands in brute force's tie set in 9 of 10 replays or more: " .. out)
local covered, runs = out:match("covers the true regret in (%d+) of (%d+)")
T.ok(tonumber(covered) >= 45 and tonumber(runs) == 50, "the bound's coverage over 50 replays: " .. out)
T.ok(ws.read("out/tune_tables.md"), "the tables are written beside the records")
T.done()
