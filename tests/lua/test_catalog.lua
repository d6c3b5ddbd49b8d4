-- The command catalog (lua/gpuexp/catalog.lua) is the one list of commands, options and
-- exit codes: every command dispatches and prints its help from it, every option of a command's
-- entry is accepted by the command (its parser, engine/args.lua, reads nothing else) and one not
-- listed is refused, the run's options reach gpuexp.run_options by their fields, C's exit codes are
-- its numbers, and the completion's words (commands, options, metric presets) are the binary's.
-- covers: lua/gpuexp/catalog_text.lua, lua/gpuexp/commands/runner.lua, lua/gpuexp/commands/run.lua, lua/gpuexp/main.lua
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
  arch = "sm_90", archs = "sm_80,sm_90", ranges = "1,2:4", carveout = "max",
  list = "a", metric = "median_ms", define = "K=1"}
local function sample(option)
  if option.type == "choice" then return option.choices[1] end
  if option.type == "integer" or option.type == "number" then
    return tostring(option.min or (option.above and option.above + 1) or 1)
  end
  return samples[option.type or "string"] or "x"
end
local known_types = {string = true, path = true, number = true, integer = true, seconds = true, choice = true, list = true,
  arch = true, archs = true, ranges = true, carveout = true,
  timeout = true, shard = true, only = true, metric = true, define = true}

