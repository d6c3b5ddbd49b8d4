-- --trace on a GPU: a script's kernel, copies and synchronizations land in a timeline that follows
-- the Trace Event Format, with the launch's grid and block and the copies' bytes; no file without
-- --trace.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local schema = dofile(gpuexp.script_dir .. "/../trace/schema.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work = ws.dir
ws.write("traced.lua", [[
local dev = gpuexp.device()
local k = gpuexp.compile{source = 'extern "C" __global__ void traced(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1; }'}:kernel("traced")
local x = dev:alloc("f32", 1 << 20):fill(0)
local h = gpuexp.host("f32", 1 << 20, {pinned = true}):fill(2)
for _ = 1, 3 do k:launch{grid = 4096, block = 256, args = {x}} end
x:copy_from(h)
dev:synchronize()
]])
local function run(extra) return (ws.run("--quiet " .. extra .. " traced.lua")) end
T.eq(run("--trace timeline.json"), 0, "the traced run")
local file = assert(io.open(work .. "/timeline.json"))
local events, why = schema.check(file:read("a"))
file:close()
T.ok(events, "the trace follows the format: " .. tostring(why))
local kernels, copies, syncs = {}, {}, 0
for _, e in ipairs(events) do
  if e.cat == "kernel" and e.name == "traced" then kernels[#kernels + 1] = e end
  if e.cat == "memcpy" then copies[#copies + 1] = e end
  if e.cat == "sync" then syncs = syncs + 1 end
end
T.eq(#kernels, 3, "three launches of the kernel")
T.eq(kernels[1].args.grid[1], 4096, "grid in the event"); T.eq(kernels[1].args.block[1], 256, "block in the event")
T.ok(kernels[1].dur > 0 and kernels[2].ts >= kernels[1].ts, "durations and order")
local pinned
for _, c in ipairs(copies) do if c.name == "memcpy HtoD pinned to device" and c.args.bytes == 4 * (1 << 20) then pinned = c end end
T.ok(pinned, "the 4 MB pinned copy is in the trace")
T.ok(syncs >= 1, "the synchronization is in the trace")
os.remove(work .. "/timeline.json")
T.eq(run(""), 0, "an untraced run")
T.ok(not io.open(work .. "/timeline.json"), "no trace without --trace")
-- the trace's output under the rules of every output (docs/explanation/threat-model.md): a planted
-- timeline.json.tmp link is never written through; a FIFO or a link as the trace is refused
ws.write("victim.txt", "precious\n")
os.execute(string.format("ln -s %s/victim.txt %s/timeline.json.tmp", work, work))
T.eq(run("--inline --trace timeline.json"), 7, "an --inline trace beside a planted link: refused")
T.eq(ws.read("victim.txt"), "precious\n", "the planted link's target untouched")
os.execute(string.format("rm %s/timeline.json.tmp && mkfifo %s/fifo.json && ln -s victim.txt %s/link.json", work, work, work))
local code, _, stderr = ws.run("--quiet --inline --trace fifo.json traced.lua")
T.ok(code == 2 and stderr:find("--trace fifo.json: it is not a regular file", 1, true), "a FIFO as the trace: " .. stderr)
code, _, stderr = ws.run("--quiet --inline --trace link.json traced.lua")
T.ok(code == 2 and stderr:find("it is not a regular file", 1, true), "a link as the trace: " .. stderr)
T.eq(ws.read("victim.txt"), "precious\n", "the link's target untouched")
T.done()
