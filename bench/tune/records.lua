-- Reading the comparison's records (bench/tune/referee.lua, kt_table.lua):
--   local records = dofile(gpuexp.script_dir .. "/records.lua")
-- records.read(path) -> the JSON value, or nil where there is no such file; records.runs(folder) -> the
-- names of its STRATEGY-SEED.json files, sorted (not the tunes' round files); records.key(point, axes)
-- -> "v1/v2/..." in the axes' order (a whole number without its ".0"); records.whole(point) -> its
-- whole numbers as integers; records.arguments(script) -> RECORDS, TRUTH and the spaces named after
-- them (default conv matmul).
local json = require("gpuexp.store.json")
local M = {}

function M.read(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local value = json.decode(f:read("a"))
  f:close()
  return value
end

function M.runs(folder)
  local names, pipe = {}, io.popen("ls '" .. folder:gsub("'", "'\\''") .. "' 2>/dev/null")
  for name in pipe:lines() do if name:match("^[%a_]+%-%d+%.json$") then names[#names + 1] = name end end
  pipe:close()
  table.sort(names)
  return names
end

function M.key(point, axes)
  local cells = {}
  for i, axis in ipairs(axes) do cells[i] = tostring(math.tointeger(point[axis[1]]) or point[axis[1]]) end
  return table.concat(cells, "/")
end

function M.whole(point)
  local p = {}
  for k, v in pairs(point) do p[k] = math.tointeger(v) or v end
  return p
end

function M.arguments(script)
  local records, truth = arg[1], arg[2]
  assert(records and truth, "usage: gpuexp " .. script .. " RECORDS TRUTH [SPACE...]")
  local wanted = {}
  for i = 3, #arg do wanted[#wanted + 1] = arg[i] end
  if #wanted == 0 then wanted = {"conv", "matmul"} end
  return records, truth, wanted
end

return M
