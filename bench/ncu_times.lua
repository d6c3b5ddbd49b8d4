-- The launches' times in an ncu CSV (`ncu --csv --page raw --metrics gpu__time_duration.sum`), for
-- the bench scripts that compare against ncu: header, units, then one row per kernel launch.
-- Returns the times in ms, in launch order, gpuexp's own gx_ kernels skipped.
return function(path)
  local file = assert(io.open(path), "cannot read " .. path)
  local text = file:read("a")
  file:close()
  local lines = {}
  for line in text:gmatch("[^\n]+") do
    if line:sub(1, 1) == '"' then lines[#lines + 1] = line end
  end
  local function split(line)
    local fields = {}
    for field in line:gmatch('"([^"]*)"') do fields[#fields + 1] = field end
    return fields
  end
  local header = split(lines[1])
  local name_column, time_column
  for i, name in ipairs(header) do
    if name == "Kernel Name" then name_column = i end
    if name == "gpu__time_duration.sum" then time_column = i end
  end
  local units = split(lines[2])[time_column]
  local scale = ({ns = 1e-6, nsecond = 1e-6, us = 1e-3, usecond = 1e-3, ms = 1, msecond = 1})[units] -- to ms
  assert(scale, "ncu's unit of gpu__time_duration: " .. tostring(units))
  local times = {}
  for i = 3, #lines do
    local fields = split(lines[i])
    if not fields[name_column]:match("^gx_") then
      times[#times + 1] = tonumber((fields[time_column]:gsub(",", ""))) * scale
    end
  end
  return times
end
