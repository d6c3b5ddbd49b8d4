-- The user's line everywhere, in an offline plan: every public function of gpuexp and every method
-- of each type, called with wrong input, raises an error naming the script's line (the calls run
-- in a child `gpuexp --arch sm_90`, as a user's plan runs). Also the calls the issue named:
-- gpuexp.calibrate{}, gpuexp.diagnose(nil, ...), dev:sm_clock() offline.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")

if arg[1] ~= "--child" then
  local ws = T.workspace(arg[1])
  local code, stdout, stderr = ws.run("--arch sm_90 --quiet --inline " .. gpuexp._realpath(gpuexp.script) .. " --child")
  T.eq(code, 0, "the child's checks: " .. stdout .. stderr)
  T.ok(stdout:find("ok users_line", 1, true), "the child ran to its end: " .. stdout)
  T.done()
  return
end

local checked, wrong, called = dofile(gpuexp.script_dir .. "/../users_line.lua")()
T.ok(checked >= 200, "raising calls checked: " .. checked)
for _, label in ipairs({"gpuexp.plot", "gpuexp.ceilings", "gpuexp.metadata", "gpuexp.calibrate", "gpuexp.diagnose",
  "gpuexp.compile", "gpuexp.csv.read", "kernel:time", "kernel:measure", "device:alloc", "buffer:fill", "program:kernel"}) do
  T.ok(called[label], "called " .. label)
end
T.eq(#wrong, 0, "errors not naming the script's line:\n  " .. table.concat(wrong, "\n  "))
-- the cases of the issue, with their messages
local function message(fn)
  local ok, err = pcall(fn)
  T.ok(not ok, "raises")
  return type(err) == "table" and err.message or tostring(err)
end
local function raises_at_line(fn, needle, what)
  local text = message(fn)
  T.ok(text:find("^[^:]*test_users_line%.lua:%d+: " .. needle), what .. ": " .. text)
end
raises_at_line(function() gpuexp.calibrate{forse = true} end, "calibrate: unknown option 'forse' %(did you mean 'force'%?%)",
  "calibrate{forse} offline")
raises_at_line(function() gpuexp.diagnose(nil, {}) end, "diagnose: argument 1 must be a kernel", "diagnose(nil)")
-- what only a GPU can tell is nil and why in a plan, never an invented number
local clock, why = gpuexp.device():sm_clock()
T.ok(clock == nil and type(why) == "string", "sm_clock offline: nil and why: " .. tostring(why))
local ceilings, reason = gpuexp.calibrate{}
T.ok(ceilings == nil and tostring(reason):find("offline plan"), "calibrate{} offline: nil and why: " .. tostring(reason))
print("ok users_line")
