-- No silent failure (issue 28): what used to exit 0 with its message only in a CSV, or draw a
-- series of nil, is now a documented exit code with the message on stderr, without a terminal.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local ws = T.workspace(assert(arg[1], "the gpuexp binary is the first argument"))
local run, write, read = ws.run, ws.write, ws.read

-- the README's first sweep, as written: in an offline plan its timing is nil at every point
write("sweep.lua", [[
local dev = gpuexp.device()
local program = gpuexp.compile{source = [=[
extern "C" __global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }]=]}
local kernel = program:kernel("scale")
local n = 1 << 20
local x = dev:alloc("f32", n)
local case = arg[1]
gpuexp.sweep{
  name = "scale", axes = {{"stride", {1, 2}}},
  columns = {"median_ms", "gbps"},
  run = function(p)
    local args = {x, gpuexp.i32(n)}
    if case == "count" then args = {x} elseif case == "plain" then args = {x, n} end
    if case == "strid" then return {median_ms = p.strid} end
    if case == "rep" then local m = kernel:measure{grid = n // 256, block = 256, args = args, rep = 10}; return m end
    local t = kernel:time{grid = n // 256, block = 256, args = args}
    return {median_ms = t.median_ms, gbps = 8 * n / t.median_ms / 1e6}
  end,
}
]])
for _, mode in ipairs({"", "--inline "}) do
  local code, _, stderr = run("--arch sm_90 --quiet " .. mode .. "-o plan.csv sweep.lua")
  T.eq(code, 5, mode .. "every point failed: exit 5, " .. stderr)
  T.ok(stderr:find("gpuexp: 2 of 2 points failed (2 error); their rows say why (status and error columns of plan.csv)",
    1, true), mode .. "the count: " .. stderr)
  T.ok(stderr:find("gpuexp: the first: sweep 'scale' point stride=1 (error): sweep.lua:18: attempt to perform " ..
    "arithmetic on a nil value (field 'median_ms')", 1, true), mode .. "the first failure and its line: " .. stderr)
  T.ok(stderr:find("an offline plan measures nothing, so timings (t.median_ms, ...) are nil", 1, true),
    mode .. "the plan's reason: " .. stderr)
end
-- the other cases of the issue: each point fails, the run exits 5 and stderr says why
local cases = {
  count = "sweep.lua:17: kernel 'scale' takes 2 arguments (float*, int), got 1", -- the source's C types
  plain = "sweep.lua:17: argument 2 of 'scale' is a number; pass a device buffer or a typed scalar such as " ..
    "gpuexp.i32(1048576) (the kernel expects int (PTX .u32))",
  rep = "sweep.lua:16: measure: unknown option 'rep' (known: args, block,",
  strid = "sweep.lua:15: the point has no axis 'strid' (did you mean 'stride'?); its axes: stride",
}
for case, needle in pairs(cases) do
  local code, _, stderr = run("--arch sm_90 --quiet -o " .. case .. ".csv sweep.lua " .. case)
  T.eq(code, 5, case .. ": exit 5, " .. stderr)
  T.ok(stderr:find(needle, 1, true), case .. ": " .. stderr)
end

-- a sweep whose failed points are results (gpuexp.tune's rounds: a configuration that cannot launch)
-- keeps their rows and ends 0, supervised or inline; the same sweep without the option exits 5
write("expected.lua", [[
gpuexp.sweep{name = "expected", axes = {{"block", {256, 2048}}}, expect_failures = arg[1] == "yes",
  run = function(p) if p.block > 1024 then error("a block of " .. p.block .. " threads cannot launch") end
    return {value = p.block} end}
]])
for _, mode in ipairs({"", "--inline "}) do
  local code, _, stderr = run("--quiet " .. mode .. "-o expected.csv expected.lua yes")
  T.eq(code, 0, mode .. "expected failures: exit 0, " .. stderr)
  T.ok(read("expected.csv"):find("2048,,error,", 1, true), mode .. "the failed point's row is kept")
  code, _, stderr = run("--quiet " .. mode .. "-o unexpected.csv expected.lua no")
  T.eq(code, 5, mode .. "the same failure, not expected: exit 5, " .. stderr)
end

-- --only naming a value no point has: refused like a misspelled axis, nothing written
write("fine.lua", [[
gpuexp.sweep{name = "fine", axes = {{"stride", {1, 2, 4}}}, run = function(p) return {value = p.stride} end}
]])
T.eq(run("--arch sm_90 --quiet -o fine.csv fine.lua"), 0, "a good run")
local before = read("fine.csv")
for _, mode in ipairs({"", "--inline "}) do
  local code, _, stderr = run("--arch sm_90 --quiet " .. mode .. "--only stride=3 -o fine.csv fine.lua")
  T.eq(code, 2, mode .. "--only matching nothing: exit 2, " .. stderr)
  T.ok(stderr:find("--only matches no point of sweep 'fine' (its points: stride = 1|2|4); nothing was run or written",
    1, true), mode .. "says which values there are: " .. stderr)
  T.eq(read("fine.csv"), before, mode .. "the CSV is not cut to its header")
end

-- compare of runs with no values (two offline plans) refuses
write("timed.lua", [[
gpuexp.sweep{name = "t", axes = {{"n", {1, 2}}}, columns = {"median_ms"}, run = function(p) return {} end}
]])
T.eq(run("--arch sm_90 --quiet -o a.csv timed.lua"), 0, "plan a")
T.eq(run("--arch sm_90 --quiet -o b.csv timed.lua"), 0, "plan b")
local code, stdout, stderr = run("compare a.csv b.csv")
T.eq(code, 2, "compare with no values: " .. stdout .. stderr)
T.ok(stderr:find("no point of b.csv or a.csv has a value in median_ms", 1, true), "says so: " .. stderr)
T.ok(not stdout:find("0 slower", 1, true), "no verdict line: " .. stdout)

-- plot --by a column the CSV lacks refuses, naming the columns; nothing drawn
write("p.csv", "n,stride,ms\n1,1,2\n2,1,3\n")
code, _, stderr = run("plot p.csv --x n --y ms --by strid -o p.svg")
T.eq(code, 2, "plot --by unknown: " .. stderr)
T.ok(stderr:find("plot: by 'strid' is not a column of p.csv (did you mean 'stride'?); its columns: n, stride, ms", 1,
  true), "names the columns: " .. stderr)
T.ok(not stderr:find("traceback"), "no traceback: " .. stderr)
T.eq(read("p.svg"), nil, "nothing drawn")

-- the commands that need a GPU say what to do without one (no traceback)
if not pcall(gpuexp.device_count) then
  code, _, stderr = run("plot --roofline p.csv --flops n --bytes n --time-ms ms -o r.svg")
  T.eq(code, 2, "roofline without peaks or a GPU: " .. stderr)
  T.ok(stderr:find("roofline plot: give --peak-gflops and --peak-gbps (no GPU here", 1, true) and
    not stderr:find("traceback"), "a hint to give the peaks: " .. stderr)
  code, _, stderr = run("calibrate")
  T.eq(code, 3, "calibrate without a GPU: " .. stderr)
  T.ok(stderr:find("--peak-gflops G --peak-gbps B", 1, true) and not stderr:find("traceback"), "the hint: " .. stderr)
end
T.done()
