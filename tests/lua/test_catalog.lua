-- The command catalog (lua/gpuexp/catalog.lua) is the one list of commands, options and
-- exit codes: every command dispatches and prints its help from it, every option of a command's
-- entry is accepted by the command (its parser, engine/args.lua, reads nothing else) and one not
-- listed is refused, the run's options reach gpuexp.run_options by their fields, C's exit codes are
-- its numbers, and the completion's words (commands, options, metric presets) are the binary's.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local catalog = require("gpuexp.catalog")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local root = gpuexp.script_dir .. "/../.."

local function source(path)
  local file = assert(io.open(root .. "/" .. path))
  local text = file:read("a")
  file:close()
  return text
end

local args = require("gpuexp.engine.args")

-- A value of an option's type that its parser accepts.
local samples = {number = "1", integer = "1", seconds = "1", timeout = "5", shard = "0/1", only = "a=1",
  list = "a", metric = "median_ms", define = "K=1"}
local function sample(option)
  if option.type == "choice" then return option.choices[1] end
  if option[1]:find("max|driver|KIB", 1, true) then return "max" end -- occupancy's own (C) value
  if option.type == "integer" or option.type == "number" then
    return tostring(option.min or (option.above and option.above + 1) or 1)
  end
  return samples[option.type or "string"] or "x"
end
local known_types = {string = true, path = true, number = true, integer = true, seconds = true, choice = true, list = true,
  timeout = true, shard = true, only = true, metric = true, define = true}

