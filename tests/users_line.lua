-- Every public Lua function, called with wrong input, raises an error that names the calling
-- script's line (never a line inside lua/gpuexp/ or no line at all). Shared by
-- tests/lua/test_users_line.lua (an offline plan) and tests/gpu/test_users_line_gpu.lua (a GPU):
-- returns the number of raising calls checked and the list of calls whose error did not.
return function()
  local bad_inputs = {{}, {12345}, {"bogus"}, {{bogus_key = 1}}}
  local wrong, checked, called = {}, 0, {}
  local pattern = "^[^:]*users_line%.lua:%d+: " -- the calls below are this file's lines
  local function try(label, fn)
    called[label] = true
    for _, input in ipairs(bad_inputs) do
      local ok, err = pcall(function() local result = fn(input[1]); return result end)
      if not ok then
        checked = checked + 1
        local text = type(err) == "table" and err.message or tostring(err)
        if not text:find(pattern) then wrong[#wrong + 1] = label .. "(" .. tostring(input[1]) .. "): " .. text end
      end
    end
  end
  -- gpuexp.*: every function but those that raise or wait by design
  local by_design = {sleep = true, error = true, check = true}
  -- on a GPU, gpuexp.calibrate() with no options measures for minutes: its checks run in the plan
  if not gpuexp.plan then by_design.calibrate = true end
  local names = {}
  for name, value in pairs(gpuexp) do
    if type(value) == "function" and not name:find("^_") and not by_design[name] then names[#names + 1] = name end
  end
  table.sort(names)
  for _, name in ipairs(names) do try("gpuexp." .. name, gpuexp[name]) end
  for name, value in pairs(gpuexp.csv) do
    if type(value) == "function" then try("gpuexp.csv." .. name, value) end
  end
  -- the methods of each type the API hands out
  local device = gpuexp.device()
  local program = gpuexp.compile{source = [[
extern "C" __global__ void k(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 1; }]]}
  local kernel = program:kernel("k")
  local buffer = device:alloc("f32", 32)
  local objects = {device = device, program = program, kernel = kernel, buffer = buffer,
    host = gpuexp.host("f32", 32), launch = kernel:bind{grid = 1, block = 32, args = {buffer, gpuexp.i32(32)}},
    sequence = gpuexp.sequence(function(s) s:launch(kernel, {grid = 1, block = 32, args = {buffer, gpuexp.i32(32)}}) end)}
  if not gpuexp.plan then objects.stream, objects.event = gpuexp.stream{}, gpuexp.event{} end
  local method_names = {"alloc", "attribute", "attributes", "synchronize", "memory_info", "sm_clock", "telemetry",
    "flush_l2", "kernel", "kernels", "resources", "launch", "time", "bind", "occupancy", "measure", "metrics", "fill",
    "random", "copy_from", "get", "set", "to_table", "compare", "free", "time_copy_from", "run", "record", "query",
    "elapsed_ms", "wait"}
  local no_input = {synchronize = true, memory_info = true, attributes = true, kernels = true, free = true,
    flush_l2 = true, telemetry = true, query = true, sm_clock = true, record = true}
  for object_name, object in pairs(objects) do
    for _, method in ipairs(method_names) do
      local found, fn = pcall(function() return object[method] end)
      if found and type(fn) == "function" and not no_input[method] then
        try(object_name .. ":" .. method, function(x) local result = fn(object, x); return result end)
      end
    end
  end
  return checked, wrong, called
end
