-- Plots without a GPU: line and roofline plots through gnuplot are valid PNG and SVG files.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
if not os.execute("command -v gnuplot >/dev/null 2>&1") then
  io.stderr:write("SKIP: gnuplot is not installed (apt-get install gnuplot-nox)\n")
  os.exit(77)
end
local rows = {}
for _, variant in ipairs({"a", "b"}) do
  for _, block in ipairs({64, 128, 256}) do
    rows[#rows + 1] = {variant = variant, block_size = block, median_ms = block / (variant == "a" and 100 or 50),
      flops = block * 1e9, bytes = 1e9, time_ms = 1}
  end
end
local dir = T.temporary_directory()
local read = T.read

local png = gpuexp.plot{rows = rows, x = "block_size", y = "median_ms", by = "variant", out = dir .. "/lines.png", logx = true}
local data = read(png)
T.eq(data:sub(1, 8), "\137PNG\r\n\26\n", "PNG signature")
T.ok(#data > 5000, "a real picture: " .. #data .. " bytes")
local svg = read(gpuexp.plot{rows = rows, x = "block_size", y = "median_ms", by = "variant", out = dir .. "/lines.svg"})
T.ok(svg:find("<svg", 1, true) and svg:find("</svg>", 1, true), "SVG document")
T.ok(svg:find(">a<", 1, true) and svg:find(">b<", 1, true), "one key entry per group")
local roof = read(gpuexp.roofline_plot{rows = rows, flops = "flops", bytes = "bytes", time_ms = "time_ms", by = "variant",
  peak_gflops = 60000, peak_gbps = 4000, out = dir .. "/roofline.svg"})
T.ok(roof:find("knee 15.0 FLOP/byte", 1, true), "roofline title carries the knee")
-- the hierarchical roofline's plot: one key entry per extra roof, with the DRAM roof named
local levels = read(gpuexp.roofline_plot{rows = rows, flops = "flops", bytes = "bytes", time_ms = "time_ms", by = "variant",
  peak_gflops = 60000, peak_gbps = 4000, roof_name = "DRAM", roofs = {{name = "L2", gbps = 8000},
  {name = "L1/shared", gbps = 32000}}, out = dir .. "/hierarchical.svg"})
for _, name in ipairs({">DRAM<", ">L2<", ">L1/shared<"}) do T.ok(levels:find(name, 1, true), "roof in the key: " .. name) end
T.raises(function() gpuexp.plot{rows = rows, x = "block_size", y = "variant", out = dir .. "/x.png"} end, "no row has numbers")
-- a column the rows do not have is refused, naming the columns there are (not one series of nil)
local refused = T.raises(function()
  gpuexp.plot{rows = rows, x = "block_size", y = "median_ms", by = "variantt", out = dir .. "/x.png"}
end, "plot: by 'variantt' is not a column of the rows (did you mean 'variant'?); its columns: block_size, bytes")
T.ok(refused.message:find("test_plot.lua:%d+: plot: by"), "the script's line: " .. refused.message)
T.raises(function() gpuexp.plot{rows = rows, x = "block_size", y = "nothing", out = dir .. "/x.png"} end,
  "y 'nothing' is not a column")
T.raises(function() gpuexp.plot{rows = rows, x = "block_size", y = "median_ms", out = dir .. "/x.gif"} end, "must end in .png or .svg")
local none, why = gpuexp.try_plot(gpuexp.plot, {rows = rows, x = "block_size", y = "variant", out = dir .. "/y.png"})
T.eq(none, nil, "try_plot returns nil"); T.ok(why:find("no row"), "and why")
-- the CLI
local ok = os.execute(string.format("%s plot %s --x block_size --y median_ms -o %s/cli.png >/dev/null 2>&1", arg[1],
  gpuexp.resolve(gpuexp.script_dir .. "/../../bench/h200/occupancy_sweep.csv"), dir))
T.ok(ok and read(dir .. "/cli.png"):sub(2, 4) == "PNG", "gpuexp plot writes a PNG")
T.done()
