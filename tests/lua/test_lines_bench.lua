-- bench/lines without a GPU: the cases (seeded, 50-500 lines, the injected line where the case
-- says, built by NVRTC with code on that line: measure.lua --check), a profile's child process
-- (its arguments; in a plan it says it needs a GPU), and the pipeline's dry run on invented
-- profiles (measure.lua in a plan, then recompute.lua's table from its files). The GPU
-- run is bench/lines/run.sh.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = arg[1]
local bench = gpuexp.script_dir .. "/../../bench/lines"
local cases = dofile(bench .. "/cases.lua")

local list = cases.cases(cases.SEED, cases.COUNT)
T.eq(#list, 44, "44 cases a run")
local again = cases.case(cases.SEED, 7)
T.eq(again.new, list[7].new, "a seed gives the same case")
local seen = {}
for _, case in ipairs(list) do
  local _, lines = case.new:gsub("\n", "")
  T.ok(lines >= 50 and lines <= 500, case.id .. ": 50-500 lines, " .. lines)
  local at = 0
  for line in (case.new):gmatch("([^\n]*)\n") do
    at = at + 1
    if at == case.line then T.ok(line:find("inj_mask", 1, true), case.id .. ": the injected line at " .. at) end
  end
  local base_lines = {}
  for line in case.base:gmatch("([^\n]*)\n") do base_lines[#base_lines + 1] = line end
  T.ok(not base_lines[case.line] or not base_lines[case.line]:find("inj_mask", 1, true), case.id .. ": the base has none")
  seen[case.cause] = (seen[case.cause] or 0) + 1
end
for _, cause in ipairs(cases.CAUSE_ORDER) do T.eq(seen[cause], 4, cause .. ": four cases") end
T.ok(cases.case(77, 5).new ~= list[5].new, "another seed, other cases")
-- the strengths: weakest first, from 1/512, no step past 2x; a changed line's without reps, a
-- barrier's without a warp mask (the whole block must reach it)
T.near(cases.STRENGTHS[1][4], 1 / 512, 1e-12, "the weakest: one iteration in 64, one warp in 8")
for i = 2, #cases.STRENGTHS do
  local ratio = cases.STRENGTHS[i][4] / cases.STRENGTHS[i - 1][4]
  T.ok(ratio > 1 and ratio <= 2, "strength " .. i .. ": a step of " .. ratio)
end
for _, case in ipairs(list) do
  for _, s in ipairs(cases.strengths(case)) do
    if case.kind == "changed" then T.eq(s[3], 1, case.id .. ": a changed line has no reps") end
    if case.cause == "barrier" then T.eq(s[2], 0, case.id .. ": a barrier is not masked by warp") end
  end
end

local ws = T.workspace(binary)
local code, out, err = ws.run(string.format("--quiet --arch sm_90 %s/measure.lua out 4 --check", bench))
-- the sanitizer job leaves CUPTI out (GX_LIBCUPTI names no file): its SASS-to-source correlation
-- maps the lines, so there the cases build but none has code mapped to its line
local no_cupti = os.getenv("GX_LIBCUPTI") and not T.read(os.getenv("GX_LIBCUPTI"))
if no_cupti then
  io.stderr:write("note: CUPTI left out (GX_LIBCUPTI): the cases' line mapping is not checked here\n")
else
  T.eq(code, 0, "four cases build with code on their line: " .. out .. err)
  T.ok(out:find("every case builds", 1, true), out)
end
-- a child (one build's profile by one collector, in a process of its own) reads its case and says,
-- in a plan, that it profiles on a GPU
code, out, err = ws.run(string.format("--quiet --inline --arch sm_90 %s/measure.lua dry 4 %d child 2 new pc 100 0 0 1 p.json",
  bench, cases.SEED))
T.eq(code, 3, "a child in a plan: " .. out .. err)
T.ok(err:find("a child profiles on a GPU", 1, true), err)
code, out, err = ws.run(string.format("--quiet --inline --arch sm_90 %s/measure.lua dry 4 %d child 2 new both 100 0 0 1 p.json",
  bench, cases.SEED))
T.ok(code ~= 0 and err:find("child CASE base|new pc|sass ITERS MASK WMASK REPS", 1, true), "a child's collector is pc or sass: " .. err)
code, out, err = ws.run(string.format("--quiet --arch sm_90 --out dry/lines.csv %s/measure.lua dry 4 777", bench))
T.eq(code, 0, "the dry run: " .. err)
code, out, err = ws.run(string.format("--quiet --arch sm_90 %s/recompute.lua dry", bench))
T.eq(code, 0, "the table: " .. err)
T.ok(out:find("4 line-level regressions", 1, true), "four cases in the table: " .. out)
T.ok(out:find("(seed 777; 4 causes)", 1, true) and out:find("4 in 1-10%, 0 out of range", 1, true), "the seed named: " .. out)
T.ok(out:find("| **all** | 4 |", 1, true), "the total row")
code, out, err = ws.run(string.format("--quiet --arch sm_90 %s/recompute.lua dry --check dry/none.md", bench))
T.eq(code, 1, "--check against another table fails")
T.done()
