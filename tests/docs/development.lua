-- docs/development.md's generated sections, each between <!-- generated: NAME --> and
-- <!-- end: NAME -->: the worker protocol's table (engine/service.lua's PROTOCOL, which the service
-- answers) and the index from each module to the tests that exercise it (read from the tests'
-- names, requires, the commands they run, the headers they include and their "covers:" lines). Run
-- by the gpuexp binary:
--   gpuexp --quiet --arch sm_90 tests/docs/development.lua           checks the page (exit 1 if stale)
--   gpuexp --quiet --arch sm_90 tests/docs/development.lua --write   rewrites the sections
local root = gpuexp.script_dir:gsub("/tests/docs$", "")
local page_path = root .. "/docs/development.md"

local read = require("gpuexp.store.meta").read_all

local function listing(command)
  local pipe = io.popen("cd '" .. root .. "' && " .. command)
  local list = {}
  for line in pipe:lines() do list[#list + 1] = line end
  pipe:close()
  return list
end

-- The protocol's table: one row a message, in the order of a sweep's exchange.
local function protocol_table()
  local protocol = require("gpuexp.engine.service").PROTOCOL
  local names = {}
  for name in pairs(protocol) do names[#names + 1] = name end
  table.sort(names, function(a, b) return protocol[a].order < protocol[b].order end)
  local out = {"| message | fields | reply | when |", "|---|---|---|---|"}
  for _, name in ipairs(names) do
    local m = protocol[name]
    out[#out + 1] = string.format("| `%s` | %s | %s | %s |", name, m.fields, m.reply:gsub("|", "\\|"), m.when)
  end
  return table.concat(out, "\n")
end

-- The tests: their names (ctest's: lua.test_x, gpu.test_x, unit.x, docs.x, cli.x) and texts.
local function tests()
  local list = {}
  for _, path in ipairs(listing("ls tests/lua/*.lua tests/gpu/*.lua tests/docs/*.lua tests/unit/*.c tests/unit/*.cpp " ..
    "tests/cli/*.sh")) do
    local folder, base = path:match("^tests/(%w+)/(.-)%.%w+$")
    local name = folder == "unit" and ("unit." .. base:gsub("^test_", ""))
      or folder == "cli" and (base == "test_cli" and "cli.errors" or "cli." .. base:gsub("^test_", ""))
      or folder == "docs" and ({run_docs = "docs.blocks", lua_api = "docs.lua_api", test_runner = "docs.runner",
        development = "docs.development"})[base]
      or (folder .. "." .. base)
    if name then list[#list + 1] = {name = name, base = base, text = read(root .. "/" .. path) or ""} end
  end
  return list
end

-- Whether a test says it covers a file: a line "-- covers: lua/gpuexp/engine/inline.lua, ..." (or
-- "# covers: ..." in a shell test) naming it.
local function covers(test, path)
  for list in test.text:gmatch("[-#]+ covers: ([^\n]*)") do
    for item in list:gmatch("[^,%s]+") do
      if item == path then return true end
    end
  end
  return false
end

-- Whether a test exercises a Lua module: named after it (test_ledger, test_history_merge for
-- history), requiring it, covering it, or, for a command, running it (ws.run("compare ...")).
local function exercises_lua(test, module, base, command)
  if test.base == "test_" .. base or test.base:find("^test_" .. base .. "_") then return true end
  if test.text:find('require%("' .. module:gsub("%.", "%%.") .. '"%)') then return true end
  if command then
    for _, pattern in ipairs({'run%(%s*"' .. command .. '[ "]', "run%(%s*'" .. command .. "[ ']",
      '"%$gpuexp" ' .. command .. "%f[^%w_]", '%%s ' .. command .. ' ', '"' .. command .. ' %-%-'}) do
      if test.text:find(pattern) then return true end
    end
  end
  return false
end

-- The index: every Lua module and core C file, with the tests that exercise it (a core file: the
-- unit tests that include its header, and the tests named after it).
local function module_index()
  local all = tests()
  local out = {"| module | tests |", "|---|---|"}
  local function row(module, found, otherwise)
    table.sort(found)
    out[#out + 1] = string.format("| `%s` | %s |", module, #found > 0 and table.concat(found, ", ") or
      ("none by name, require, command or covers line: " .. otherwise))
  end
  for _, path in ipairs(listing("ls lua/gpuexp/*.lua lua/gpuexp/*/*.lua | sort")) do
    local short = path:gsub("^lua/gpuexp/", ""):gsub("%.lua$", "")
    local module = "gpuexp." .. short:gsub("/", ".")
    local base = short:match("([%w_]+)$")
    local command = short:match("^commands/([%w_]+)$")
    if command == "run" or command == "runner" then command = nil end -- every run is theirs: by name only
    local found = {}
    for _, test in ipairs(all) do
      if exercises_lua(test, module, base, command) or covers(test, path) then found[#found + 1] = test.name end
    end
    row(path, found, "reached through the modules above it")
  end
  for _, path in ipairs(listing("ls src/core/gx_*.c | sort")) do
    local base = path:match("gx_([%w_]+)%.c$")
    local found = {}
    for _, test in ipairs(all) do
      if test.text:find('#include "gx_' .. base .. '%.h"') or test.base == "test_" .. base or covers(test, path) then
        found[#found + 1] = test.name
      end
    end
    row(path, found, "reached through the bindings (the Lua tests)")
  end
  return table.concat(out, "\n")
end

local sections = {protocol = protocol_table(), tests = module_index()}

-- The page with each generated section replaced by what its source gives now.
local function generated(page)
  for name, text in pairs(sections) do
    local begin_mark, end_mark = "<!-- generated: " .. name .. " -->", "<!-- end: " .. name .. " -->"
    local first = assert(page:find(begin_mark, 1, true), "docs/development.md has no " .. begin_mark)
    local last = assert(page:find(end_mark, first, true), "docs/development.md has no " .. end_mark)
    page = page:sub(1, first + #begin_mark) .. text .. "\n" .. page:sub(last)
  end
  return page
end

local page = assert(read(page_path), "cannot read " .. page_path)
local fresh = generated(page)
if arg[1] == "--write" then -- replaced whole (a temporary file renamed over it)
  assert(gpuexp._write_file(page_path, fresh))
  return print("wrote " .. page_path)
end
-- the sections follow their sources: a message added to the protocol reaches the table
local service = require("gpuexp.engine.service")
service.PROTOCOL.planted = {order = 99, fields = "x", reply = "none", when = "never"}
assert(protocol_table():find("| `planted` |", 1, true), "a message added to PROTOCOL is not in the table")
service.PROTOCOL.planted = nil
if fresh ~= page then
  io.stderr:write(page_path .. "'s generated sections are not what their sources give: run\n" ..
    "  build/gpuexp --quiet --arch sm_90 tests/docs/development.lua --write\n")
  os.exit(1)
end
print("ok " .. page_path .. ": the protocol table and the tests index are current")
