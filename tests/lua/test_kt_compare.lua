-- The comparison with Kernel Tuner's scripts (bench/tune/kt_compare.sh), offline on the synthetic space:
-- study.lua records gpuexp's runs by seed, referee.lua re-measures every reported winner (gpuexp's,
-- a Kernel Tuner record written here in kt_run.py's form, brute force's best) and kt_table.lua rebuilds
-- the table from the records alone: the winners, their regret against brute force's best as the referee
-- measured both, the tie set. Then a referee record written by hand gives exact figures (the median of
-- the rounds' medians). The Python and shell scripts are checked for syntax where python3 and bash exist.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local json = require("gpuexp.store.json")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local root = gpuexp.script_dir .. "/../.."
local function gpuexp_run(args)
  local code, out, err = ws.run("--quiet --no-plan " .. args)
  T.eq(code, 0, args .. ": " .. err)
  return out
end

-- the truth: brute force's record, as bench/h100/tune37 keeps it (TRUTH/SPACE/brute.json)
gpuexp_run(string.format("%s/bench/tune/study.lua fake brute truth", root))
local brute = json.decode(ws.read("truth/fake/brute.json"))
T.eq(brute.best.a, 5, "brute force's best on the synthetic space: a")
T.eq(brute.best.b, 3, "b")
-- gpuexp's runs, named by seed
T.ok(gpuexp_run(string.format("%s/bench/tune/study.lua fake racing cmp/gpuexp 2", root)):find("fake racing: seed 2,", 1, true),
  "study.lua says the seed")
gpuexp_run(string.format("%s/bench/tune/study.lua fake model cmp/gpuexp 1", root))
T.eq(json.decode(ws.read("cmp/gpuexp/fake/racing-2.json")).seed, 2, "the seed is in the record")
T.ok(ws.read("cmp/gpuexp/fake/model-1.json"), "model seed 1 recorded as model-1.json")
-- Kernel Tuner's: one run that reported a poor winner, one that failed (kt_run.py's records)
gpuexp.mkdir(ws.dir .. "/cmp/kernel_tuner")
gpuexp.mkdir(ws.dir .. "/cmp/kernel_tuner/fake")
ws.write("cmp/kernel_tuner/fake/random_sample-1.json", json.encode({tool = "kernel_tuner", version = "1.5.0",
  strategy = "random_sample", seed = 1, wall_s = 12.5, gpu_s = 0.25, evaluations = 20, gpu = "fake",
  best = {a = 1, b = 1, c = 1}, best_ms = 1.6}))
ws.write("cmp/kernel_tuner/fake/bayes_opt-1.json", json.encode({tool = "kernel_tuner", version = "1.5.0",
  strategy = "bayes_opt", seed = 1, wall_s = 3, error = "RuntimeError: boom"}))

local out = gpuexp_run(string.format("%s/bench/tune/referee.lua cmp truth fake", root))
T.ok(out:find("referee fake 5/3/1: ", 1, true), "the referee measures brute force's best: " .. out)
T.ok(out:find("referee fake 1/1/1: [%d.]+ ms, %+5[89]%.%d+%% from brute force's best %(kernel_tuner random_sample%-1%)"),
  "and Kernel Tuner's winner, about +59% off (1.61 / 1.01 on the formula): " .. out)
local refereed = json.decode(ws.read("cmp/referee.json"))
T.eq(refereed.rounds, 5, "five rounds")
T.eq(#refereed.spaces.fake.winners[1].medians, 5, "each winner measured once a round")
T.eq(refereed.spaces.fake.reference, "5/3/1", "brute force's best is the reference")

local table_text = gpuexp_run(string.format("--inline %s/bench/tune/kt_table.lua cmp truth fake", root))
T.ok(table_text:find("| Kernel Tuner 1.5.0 | random_sample | 1 | none | 20 | 12.5 | 0.25 | 1/1/1 | ", 1, true),
  "Kernel Tuner's row: " .. table_text)
local regret, in_record = table_text:match("| 1/1/1 | [%d.]+ | %+([%d.]+)%% | %+([%d.]+)%% | NO |")
T.near(tonumber(regret), 59.4, 1.0, "its regret against brute force's best, as the referee measured both")
T.near(tonumber(in_record), 59.4, 1.0, "and in brute force's record")
T.ok(table_text:find("| Kernel Tuner 1.5.0 | bayes_opt | 1 | none |  | 3.0 | | failed: RuntimeError: boom |", 1, true),
  "a failed run is a row: " .. table_text)
T.ok(table_text:find("| gpuexp | racing | 2 | %? | %d+ | [%d.]+ | [%d.]+ | 5/3/1 | [%d.]+ | %+0%.00%% | %+0%.00%% | yes |"),
  "racing finds brute force's best: " .. table_text)
T.ok(table_text:find("| Kernel Tuner 1.5.0 | bayes_opt | 1 (1 failed) | 0 of 1 |", 1, true), "the summary counts it")
T.ok(ws.read("cmp/kt_table.md"), "the table is written beside the records")

-- exact figures from a referee record written by hand: the median of each winner's rounds' medians
ws.write("cmp/referee.json", json.encode({gpu = "hand", rounds = 3, spaces = {fake = {reference = "5/3/1", winners = {
  {key = "5/3/1", medians = {2.0, 2.2, 2.0}}, {key = "1/1/1", medians = {3.3, 3.0, 3.0}}}}}}))
table_text = gpuexp_run(string.format("--inline %s/bench/tune/kt_table.lua cmp truth fake", root))
T.ok(table_text:find("| 1/1/1 | 3.00000 | +50.00% |", 1, true), "3.0 over 2.0: " .. table_text)
T.ok(table_text:find("brute force's best at 2.00000 ms", 1, true), "the reference: " .. table_text)
T.ok(table_text:find("| Kernel Tuner 1.5.0 | random_sample | 1 | 0 of 1 | +50.00% (+50.00%) | 12.5 | 0.25 |", 1, true),
  "the line per strategy: " .. table_text)

-- the scripts that need a GPU and Kernel Tuner: their syntax
if os.execute("command -v python3 > /dev/null 2>&1") then
  for _, script in ipairs({"bench/tune/kt_run.py", "bench/kernel_tuner_study.py"}) do
    local ok = os.execute(string.format("python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' %s",
      T.quote(root .. "/" .. script)))
    T.ok(ok, script .. " parses")
  end
else
  io.stderr:write("note: no python3 here; kt_run.py's syntax not checked\n")
end
T.ok(os.execute("bash -n " .. T.quote(root .. "/bench/tune/kt_compare.sh")), "kt_compare.sh parses")
T.done()
