-- gpuexp bisect offline, on a synthetic repository of 21 commits: an experiment whose time comes
-- from a file the commits edit. Commit 13 makes the point 5% slower; commit 10 does not run (a
-- syntax error, fixed in 11) and is skipped; commit 12's first measurement looks 2.2% slower (just
-- past the 2% threshold) and is measured again before it decides. bisect names commit 13 and
-- removes its worktrees; a range with no slowdown and bad arguments end with their exit codes.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
if not os.execute("git --version >/dev/null 2>&1") then
  io.stderr:write("skipped: no git here (the README's test command installs it)\n")
  os.exit(77)
end
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, run = ws.dir, ws.write, ws.run

local function sh(command)
  local ok = os.execute(string.format("cd %s/repo && %s >/dev/null 2>&1", work, command))
  T.ok(ok, command)
end
gpuexp.mkdir(work .. "/repo")
sh("git init -q . && git config user.email test@example.com && git config user.name test")
local experiment = [[
local cost = dofile(gpuexp.script_dir .. "/cost.lua")
local marker = io.open(gpuexp.script_dir .. "/noisy.txt")
if marker then -- the first measurement of this commit is 2.2% slow, the others are not
  marker:close()
  local path = os.getenv("FAKE_COUNTER")
  local file = io.open(path)
  local count = (file and tonumber(file:read("a")) or 0) + 1
  if file then file:close() end
  file = assert(io.open(path, "w")); file:write(count); file:close()
  if count == 1 then cost = cost * 1.022 end
end
gpuexp.sweep{name = "b", axes = {{"n", {1, 2}}},
  run = function(p) return {median_ms = cost * p.n, noise_pct = 0.5, samples = 1000} end}
]]
write("repo/exp.lua", experiment)
write("repo/cost.lua", "return 1.0\n")
sh("git add -A && git commit -qm 'c0 good'")
local commits = {}
for i = 1, 20 do
  local notes = ""
  for k = 1, i do notes = notes .. "line " .. k .. "\n" end
  write("repo/notes.txt", notes)
  local message = "c" .. i
  if i == 10 then write("repo/exp.lua", experiment .. "this is not lua\n"); message = "c10 broken" end
  if i == 11 then write("repo/exp.lua", experiment); message = "c11 fixed" end
  if i == 12 then write("repo/noisy.txt", "x"); message = "c12 noisy" end
  if i == 13 then
    os.remove(work .. "/repo/noisy.txt")
    write("repo/cost.lua", "return 1.05\n")
    message = "c13 the culprit"
  end
  sh("git add -A && git commit -qm '" .. message .. "'")
  local pipe = io.popen("git -C " .. work .. "/repo rev-parse HEAD")
  commits[i] = pipe:read("l")
  pipe:close()
end

gpuexp.mkdir(work .. "/tmp")
local environment = "FAKE_COUNTER=" .. work .. "/counter TMPDIR=" .. work .. "/tmp"
local code, stdout, stderr = run("bisect --good HEAD~20 --bad HEAD --point n=2 --arch sm_90 repo/exp.lua", environment)
T.eq(code, 0, "bisect: " .. stderr)
T.ok(stdout:find("first bad commit: " .. commits[13] .. " c13 the culprit", 1, true), "the culprit: " .. stdout)
T.ok(stdout:find("skip " .. commits[10]:sub(1, 10) .. "  %(the script failed %(exit 1%): exp%.lua:%d+: syntax error"),
  "the broken commit skipped, with why: " .. stdout)
T.ok(stdout:find("good " .. commits[12]:sub(1, 10) .. "  2 median_ms  %+0%.00%% %(3 measurements%)"),
  "the noisy commit measured again and found good: " .. stdout)
T.ok(stdout:find("bad  " .. commits[20]:sub(1, 10) .. "  2.1 median_ms  +5.00% slower", 1, true), "the bad end: " .. stdout)
local pipe = io.popen("git -C " .. work .. "/repo worktree list | wc -l")
T.eq(tonumber(pipe:read("l")), 1, "no worktree left")
pipe:close()
pipe = io.popen("ls -A " .. work .. "/tmp | wc -l")
T.eq(tonumber(pipe:read("l")), 0, "and no temporary folder")
pipe:close()

-- from the history: a night at the good commit, a regressed night at the bad one; bisect --run
-- takes the commits and the script from the regressed run
write("suite.txt", "repo/exp.lua\n")
local function night(n)
  return run(string.format("nightly suite.txt --arch sm_90 --quiet --history h.sqlite --out night%d", n),
    "GPUEXP_LOCK_DIR=" .. work .. " " .. environment)
end
sh("git checkout -q HEAD~20")
T.eq(night(1), 0, "a night at the good commit")
sh("git checkout -q -")
os.remove(work .. "/counter")
T.eq(night(2), 1, "a night at the bad commit: a regression")
local _, listed = run("history --history h.sqlite list --limit 1") -- the night's re-measure (confirm): its own
T.ok(listed:find("confirm", 1, true), "the newest run is the re-measure: " .. listed) -- night is not its baseline
local regressed = listed:match("\n%s*(%d+)%s")
code, stdout, stderr = run("bisect --run " .. regressed .. " --history h.sqlite --point n=2 --arch sm_90", environment)
T.eq(code, 0, "bisect --run: " .. stderr)
T.ok(stdout:find("first bad commit: " .. commits[13], 1, true), "the culprit from the history's run: " .. stdout)

-- no slowdown in the range: said, exit 5
os.remove(work .. "/counter")
code, stdout = run(string.format("bisect --good HEAD~20 --bad %s --point n=2 --arch sm_90 repo/exp.lua", commits[9]),
  environment)
T.eq(code, 5, "no regression between them")
T.ok(stdout:find("no regression", 1, true), stdout)
-- bad arguments
T.eq(run("bisect --good HEAD~2 --bad HEAD --arch sm_90 repo/exp.lua"), 2, "no --point")
T.eq(run("bisect --good nosuchcommit --bad HEAD --point n=2 --arch sm_90 repo/exp.lua"), 2, "an unknown commit")
T.eq(run("bisect --good HEAD --bad HEAD~3 --point n=2 --arch sm_90 repo/exp.lua"), 2, "good after bad")
T.done()
