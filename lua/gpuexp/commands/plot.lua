-- gpuexp plot: the command over api/plot.lua.
local plot = require("gpuexp.api.plot")
local catalog = require("gpuexp.catalog")

local M = {}

function M.main(args)
  if args[1] == "--help" or args[1] == "-h" then io.write(catalog.help("plot")) return 0 end
  local spec, roofline = {}, false
  local names = {["--x"] = "x", ["--y"] = "y", ["--by"] = "by", ["-o"] = "out", ["--out"] = "out",
    ["--title"] = "title", ["--flops"] = "flops", ["--bytes"] = "bytes", ["--time-ms"] = "time_ms",
    ["--peak-gflops"] = "peak_gflops", ["--peak-gbps"] = "peak_gbps"}
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--roofline" then roofline = true
    elseif a == "--logx" then spec.logx = true
    elseif a == "--logy" then spec.logy = true
    elseif names[a] then
      i = i + 1
      spec[names[a]] = args[i]
    elseif a:sub(1, 1) ~= "-" and not spec.csv then spec.csv = a
    else gpuexp.error("usage", "plot: " .. (a:sub(1, 1) == "-" and catalog.unknown_option("plot", a) or
      "unknown argument '" .. a .. "'")) end
    i = i + 1
  end
  if not spec.csv then gpuexp.error("usage", "plot: give the CSV file") end
  if roofline then
    spec.peak_gflops, spec.peak_gbps = tonumber(spec.peak_gflops), tonumber(spec.peak_gbps)
    if not (spec.peak_gflops and spec.peak_gbps) then
      local found, ceilings = pcall(require("gpuexp.api.calibrate").cached)
      if not found then
        gpuexp.error("usage", string.format("roofline plot: give --peak-gflops and --peak-gbps (no GPU here to read " ..
          "calibrated ceilings for: %s)", type(ceilings) == "table" and ceilings.message or tostring(ceilings)))
      end
      if not ceilings then gpuexp.error("usage", "roofline plot: give --peak-gflops and --peak-gbps, or run gpuexp calibrate first") end
      spec.peak_gflops, spec.peak_gbps = ceilings.fp32_gflops, ceilings.dram_copy_gbps
      spec.ceiling_source = "measured by gpuexp calibrate"
    end
    print("wrote " .. plot.roofline(spec))
  else
    print("wrote " .. plot.lines(spec))
  end
end

return M
