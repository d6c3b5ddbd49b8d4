-- WEAK cases of issue 34 outside the history and output files, each with its right answer: an
-- empty suite or option value is refused (nightly '' ran every shipped experiment, --history ''
-- recorded into the default history); a resumed run whose CSV holds crashed rows does not end as
-- a success; a run stopped before any sweep says so (not "0 of 0 points" and a --resume); an
-- offline plan's alloc names the script's line; kernel names up to 4095 characters are whole
-- (they were cut at 255), and a kernel of more parameters than gpuexp takes is refused (the rest
-- were dropped).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run

-- ---- empty names ----
write("k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1, 2}}}, run = function(p) return {median_ms = p.x} end}')
local code, stdout, stderr = run("nightly '' --arch sm_90 --history h.sqlite --out night", "GPUEXP_LOCK_DIR=" .. work)
T.eq(code, 2, "nightly '': a usage error")
T.ok(stderr:find("gpuexp nightly: the suite is an empty name: give a folder of experiments or a suite file", 1, true),
  stderr)
T.ok(not stdout:find("running", 1, true) and not read("night"), "nothing ran: " .. stdout)
code, _, stderr = run("--history '' --quiet --arch sm_90 -o k.csv k.lua", "XDG_DATA_HOME=" .. work .. "/data")
T.eq(code, 2, "--history '': a usage error")
T.ok(stderr:find("gpuexp: --history takes a path, got ''", 1, true), stderr)
T.ok(not read("data/gpuexp/history.sqlite"), "nothing recorded in the default history")
code, _, stderr = run("compare --output '' k.csv k.csv")
T.ok(code == 2 and stderr:find("gpuexp compare: --output takes a path, got ''", 1, true), "compare -o '': " .. stderr)

-- ---- a resumed run with crashed rows: exit 5, the failure said ----
write("crash.lua", [[
gpuexp.sweep{name = "c", axes = {{"n", {1, 2, 3}}}, run = function(p)
  if p.n == 2 then os.exit(9) end
  return {median_ms = p.n} end}
]])
T.eq(run("--quiet --arch sm_90 -o crash.csv crash.lua"), 5, "a point crashed")
for _, mode in ipairs({"", "--inline"}) do
  code, _, stderr = run("--quiet --arch sm_90 --resume " .. mode .. " -o crash.csv crash.lua")
  T.eq(code, 5, "--resume " .. mode .. " of a run with a crashed row: not a success (" .. stderr .. ")")
  T.ok(stderr:find("gpuexp: 1 of 3 points failed (1 crashed)", 1, true) and
    stderr:find("point n=2 (crashed, a row an earlier part of the run wrote; --resume keeps it)", 1, true), stderr)
end

-- ---- stopped before any sweep: nothing to resume ----
write("nosweep.lua", [[
io.open(gpuexp.script_dir .. "/started", "w"):close()
local t = gpuexp.clock()
while gpuexp.clock() - t < 30 do end
]])
os.execute(string.format("cd %s && { %s --quiet --arch sm_90 nosweep.lua > ns.out 2> ns.err & pid=$!; i=0; " ..
  "while [ ! -e started ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; kill -INT $pid; wait $pid; " ..
  "echo $? > ns.code; }", work, binary))
stderr = read("ns.err") or ""
T.eq(read("ns.code"), "130\n", "interrupted: " .. stderr)
T.ok(stderr:find("gpuexp: interrupted (SIGINT) before any sweep started: nothing was written", 1, true), stderr)
T.ok(not stderr:find("0 of 0", 1, true) and not stderr:find("--resume", 1, true), "no count, no --resume: " .. stderr)

-- ---- an offline plan's alloc at the script's line, its count checked as a GPU checks it ----
for _, case in ipairs({{'dev:alloc("f32", -1)', "element count must be >= 0, got -1"},
                       {'dev:alloc("nope", 4)', "unknown element type 'nope'; the types: f32, f64"},
                       {'dev:alloc("f32", 1.5)', "element count must be a whole number >= 0, got 1.5"},
                       {'dev:alloc("f32", 2^62)', "buffer of 4611686018427387904 elements is too large"},
                       {'gpuexp.host("f32", -3, {pinned = true})', "element count must be >= 0, got -3"}}) do
  write("alloc.lua", "local dev = gpuexp.device()\n" .. case[1] .. "\n")
  code, _, stderr = run("--quiet --inline --arch sm_90 alloc.lua")
  T.eq(code, 1, case[1])
  T.ok(stderr:find("^alloc.lua:2: " .. case[2]:gsub("%p", "%%%0")), case[1] .. ": at the script's line: " .. stderr)
end

-- ---- long kernel names, many parameters ----
local long = "k" .. string.rep("x", 510) -- 511 characters
write("long.lua", string.format([[
local name = "%s"
local p = gpuexp.compile{source = 'extern "C" __global__ void ' .. name .. '(float *a) { a[0] = 1; }'}
local k = p:kernel(name)
print(#k.name, #p:kernels()[1], k:resources().registers ~= nil, tostring(k):find(name, 1, true) ~= nil)
local ok, err = pcall(p.kernel, p, "k" .. string.rep("y", 5000))
print(err.message)
]], long))
code, stdout, stderr = run("--quiet --inline --arch sm_90 long.lua")
T.eq(code, 0, "a 511-character kernel name: " .. stderr)
T.ok(stdout:find("511\t511\ttrue\ttrue\n", 1, true), "whole in the kernel, the list, its resources: " .. stdout)
T.ok(stdout:find("long.lua:5: a kernel name of 5001 characters is longer than gpuexp takes (4095)", 1, true), stdout)
local params = {}
for i = 1, 300 do params[i] = "int a" .. i end
write("many.lua", string.format([[
local p = gpuexp.compile{source = 'extern "C" __global__ void k(%s) { }'}
local k = p:kernel("k")
]], table.concat(params, ", ")))
code, _, stderr = run("--quiet --inline --arch sm_90 many.lua")
T.eq(code, 1, "300 parameters: " .. stderr)
T.ok(stderr:find("^many.lua:2: kernel 'k' has more than 256 parameters, more than gpuexp takes"), stderr)

T.done()
