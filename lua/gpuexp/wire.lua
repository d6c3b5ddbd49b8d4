-- Values sent between the supervisor and its workers: plain data (strings, numbers, booleans and
-- tables of them) written as a Lua table constructor and read back in an empty environment.
local M = {}

local function encode(value, out)
  local t = type(value)
  if t == "string" then
    out[#out + 1] = string.format("%q", value)
  elseif t == "number" then
    if math.type(value) == "integer" then out[#out + 1] = string.format("%d", value)
    elseif value ~= value then out[#out + 1] = "0/0"
    elseif value == math.huge then out[#out + 1] = "1/0"
    elseif value == -math.huge then out[#out + 1] = "-1/0"
    else out[#out + 1] = string.format("%.17g", value) end
  elseif t == "boolean" then
    out[#out + 1] = value and "true" or "false"
  elseif t == "table" then
    out[#out + 1] = "{"
    for k, v in pairs(value) do
      local kt = type(k)
      if kt == "string" or kt == "number" then
        out[#out + 1] = "["
        encode(k, out)
        out[#out + 1] = "]="
        encode(v, out)
        out[#out + 1] = ","
      end
    end
    out[#out + 1] = "}"
  else
    out[#out + 1] = "nil" -- functions, userdata: not data
  end
end

function M.encode(value)
  local out = {"return "}
  encode(value, out)
  return table.concat(out)
end

function M.decode(text)
  local chunk, message = load(text, "=message", "t", {})
  if not chunk then return nil, "malformed message: " .. message end
  local ok, value = pcall(chunk)
  if not ok then return nil, "malformed message: " .. tostring(value) end
  return value
end

return M
