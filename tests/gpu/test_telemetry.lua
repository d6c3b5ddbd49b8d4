-- Telemetry and cycles on a GPU: NVML's readings are real values (never zeros), a measurement's
-- energy per launch agrees with its mean power times its time, cycles are time times the clock,
-- and gpuexp --telemetry puts the columns in a sweep's rows.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local now, why = dev:telemetry()
if not now then io.stderr:write("SKIP: no NVML here: " .. tostring(why) .. "\n") os.exit(77) end
print(string.format("NVML: %.1f W, %s C, energy counter %.1f J, SM %s MHz (applications clock %s), limit %s W, reasons '%s'",
  now.power_w or -1, tostring(now.temperature_c), now.energy_j or -1, tostring(now.sm_clock_mhz),
  tostring(now.applications_clock_mhz), tostring(now.power_limit_w), tostring(now.throttle_reasons)))
T.ok(now.power_w and now.power_w > 10 and now.power_w < 2000, "a board's power draw")
T.ok(now.temperature_c and now.temperature_c > 5 and now.temperature_c < 110, "a temperature")
T.ok(now.energy_j and now.energy_j > 0, "the total energy counter")
T.ok(now.power_limit_w and now.power_limit_w > 100, "the enforced power limit")

local program = gpuexp.compile{source = [[
extern "C" __global__ void chain(float *out, int n, float a, float b)
{
    float x = threadIdx.x;
    for (int i = 0; i < n; i++) x = x * a + b;
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}]]}
local out = dev:alloc("f32", dev.sm_count * 8 * 256)
local spec = {grid = dev.sm_count * 8, block = 256, args = {out, gpuexp.i32(100000), gpuexp.f32(0.999), gpuexp.f32(0.001)},
  min_time_ms = 1000, timeout_s = 3, telemetry = true}
local t = program:kernel("chain"):measure(spec)
print(string.format("measure: %.4f ms, %.1f W, %.4f J a launch, %s C, reasons '%s', %d dropped, %.0f cycles at %.0f MHz",
  t.median_ms, t.power_w or -1, t.energy_j or -1, tostring(t.temperature_c), tostring(t.throttle_reasons),
  t.throttled_samples, t.median_cycles or -1, t.sm_clock_mhz))
T.ok(t.power_w and t.power_w > 50, "the mean power under load")
T.ok(t.energy_j and t.energy_j > 0, "energy per launch")
T.near(t.energy_j / (t.power_w * t.median_ms / 1000), 1, 0.15, "energy per launch = mean power x time")
T.near(t.median_cycles / (t.median_ms * t.sm_clock_mhz * 1e3), 1, 0.02, "cycles = time x the batches' clock")
T.eq(type(t.throttled_samples), "number", "dropped samples counted")

-- gpuexp --telemetry: the columns of a sweep that did not ask for them
local ws = T.workspace(binary)
ws.write("sweep.cu", [[extern "C" __global__ void k(float *o) { o[threadIdx.x] = threadIdx.x; }]])
ws.write("sweep.lua", [[
local dev = gpuexp.device()
local k = gpuexp.compile{file = "sweep.cu"}:kernel("k")
local o = dev:alloc("f32", 256)
gpuexp.sweep{name = "s", axes = {{"n", {1}}}, columns = {"median_ms"}, run = function()
  return {median_ms = k:measure{grid = 1, block = 256, args = {o}, min_time_ms = 300, timeout_s = 1}.median_ms}
end}
]])
local code, _, stderr = ws.run("--quiet --telemetry -o s.csv sweep.lua")
T.eq(code, 0, "gpuexp --telemetry: " .. stderr)
local rows = gpuexp.csv.read(ws.dir .. "/s.csv")
T.ok(type(rows[1].power_w) == "number" and rows[1].power_w > 10, "the row's power_w")
T.ok(type(rows[1].temperature_c) == "number", "and temperature_c")
T.done()
