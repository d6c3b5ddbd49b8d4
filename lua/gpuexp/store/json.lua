-- JSON through lua-cjson (linked into the binary): encoding that never fails on what gpuexp
-- writes (NaN and infinities become null, sparse lists are kept, invalid UTF-8 is replaced), and
-- decoding that answers nil and why instead of raising.
local cjson = require("cjson").new()
cjson.encode_invalid_numbers("null")
cjson.encode_sparse_array(true)
cjson.decode_invalid_numbers(true)

local M = {}

-- The text with every invalid UTF-8 sequence replaced by U+FFFD (a JSON reader must see UTF-8).
function M.valid_utf8(text)
  if utf8.len(text) then return text end
  local parts, position = {}, 1
  while position <= #text do
    local length, bad = utf8.len(text, position)
    if length then
      parts[#parts + 1] = text:sub(position)
      break
    end
    parts[#parts + 1] = text:sub(position, bad - 1)
    parts[#parts + 1] = "\239\191\189"
    position = bad + 1
  end
  return table.concat(parts)
end

local function clean(value, seen)
  local t = type(value)
  if t == "string" then return M.valid_utf8(value) end
  if t ~= "table" then
    if t == "function" or t == "userdata" or t == "thread" then return tostring(value) end
    return value
  end
  if seen[value] then return "(a table inside itself)" end
  seen[value] = true
  local copy = {}
  for k, v in pairs(value) do
    copy[type(k) == "string" and M.valid_utf8(k) or k] = clean(v, seen)
  end
  seen[value] = nil
  return setmetatable(copy, getmetatable(value) == cjson.array_mt and cjson.array_mt or nil)
end

-- M.encode(value) -> JSON text (one line)
function M.encode(value)
  return cjson.encode(clean(value, {}))
end

-- M.decode(text) -> value, or nil and why
function M.decode(text)
  if type(text) ~= "string" then return nil, "no text" end
  local ok, value = pcall(cjson.decode, text)
  if not ok then return nil, tostring(value) end
  return value
end

M.null = cjson.null
return M
