-- The command catalog (lua/gpuexp/catalog.lua) is the one list of commands, options and
-- exit codes: every command dispatches and prints its help from it, the options each parser
-- accepts (read from its source) are the ones it lists, C's exit codes are its numbers, and the
-- completion's words (commands, options, metric presets) are the binary's.
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

-- The options a parser's source compares arguments with ("--out", "-o").
local function parsed_options(path)
  local seen, list = {}, {}
  for option in source(path):gmatch('["\'](%-%-?[%a][%w-]*)["\']') do
    if not seen[option] then seen[option] = true; list[#list + 1] = option end
  end
  table.sort(list)
  return list
end

local function set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

-- where each command's options are parsed
local parsers = {
  info = {"src/cli/gx_cli_info.c"}, occupancy = {"src/cli/gx_cli_occupancy.c"},
  metrics = {"src/cli/gx_cli_metrics.c"}, calibrate = {"lua/gpuexp/commands/calibrate.lua"},
  plot = {"lua/gpuexp/commands/plot.lua"}, merge = {"lua/gpuexp/commands/merge.lua"},
  compare = {"lua/gpuexp/commands/compare.lua"}, history = {"lua/gpuexp/commands/history.lua"},
  nightly = {"lua/gpuexp/commands/nightly.lua"}, doctor = {"lua/gpuexp/commands/doctor.lua"},
  bisect = {"lua/gpuexp/commands/bisect.lua"}, tune = {"lua/gpuexp/commands/tune.lua"},
  ab = {"lua/gpuexp/commands/ab.lua"},
  help = {"lua/gpuexp/commands/help.lua"},
}
-- literals in those sources that are not options of the command
-- (nightly passes --only and the --night options to the runs it starts)
local not_options = {nightly = {["--only"] = true, ["--night"] = true, ["--counters"] = true, ["--diagnose"] = true, ["--night-kind"] = true,
  ["--night-suite"] = true, ["--night-experiment"] = true, ["-c"] = true},
  -- bisect's own command lines: the measurement's options, git's, sh's and rm's
  bisect = {["--"] = true, ["--quiet"] = true, ["--only"] = true, ["--out"] = true, ["--detach"] = true,
    ["--end-of-options"] = true, ["--first-parent"] = true, ["--force"] = true, ["--reverse"] = true,
    ["--show-toplevel"] = true, ["--verify"] = true, ["-C"] = true, ["-c"] = true, ["-rf"] = true},
  doctor = {["-c"] = true}, help = {["-name"] = true},
  tune = {["--"] = true}, ab = {["--"] = true, ["--inline"] = true, ["--quiet"] = true}} -- sh -c, find -name

local _, listed_text = ws.run("help --commands")
local listed = {}
for name in listed_text:gmatch("[^\n]+") do listed[#listed + 1] = name end
T.eq(#listed, #catalog.commands, "gpuexp help --commands lists the catalog")

local mismatches = {}
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
  -- the options its parser reads are the ones the catalog lists, and the other way round
  T.ok(parsers[name] or command.run_option or name == "run", name .. ": this test knows where its options are parsed")
  if parsers[name] then
    local listed_options = set(catalog.options(name))
    local parsed = {}
    for _, path in ipairs(parsers[name]) do
      for _, option in ipairs(parsed_options(path)) do
        if not (not_options[name] or {})[option] then parsed[option] = true end
      end
    end
    for option in pairs(parsed) do
      if not listed_options[option] then
        mismatches[#mismatches + 1] = string.format("%s: its parser reads %s, which the catalog does not list", name, option)
      end
    end
    for option in pairs(listed_options) do
      if not parsed[option] then
        mismatches[#mismatches + 1] = string.format("%s: the catalog lists %s, which its parser does not read", name, option)
      end
    end
    local _, words = ws.run("help --options " .. name)
    T.eq(words, table.concat(catalog.options(name), "\n") .. "\n", name .. ": the completion's options")
  end
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
  ["--trace"] = "t.json", ["--history"] = "h.sqlite"}
local run_options = 0
for _, option in ipairs(catalog.commands[1].options) do
  if option.field then
    for flag in option[1]:gsub(",", " "):gmatch("%-%-?[%w-]+") do
      local field, takes = catalog.option_field("run", flag)
      T.eq(field, option.field, flag .. ": the catalog gives its field")
      local value = takes and (values[flag] or "x") or nil
      local code, stdout, stderr = ws.run(string.format("--arch sm_90 --inline %s %s probe.lua", flag, value or ""))
      T.ok(code == 0 and not stderr:find("unknown option"), flag .. " is accepted: " .. stderr)
      local shown = stdout:match("%f[%w_]" .. field .. "=(%S+)")
      T.eq(shown, value or "true", flag .. " sets gpuexp.run_options." .. field .. " (" .. stdout .. ")")
      run_options = run_options + 1
    end
  end
end
T.ok(run_options >= 15, "run options checked through the parser: " .. run_options)
local code, _, stderr = ws.run("--arch sm_90 --inline --resum probe.lua")
T.eq(code, 2, "an option the catalog does not list is refused")
T.ok(stderr:find("unknown option '--resum' (did you mean '--resume'?)", 1, true), "with a suggestion: " .. stderr)

table.sort(mismatches)
T.eq(#mismatches, 0, "options of the parsers against the catalog:\n" .. table.concat(mismatches, "\n"))
T.eq(ws.run("nosuchcommand --help"), 2, "an unknown word is a script name: not found, exit 2")

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
