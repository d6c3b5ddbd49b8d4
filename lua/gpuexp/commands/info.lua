-- gpuexp info [--device N]: every GPU's facts, the deviceQuery / gpu-specs view (printed by
-- src/cli/gx_cli_info.c).
local M = {}

function M.run(o) return gpuexp._cli.info(o) end

return M
