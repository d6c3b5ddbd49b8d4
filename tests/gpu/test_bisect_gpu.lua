-- gpuexp bisect on a GPU: a repository of 21 commits whose experiment times an FMA chain from a
-- kernel file; commit 13 makes the chain 12% longer (a real slowing commit), commit 10 breaks the
-- kernel's build (skipped), the rest edit notes. bisect must name commit 13, from the commits and
-- from a regressed night's run in the history, and leave no worktree behind.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
if not os.execute("git --version >/dev/null 2>&1") then
  io.stderr:write("skipped: no git here\n")
  os.exit(77)
end
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, run = ws.dir, ws.write, ws.run

local function sh(command)
  T.ok(os.execute(string.format("cd %s/repo && %s >/dev/null 2>&1", work, command)), command)
end
gpuexp.mkdir(work .. "/repo")
sh("git init -q . && git config user.email test@example.com && git config user.name test")
local kernel = [[
#include "work.h"
extern "C" __global__ void chain(float *out, float a, float b)
{
    float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f;
    for (int k = 0; k < WORK; k++) { x = x * a + b; y = y * a + b; }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
}
]]
write("repo/chain.cu", kernel)
write("repo/work.h", "#define WORK 4096\n")
write("repo/exp.lua", [[
local dev = gpuexp.device()
local k = gpuexp.compile{file = "chain.cu"}:kernel("chain")
local out = dev:alloc("f32", dev.sm_count * 8 * 256)
gpuexp.sweep{name = "chain", axes = {{"block", {256}}}, run = function(p)
  local t = k:measure{grid = dev.sm_count * 8, block = p.block, args = {out, gpuexp.f32(0.999), gpuexp.f32(0.001)},
    min_time_ms = 150, timeout_s = 2}
  return {median_ms = t.median_ms, noise_pct = t.noise_pct, samples = t.samples, samples_ms = t.samples_ms}
end}
]])
sh("git add -A && git commit -qm 'c0 good'")
local commits = {}
for i = 1, 20 do
  local notes = ""
  for k = 1, i do notes = notes .. "line " .. k .. "\n" end
  write("repo/notes.txt", notes)
  local message = "c" .. i
  if i == 10 then write("repo/chain.cu", kernel .. "this does not compile\n"); message = "c10 broken" end
  if i == 11 then write("repo/chain.cu", kernel); message = "c11 fixed" end
  if i == 13 then write("repo/work.h", "#define WORK 4600\n"); message = "c13 the culprit" end
  sh("git add -A && git commit -qm '" .. message .. "'")
  local pipe = io.popen("git -C " .. work .. "/repo rev-parse HEAD")
  commits[i] = pipe:read("l")
  pipe:close()
end

gpuexp.mkdir(work .. "/tmp")
local environment = "TMPDIR=" .. work .. "/tmp"
local started = gpuexp.clock()
local code, stdout, stderr = run("bisect --good HEAD~20 --bad HEAD --point block=256 repo/exp.lua", environment)
print(stdout)
print(string.format("bisect took %.1f s", gpuexp.clock() - started))
T.eq(code, 0, "bisect: " .. stderr)
T.ok(stdout:find("first bad commit: " .. commits[13] .. " c13 the culprit", 1, true), "the culprit: " .. stdout)
T.ok(stdout:find("skip " .. commits[10]:sub(1, 10), 1, true), "the broken commit skipped: " .. stdout)
local pipe = io.popen("git -C " .. work .. "/repo worktree list | wc -l")
T.eq(tonumber(pipe:read("l")), 1, "no worktree left")
pipe:close()

-- from the history: a night at the good commit, a regressed night at the bad one
write("suite.txt", "repo/exp.lua\n")
local function night(n)
  return run(string.format("nightly suite.txt --quiet --history h.sqlite --out night%d", n),
    "GPUEXP_LOCK_DIR=" .. work .. " " .. environment)
end
sh("git checkout -q HEAD~20")
T.eq(night(1), 0, "a night at the good commit")
sh("git checkout -q -")
T.eq(night(2), 1, "a night at the bad commit: a regression")
local _, listed = run("history --history h.sqlite list --limit 1")
local regressed = listed:match("\n%s*(%d+)%s")
code, stdout, stderr = run("bisect --run " .. regressed .. " --history h.sqlite --point block=256", environment)
print(stdout)
T.eq(code, 0, "bisect --run: " .. stderr)
T.ok(stdout:find("first bad commit: " .. commits[13], 1, true), "the culprit from the history's run: " .. stdout)
T.done()
