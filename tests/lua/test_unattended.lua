-- Unattended runs without a GPU, through the binary as a user runs it: a worker that dies at a
-- point, a point past its time limit, kill -9 of the supervisor then --resume, Ctrl-C, shards then
-- merge, resume refused after a change, a row with a new field, a damaged cubin in the cache.
-- covers: lua/gpuexp/engine/supervisor.lua, lua/gpuexp/engine/resume.lua, lua/gpuexp/engine/options.lua, src/core/gx_process.c, src/core/gx_channel.c
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read = ws.dir, ws.write, ws.read
-- runs gpuexp (an offline plan) with arguments; returns the exit code and stderr
local function gpuexp_run(arguments, environment)
  local code, _, stderr = ws.run("--arch sm_90 " .. arguments, environment)
  return code, stderr
end
local function lines(name)
  local list = {}
  for line in (read(name) or ""):gmatch("([^\n]*)\n") do list[#list + 1] = line end
  return list
end

-- 1. a worker that dies at point 3 of 6, a point that busy-loops past its limit at point 5
write("faults.lua", [[
gpuexp.sweep{name = "faults", out = "faults.csv", axes = {{"i", {1, 2, 3, 4, 5, 6}}},
  run = function(p)
    if p.i == 3 then os.exit(134) end
    if p.i == 5 then while true do end end
    return {square = p.i * p.i}
  end}
]])
local started = gpuexp.clock()
local code, stderr = gpuexp_run("--point-timeout 1 faults.lua")
T.eq(code, 5, "exit code: finished with crashed and timed-out points")
T.ok(gpuexp.clock() - started < 6, "the timeout ended the point within its limit plus 2 s")
local rows = gpuexp.csv.read(work .. "/faults.csv")
T.eq(#rows, 6, "a row for every point")
local want = {"ok", "ok", "crashed", "ok", "timeout", "ok"}
for i, row in ipairs(rows) do T.eq(row.status, want[i], "status of point " .. i) end
T.ok(rows[3].error:find("the worker exited with code 134 during the point", 1, true), "crash reason: " .. rows[3].error)
T.ok(rows[5].error:find("ran past its 1 s limit", 1, true), "timeout reason: " .. rows[5].error)
T.eq(rows[6].square, 36, "the point after the timeout ran")
T.ok(stderr:find("point 3 crashed", 1, true), "the crash is said on stderr")

-- 2. kill -9 of the supervisor in the middle, then --resume: every point exactly once, the
-- finished rows byte for byte, a row cut in half dropped
write("slow.lua", [[
local rows = gpuexp.sweep{name = "slow", out = "slow.csv", axes = {{"i", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, {"tag", {"a", "b,c"}}},
  run = function(p)
    local t = gpuexp.clock()
    while gpuexp.clock() - t < 0.05 do end
    return {v = p.i * 2, w = "x"}
  end}
print("rows " .. #rows .. " " .. rows[#rows].v)
]])
os.execute(string.format("cd %s && (%s --arch sm_90 --quiet slow.lua > /dev/null 2>&1 & echo $! > pid; sleep 0.6; kill -9 $(cat pid))", work, binary))
local alive = T.processes_in(work, "slow.lua", 5)
T.eq(#alive, 0, "no worker outlived the killed supervisor: " .. table.concat(alive, "; "))
local before = lines("slow.csv")
T.ok(#before > 2 and #before < 21, "the kill came in the middle (" .. #before .. " lines)")
local file = io.open(work .. "/slow.csv", "ab")
file:write("9,a,1") -- a row cut by the kill
file:close()
code, stderr = gpuexp_run("--resume slow.lua")
T.eq(code, 0, "the resumed run")
T.ok(stderr:find("dropped 5 bytes of a row cut off", 1, true), "the cut row is reported: " .. stderr)
local after = lines("slow.csv")
T.eq(#after, 21, "header and every point once")
local seen = {}
for i = 2, #after do
  T.ok(not seen[after[i]], "no duplicated row: " .. after[i])
  seen[after[i]] = true
end
for i = 2, #before do T.ok(seen[before[i]], "finished row kept byte for byte: " .. before[i]) end
T.eq(read("stdout"), "rows 20 20\n", "the script got every row back")
local info = require("cjson").decode(read("slow.meta.json"))
T.eq(#info.parts, 2, "two parts in the metadata")
T.eq(info.parts[1].ended, "killed (no end was recorded)", "the killed part")
T.eq(info.parts[2].ended, "complete", "the resumed part")

-- 3. resume refused when the script changed, unless told
write("slow.lua", read("slow.lua"):gsub("w = \"x\"", "w = \"y\""))
code, stderr = gpuexp_run("--resume slow.lua")
T.eq(code, 2, "resume refused: an option that does not fit (exit 2)")
T.ok(stderr:find("slow.lua:1: sweep 'slow': cannot resume slow.csv: the script changed", 1, true),
  "the refusal names the user's line and what changed: " .. stderr)
T.ok(stderr:find("--allow-changed", 1, true), "and how to go on")
code = gpuexp_run("--resume --allow-changed slow.lua")
T.eq(code, 0, "--allow-changed resumes")

-- 4. shards, then merge: equal to the unsharded run
code = gpuexp_run("--quiet slow.lua")
local whole = read("slow.csv")
for i = 0, 2 do T.eq(gpuexp_run("--quiet --shard " .. i .. "/3 slow.lua"), 0, "shard " .. i) end
local _, _, merged = os.execute(string.format("cd %s && %s merge merged.csv slow.shard-0-of-3.csv slow.shard-1-of-3.csv " ..
  "slow.shard-2-of-3.csv > /dev/null", work, binary))
T.eq(merged, 0, "merge exit code")
T.eq(read("merged.csv"), whole, "the merged shards equal the unsharded run")
local _, _, incomplete = os.execute(string.format("cd %s && %s merge part.csv slow.shard-0-of-3.csv > /dev/null 2> merge.err",
  work, binary))
T.eq(incomplete, 1, "an incomplete merge fails")
T.ok(read("merge.err"):find("13 missing point(s)", 1, true), "missing points listed: " .. read("merge.err"))
local shard1 = read("slow.shard-1-of-3.csv")
os.remove(work .. "/slow.shard-1-of-3.csv")
code = gpuexp_run("--quiet slow.lua", "SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_COUNT=3")
T.eq(read("slow.shard-1-of-3.csv"), shard1, "Slurm's task id 6 of 5..7 picks shard 1 of 3")
T.ok(lines("slow.shard-1-of-3.csv")[2]:find("^1,\"b,c\","), "shard 1 of 3 starts at the second point")

-- 5. Ctrl-C: the workers end, the rows stay, the message says how to resume
os.execute(string.format("cd %s && (%s --arch sm_90 slow.lua > /dev/null 2> int.err & echo $! > pid; sleep 0.6; " ..
  "kill -INT $(cat pid); wait $(cat pid); echo $? > int.code)", work, binary))
T.eq(read("int.code"), "130\n", "exit code after Ctrl-C")
T.ok(read("int.err"):find("interrupted %(SIGINT%): %d+ of 20 points done"), "interrupted: " .. read("int.err"))
T.ok(read("int.err"):find("--resume --arch sm_90 slow.lua", 1, true), "the resume command: " .. read("int.err"))

-- 6. a row with a field the first row did not have: a new column, never a dropped value
write("grow.lua", [[
local rows = gpuexp.sweep{name = "grow", out = "grow.csv", axes = {{"i", {1, 2}}},
  run = function(p) if p.i == 1 then return {x = 1} end return {x = 1, y = 2} end}
]])
code, stderr = gpuexp_run("grow.lua")
T.eq(code, 0, "grow")
T.eq(read("grow.csv"), "i,x,y,status,error\n1,1,,ok,\n2,1,2,ok,\n", "the column grew")
T.ok(stderr:find("field(s) y that earlier rows did not", 1, true), "the new column is said: " .. stderr)

-- 7. sweep errors name the user's line; --out naming a directory
write("bad_axes.lua", "local x = 1\ngpuexp.sweep{axes = {{'a', {}}}, run = function() return {} end}\n")
code, stderr = gpuexp_run("bad_axes.lua")
T.eq(code, 1, "bad axes")
T.ok(stderr:find("^bad_axes.lua:2: sweep: axes%[1%] must be"), "the user's line: " .. stderr)
gpuexp.mkdir(work .. "/adir")
write("dir_out.lua", "gpuexp.sweep{axes = {{'a', {1}}}, out = 'adir', run = function() return {} end}\n")
code, stderr = gpuexp_run("dir_out.lua")
T.ok(stderr:find("^dir_out.lua:1: sweep: 'out' must name a CSV file, got 'adir' %(a directory%)"), "out: " .. stderr)

-- 8. a damaged cubin in the cache: a warning and a fresh compile, not a cache hit
write("k.cu", 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1; }\n')
write("compile.lua", [[
local p = gpuexp.compile{file = "k.cu"}
print(tostring(p.cache_hit) .. " " .. p.cache_key)
]])
local cache = "GPUEXP_CACHE_DIR=" .. work .. "/cache"
gpuexp_run("compile.lua", cache)
local key = read("stdout"):match("false (%x+)")
T.ok(key, "first compile: " .. read("stdout"))
gpuexp_run("compile.lua", cache)
T.eq(read("stdout"), "true " .. key .. "\n", "a sound entry is a hit")
local cubin = work .. "/cache/cubin/" .. key:sub(1, 2) .. "/" .. key .. ".cubin"
local whole_cubin = assert(io.open(cubin, "rb")):read("a")
local damaged = assert(io.open(cubin, "wb"))
damaged:write(whole_cubin:sub(1, 200))
damaged:close()
code, stderr = gpuexp_run("compile.lua", cache)
T.eq(read("stdout"), "false " .. key .. "\n", "a truncated cubin is not a hit")
T.ok(stderr:find("gpuexp: warning: the cached build", 1, true) and stderr:find("cubin 200 bytes", 1, true),
  "the damage is said: " .. stderr)
gpuexp_run("compile.lua", cache)
T.eq(read("stdout"), "true " .. key .. "\n", "the entry was written again")

T.done()
