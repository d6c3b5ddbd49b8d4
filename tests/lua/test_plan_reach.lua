-- Offline plans go as far as a GPU script does (issue 26): plan buffers in struct fields,
-- layout:upload and download, streams, events, sequences and asynchronous copies run through,
-- launches checked, no data; a mistake is reported at the script's own line.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

ws.write("script.lua", [[
local dev = gpuexp.device()
local p = gpuexp.compile{source = [==[
struct Axpy { float a; int n; float *x; float *y; };
extern "C" __global__ void axpy(Axpy p) { int i = threadIdx.x; if (i < p.n) p.y[i] += p.a * p.x[i]; }
extern "C" __global__ void scale(float *x, int n) { x[threadIdx.x] *= n; }
]==]}
local x, y = dev:alloc("f32", 100), dev:alloc("f32", 100)
local Axpy = gpuexp.layout{{"a", "f32"}, {"n", "i32"}, {"x", "ptr"}, {"y", "ptr"}}
p:kernel("axpy"):launch{grid = 1, block = 128, args = {Axpy{a = 2, n = 100, x = x, y = y}}}
print("struct with plan buffers: launched")
local rows = Axpy:upload({{a = 1, n = 2, x = x, y = y}, {a = 3, n = 4, x = x, y = y}})
print("upload", rows.count, rows.bytes)
local s = gpuexp.stream{priority = -1}
local start, stop = gpuexp.event(), gpuexp.event()
local pinned, pageable = gpuexp.host("f32", 100, {pinned = true}), gpuexp.host("f32", 100)
start:record(s)
y:copy_from(pinned, {stream = s})
p:kernel("scale"):launch{grid = 1, block = 32, args = {y, gpuexp.i32(3)}, stream = s}
pageable:copy_from(y, {stream = s})
stop:record(s)
s:wait(stop); s:synchronize(); stop:synchronize()
print("stream", s.priority, s:query(), stop:query(), start:elapsed_ms(stop))
local sequence = gpuexp.sequence(function()
  p:kernel("scale"):launch{grid = 1, block = 32, args = {x, gpuexp.i32(2)}, stream = s}
  y:copy_from(x, {stream = s})
end)
sequence:run()
local m = sequence:measure{}
print("sequence", m.samples, m.median_ms)
print("priorities", gpuexp.stream_priorities())
local half = gpuexp.compile{source = [==[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void fill(__half *out, __half v, __nv_bfloat16 w, short s, int n) {}
]==]}
half:kernel("fill"):launch{grid = 1, block = 32, args = {dev:alloc("f16", 32), gpuexp.f16(1.5), gpuexp.bf16(2), gpuexp.i16(-3),
  gpuexp.i32(32)}}
print("half scalars: launched")
]])
local code, out, err = ws.run("--arch sm_90 script.lua")
T.eq(code, 0, "the plan runs through: " .. err)
T.ok(out:find("struct with plan buffers: launched", 1, true), "a struct holding plan buffers is laid out and launched")
T.ok(out:find("upload\t48\t48", 1, true), "layout:upload gives a plan buffer of the rows' bytes: " .. out)
T.ok(out:find("stream\t-1\ttrue\ttrue\tnil", 1, true), "streams and events run through, no invented time: " .. out)
T.ok(out:find("sequence\t0\tnil", 1, true), "a sequence on a stream is checked, not timed: " .. out)
T.ok(out:find("half scalars: launched", 1, true), "f16, bf16 and i16 scalars fit __half, __nv_bfloat16 and short parameters")

-- mistakes are the script's, at its line
local cases = {
  {"local y = gpuexp.device():alloc('f32', 4)\nlocal L = gpuexp.layout{{'p', 'ptr'}}\nprint(L:download(L:upload({{p = y}})))",
    "script.lua:3: no data: this buffer belongs to an offline plan"},
  {"local s = gpuexp.stream()\ns:wait(5)", "script.lua:2: stream:wait: expected a gpuexp.event{} of this plan, got number"},
  {"local e = gpuexp.event()\ne:record('x')", "script.lua:2: event:record: expected a gpuexp.stream{} of this plan, got string"},
  {"local s = gpuexp.stream{priorty = 1}", "script.lua:1: stream: unknown option 'priorty' (did you mean 'priority'?)"},
  {"local y = gpuexp.device():alloc('f32', 4)\ngpuexp.host('f32', 8):copy_from(y, {count = 8})",
    "script.lua:2: copy_from: 8 elements at 0 from a buffer of 4 do not fit in 8 at 0"},
  {"local y = gpuexp.device():alloc('i32', 4)\ngpuexp.host('f32', 4):copy_from(y)",
    "script.lua:2: copy_from: cannot copy i32 elements into a f32 buffer"},
  {"local p = gpuexp.compile{source = 'extern \"C\" __global__ void k(float *x) {}'}\n" ..
   "p:kernel('k'):launch{grid = 1, block = 32, args = {gpuexp.device():alloc('f32', 1)}, stream = 7}",
    "script.lua:2: launch: 'stream' must be a gpuexp.stream{}, got number"},
  {"local p = gpuexp.compile{source = '#include <cuda_fp16.h>\\nextern \"C\" __global__ void k(__half h) {}'}\n" ..
   "p:kernel('k'):launch{grid = 1, block = 1, args = {gpuexp.f32(1)}}",
    "script.lua:2: argument 1 of 'k' is f32, but the kernel expects"},
  {"local y = gpuexp.device():alloc('f32', 4)\ny:write(string.rep('x', 20))",
    "script.lua:2: write: 20 bytes at offset 0 do not fit in 16 bytes"},
}
for i, case in ipairs(cases) do
  ws.write("script.lua", case[1])
  code, out, err = ws.run("--arch sm_90 script.lua")
  T.ok(code ~= 0 and err:find(case[2], 1, true), "case " .. i .. ": expected '" .. case[2] .. "', got: " .. err)
end
T.done()
