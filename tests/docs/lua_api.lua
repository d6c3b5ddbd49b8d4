-- The Lua API reference, docs/reference/lua-api.md, generated from the LuaLS definitions
-- (lua/types/gpuexp.lua), which tests/lua/test_luals.lua holds to the binary. Run by the gpuexp binary:
--   gpuexp --quiet --arch sm_90 tests/docs/lua_api.lua           checks the committed page (exit 1 if stale)
--   gpuexp --quiet --arch sm_90 tests/docs/lua_api.lua --write   writes it
local root = gpuexp.script_dir:gsub("/tests/docs$", "")
local definitions_path = root .. "/lua/types/gpuexp.lua"
local page_path = root .. "/docs/reference/lua-api.md"

local read = require("gpuexp.store.meta").read_all

-- A type at the start of text, and the rest: the type may hold spaces inside braces, parentheses,
-- angle brackets and after ':' ',' '|' ("{file?: string, n: integer}", "fun(x: integer): string").
local function split_type(text)
  local depth, last = 0, ""
  for i = 1, #text do
    local c = text:sub(i, i)
    if c:match("[{(<%[]") then depth = depth + 1 elseif c:match("[})>%]]") then depth = depth - 1 end
    if c:match("%s") and depth == 0 and not last:match("[:,|]") and not text:sub(i):match("^%s*|") then
      return text:sub(1, i - 1), (text:sub(i):gsub("^%s+", ""))
    end
    if not c:match("%s") then last = c end
  end
  return text, ""
end

