-- The LuaLS definitions (lua/types/gpuexp.lua) against the binary: every public function of the
-- gpuexp table and every method of its types must be declared, and nothing declared may be missing
-- from the binary. The check is also run on copies with a planted omission and a planted extra.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local file = assert(io.open(gpuexp.script_dir .. "/../../lua/types/gpuexp.lua"))
local text = file:read("a")
file:close()

-- what the binary has: "gpuexp.name" and "gpuexp.Type:method"
local actual = {}
for name, value in pairs(gpuexp) do
  if type(value) == "function" and name:sub(1, 1) ~= "_" then actual["gpuexp." .. name] = true end
end
local registry = debug.getregistry()
for _, class in ipairs({"Device", "Buffer", "Program", "Kernel", "Launch", "Stream", "Event", "Sequence"}) do
  local metatable = registry["gpuexp." .. class]
  local methods = metatable and (metatable.methods or type(metatable.__index) == "table" and metatable.__index)
  T.ok(methods, "the binary has the type gpuexp." .. class)
  for method in pairs(methods) do actual["gpuexp." .. class .. ":" .. method] = true end
end
for method, value in pairs(gpuexp.lesson()) do
  if type(value) == "function" then actual["gpuexp.Lesson:" .. method] = true end
end

-- what a definitions text declares
local function declared(source)
  local names, locals, class = {}, {}, nil
  for line in (source .. "\n"):gmatch("([^\n]*)\n") do
    class = line:match("^%-%-%-@class gpuexp%.(%w+)") or class -- methods hang on the local after a ---@class
    local local_name = line:match("^local (%w+) = {}")
    if local_name and class then locals[local_name] = class end
    local name = line:match("^function gpuexp%.([%w_]+)%(")
    if name then names["gpuexp." .. name] = true end
    local owner, method = line:match("^function (%w+):([%w_]+)%(")
    if owner and locals[owner] then names["gpuexp." .. locals[owner] .. ":" .. method] = true end
  end
  return names
end
local function differences(source)
  local names = declared(source)
  local missing, extra = {}, {}
  for name in pairs(actual) do if not names[name] then missing[#missing + 1] = name end end
  for name in pairs(names) do if not actual[name] then extra[#extra + 1] = name end end
  table.sort(missing); table.sort(extra)
  return missing, extra
end

local missing, extra = differences(text)
T.eq(table.concat(missing, ", "), "", "functions of the binary missing from lua/types/gpuexp.lua")
T.eq(table.concat(extra, ", "), "", "functions declared in lua/types/gpuexp.lua that the binary lacks")
local count = 0
for _ in pairs(actual) do count = count + 1 end
T.ok(count >= 70, "the comparison covers the whole API: " .. count .. " functions and methods")

-- the check catches a planted omission and a planted extra
local planted = text:gsub("\nfunction gpuexp%.hash%(text%) end", "", 1)
missing = differences(planted)
T.eq(table.concat(missing, ","), "gpuexp.hash", "an omission is caught")
_, extra = differences(text .. "\nfunction Kernel:teleport() end\n")
T.eq(table.concat(extra, ","), "gpuexp.Kernel:teleport", "an extra declaration is caught")
T.done()
