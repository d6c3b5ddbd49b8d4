-- gpuexp metrics: the CUPTI metrics a GPU or chip offers (--list), checks of metric names and
-- presets (--check NAME...), the chips CUPTI knows (--chips), printed by src/cli/gx_cli_metrics.c.
-- A preset's name checks its metrics (api/metrics.lua's presets, the one list).
local presets = require("gpuexp.api.metrics").presets

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

function M.run(o)
  local asked = (o.list and 1 or 0) + (o.check and 1 or 0) + (o.chips and 1 or 0)
  if o.positional[1] and not o.check then return nil, "unknown argument '" .. o.positional[1] .. "'" end
  if asked ~= 1 or (o.check and not o.positional[1]) then return nil, "give one of --list, --check NAME..., --chips" end
  local names = {}
  for _, name in ipairs(o.positional) do
    if presets[name] then
      for _, metric in ipairs(presets[name]) do names[#names + 1] = {name = metric, preset = name} end
    else
      names[#names + 1] = {name = name}
    end
  end
  local fields = {list = o.list, check = o.check, chips = o.chips, chip = o.chip, device = o.device, names = names}
  return gpuexp._cli.metrics(fields) and EXIT.OK or EXIT.FAILED
end

return M
