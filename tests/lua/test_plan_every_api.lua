-- One offline plan that calls every method a GPU script would (the LuaLS definitions' Device,
-- Buffer, Stream, Event, Sequence, Layout, Kernel, Launch and Program): each runs through with
-- launches checked and no data, or fails with a clear error at the script's own line (issue 26).
-- covers: lua/gpuexp/init.lua, lua/gpuexp/api/kernel.lua, lua/gpuexp/api/struct.lua
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

ws.write("every.lua", [[
local function same(got, want, what)
  if got ~= want then error(string.format("%s: got %s, want %s", what, tostring(got), tostring(want)), 2) end
end
-- Device
local dev = gpuexp.device()
same(#gpuexp.devices(), 1, "devices")
same(gpuexp.device_count(), 1, "device_count")
same(dev.arch, "sm_90", "arch")
same(dev:attribute("max_threads_per_block"), 1024, "attribute")
same(dev:attributes().warp_size, 32, "attributes")
same(dev:memory_info(), nil, "memory_info")
dev:synchronize()
dev:flush_l2()
local clock, why_clock = dev:sm_clock()
same(clock, nil, "sm_clock")
same(why_clock, "no SM clock in an offline plan (nothing runs on a GPU)", "sm_clock's why")
local telemetry, why_telemetry = dev:telemetry()
same(telemetry == nil and why_telemetry:match("offline plan") ~= nil, true, "telemetry")
local info = gpuexp.metadata(dev)
same(info.offline_arch, "sm_90", "metadata of the plan's device")
same(info.gpu, nil, "no GPU in a plan's metadata")
same(gpuexp.ceilings(dev), nil, "ceilings")
same(gpuexp.calibrate{device = dev}, nil, "calibrate")

-- Program and Kernel, compiled for the plan's device
local p = gpuexp.compile{device = dev, source = [==[
struct Axpy { float a; int n; const float *x; float *y; };
extern "C" __global__ void axpy(Axpy p) { int i = threadIdx.x; if (i < p.n) p.y[i] += p.a * p.x[i]; }
extern "C" __global__ void scale(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 2; }
extern "C" __global__ void gather(const Axpy *rows, int n) {}
]==]}
same(p.arch, "sm_90", "program arch")
same(#p:kernels(), 3, "kernels")
same(p:kernels{details = true}[1].name ~= nil, true, "kernels with details")
same(p:resources("scale").registers > 0, true, "program resources")
local scale = p:kernel("scale")
same(scale.name, "scale", "kernel name")
same(scale:resources().registers > 0, true, "kernel resources")
same(scale:occupancy{block = 256}.occupancy_pct, 100.0, "occupancy")
local loaded = gpuexp.load{file = "scale.ptx", device = dev}
same(loaded.kind, "ptx", "a binary loaded for the plan's device")

-- Buffers
local x, y = dev:alloc("f32", 64), dev:alloc("f32", 64)
same(x.count, 64, "count") same(x.bytes, 256, "bytes") same(#x, 64, "length") same(x.type, "f32", "type")
x:fill(1) x:random{seed = 1} y:copy_from(x) y:copy_from({1, 2, 3})
local pageable, pinned = gpuexp.host("f32", 64), gpuexp.host("f32", 64, {pinned = true})
pinned:fill(2) x:copy_from(pinned) pageable:copy_from(x)
same(y:time_copy_from(x).samples, 0, "time_copy_from: no invented time")
x:write(string.rep("\0", 8), 4)

-- Launches, bound launches, timing: checked, never timed
local n = gpuexp.i32(64)
scale:launch{grid = 1, block = 64, args = {x, n}}
same(scale:time{grid = 1, block = 64, args = {x, n}}.samples, 0, "time")
local m = scale:measure{grid = 1, block = 64, args = {x, n}}
same(m.samples, 0, "measure") same(m.median_ms, nil, "no median")
local bound = scale:bind{grid = 1, block = 64, args = {x, n}}
bound:launch()
same(bound:time().samples, 0, "bound time")
-- a Launch's methods are its own (closures over its launch): the type's prototypes run nothing
same(tostring(bound):match("^gpuexp%.Launch: "), "gpuexp.Launch: ", "a Launch is named")
same(select(2, pcall(getmetatable(bound).__index.launch, bound)):match("a Launch's methods run on the Launch"),
  "a Launch's methods run on the Launch", "the prototype's launch refuses")
same(select(2, pcall(getmetatable(bound).__index.time, bound)):match("a Launch's methods run on the Launch"),
  "a Launch's methods run on the Launch", "the prototype's time refuses")
same(select(2, scale:metrics{grid = 1, block = 64, args = {x, n}, metrics = "occupancy"}),
  "no hardware counters in an offline plan", "metrics")
same(select(2, scale:collect{grid = 1, block = 64, args = {x, n}, metrics = {"sm__cycles_elapsed.avg"}}),
  "no hardware counters in an offline plan", "collect")

-- Structs holding plan buffers: by value and uploaded
local Axpy = gpuexp.layout{{"a", "f32"}, {"n", "i32"}, {"x", "ptr"}, {"y", "ptr"}}
p:kernel("axpy"):launch{grid = 1, block = 64, args = {Axpy{a = 2, n = 64, x = x, y = y}}}
p:kernel("axpy"):launch{grid = 1, block = 64, args = {gpuexp.struct{{"f32", 2}, {"i32", 64}, {"ptr", x}, {"ptr", y}}}}
same(gpuexp.struct{{"f32", 2}, {"i32", 64}, {"ptr", x}, {"ptr", y}}.size, 24, "struct{} with plan buffers")
same(#Axpy:unpack(Axpy:pack{{a = 1, n = 2, x = x, y = y}}), 1, "pack and unpack")
local rows = Axpy:upload({{a = 1, n = 2, x = x, y = y}, {a = 3, n = 4, x = x, y = y}}, dev)
same(rows.bytes, 48, "upload")
p:kernel("gather"):launch{grid = 1, block = 1, args = {rows, gpuexp.i32(2)}}

-- Streams, events, asynchronous copies
local least, greatest = gpuexp.stream_priorities(dev)
local s = gpuexp.stream{device = dev, priority = greatest}
same(s.priority, greatest, "priority")
local start, stop = gpuexp.event{device = dev}, gpuexp.event{timing = true}
start:record(s)
y:copy_from(pinned, {stream = s})
scale:launch{grid = 1, block = 64, args = {y, n}, stream = s}
pageable:copy_from(y, {stream = s})
stop:record(s)
s:wait(stop) s:synchronize() stop:synchronize() start:record()
same(s:query(), true, "stream query") same(stop:query(), true, "event query")
same(start:elapsed_ms(stop), nil, "elapsed_ms: no invented time")

-- A sequence: its stream and device are the plan's, its launches are counted
local seq = gpuexp.sequence(function(stream)
  local joined = gpuexp.event()
  scale:launch{grid = 1, block = 64, args = {x, n}, stream = stream}
  joined:record(stream)
  s:wait(joined)
  y:copy_from(x, {stream = stream})
  scale:launch{grid = 1, block = 64, args = {y, n}, stream = s}
  bound:launch()
end, {device = dev, name = "three"})
same(seq.name, "three", "sequence name")
same(seq.device, dev, "sequence device")
same(tostring(seq.stream), "gpuexp.Stream(planned, priority 0)", "sequence stream")
seq:run()
same(seq.kernels, 3, "sequence kernels")
same(seq:time().samples, 0, "sequence time")
local sm = seq:measure{}
same(sm.samples, 0, "sequence measure") same(sm.kernels, 3, "sequence measure kernels")
same(select(2, seq:metrics{metrics = "occupancy"}), "no hardware counters in an offline plan", "sequence metrics")

-- scalars of every type
for _, t in ipairs{"f32", "f64", "i32", "u32", "i64", "u64", "i8", "u8", "i16", "u16", "f16", "bf16", "fp8_e4m3", "fp8_e5m2"} do
  same(gpuexp[t](1).value, 1, t)
end
same(gpuexp.from_bits("f16", 0x3c00).value, 1.0, "from_bits")
same(gpuexp.bytes("abcd").size, 4, "bytes")

-- a sweep recording the plan's device, its points running a sequence
gpuexp.sweep{name = "planned", device = dev, out = "planned.csv", axes = {{"block", {64, 128}}}, run = function(point)
  local q = gpuexp.sequence(function(stream)
    scale:launch{grid = 1, block = point.block, args = {x, n}, stream = stream}
  end)
  local result = q:measure{}
  return {kernels = q.kernels, median_ms = result.median_ms}
end}

x:free() s:destroy() start:destroy()
print("every API ran through")
]])
ws.write("scale_src.lua", [[
local p = gpuexp.compile{source = 'extern "C" __global__ void scale(float *x, int n) {}'}
local f = assert(io.open("scale.ptx", "w")) f:write(p.ptx) f:close()
]])
local code, out, err = ws.run("--arch sm_90 scale_src.lua")
T.eq(code, 0, "PTX written for gpuexp.load: " .. err)
code, out, err = ws.run("--arch sm_90 every.lua")
T.eq(code, 0, "the plan runs every API through: " .. err)
T.ok(out:find("every API ran through", 1, true), "the script reached its end: " .. out)
T.eq(ws.read("planned.csv"), "block,kernels,status,error\n64,1,ok,\n128,1,ok,\n", "a plan's sweep: kernels counted, no time")
T.ok(ws.read("planned.meta.json"):find('"offline_arch":"sm_90"', 1, true), "its metadata names the plan's architecture")

-- what cannot run in a plan says why, at the script's line (never a nil method or a library line)
local prelude = "local dev = gpuexp.device()\nlocal x = dev:alloc('f32', 4)\n"
local kernel = "local k = gpuexp.compile{source = 'extern \"C\" __global__ void k(float *x, int n) {}'}:kernel('k')\n"
local cases = {
  {prelude .. "print(x:get(1))", "script.lua:3: no data: this buffer belongs to an offline plan"},
  {prelude .. "x:set(1, 2)", "script.lua:3: no data"},
  {prelude .. "print(x:to_table())", "script.lua:3: no data"},
  {prelude .. "print(x:compare({1, 2, 3, 4}))", "script.lua:3: no data"},
  {prelude .. "print(x:read())", "script.lua:3: no data"},
  {prelude .. "print(x[1])", "script.lua:3: no data"},
  {prelude .. "local L = gpuexp.layout{{'a', 'f32'}}\nprint(L:download(L:upload({{a = 1}})))", "script.lua:4: no data"},
  -- a sequence's function is checked with the plan's stream, as on a GPU
  {prelude .. "local q = gpuexp.sequence(function(s)\n  s:wait(5)\nend)\nq:run()",
    "script.lua:4: stream:wait: expected a gpuexp.event{} of this plan, got number"},
  {prelude .. kernel .. "local q = gpuexp.sequence(function(s)\n  k:launch{grid = 1, block = 1, args = {x}, stream = s}\nend)\n" ..
    "print(q:time().samples)", "script.lua:5: kernel 'k' takes 2 arguments"},
  {prelude .. "gpuexp.sequence(function() end, {device = 3})", "script.lua:3: bad argument"},
  {prelude .. "gpuexp.compile{device = {}, source = ''}", "script.lua:3: bad argument"},
  {prelude .. "gpuexp.stream{device = 0}", "script.lua:3: stream: 'device' must be gpuexp.device() of this plan, got number"},
  {prelude .. "gpuexp.event{device = x}", "script.lua:3: event: 'device' must be gpuexp.device() of this plan, got table"},
}
for i, case in ipairs(cases) do
  ws.write("script.lua", case[1])
  code, out, err = ws.run("--arch sm_90 script.lua")
  T.ok(code == 1 and err:find(case[2], 1, true), "case " .. i .. ": expected '" .. case[2] .. "', got " .. code .. ": " .. err)
  T.ok(not err:find("nil value", 1, true), "case " .. i .. ": no nil-method error: " .. err)
end
T.done()
