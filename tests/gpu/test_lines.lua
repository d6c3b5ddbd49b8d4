-- Line profiles on a GPU (issue 38): kernel:line_profile's SASS counts against the range
-- profiler's independent count (every warp instruction of the launch, and a line's exact count),
-- its PC samples (the division line is where the time is), a base and a new build ranked (the
-- added line first), and a run with --lines DIR compared by gpuexp lines. Where CUPTI refuses a
-- stage (a virtual GPU without profiling) the test says so and checks the refusal is worded, not
-- raised. Prints what it measured (the lead's GPU runs keep the log).
-- usage: gpuexp test_lines.lua GPUEXP
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local binary = arg[1] or gpuexp.executable

local BASE = [[
extern "C" __global__ void lines_kernel(float *out, const float *in, int n, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = in[i];
    for (int k = 0; k < iters; ++k) {
        acc = acc * 0.999f + 0.5f;
        acc = acc * 0.998f + in[(i + k * 32) & (n - 1)] * 0.001f;
    }
    out[i] = acc;
}
]]
-- the new build: a division added in the loop (line 8, before the load's line), the rest as it was
local NEW = BASE:gsub("        acc = acc %* 0%.998f", "        acc = acc / (1.0f + (float)(k & 7));\n%0", 1)
local DIVISION_LINE = 8

local n, iters = 1 << 20, 200
local x = dev:alloc("f32", n):random{seed = 5, min = -1, max = 1}
local y = dev:alloc("f32", n)
local launch = {grid = n // 256, block = 256, args = {y, x, gpuexp.i32(n), gpuexp.i32(iters)}}
local base = gpuexp.compile{source = BASE, name = "lines_kernel.cu", options = {"-lineinfo"}}:kernel("lines_kernel")
local new = gpuexp.compile{source = NEW, name = "lines_kernel.cu", options = {"-lineinfo"}}:kernel("lines_kernel")

local started = gpuexp.clock()
local profile, why = base:line_profile{grid = launch.grid, block = launch.block, args = launch.args, label = "base"}
T.ok(profile, "a profile: " .. tostring(why))
print(string.format("base profile: %d instructions, SASS %s (%.2f s), PC sampling %s (%d launch(es), %s samples, %.2f s); %.1f s",
  #profile.instructions, tostring(profile.sass.done), profile.sass.seconds or 0, tostring(profile.pc.done),
  profile.pc.launches or 0, tostring(profile.pc.samples), profile.pc.seconds or 0, gpuexp.clock() - started))
if profile.sass.error then print("SASS metrics: " .. profile.sass.error) end
if profile.pc.error then print("PC sampling: " .. profile.pc.error) end
T.ok(profile.line_info, "mapped to lines: " .. tostring(profile.map_error))
T.ok(profile.sources["lines_kernel.cu"] == BASE, "the program's source kept for the lines' text")
T.ok(profile.time_ms and profile.time_ms > 0, "the launch timed beside it")

local function per_line(p, what)
  local lines = {}
  for _, r in ipairs(p.instructions) do
    if r.line then
      local v = what(r)
      if v then lines[r.line] = (lines[r.line] or 0) + v end
    end
  end
  return lines
end

local new_profile = assert(new:line_profile{grid = launch.grid, block = launch.block, args = launch.args, label = "new"})
local diff = gpuexp.line_diff(profile, new_profile)
io.write(diff.text)
T.eq(diff.rows[1].new and diff.rows[1].new.line, DIVISION_LINE, "the added division ranks first")
T.eq(diff.rows[1].kind, "added", "as an added line")
if profile.pc.done and (profile.pc.samples or 0) > 0 then
  T.eq(diff.basis, "samples", "ranked by PC samples")
  local samples = per_line(new_profile, function(r)
    local s = 0
    for _, v in pairs(r.samples or {}) do s = s + v end
    return s
  end)
  local best, most = nil, -1
  for line, s in pairs(samples) do if s > most then best, most = line, s end end
  T.eq(best, DIVISION_LINE, "the new build's most sampled line is the division")
  T.ok(diff.total_pct > 5, "the samples moved with the time: " .. diff.total_pct)
  T.ok(diff.accounted, "the division accounts for it: " .. diff.summary.accounting)
else
  print("no PC samples here (" .. tostring(profile.pc.error) .. "): ranked by " .. diff.basis)
end

if profile.sass.done then
  -- the warp instructions of the whole launch, counted by the range profiler in its own passes
  -- (after both line profiles: the range profiler stays enabled on the context once used)
  local counted = base:collect{grid = launch.grid, block = launch.block, args = launch.args,
    metrics = {"smsp__inst_executed.sum", "smsp__thread_inst_executed.sum"}}
  local total, threads = 0, 0
  for _, r in ipairs(profile.instructions) do
    total = total + (r.counts and r.counts[1] or 0)
    threads = threads + (r.counts and r.counts[2] or 0)
  end
  print(string.format("SASS: %d warp instructions (range profiler: %d), %d thread instructions (%d)", total,
    counted and counted["smsp__inst_executed.sum"] or -1, threads, counted and counted["smsp__thread_inst_executed.sum"] or -1))
  T.eq(profile.metrics[1], "inst_executed", "the first metric")
  if counted then
    T.near(total / counted["smsp__inst_executed.sum"], 1, 1e-3, "SASS records sum to the launch's warp instructions")
    T.near(threads / counted["smsp__thread_inst_executed.sum"], 1, 1e-3, "and to its thread instructions")
  end
  -- the loop's first line: every warp runs it iters times, each time the same instructions
  local warps = n // 32
  local executed = per_line(profile, function(r) return r.counts and r.counts[1] end)
  local statics = per_line(profile, function() return 1 end)
  T.ok((executed[7] or 0) > 0 and executed[7] % warps == 0, "line 7 runs whole warps: " .. tostring(executed[7]))
  local lanes = per_line(profile, function(r) return r.counts and r.counts[2] end)
  T.eq(lanes[7], 32 * executed[7], "no divergence on line 7: 32 lanes an instruction")
  print(string.format("line 7: %d executions of %d instructions (%d per warp)", executed[7], statics[7], executed[7] // warps))
else
  T.ok(profile.sass.error and profile.sass.error:find("CUPTI", 1, true), "a SASS refusal is worded: " .. tostring(profile.sass.error))
end

-- a run with --lines: the profile written, gpuexp lines reads two such folders
local ws = T.workspace(binary)
ws.write("k.cu", BASE)
ws.write("k_new.cu", NEW)
ws.write("point.lua", [[
local file = arg[1]
local k = gpuexp.compile{file = file, name = "lines_kernel.cu"}:kernel("lines_kernel")
local dev = gpuexp.device()
local n = 1 << 20
local x = dev:alloc("f32", n):random{seed = 5, min = -1, max = 1}
local y = dev:alloc("f32", n)
gpuexp.sweep{name = "p", axes = {{"iters", {100, 200}}}, run = function(p)
  local t = k:time{grid = n // 256, block = 256, args = {y, x, gpuexp.i32(n), gpuexp.i32(p.iters)}, reps = 10}
  return {median_ms = t.median_ms}
end}
]])
local code, out, err = ws.run("--quiet --lines base --only iters=200 --out b.csv point.lua k.cu")
T.eq(code, 0, "the base run: " .. err)
code, out, err = ws.run("--quiet --lines new --only iters=200 --out n.csv point.lua k_new.cu")
T.eq(code, 0, "the new run: " .. err)
code, out, err = ws.run("lines base new")
print(out)
T.eq(code, 0, "gpuexp lines: " .. err)
T.ok(out:find("lines_kernel.cu:" .. DIVISION_LINE .. " ", 1, true), "the division's line in the printed table")
code, out = ws.run("lines --json base new")
T.ok(out:find('"accounting"', 1, true), "JSON: the summaries")
T.done()
