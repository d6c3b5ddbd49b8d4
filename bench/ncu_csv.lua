-- ncu's raw CSV (`ncu --csv --page raw --metrics ...`), read once for every bench script that
-- compares against ncu: a header, a line of units, then one line per kernel launch, each field
-- quoted, numbers with thousands separators.
local M = {}

local function split(line)
  local fields = {}
  for field in line:gmatch('"([^"]*)"') do fields[#fields + 1] = field end
  return fields
end

-- M.read(path) -> {header = {names}, units = {[name] = unit}, launches = {{[name] = text}...}} in
-- launch order, gpuexp's own kernels (gx_random filling inputs, gx_flush_l2: no one's points)
-- left out; nil and a message when the file cannot be read.
function M.read(path)
  local file = io.open(path)
  if not file then return nil, "cannot read " .. path end
  local lines = {}
  for line in file:lines() do
    if line:sub(1, 1) == '"' then lines[#lines + 1] = line end
  end
  file:close()
  local header = lines[1] and split(lines[1]) or {}
  local units = {}
  for i, unit in ipairs(lines[2] and split(lines[2]) or {}) do
    if header[i] then units[header[i]] = unit end
  end
  local launches = {}
  for i = 3, #lines do
    local fields, launch = split(lines[i]), {}
    for column, name in ipairs(header) do launch[name] = fields[column] end
    if not (launch["Kernel Name"] or ""):match("^gx_") then launches[#launches + 1] = launch end
  end
  return {header = header, units = units, launches = launches}
end

-- A field as a number (ncu writes 1,234.5), or nil.
function M.number(text)
  return tonumber((string.gsub(text or "", ",", "")))
end

local TO_MS = {ns = 1e-6, nsecond = 1e-6, us = 1e-3, usecond = 1e-3, ms = 1, msecond = 1}

-- A launch's gpu__time_duration.sum in ms.
function M.time_ms(csv, launch)
  local unit = csv.units["gpu__time_duration.sum"]
  local scale = TO_MS[unit]
  assert(scale, "ncu's unit of gpu__time_duration: " .. tostring(unit))
  return M.number(launch["gpu__time_duration.sum"]) * scale
end

-- M.times(path) -> the launches' times in ms, in launch order (gpuexp's own kernels left out).
function M.times(path)
  local csv = assert(M.read(path))
  local times = {}
  for i, launch in ipairs(csv.launches) do times[i] = M.time_ms(csv, launch) end
  return times
end

return M
