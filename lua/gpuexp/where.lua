-- Errors raised by the Lua library name the user's line, not a line inside lua/gpuexp/: the
-- level is found by walking the stack past the library's own frames.
local M = {}

local library_dir = os.getenv("GPUEXP_LUA_DIR")

local function is_library(source)
  if source:sub(1, 12) == "@lua/gpuexp/" then return true end
  return library_dir ~= nil and library_dir ~= "" and source:sub(2, #library_dir + 1) == library_dir
end

-- The stack level (as error() counts it from the caller of M.level) of the first frame outside
-- the library that has a line.
function M.level()
  local level = 2
  while true do
    local info = debug.getinfo(level + 1, "Sl")
    if not info then return 1 end
    if info.currentline and info.currentline > 0 and not is_library(info.source) then return level end
    level = level + 1
  end
end

-- Raises a gpuexp error value of `kind` with the user's file:line.
function M.error(kind, message)
  gpuexp.error(kind, message, M.level())
end

return M