-- The definitions as data: classes in file order, each with its fields and functions, and aliases.
local function parse(text)
  local classes, by_name, aliases, locals = {}, {}, {}, {}
  local class, doc, params, returns = nil, {}, {}, {}
  local function reset() doc, params, returns = {}, {}, {} end
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local name, rest = line:match("^%-%-%-@class ([%w_.]+)(.*)$")
    local parent, about = (rest or ""):match("^%s*:%s*([%w_.]+)%s*(.*)$")
    if not parent then parent, about = "", (rest or ""):match("^%s*(.-)%s*$") end
    local alias_name, alias_type = line:match("^%-%-%-@alias ([%w_.]+) (.+)$")
    if name then
      class = {name = name, parent = parent ~= "" and parent or nil, about = about, fields = {}, functions = {}}
      classes[#classes + 1], by_name[name] = class, class
      reset()
    elseif alias_name then
      aliases[#aliases + 1] = {name = alias_name, type = alias_type}
    elseif line:match("^%-%-%-@field ") then
      local field, rest = line:match("^%-%-%-@field ([%w_]+%??) (.*)$")
      local field_type, field_about = split_type(rest or "")
      if class and field then class.fields[#class.fields + 1] = {name = field, type = field_type, about = field_about} end
    elseif line:match("^%-%-%-@param ") then
      local param, rest = line:match("^%-%-%-@param ([%w_.]+%??) (.*)$")
      local param_type, param_about = split_type(rest or "")
      params[#params + 1] = {name = param, type = param_type, about = param_about}
    elseif line:match("^%-%-%-@return ") then
      returns[#returns + 1] = line:match("^%-%-%-@return (.*)$")
    elseif line:match("^%-%-%-@") then
      -- other annotations (@meta, @operator, @type) carry nothing for the page
    elseif line:match("^%-%-%-") then
      doc[#doc + 1] = line:match("^%-%-%-%s?(.*)$")
    else
      local local_name = line:match("^local (%w+) = {}")
      if local_name and class then locals[local_name] = class end
      local owner, separator, method, args = line:match("^function ([%w_]+)([.:])([%w_]+)%((.-)%)")
      if owner then
        local target = owner == "gpuexp" and by_name.gpuexp or locals[owner]
        assert(target, "a function of an unknown owner: " .. line)
        target.functions[#target.functions + 1] = {
          call = (owner == "gpuexp" and "gpuexp." or target.name:gsub("^gpuexp%.", ""):lower() .. ":") .. method,
          args = args, doc = table.concat(doc, " "), params = params, returns = returns}
      end
      if not line:match("^%s*$") then reset() end
    end
  end
  return classes, aliases
end

local function cell(text) return (text or ""):gsub("|", "\\|") end
local function code(text) return "`" .. cell(text) .. "`" end -- in a table: | escaped
local function span(text) return "`" .. text .. "`" end
local function anchor(class_name) return (class_name:lower():gsub("[^%w%- ]", "")) end

local function generate(text)
  local classes, aliases = parse(text)
  local out = {}
  local function add(line) out[#out + 1] = line end
  add("# Reference: the Lua API")
  add("")
  add("<!-- Generated from lua/types/gpuexp.lua by tests/docs/lua_api.lua: do not edit by hand. After changing")
  add("the definitions, run `build/gpuexp --quiet --arch sm_90 tests/docs/lua_api.lua --write`. -->")
  add("")
  add("Scripts see one global, `gpuexp`. This page lists every function, method and field of it and of")
  add("the types it returns, from the LuaLS definitions that editors read (`lua/types/gpuexp.lua`, installed")
  add("as `share/gpuexp/luals/gpuexp.lua`; `lua.test_luals` holds them to the binary). The same API by topic,")
  add("with examples: [the scripting reference](scripting.md).")
  add("")
  -- the module first, then the types in file order
  local ordered = {}
  for _, class in ipairs(classes) do if class.name == "gpuexp" then ordered[#ordered + 1] = class end end
  for _, class in ipairs(classes) do if class.name ~= "gpuexp" then ordered[#ordered + 1] = class end end
  local names = {}
  for _, class in ipairs(ordered) do names[#names + 1] = "[" .. class.name .. "](#" .. anchor(class.name) .. ")" end
  add("Contents: " .. table.concat(names, ", ") .. ", [aliases](#aliases).")
  for _, class in ipairs(ordered) do
    add("")
    add("## " .. class.name)
    add("")
    if class.about ~= "" then add(class.about:sub(1, 1):upper() .. class.about:sub(2) .. ".") add("") end
    if class.parent then add("Has every field of [" .. class.parent .. "](#" .. anchor(class.parent) .. ").") add("") end
    if #class.fields > 0 then
      add("| field | type | |")
      add("| --- | --- | --- |")
      for _, field in ipairs(class.fields) do
        add("| " .. code(field.name) .. " | " .. code(field.type) .. " | " .. cell(field.about) .. " |")
      end
      add("")
    end
    for _, fn in ipairs(class.functions) do
      add("### `" .. fn.call .. "(" .. fn.args .. ")`")
      add("")
      if fn.doc ~= "" then add(fn.doc) add("") end
      for _, param in ipairs(fn.params) do
        add("- " .. span(param.name) .. ": " .. span(param.type) .. (param.about ~= "" and " " .. param.about or ""))
      end
      for _, result in ipairs(fn.returns) do add("- returns " .. span(result)) end
      if #fn.params + #fn.returns > 0 then add("") end
    end
  end
  add("")
  add("## Aliases")
  add("")
  add("| alias | type |")
  add("| --- | --- |")
  for _, alias in ipairs(aliases) do add("| " .. code(alias.name) .. " | " .. code(alias.type) .. " |") end
  return table.concat(out, "\n"):gsub("\n\n+", "\n\n") .. "\n"
end

local definitions = assert(read(definitions_path), "cannot read " .. definitions_path)
local page = generate(definitions)
if arg[1] == "--write" then
  local file = assert(io.open(page_path, "wb"))
  file:write(page)
  file:close()
  print("wrote " .. page_path)
  return
end
-- the generator sees what the definitions hold: a planted function and field reach the page
local planted = generate(definitions .. "\n---Planted.\n---@param x integer\nfunction gpuexp.planted_fn(x) end\n")
assert(planted:find("### `gpuexp.planted_fn(x)`", 1, true), "a function added to the definitions is not on the page")
assert(not page:find("planted_fn", 1, true), "the page shows a function the definitions lack")
if read(page_path) ~= page then
  io.stderr:write(page_path .. " is not what lua/types/gpuexp.lua generates: run\n" ..
    "  build/gpuexp --quiet --arch sm_90 tests/docs/lua_api.lua --write\n")
  os.exit(1)
end
print("ok " .. page_path .. " equals the page generated from lua/types/gpuexp.lua")