local _, listed_text = ws.run("help --commands")
local listed = {}
for name in listed_text:gmatch("[^\n]+") do listed[#listed + 1] = name end
T.eq(#listed, #catalog.commands, "gpuexp help --commands lists the catalog")

for i, command in ipairs(catalog.commands) do
  local name = command.name
  T.eq(listed[i], name, "command " .. i)
  -- dispatched from the catalog, with its help from it
  local code, stdout, stderr = ws.run(name == "run" and "--help" or (name .. " --help"))
  T.eq(code, 0, name .. " --help: " .. stderr)
  local expected = name == "help" and (catalog.summary() .. "\n" .. catalog.help("help")) or catalog.help(name)
  T.eq(stdout, expected, name .. " --help prints the catalog's text")
  T.ok(#command.exits > 0, name .. " lists its exit codes")
  local known = {}
  for _, code_name in pairs(catalog.EXIT) do known[code_name] = true end
  for _, exit in ipairs(command.exits) do T.ok(known[exit[1]], name .. ": exit code " .. exit[1] .. " is in catalog.EXIT") end
  -- every option of its entry is accepted by the command itself, with a value of its type (parsed,
  -- then --help: nothing runs), and one not in the catalog is refused naming the command
  -- (history's entries are its subcommands, each parsing its own words: see docs/development.md)
  if not command.run_option and not command.options_title then
    for _, option in ipairs(command.options or {}) do
      local flags, argument = args.flags(option)
      T.ok(#flags > 0, name .. ": an entry names its flags: " .. option[1])
      T.ok(known_types[option.type or "string"], name .. " " .. option[1] .. ": a known type")
      T.ok(option.type ~= "choice" or #option.choices > 0, name .. " " .. option[1] .. ": a choice lists its choices")
      local default = option.default ~= nil and type(option.default) ~= "boolean" and tostring(option.default)
      local said = option[2]:match("%(default ([^;)]+)")
      T.ok(not (default and said) or said == default, name .. " " .. option[1] .. ": the help's default is the entry's")
      for _, flag in ipairs(flags) do
        local line = string.format("%s %s %s --help", name == "run" and "" or name, flag,
          argument and ("'" .. sample(option) .. "'") or "")
        local code, _, stderr = ws.run(line)
        T.eq(code, 0, name .. " accepts " .. flag .. " (" .. line .. "): " .. stderr)
      end
    end
    local code, _, stderr = ws.run((name == "run" and "" or name) .. " --not-in-the-catalog --help")
    T.eq(code, 2, name .. ": an option not in the catalog is refused")
    -- (the C commands keep their own loops and words: src/cli/gx_cli_*.c, docs/development.md)
    local unknown = command.native and "unknown argument '" or "unknown option '"
    T.ok(stderr:find(unknown .. "--not-in-the-catalog'", 1, true), name .. " says which: " .. stderr)
    T.ok(stderr:find(name == "run" and "gpuexp: " or (name .. ": "), 1, true), "naming the command: " .. stderr)
  end
  -- history's subcommands: each line's options are its subcommand's entries, and each is accepted
  if command.options_title then
    local line_flags, entry_flags = {}, {}
    for _, line in ipairs(command.options) do
      if line.subcommand then
        for flag in line[1]:gmatch("%f[%w-](%-%-?%a[%w-]*)") do line_flags[line.subcommand .. " " .. flag] = true end
        local entry = assert(args.subcommand(name, line.subcommand), line.subcommand .. " is a subcommand")
        T.ok(not line.also or args.subcommand(name, line.also), line.also or "", "and its pair")
        for _, option in ipairs(line.options or {}) do
          local flags, argument = args.flags(option)
          for _, flag in ipairs(flags) do
            entry_flags[line.subcommand .. " " .. flag] = true
            local run_line = string.format("%s %s %s %s --help", name, line.subcommand, flag,
              argument and ("'" .. sample(option) .. "'") or "")
            local code, _, stderr = ws.run(run_line)
            T.eq(code, 0, run_line .. ": " .. stderr)
          end
        end
        T.ok(#entry.options > #(line.options or {}), line.subcommand .. " takes the command's own options too")
      end
    end
    for flag in pairs(line_flags) do T.ok(entry_flags[flag], flag .. ": the line's option is an entry") end
    for flag in pairs(entry_flags) do T.ok(line_flags[flag], flag .. ": the entry is on its line") end
    local code, _, stderr = ws.run(name .. " list --not-in-the-catalog")
    T.eq(code, 2, "history list: an option not in the catalog is refused")
    T.ok(stderr:find("gpuexp history: list: unknown option '--not-in-the-catalog'", 1, true), stderr)
  end
  local _, words = ws.run("help --options " .. name)
  T.eq(words, table.concat(catalog.options(name), "\n") .. "\n", name .. ": the completion's options")
end
-- the run command's parser reads its options from the catalog: every option listed is accepted and
-- reaches the script (gpuexp.run_options[field]), and one not listed is refused with a suggestion
ws.write("probe.lua", [[
local keys = {}
for key, value in pairs(gpuexp.run_options) do
  if type(value) ~= "table" then keys[#keys + 1] = key .. "=" .. tostring(value) end
end
table.sort(keys)
print(table.concat(keys, " "))
]])
local values = {["--devices"] = "0", ["--shard"] = "0/1", ["--only"] = "a=1", ["--point-timeout"] = "5",
  ["--night"] = "n1", ["--night-kind"] = "nightly", ["--night-suite"] = "s", ["--night-experiment"] = "e",
  ["--trace"] = "t.json", ["--history"] = "h.sqlite", ["-a"] = "sm_90", ["--arch"] = "sm_90"}
-- the fields main.c acts on itself and keeps out of gpuexp.run_options (device goes in as a number)
local c_only = {inline = true, out = true, help = true, version = true, device = true}
local run_options = 0
for _, option in ipairs(catalog.commands[1].options) do
  if option.field and not c_only[option.field] then
    local flags, argument = args.flags(option)
    for _, flag in ipairs(flags) do
      local field = args.field(option)
      T.eq(field, option.field, flag .. ": the catalog gives its field")
      local value = argument and (values[flag] or "x") or nil
      local code, stdout, stderr = ws.run(string.format("--arch sm_90 --inline %s %s probe.lua", flag, value or ""))
      T.ok(code == 0 and not stderr:find("unknown option"), flag .. " is accepted: " .. stderr)
      local shown = stdout:match("%f[%w_]" .. field .. "=(%S*)")
      local expected = option.value ~= nil and tostring(option.value) or value or "true"
      T.eq(shown, expected, flag .. " sets gpuexp.run_options." .. field .. " (" .. stdout .. ")")
      run_options = run_options + 1
    end
  end
end
T.ok(run_options >= 15, "run options checked through the parser: " .. run_options)
local code, _, stderr = ws.run("--arch sm_90 --inline --resum probe.lua")
T.eq(code, 2, "an option the catalog does not list is refused")
T.ok(stderr:find("unknown option '--resum' (did you mean '--resume'?)", 1, true), "with a suggestion: " .. stderr)

T.eq(ws.run("nosuchcommand --help"), 2, "an unknown word is a script name: not found, exit 2")

-- a choice the library knows too is the library's list: tune --strategy's are the search's
local strategies = {}
for _, option in ipairs(catalog.find("tune").options) do
  if option[1]:match("^%-%-strategy") then for _, choice in ipairs(option.choices) do strategies[choice] = true end end
end
for name in pairs(require("gpuexp.api.search").STRATEGIES) do
  T.ok(strategies[name], "tune --strategy lists the search's strategy " .. name)
  strategies[name] = nil
end
T.eq(next(strategies), nil, "tune --strategy lists no strategy the search lacks")

-- C's exit codes are the catalog's numbers
local values = {}
for _, value in pairs(catalog.EXIT) do values[value] = true end
local c_codes = 0
for name, value in source("src/cli/gx_cli.h"):gmatch("GX_EXIT_(%u+)%s*=%s*(%d+)") do
  c_codes = c_codes + 1
  T.ok(values[tonumber(value)], "gx_cli.h's GX_EXIT_" .. name .. " = " .. value .. " is in the catalog")
end
T.ok(c_codes >= 5, "gx_cli.h's exit codes were read")

-- the completion keeps no list of its own: presets come from the library
local _, presets = ws.run("help --presets")
local names = {}
for name in pairs(require("gpuexp.api.metrics").presets) do names[#names + 1] = name end
table.sort(names)
T.eq(presets, table.concat(names, "\n") .. "\n", "gpuexp help --presets lists the library's presets")
local completion = source("packaging/gpuexp.bash-completion")
T.ok(completion:find("help --presets", 1, true), "the completion asks the binary for the presets")
for _, name in ipairs(names) do
  if not catalog.find(name) then -- "occupancy" is a command's name too
    T.ok(not completion:find("%f[%w_]" .. name .. "%f[^%w_]"), "the completion has no preset of its own (" .. name .. ")")
  end
end
-- the reference, the man page and the environment come from the catalog
local _, reference = ws.run("help --reference")
T.eq(source("docs/reference/cli.md"), reference,
  "docs/reference/cli.md is `gpuexp help --reference` (regenerate: gpuexp help --reference > docs/reference/cli.md)")
for _, command in ipairs(catalog.commands) do
  T.ok(reference:find("\n## gpuexp " .. command.name .. "\n", 1, true), "the reference has " .. command.name)
end
local _, man = ws.run("help --man")
T.ok(man:find("\n.SH EXIT STATUS\n", 1, true), "the man page has EXIT STATUS")
T.ok(man:find("\n.SH ENVIRONMENT\n", 1, true), "the man page has ENVIRONMENT")
local documented = {}
for _, variable in ipairs(catalog.environment) do
  documented[variable.name] = true
  T.ok(man:find("\n.B " .. variable.name .. "\n", 1, true), "the man page's ENVIRONMENT has " .. variable.name)
  T.ok(reference:find("| `" .. variable.name .. "` |", 1, true), "the reference has " .. variable.name)
end
-- every variable the sources read is in the catalog
local listing = io.popen("cd '" .. root .. "' && grep -rhoE '(getenv|environment_integer)\\(\"[A-Z_]+\"' src lua")
local read_somewhere = 0
for line in listing:lines() do
  local name = line:match('"([A-Z_]+)"')
  read_somewhere = read_somewhere + 1
  T.ok(documented[name], name .. " is read by the sources and listed in catalog.environment")
end
listing:close()
T.ok(read_somewhere >= 20, "environment variables found in the sources: " .. read_somewhere)
T.done()
