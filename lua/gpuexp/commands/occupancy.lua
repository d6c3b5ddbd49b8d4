-- gpuexp occupancy: the occupancy calculator, one CSV row per combination of architectures, block
-- sizes, registers, shared memory and barriers (printed by src/cli/gx_cli_occupancy.c), or each
-- architecture's limits (--limits). The values' types are here: lists and ranges of numbers, a list
-- of architectures, the carveout.
local M = {}

local MAX_VALUES = 4096 -- per option: --block 1:4096 at most

-- "128,256" and "16:64:8" (start:stop:step, stop included) -> the numbers, or nil.
local function values_of(text)
  local values = {}
  for part in (text .. ","):gmatch("([^,]*),") do
    local start, stop, step = part:match("^(%d+)$"), nil, 1
    if start then
      stop = start
    else
      start, stop, step = part:match("^(%d+):(%d+):?(%d*)$")
      if not start then return nil end
      step = step == "" and 1 or tonumber(step)
    end
    start, stop = tonumber(start), tonumber(stop)
    if step <= 0 or stop < start or stop > 1 << 30 then return nil end
    for value = start, stop, step do
      if #values >= MAX_VALUES then return nil end
      values[#values + 1] = math.tointeger(value)
    end
  end
  if #values > 0 then return values end
end

M.TYPES = {
  ranges = function(_, text, flag)
    local values = values_of(text)
    if values then return values end
    return nil, flag .. " takes numbers, lists (1,2) and ranges (start:stop:step), got '" .. text .. "'"
  end,
  -- sm_80,sm_90: each by the name the model knows it (8.6 and 86 are sm_86)
  archs = function(_, text)
    local list = {}
    for name in text:gmatch("[^,]+") do
      local ok, limits = pcall(gpuexp.arch_limits, name)
      if not ok then
        local known = gpuexp.arch_limits()
        local hint = gpuexp._did_you_mean(name, known)
        return nil, "unknown architecture '" .. name .. "'" .. (hint ~= "" and hint or
          " (known: " .. table.concat(known, " ") .. ")")
      end
      list[#list + 1] = limits.arch
    end
    if #list > 0 then return list end
  end,
  -- max (the most shared memory: -1), driver (the driver's choice: -2), or a size in KiB
  carveout = function(_, text, flag)
    if text == "max" then return -1 end
    if text == "driver" then return -2 end
    local kib = text:match("^%d+$") and math.tointeger(tonumber(text))
    if kib and kib <= 1 << 20 then return kib end
    return nil, flag .. " takes max, driver or a size in KiB, got '" .. text .. "'"
  end,
}

function M.run(o)
  if o.positional[1] then return nil, "unknown argument '" .. o.positional[1] .. "'" end
  if not o.limits and not (o.arch and o.block) then return nil, "--arch and --block are required" end
  return gpuexp._cli.occupancy(o)
end

return M
