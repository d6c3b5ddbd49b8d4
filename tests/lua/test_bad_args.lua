-- No Lua call may crash the process: every function and method with hostile arguments must
-- return or raise, never abort. Run without a GPU, the device paths raise driver errors.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")

local junk = {nil, true, false, 0, -1, 1.5, 2^63, -2^63, math.huge, 0/0, "", "f32", "sm_90", {}, {1, 2},
  {grid = 1}, function() end, io.stdout, gpuexp.f32(1), coroutine.create(function() end)}
local host = gpuexp.host("f32", 4)
local program = gpuexp.compile{source = 'extern "C" __global__ void k(float *o, int n) { o[0] = n; }', arch = "sm_80"}
local targets = {
  {gpuexp, {"device", "devices", "device_count", "compile", "host", "stats", "hash", "resolve", "mkdir", "sweep",
    "points", "f32", "f64", "i32", "u32", "i64", "u64", "u8", "i8", "error", "check", "versions", "clock",
    "print_table", "metadata"}},
  {host, {"get", "set", "fill", "random", "copy_from", "to_table", "compare"}},
  {program, {"kernel", "kernels", "resources"}},
}
local calls, raised = 0, 0
local dir = T.temporary_directory()
for _, target in ipairs(targets) do
  local object, names = target[1], target[2]
  for _, name in ipairs(names) do
    local fn = object[name]
    T.ok(type(fn) == "function", "has " .. name)
    for i = 1, #junk + 1 do
      for j = 1, #junk + 1, 3 do
        local a, b = junk[i], junk[j]
        if name == "mkdir" and (type(a) == "string" or type(a) == "number") then a = dir .. "/" .. tostring(a) end
        if name == "print_table" then break end
        local ok
        if object == gpuexp then ok = pcall(fn, a, b) else ok = pcall(fn, object, a, b) end
        calls = calls + 1
        if not ok then raised = raised + 1 end
      end
    end
  end
end
T.ok(calls > 1000, "calls made: " .. calls)
T.ok(raised > calls / 2, "most hostile calls raise: " .. raised)
-- methods called on the wrong object type
T.raises(function() host.fill(program, 1) end, "gpuexp.Buffer expected")
T.raises(function() program.kernels(host) end, "gpuexp.Program expected")
T.done()
