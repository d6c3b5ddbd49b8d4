-- gpuexp plot: the command over api/plot.lua.
local plot = require("gpuexp.api.plot")
local text = require("gpuexp.store.text")

local M = {}

function M.run(spec)
  if spec.positional[2] then return nil, "unknown argument '" .. spec.positional[2] .. "'" end
  local roofline = spec.roofline
  spec.csv = spec.positional[1]
  spec.positional, spec.script_args, spec.help, spec.roofline = nil, nil, nil, nil
  if not spec.csv then return nil, "give the CSV file" end
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
    print("wrote " .. text.terminal(plot.roofline(spec)))
  else
    print("wrote " .. text.terminal(plot.lines(spec)))
  end
end

return M
