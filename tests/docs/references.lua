-- Every path the help, the man page, the completion and the references point to exists (docs/...,
-- lua/..., tests/..., bench/..., packaging/..., src/...: the repository's own files; experiments/
-- and kernels/ are a user's too, and examples), and the hand-written command-line page agrees
-- with the catalog: each command it names is one, each environment variable is in the catalog's
-- list, each exit code is one of the catalog's. Run by the gpuexp binary: references.lua BINARY.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local catalog = require("gpuexp.catalog")
local binary = assert(arg[1], "usage: references.lua BINARY")
local root = gpuexp.script_dir:gsub("/tests/docs$", "")
if not root:match("^/") then root = os.getenv("PWD") .. "/" .. root end
local ws = T.workspace(binary)

local function source(path) return assert(T.read(root .. "/" .. path), "cannot read " .. path) end
local function exists(path)
  return T.read(root .. "/" .. path) ~= nil or os.execute("test -d '" .. root .. "/" .. path .. "'") == true
end
local function listing(command)
  local names = {}
  local pipe = io.popen("cd '" .. root .. "' && " .. command)
  for line in pipe:lines() do names[#names + 1] = line end
  pipe:close()
  return names
end

-- the texts a user reads: every command's help, gpuexp --help, the list, the man page, the reference,
-- the completion, the Lua API's definitions and reference, and the commands' own messages
local texts = {}
local function add(name, text) texts[#texts + 1] = {name = name, text = text} end
for _, command in ipairs(catalog.commands) do
  local code, stdout = ws.run("help " .. command.name)
  T.eq(code, 0, "gpuexp help " .. command.name)
  add("gpuexp help " .. command.name, stdout)
end
for _, arguments in ipairs({"--help", "help", "help --man", "help --reference"}) do
  local _, stdout = ws.run(arguments)
  add("gpuexp " .. arguments, stdout)
end
for _, path in ipairs(listing("ls docs/reference/*.md lua/types/gpuexp.lua packaging/gpuexp.bash-completion " ..
  "lua/gpuexp/catalog.lua lua/gpuexp/catalog_text.lua lua/gpuexp/commands/*.lua")) do
  add(path, source(path))
end
T.ok(#texts > #catalog.commands + 10, "the texts were read: " .. #texts)

-- every path into the repository's own folders exists
local owned = {docs = true, lua = true, tests = true, bench = true, packaging = true, src = true}
local missing, checked = {}, 0
for _, t in ipairs(texts) do
  for token in t.text:gmatch("[%w_./-]+") do
    local top = token:match("^(%a+)/")
    if top and owned[top] then
      local path = token:gsub("[.,]+$", "")
      checked = checked + 1
      if not exists(path) then missing[#missing + 1] = t.name .. ": " .. path end
    end
  end
end
T.ok(checked >= 20, "paths checked: " .. checked)
T.eq(table.concat(missing, "\n"), "", "every path named exists")

-- the hand-written command-line page against the catalog: its lists (commands, options, exit codes,
-- variables) are the generated reference's, linked, never a table of its own that drifts from it
local page = source("docs/reference/command-line.md")
for _, anchor in ipairs({"cli.md#exit-codes", "cli.md#environment-variables"}) do
  T.ok(page:find("(" .. anchor .. ")", 1, true), "command-line.md links the generated " .. anchor)
end
local number = 0
for line in page:gmatch("([^\n]*)\n") do
  number = number + 1
  T.ok(not line:match("^|"), string.format("command-line.md:%d: a table of its own (the generated reference " ..
    "docs/reference/cli.md has the options, exit codes and variables): %s", number, line))
end
local variables = {}
for _, variable in ipairs(catalog.environment) do variables[variable.name] = true end
for name in page:gmatch("`%$?([%u][%u%d]*_[%u%d_]+)[`=]") do
  T.ok(variables[name], "command-line.md names " .. name .. ", which is not in the catalog's environment")
end
local codes = {}
for _, value in pairs(catalog.EXIT) do codes[value] = true end
for listed in page:gmatch("exit (%d+)\n") do T.ok(codes[tonumber(listed)], "command-line.md shows exit " .. listed) end
local commands = 0
for word in page:gmatch("`gpuexp (%l+)[ `]") do
  commands = commands + 1
  T.ok(catalog.find(word), "command-line.md names `gpuexp " .. word .. "`, which is not a command")
end
T.ok(commands >= 2, "commands named on the page: " .. commands)

-- every value kernel:metrics derives (the bank-conflict column of the bank_conflicts preset among
-- them) is named in the metrics how-to: derived from every input a preset collects
local metrics = require("gpuexp.api.metrics")
local inputs = {}
for _, names in pairs(metrics.presets) do for _, name in ipairs(names) do inputs[name] = 2 end end
local derived = metrics.derive(inputs)
derived.theoretical_occupancy_pct, derived.occupancy_limiter, derived.achieved_occupancy_pct = 1, 1, 1 -- (occupancy's)
local how_to = source("docs/howto/metrics.md")
local named = 0
for name in pairs(derived) do
  named = named + 1
  T.ok(how_to:find("`" .. name .. "`", 1, true), "docs/howto/metrics.md names the derived value " .. name)
end
T.ok(named >= 14, "derived values: " .. named)
T.done()
