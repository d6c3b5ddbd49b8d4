-- gpuexp ab end to end through the binary, with no GPU: the variants are synthetic timers whose
-- speed comes from the command line (--b-define) or from a file of each commit (--a-commit,
-- --b-commit in temporary worktrees, with --build). A/A is same (exit 0), a 5% slower B is SLOWER
-- (exit 1) in every format compare prints, the worktrees are removed, a failing build and bad
-- options end with their exit codes, and the offline plan builds both variants and times nothing.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
if not os.execute("git --version >/dev/null 2>&1") then
  io.stderr:write("skipped: no git here\n")
  os.exit(77)
end
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local dir = ws.dir
local env = "TMPDIR=" .. dir .. "/tmp"
gpuexp.mkdir(dir .. "/tmp")

local script = [[
local seed = 0
local function timer(scale)
  local state = 12345 + seed
  seed = seed + 1
  return function(reps)
    local samples = {}
    for i = 1, reps do
      state = (state * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
      samples[i] = 0.1 * scale * (1 + 0.02 * ((state >> 20) % 1000 / 1000 - 0.5))
    end
    return samples
  end
end
gpuexp.ab{name = "toy", budget_s = 20,
  variant = function(v)
    local scale = tonumber(v.defines and v.defines.SLOW or "1")
    if v.root then scale = dofile(v.root .. "/speed.lua") end
    if v.binary then scale = dofile(v.binary) end -- a "binary" that says its speed
    if v.options then assert(#v.options == 2 and v.options[2] == "-lineinfo", "the options are split at spaces") end
    if v.root and v.name == "B" then
      local built = io.open(v.root .. "/built.txt")
      assert(built, "the build ran in B's worktree")
      built:close()
    end
    return timer(scale)
  end}
]]
ws.write("ab.lua", script)

local code, out, err = ws.run("ab --no-plan ab.lua", env)
T.eq(code, 0, "A/A: same, exit 0 (" .. err .. ")")
T.ok(out:find("toy", 1, true) and out:find("same", 1, true), "the verdict: " .. out)
T.ok(out:find("could detect", 1, true), "it states the effect it could detect")
T.ok(out:find("NVBench's rule says", 1, true), "and the same samples by NVBench's rule")

code, out, err = ws.run("ab --no-plan --b-define SLOW=1.05 ab.lua", env)
T.eq(code, 1, "a 5% slower B is a regression: exit 1 (" .. err .. ")")
T.ok(out:find("SLOWER", 1, true) and out:find("+5.0", 1, true), out)
code, out = ws.run("ab --no-plan --b-define SLOW=1.05 --markdown ab.lua", env)
T.eq(code, 1, "markdown too")
T.ok(out:find("| toy | median_ms |", 1, true) and out:find("**SLOWER**", 1, true), out)
code, out = ws.run("ab --no-plan --b-define SLOW=1.05 --json ab.lua", env)
T.eq(code, 1, "json too")
local document = require("gpuexp.store.json").decode(out)
T.eq(document.points[1].verdict, "slower", "JSON verdict")
T.ok(document.points[1].change_pct > 4.5 and document.points[1].change_pct < 5.5, "JSON change")
T.ok(document.nvbench and document.compare and document.blocks >= 20, "JSON has the other rules and the blocks")
code = ws.run("ab --no-plan --b-define SLOW=0.95 --junit -o verdict.xml ab.lua", env)
T.eq(code, 0, "a faster B is not a regression")
local xml = ws.read("verdict.xml")
T.ok(xml and xml:find("<testsuite", 1, true) and not xml:find("<failure", 1, true), "JUnit written to -o")

-- two binaries (absolute paths for the run) and option sets (split at spaces)
ws.write("a.bin", "return 1.0\n")
ws.write("b.bin", "return 1.02\n")
code, out, err = ws.run("ab --no-plan --a-binary a.bin --b-binary b.bin --a-options '-O3 -lineinfo' " ..
  "--b-options '-O3 -lineinfo' ab.lua", env)
T.eq(code, 1, "B's binary is 2% slower (" .. err .. ")")
T.ok(out:find("+2.0", 1, true), out)
T.eq(ws.run("ab --a-binary missing.bin --b-binary b.bin ab.lua", env), 2, "a missing binary is a usage error")

-- two commits: speed.lua differs; --build runs in each worktree
local function sh(command) T.ok(os.execute(string.format("cd %s && %s >/dev/null 2>&1", dir, command)), command) end
sh("git init -q . && git config user.email t@example.com && git config user.name t")
ws.write("speed.lua", "return 1.0\n")
sh("git add ab.lua speed.lua && git commit -qm base")
ws.write("speed.lua", "return 1.03\n")
sh("git add speed.lua && git commit -qm slower")
code, out, err = ws.run("ab --no-plan --a-commit HEAD~1 --b-commit HEAD --build 'touch built.txt' ab.lua", env)
T.eq(code, 1, "the slower commit is found (" .. err .. ")")
T.ok(out:find("SLOWER", 1, true) and out:find("+3.0", 1, true), out)
local leftover = io.popen("ls " .. dir .. "/tmp"):read("a")
T.eq(leftover, "", "the worktrees and the request are removed")
local trees = io.popen("cd " .. dir .. " && git worktree list | wc -l"):read("a")
T.eq(tonumber(trees), 1, "git knows no worktree left")
code, _, err = ws.run("ab --no-plan --a-commit HEAD~1 --b-commit HEAD --build false ab.lua", env)
T.eq(code, 1, "a failing build")
T.ok(err:find("the build command failed", 1, true), err)

-- the offline plan
code, _, err = ws.run("ab --arch sm_90 ab.lua", env)
T.eq(code, 0, "the plan: " .. err)
T.ok(err:find("offline plan", 1, true) and err:find("until a change of 1%", 1, true), err)

-- a side that is no timer, and an unknown option of gpuexp.ab: errors at the script's line
ws.write("bad.lua", "gpuexp.ab{a = 5, b = 6}\n")
code, _, err = ws.run("--quiet --no-plan bad.lua", env)
T.eq(code, 1, "a side that is no timer")
T.ok(err:find("bad.lua:1: ab: a (or variant(A)) must be a bound launch", 1, true), err)
ws.write("bad2.lua", "gpuexp.ab{a = function() return {1} end, b = function() return {1} end, mde = 1}\n")
code, _, err = ws.run("--quiet --no-plan bad2.lua", env)
T.eq(code, 1, "an unknown option")
T.ok(err:find("bad2.lua:1: ab: unknown option 'mde'", 1, true), err)

-- a script that never calls gpuexp.ab gives no verdict, never a pass
ws.write("noab.lua", "print('hello')\n")
code, _, err = ws.run("ab --no-plan noab.lua", env)
T.eq(code, 1, "no verdict is a failure")
T.ok(err:find("never called gpuexp.ab", 1, true), err)

-- a timer with no samples, a NaN or a 0 ms sample: the script's error (exit 2), never "slower" (1)
for name, samples in pairs({empty = "{}", nan = "{0.1, 0/0}", zero = "{0}"}) do
  ws.write("bad_" .. name .. ".lua", "gpuexp.ab{a = function(reps) return {0.1, 0.1} end,\n  b = function(reps) return " ..
    samples .. " end}\n")
  code, _, err = ws.run("ab --no-plan bad_" .. name .. ".lua", env)
  T.eq(code, 2, name .. " samples: exit 2 (" .. err .. ")")
  T.ok(err:find("bad_" .. name .. ".lua:1: ab: variant B's timer returned", 1, true), err)
end
-- a budget too small to decide: undecided (exit 5), never same, even for a 20% slower B
code, out, err = ws.run("ab --no-plan --budget-s 1e-300 --b-define SLOW=1.2 ab.lua", env)
T.eq(code, 5, "undecided: exit 5 (" .. err .. ")")
T.ok(out:find("undecided", 1, true) and out:find("fewer than the 20 a verdict needs", 1, true), out)
-- a bug in gpuexp's statistics (here planted) is an internal error: exit 70, never 1 ("slower")
ws.write("planted.lua", "require('gpuexp.judge.paired').block_ratio = function() error('planted bug') end\n" .. script)
code, _, err = ws.run("ab --no-plan planted.lua", env)
T.eq(code, 70, "an internal error exits 70 (" .. err .. ")")
T.ok(err:find("planted bug", 1, true) and err:find("internal error in ab", 1, true), err)
-- numbers that are not finite, and a seed JSON cannot carry exactly, are refused (exit 2)
T.eq(ws.run("ab --threshold 1e309 ab.lua", env), 2, "--threshold 1e309 is infinity: refused")
T.eq(ws.run("ab --mde 1e309 ab.lua", env), 2, "--mde 1e309 refused")
T.eq(ws.run("ab --budget-s 1e999 ab.lua", env), 2, "--budget-s 1e999 refused")
code, _, err = ws.run("ab --seed 9223372036854775807 ab.lua", env)
T.eq(code, 2, "--seed 2^63-1 refused: " .. err)
T.ok(err:find("--seed", 1, true), err)
T.eq(ws.run("ab --seed 4294967296 ab.lua", env), 2, "--seed past 2^32 - 1 refused")
code = ws.run("ab --no-plan --seed 4294967295 ab.lua", env)
T.eq(code, 0, "the largest seed taken runs")

-- usage
T.eq(ws.run("ab --a-commit HEAD ab.lua", env), 2, "one commit is not enough")
T.eq(ws.run("ab --mde 0 ab.lua", env), 2, "--mde must be > 0")
T.eq(ws.run("ab --frobnicate ab.lua", env), 2, "unknown option")
T.eq(ws.run("ab --a-define X ab.lua", env), 2, "a define is NAME=VALUE")
T.eq(ws.run("ab", env), 2, "no script")
T.done()
