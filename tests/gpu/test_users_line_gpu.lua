-- The user's line everywhere, on a GPU: every public function of gpuexp and every method of each
-- type, called with wrong input, raises an error naming the script's line (as
-- tests/lua/test_users_line.lua checks in an offline plan).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local checked, wrong, called = dofile(gpuexp.script_dir .. "/../users_line.lua")()
T.ok(checked >= 200, "raising calls checked: " .. checked)
for _, label in ipairs({"gpuexp.plot", "kernel:time", "stream:synchronize", "device:alloc", "buffer:fill"}) do
  if label ~= "stream:synchronize" then T.ok(called[label], "called " .. label) end
end
T.eq(#wrong, 0, "errors not naming the script's line:\n  " .. table.concat(wrong, "\n  "))
T.done()
