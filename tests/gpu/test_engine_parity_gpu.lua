-- The ledger service's two transports on a real GPU (tests/lua/test_engine_parity.lua is the
-- offline half): a sweep that launches and measures runs supervised and --inline to the same CSV
-- and metadata (times apart); a point that loses the CUDA context is a `crashed` row both ways,
-- after which a supervised run goes on in a fresh worker (exit 5) and an inline run, which has no
-- other process, stops with its sweep closed saying why (exit 3).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local cjson = require("cjson")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local faults = gpuexp.script_dir .. "/faults"

local read = T.read

-- runs gpuexp MODE SCRIPT ARGS in a fresh folder (script: its text, or the path of a script to
-- run where it is); returns the exit code, the folder, stderr
local function run(mode, script, script_args)
  local dir = T.temporary_directory()
  local path = script
  if script:find("\n") then
    path = dir .. "/s.lua"
    local file = assert(io.open(path, "w"))
    file:write(script)
    file:close()
  end
  local _, _, code = os.execute(string.format("cd %s && %s --quiet %s %s %s > stdout 2> stderr", dir, binary, mode,
    path, script_args or ""))
  return code, dir, read(dir .. "/stderr") or ""
end

-- the metadata less what differs run to run (times, the command, the GPU's temperature and throttle
-- reasons at the start) and the point limit (inline: none)
local function metadata(dir)
  local meta = cjson.decode(assert(read(dir .. "/out.meta.json")))
  meta.time_utc, meta.script = nil, nil
  for key, value in pairs(meta.arguments or {}) do -- the script's path names the run's own folder
    if type(value) == "string" and value:sub(1, #dir + 1) == dir .. "/" then meta.arguments[key] = value:sub(#dir + 2) end
  end
  meta.sweep.finished_utc, meta.sweep.timeout_s = nil, nil
  for _, part in ipairs(meta.parts) do part.started_utc, part.finished_utc, part.command = nil, nil, nil end
  for _, gpu in ipairs({meta.gpu, table.unpack(meta.gpus or {})}) do -- NVML's readings at the start
    gpu.temperature_c_at_start, gpu.throttle_reasons_at_start = nil, nil
  end
  return meta
end

local function same(a, b, what)
  if type(a) ~= "table" or type(b) ~= "table" then return T.eq(b, a, what) end
  for key, value in pairs(a) do same(value, b[key], what .. "." .. tostring(key)) end
  for key in pairs(b) do T.ok(a[key] ~= nil, what .. "." .. tostring(key) .. " only inline") end
end

-- 1. launches and measurements: the same rows, the same metadata
local measured = [[
local dev = gpuexp.device()
local store = gpuexp.compile{file = "]] .. faults .. [[/faults.cu"}:kernel("store")
local out = dev:alloc("f32", 256):fill(0)
gpuexp.sweep{name = "measured", out = "out.csv", axes = {{"block", {32, 64, 128}}},
  run = function(p)
    local t = store:measure{grid = 1, block = p.block, args = {out, gpuexp.i32(0)}}
    dev:synchronize()
    return {value = out[p.block - 1], samples_ms = t.samples_ms, has_median = t.median_ms > 0}
  end}
]]
local code, supervised, stderr = run("", measured)
T.eq(code, 0, "supervised: " .. stderr)
local inline_code, inline, inline_stderr = run("--inline", measured)
T.eq(inline_code, 0, "inline: " .. inline_stderr)
local rows, inline_rows = gpuexp.csv.read(supervised .. "/out.csv"), gpuexp.csv.read(inline .. "/out.csv")
T.eq(#rows, 3, "a row per point")
T.eq(#inline_rows, 3, "a row per point inline")
for i, row in ipairs(rows) do
  for _, column in ipairs({"block", "value", "has_median", "status"}) do
    T.eq(inline_rows[i][column], row[column], "row " .. i .. " " .. column)
  end
end
T.eq(read(inline .. "/out.csv"):match("^[^\n]*"), read(supervised .. "/out.csv"):match("^[^\n]*"), "the CSV header")
T.eq(read(inline .. "/out.samples.csv"):match("^[^\n]*"), read(supervised .. "/out.samples.csv"):match("^[^\n]*"),
  "the samples file's header")
same(metadata(supervised), metadata(inline), "metadata")

-- 2. a point that loses the context
local crash = faults .. "/illegal_address.lua"
code, supervised, stderr = run("", crash, "out.csv")
T.eq(code, 5, "supervised: a crashed point, the others run (" .. stderr .. ")")
rows = gpuexp.csv.read(supervised .. "/out.csv")
T.eq(#rows, 6, "supervised: every point has a row")
T.eq(rows[3].status, "crashed", "supervised: the crashed point")
inline_code, inline, inline_stderr = run("--inline", crash, "out.csv")
T.eq(inline_code, 3, "inline: the lost context ends the run (" .. inline_stderr .. ")")
inline_rows = gpuexp.csv.read(inline .. "/out.csv")
T.eq(#inline_rows, 3, "inline: the rows up to the crash")
T.eq(inline_rows[3].status, "crashed", "inline: the crashed point")
for _, row in ipairs({rows[3], inline_rows[3]}) do
  T.ok(row.error:find("CUDA_ERROR_ILLEGAL_ADDRESS", 1, true), "the reason names the error: " .. row.error)
end
local meta = cjson.decode(assert(read(inline .. "/out.meta.json")))
T.eq(meta.parts[1].ended, "the CUDA context was lost at point 3", "inline: the sweep closed, saying why")
T.ok(inline_stderr:find("without --inline a new worker would go on after it", 1, true), inline_stderr)

T.done()
