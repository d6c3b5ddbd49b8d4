-- Faults on a real GPU, through the supervisor: a sticky illegal address and a trap end their
-- points as `crashed` rows and every other point runs; a kernel that never returns becomes a
-- `timeout` row within the limit plus 2 s and the later points run.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local dir = gpuexp.script_dir .. "/faults"
local work = T.temporary_directory()

local function run(script, extra)
  local started = gpuexp.clock()
  local ok, _, code = os.execute(string.format("%s --quiet %s/%s %s/out.csv %s > %s/stdout 2> %s/stderr", binary, dir,
    script, work, extra or "", work, work))
  local rows = gpuexp.csv.read(work .. "/out.csv")
  return rows, code, gpuexp.clock() - started
end

local rows, code = run("illegal_address.lua")
T.eq(code, 5, "exit code when a point crashed")
T.eq(#rows, 6, "every point has a row")
for i, row in ipairs(rows) do
  T.eq(row.status, i == 3 and "crashed" or "ok", "status of point " .. i)
end
T.ok(rows[3].error:find("CUDA_ERROR_ILLEGAL_ADDRESS", 1, true), "the CUDA error is named: " .. rows[3].error)
T.ok(rows[3].error:find("kernel 'store', grid 1x1x1, block 256x1x1", 1, true), "the launch is named: " .. rows[3].error)
T.eq(rows[4].value, 7, "the point after the crash ran on a fresh context")
io.stderr:write("crashed row: " .. rows[3].error .. "\n")

rows, code = run("illegal_address.lua", "trap")
T.eq(rows[3].status, "crashed", "illegal address"); T.eq(rows[5].status, "crashed", "trap")
T.ok(rows[5].error:find("CUDA_ERROR_LAUNCH_FAILED", 1, true) or rows[5].error:find("TRAP", 1, true),
  "the trap is named: " .. rows[5].error)
T.eq(rows[6].status, "ok", "after the trap")
io.stderr:write("trap row: " .. rows[5].error .. "\n")

local elapsed
rows, code, elapsed = run("spin.lua")
T.eq(code, 5, "exit code when a point timed out")
T.eq(rows[2].status, "timeout", "the spinning point")
T.ok(rows[2].error:find("kernel 'spin'", 1, true), "the spinning kernel is named: " .. rows[2].error)
T.eq(rows[3].status, "ok", "point 3 ran after the timeout"); T.eq(rows[4].status, "ok", "point 4")
local meta = gpuexp.csv and require("cjson").decode(io.open(work .. "/out.meta.json"):read("a"))
io.stderr:write(string.format("spin run: %.2f s in all (limit 3 s)\n", elapsed))
T.ok(elapsed < 3 + 2 + 4, "the timeout ended the point within its limit plus 2 s (plus two worker starts)")
T.ok(meta.parts[1].restarts and #meta.parts[1].restarts == 1, "the restart is recorded in the metadata")
T.done()
