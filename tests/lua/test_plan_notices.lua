-- What a plan says that it used to leave unsaid: an unknown element type in a plan's alloc names the
-- script's line and the types (and C's spelling: float is f32), as a GPU's does; --counters,
-- --telemetry, gpuexp diagnose and gpuexp profile, which do nothing in a plan, say so once (not
-- once per process); metrics --chip with an unknown chip is a usage error (exit 2) with the likely
-- chip, not CUPTI's raw error and exit 3.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

-- the element type, in a plan as on a GPU
local types = "the types: f32, f64, i32, u32, i64, u64, u8, i8, f16, bf16, fp8_e4m3, fp8_e5m2, i16, u16"
for _, case in ipairs({
  {"gpuexp.device():alloc('float', 16)", "unknown element type 'float' (C's float is 'f32'); " .. types},
  {"gpuexp.host('__half', 16, {pinned = true})", "unknown element type '__half' (C's __half is 'f16'); " .. types},
  {"gpuexp.host('f3', 16)", "unknown element type 'f3' (did you mean 'f32'?); " .. types},
}) do
  ws.write("alloc.lua", "local n = 16\n" .. case[1] .. "\n")
  local code, _, stderr = ws.run("--quiet --arch sm_90 alloc.lua")
  T.eq(code, 1, case[1] .. ": the script's error")
  T.ok(stderr:find("alloc.lua:2: " .. case[2], 1, true), case[1] .. ": at the script's line, with the types: " .. stderr)
end

-- options that need a GPU, said once in a plan, supervised or inline
ws.write("plan.lua", "gpuexp.sweep{name = 's', axes = {{'a', {1, 2}}}, run = function() return {} end}\n")
local said = "an offline plan runs nothing on a GPU, so"
for _, case in ipairs({
  {"--quiet --arch sm_90 --counters --telemetry plan.lua", "gpuexp: --counters, --telemetry: " .. said ..
    " they do nothing here (no counter columns; no NVML readings)"},
  {"--quiet --inline --arch sm_90 --counters plan.lua", "gpuexp: --counters: " .. said .. " it does nothing here"},
  {"diagnose --quiet --arch sm_90 plan.lua", "gpuexp: --diagnose (gpuexp diagnose): " .. said .. " it does nothing here (no diagnosis)"},
  {"profile --quiet --arch sm_90 plan.lua", "gpuexp: --profile (gpuexp profile): " .. said ..
    " it does nothing here (no capture range for a profiler)"},
}) do
  local code, _, stderr = ws.run(case[1])
  T.eq(code, 0, case[1] .. ": " .. stderr)
  local _, times = stderr:gsub(said:gsub("%p", "%%%0"), "")
  T.eq(times, 1, case[1] .. ": said once: " .. stderr)
  T.ok(stderr:find(case[2], 1, true), case[1] .. ": " .. stderr)
end
local _, _, stderr = ws.run("--quiet --arch sm_90 plan.lua")
T.ok(not stderr:find(said, 1, true), "nothing said when no such option is given: " .. stderr)

-- metrics --chip: a misspelled chip is the user's mistake
local code, stdout
code, stdout, stderr = ws.run("metrics --chip GH10 --list")
if stderr:find("CUPTI", 1, true) and not stderr:find("unknown chip", 1, true) then
  io.stderr:write("SKIP (metrics --chip): no CUPTI here: " .. stderr .. "\n")
else
  T.eq(code, 2, "an unknown chip is a usage error: " .. stderr)
  T.eq(stdout, "", "nothing listed")
  T.ok(stderr:find("^gpuexp metrics: unknown chip 'GH10' %(did you mean 'GH100'%?%); the chips this CUPTI knows: .*GH100"),
    "the likely chip and the known ones: " .. stderr)
end
T.done()