local _, listed_text = ws.run("help --commands")
local listed = {}
for name in listed_text:gmatch("[^\n]+") do listed[#listed + 1] = name end
T.eq(#listed, #catalog.commands, "gpuexp help --commands lists the catalog")
-- gpuexp --help (no command named) lists the commands, then the run's options
do
  local code, stdout = ws.run("--help")
  T.eq(code, 0, "gpuexp --help")
  T.eq(stdout, catalog.summary() .. "\n" .. catalog.help("run"), "gpuexp --help: the commands, then the run's help")
  for _, command in ipairs(catalog.commands) do
    T.ok(stdout:find("\n  " .. command.name .. " ", 1, true), "gpuexp --help lists " .. command.name)
  end
end

for i, command in ipairs(catalog.commands) do
  local name = command.name
  T.eq(listed[i], name, "command " .. i)
  -- dispatched from the catalog, with its help from it
  local code, stdout, stderr = ws.run(name .. " --help")
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
      -- a default is a field (default =, or default_text = when it is no one value), rendered into the
      -- help: a help text never says one itself
      T.ok(not option[2]:find("default", 1, true), name .. " " .. option[1] .. ": the help text says no default: " ..
        option[2])
      T.ok(option.default == nil or option.default_text == nil, name .. " " .. option[1] .. ": one default")
      for _, flag in ipairs(flags) do
        local line = string.format("%s %s %s --help", name == "run" and "" or name, flag,
          argument and ("'" .. sample(option) .. "'") or "")
        local code, _, stderr = ws.run(line)
        T.eq(code, 0, name .. " accepts " .. flag .. " (" .. line .. "): " .. stderr)
      end
    end
    local code, _, stderr = ws.run((name == "run" and "" or name) .. " --not-in-the-catalog --help")
    T.eq(code, 2, name .. ": an option not in the catalog is refused")
    -- (the C commands too: their lines are parsed by the one parser, said in the one style)
    T.ok(stderr:find("unknown option '--not-in-the-catalog'", 1, true), name .. " says which: " .. stderr)
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
-- reaches the script typed (gpuexp.run_options[field]: --shard as {index, count}, --only as its
-- clauses), and one not listed is refused with a suggestion
ws.write("probe.lua", [[
local function shown(value)
  if type(value) ~= "table" then return tostring(value) end
  if value.index then return value.index .. "/" .. value.count end
  local clause = value[1]
  if type(clause) ~= "table" then return nil end
  local key, cell = next(clause)
  return key .. "=" .. cell
end
local keys = {}
for key, value in pairs(gpuexp.run_options) do
  if shown(value) then keys[#keys + 1] = key .. "=" .. shown(value) end
end
table.sort(keys)
print(table.concat(keys, " "))
]])
local values = {["--devices"] = "0", ["--shard"] = "0/1", ["--only"] = "a=1", ["--point-timeout"] = "5",
  ["--night"] = "n1", ["--night-kind"] = "nightly", ["--night-suite"] = "s", ["--night-experiment"] = "e",
  ["--trace"] = "t.json", ["--history"] = "h.sqlite", ["-a"] = "sm_90", ["--arch"] = "sm_90", ["--lines-only"] = "sass"}
-- every option reaches the script but --help and --version, which print and end
local printing = {help = true, version = true}
local run_options = 0
for _, option in ipairs(catalog.commands[1].options) do
  if option.field and not printing[option.field] then
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

-- the defaults the command line shares with the library are the library's values
local function default_of(command, flag)
  for _, option in ipairs(catalog.find(command).options) do
    if args.flags(option)[#args.flags(option)] == flag then return option.default, option.default_text end
  end
end
T.eq(default_of("compare", "--threshold"), require("gpuexp.judge.rule").FLOOR_PCT, "compare --threshold: the rule's floor")
T.eq(default_of("nightly", "--threshold"), require("gpuexp.judge.rule").FLOOR_PCT, "nightly --threshold: the rule's floor")
T.eq(default_of("nightly", "--baseline"), require("gpuexp.judge.verdict").DEFAULT_BASELINE_RUNS, "nightly --baseline")
T.eq(default_of("lines", "--top"), require("gpuexp.judge.lines").TOP, "lines --top: the lines shown by default")
T.eq(default_of("nightly", "--lines-timeout"), require("gpuexp.commands.lines").NIGHT_TIMEOUT_S, "nightly --lines-timeout")
local _, bisect_threshold = default_of("bisect", "--threshold")
T.ok(bisect_threshold:find("^" .. string.format("%g", require("gpuexp.judge.rule").FLOOR_PCT) .. ","),
  "bisect --threshold: " .. bisect_threshold)
local ab_defaults = require("gpuexp.api.ab").defaults
for flag, key in pairs({["--mde"] = "mde_pct", ["--budget-s"] = "budget_s", ["--seed"] = "seed",
  ["--threshold"] = "threshold_pct"}) do
  local _, text = default_of("ab", flag)
  T.eq(tonumber(text:match("else (%d+)$")), ab_defaults[key], "ab " .. flag .. ": the library's default")
end
-- every default given is the one used: each option's default field, read by its type, is the value a
-- command gets when the option is not given (engine/args.lua)
for _, command in ipairs(catalog.commands) do
  if not command.run_option and not command.options_title then
    local module = require(command.module)
    local fields = args.parse(command, {}, module.TYPES)
    for _, option in ipairs(command.options or {}) do
      local flags, argument = args.flags(option)
      if option.default ~= nil and argument then
        local typed = args.parse(command, {flags[#flags], tostring(option.default)}, module.TYPES)
        T.ok(typed, command.name .. " " .. flags[#flags] .. " takes its default")
        local field = args.field(option)
        T.eq(type(fields[field]) == "table" and #fields[field] or fields[field],
          type(typed[field]) == "table" and #typed[field] or typed[field], command.name .. " " .. flags[#flags] ..
          ": not given is its default given")
      end
    end
  end
end

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

-- the exit codes are the catalog's alone: C keeps no table of them (main.c's one failure before Lua
-- runs is EX_SOFTWARE, the catalog's INTERNAL), and the error kinds map to them in one place
T.eq(catalog.EXIT.INTERNAL, 70, "EXIT.INTERNAL is sysexits.h's EX_SOFTWARE, which main.c exits with")
local c_sources = io.popen("cd '" .. root .. "' && cat src/cli/*.c src/cli/*.h src/bindings/*.c src/bindings/*.h")
local c_text = c_sources:read("a")
c_sources:close()
T.ok(#c_text > 10000, "the C sources were read")
T.ok(not c_text:find("GX_EXIT_", 1, true), "no exit code of C's own (GX_EXIT_*)")
for kind, code in pairs(require("gpuexp.engine.exits").BY_KIND) do
  local named = false
  for _, value in pairs(catalog.EXIT) do named = named or value == code end
  T.ok(named, "the kind " .. kind .. " exits with a code of the catalog")
end

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
