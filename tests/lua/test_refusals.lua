-- Inputs a script should never get through with a raw library error (issue 25, WEAK): measurement
-- options out of range, error({}) or error() in a setup, struct layouts too big to build, a float
-- alignment, an integer that does not fit its field. Each is refused with gpuexp's own message at
-- the user's line.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local write, run = ws.write, ws.run

-- one script, one line per case: each prints ok/refused and the message
local function cases(body)
  write("cases.lua", "local function try(f) local ok, e = pcall(f) " ..
    "print(ok and 'ok' or 'refused', ok and tostring(e) or (type(e) == 'table' and e.message or tostring(e))) end\n" .. body)
  local code, stdout, stderr = run("--quiet --inline --arch sm_90 cases.lua")
  T.eq(code, 0, "the cases script: " .. stderr)
  local lines = {}
  for line in stdout:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

-- measurement options: refused at the script's line, a plan too
local lines = cases([[
local k = gpuexp.compile{source = "__global__ void k(float *x) { x[0] = 1; }", name = "k.cu"}:kernel("k")
local launch = {grid = 1, block = 1, args = {gpuexp.i64(0)}}
local function with(key, value) local spec = {} for a, b in pairs(launch) do spec[a] = b end spec[key] = value return spec end
try(function() k:measure(with("throttle_pct", 150)) end)
try(function() k:measure(with("recovery_ms", -5)) end)
try(function() k:measure(with("max_noise_pct", 0/0)) end)
try(function() k:measure(with("max_noise_pct", 0)) end)
try(function() k:measure(with("min_samples", 2.5)) end)
try(function() k:measure(with("throttle_pct", 0)) return "accepted" end)
gpuexp.measure_defaults.recovery_ms = -1
try(function() k:measure(launch) end)
]])
T.eq(lines[1], "refused\tcases.lua:5: measure: throttle_pct = 150: it must be a number from 0 to 100", lines[1])
T.eq(lines[2], "refused\tcases.lua:6: measure: recovery_ms = -5: it must be a number from 0 to 600000", lines[2])
T.eq(lines[3], "refused\tcases.lua:7: measure: max_noise_pct = NaN: it must be a number above 0 to 100", lines[3])
T.eq(lines[4], "refused\tcases.lua:8: measure: max_noise_pct = 0: it must be a number above 0 to 100", lines[4])
T.eq(lines[5], "refused\tcases.lua:9: measure: min_samples = 2.5: it must be a whole number from 1 to 1000000000",
  lines[5])
T.eq(lines[6], "ok\taccepted", "throttle_pct = 0 keeps every batch: " .. lines[6])
T.eq(lines[7], "refused\tcases.lua:12: gpuexp.measure_defaults.recovery_ms = -1: it must be a number from 0 to 600000",
  lines[7])

-- structs and layouts
lines = cases([[
try(function() return gpuexp.struct({{"f32", 1.5}, {"i32", 2}}, {align = 2^4}).size end)
try(function() local L = gpuexp.layout({{"a", "f32", 1 << 40}}) return L end)
try(function() local L = gpuexp.layout({{"a", "i8", 200000}}) return L end)
try(function() local L = gpuexp.layout({{"a", "f32"}}, {align = 1 << 40}) return L end)
try(function() local b = gpuexp.struct{{"f32", 1.5}, {"i8", 300}} return b end)
try(function() local L = gpuexp.layout({{"x", "i8"}, {"y", "u16"}}) local b = L{x = 1, y = -1} return b end)
try(function() return gpuexp.layout({{"a", "f32", 4.0}}).size end)
]])
T.eq(lines[1], "ok\t16", "align = 2^4 (a float) is 16: " .. lines[1])
T.eq(lines[2], "refused\tcases.lua:3: layout: field 'a' (1099511627776 x f32) makes the struct larger than gpuexp " ..
  "takes (1048576 bytes, 100000 values); pass big arrays in a device buffer", lines[2])
T.eq(lines[3], "refused\tcases.lua:4: layout: field 'a' (200000 x i8) makes the struct larger than gpuexp takes " ..
  "(1048576 bytes, 100000 values); pass big arrays in a device buffer", lines[3])
T.eq(lines[4], "refused\tcases.lua:5: layout: align must be a power of two of at least 4 (and at most 4096), " ..
  "got 1099511627776", lines[4])
T.eq(lines[5], "refused\tcases.lua:6: struct._2: 300 does not fit in i8 (-128 to 127)", lines[5])
T.eq(lines[6], "refused\tcases.lua:7: struct.y: -1 does not fit in u16 (0 to 65535)", lines[6])
T.eq(lines[7], "ok\t16", "a count of 4.0 is 4: " .. lines[7])

-- error({}) and error() in a setup: reported at the setup's line, inline and supervised
for _, raised in ipairs({"error({})", "error()"}) do
  write("setup.lua", "gpuexp.sweep{name = 's', axes = {{'n', {1, 2}}},\n  setup = function() " .. raised .. " end,\n" ..
    "  run = function(p) return {median_ms = p.n} end}\n")
  for _, mode in ipairs({"--inline ", ""}) do
    local code, _, stderr = run("--quiet " .. mode .. "--arch sm_90 -o setup.csv setup.lua")
    T.eq(code, 1, raised .. " " .. mode .. ": the script failed")
    T.ok(stderr:find("^setup.lua:2: sweep 's': its setup raised " .. (raised == "error()" and "nil" or "a table") ..
      ", not a message"), raised .. " " .. mode .. ": at the setup's line: " .. stderr)
  end
end

T.done()
