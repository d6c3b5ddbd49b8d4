-- Did-you-mean for the words a first hour gets wrong, beyond commands and options: a column
-- (compare --metric occupancy), a key of an API table with two letters swapped (compile{fiel=}, the
-- commonest typo, which the edit distance used to count as two) in C's checks and in the Lua side's
-- (layout, metrics, kernel:metrics, plot), each at the script's line with the keys it knows.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

-- compare --metric: the column, with the likely one
ws.write("base.csv", "block_size,occupancy_pct,median_ms,status,error\n128,100,,ok,\n")
ws.write("new.csv", "block_size,occupancy_pct,median_ms,status,error\n128,100,,ok,\n")
local code, _, stderr = ws.run("compare --axes block_size --metric occupancy:higher base.csv new.csv")
T.eq(code, 2, "an unknown column is a usage error")
T.eq(stderr, "gpuexp compare: new.csv has no column 'occupancy' (did you mean 'occupancy_pct'?) (its columns: " ..
  "block_size, occupancy_pct, median_ms, status, error)\n", "the likely column")

-- API tables: each refusal at the script's line, with the likely key and the known ones
local cases = {
  {"gpuexp.compile{fiel = 'k.cu'}", "compile: unknown option 'fiel' (did you mean 'file'?)"},
  {"gpuexp.compile{source = 'x', optoins = {}}", "compile: unknown option 'optoins' (did you mean 'options'?)"},
  {"gpuexp.layout({{'a', 'f32'}}, {algin = 4})", "layout: unknown option 'algin' (did you mean 'align'?) (known: align)"},
  {"gpuexp.metrics{{kernel = k, grid = 1, block = 32, args = {b}}, metircs = 'memory'}",
    "metrics: unknown option 'metircs' (did you mean 'metrics'?) (known: batch, flush_l2, max_snapshot_bytes, " ..
    "metrics, restore)"},
  {"k:metrics{grid = 1, block = 32, args = {b}, metircs = 'memory'}",
    "metrics: unknown option 'metircs' (did you mean 'metrics'?)"},
  {"k:launch{grid = 1, blcok = 32, args = {b}}", "launch: unknown option 'blcok' (did you mean 'block'?)"},
  {"gpuexp.plot{rows = {{a = 1, b = 2}}, x = 'a', y = 'b', out = 'p.png', tilte = 't'}",
    "plot: unknown option 'tilte' (did you mean 'title'?)"},
  {"gpuexp.roofline_plot{rows = {}, flops = 'f', bytes = 'b', time_ms = 't', out = 'r.png', peak_gflops = 1, " ..
    "peak_gbps = 1, roof_nmae = 'x'}", "roofline plot: unknown option 'roof_nmae' (did you mean 'roof_name'?)"},
}
for n, case in ipairs(cases) do
  local name = "case" .. n .. ".lua"
  ws.write(name, "local k = gpuexp.compile{source = 'extern \"C\" __global__ void k(float *y) {}'}:kernel('k')\n" ..
    "local b = gpuexp.device():alloc('f32', 32)\n" .. case[1] .. "\n")
  code, _, stderr = ws.run("--quiet --arch sm_90 " .. name)
  T.eq(code, 1, case[1] .. ": the script's error: " .. stderr)
  T.ok(stderr:find(name .. ":3: " .. case[2], 1, true), case[1] .. ": at the script's line, the likely key: " .. stderr)
end
T.done()
