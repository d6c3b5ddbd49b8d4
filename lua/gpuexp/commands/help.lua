-- gpuexp help [COMMAND]: the commands, or one command's help; the man page and the bash
-- completion's words. Everything comes from the command catalog (catalog.lua).
local catalog = require("gpuexp.catalog")

local EXIT = catalog.EXIT

local M = {}


-- A command's help text, as the command prints it ("help": the list of commands), or nil.
function M.text(command)
  if command == "help" then return catalog.summary() .. "\n" .. catalog.help("help") end
  return catalog.help(command)
end

-- The metric presets' names (kernel:metrics{metrics = NAME}, gpuexp metrics --check NAME), sorted.
function M.presets()
  local names = {}
  for name in pairs(require("gpuexp.api.metrics").presets) do names[#names + 1] = name end
  table.sort(names)
  return names
end

local function troff(text)
  local out = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    line = line:gsub("\\", "\\e")
    if line:match("^[.']") then line = "\\&" .. line end
    out[#out + 1] = line
  end
  return table.concat(out, "\n")
end

function M.man()
  local lines = {
    string.format('.TH GPUEXP 1 "%s" "gpuexp %s" "User Commands"', os.date("!%Y-%m-%d"), gpuexp.version),
    ".SH NAME", "gpuexp \\- a Lua-scriptable GPU experiment runner",
    ".SH SYNOPSIS", ".nf", "gpuexp [options] SCRIPT.lua [arguments]", "gpuexp COMMAND [options]", ".fi",
    ".SH DESCRIPTION",
    "gpuexp runs Lua experiment scripts that compile CUDA kernels with NVRTC, launch and time them, read " ..
    "hardware counters with CUPTI, sweep any parameter and write CSV. Runs are supervised (a crashing or " ..
    "hanging kernel becomes a row), resumable and can be recorded in a SQLite history; gpuexp nightly turns " ..
    "a suite into a regression check. The shipped experiments run by name: gpuexp occupancy_sweep.",
    ".SH COMMANDS",
  }
  for _, c in ipairs(catalog.commands) do
    lines[#lines + 1] = ".SS " .. (c.name == "run" and "gpuexp SCRIPT.lua" or "gpuexp " .. c.name)
    lines[#lines + 1] = troff(c.summary)
    lines[#lines + 1] = ".PP"
    lines[#lines + 1] = ".nf"
    lines[#lines + 1] = troff((catalog.help(c.name) or ""):gsub("\n+$", ""))
    lines[#lines + 1] = ".fi"
  end
  lines[#lines + 1] = ".SH EXIT STATUS"
  lines[#lines + 1] = "One meaning each across commands; each command's section above says what it means there."
  lines[#lines + 1] = ".PP"
  lines[#lines + 1] = ".nf"
  for _, entry in ipairs(catalog.exit_codes()) do lines[#lines + 1] = troff(string.format("%-4d %s", entry[1], entry[2]:lower())) end
  lines[#lines + 1] = ".fi"
  lines[#lines + 1] = ".SH ENVIRONMENT"
  for _, variable in ipairs(catalog.environment) do
    lines[#lines + 1] = ".TP"
    lines[#lines + 1] = ".B " .. variable.name
    lines[#lines + 1] = troff(variable.text .. " (" .. variable.read_by .. ")")
  end
  lines[#lines + 1] = ".SH FILES"
  lines[#lines + 1] = ".nf"
  lines[#lines + 1] = troff([[
~/.cache/gpuexp (or $GPUEXP_CACHE_DIR)      the cubin cache and calibrations
~/.local/share/gpuexp/history.sqlite        the default history ($GPUEXP_HISTORY)
PREFIX/share/gpuexp/experiments             the shipped experiments and the nightly suite
PREFIX/share/gpuexp/luals/gpuexp.lua        LuaLS definitions for editors]])
  lines[#lines + 1] = ".fi"
  lines[#lines + 1] = ".SH SEE ALSO"
  lines[#lines + 1] = "ncu(1), nsys(1); the README in PREFIX/share/doc/gpuexp"
  return table.concat(lines, "\n") .. "\n"
end

-- gpuexp help --help: the list of commands and this command's own help.
function M.help() return M.text("help") end

-- "unknown command 'comapre' (did you mean 'compare'?)": for a name the catalog does not have.
local function unknown(name)
  local hint = gpuexp._did_you_mean(name, catalog.command_names())
  return "unknown command '" .. name .. "'" .. (hint ~= "" and hint or " (gpuexp help lists them)")
end

function M.run(o)
  if o.positional[2] then
    return nil, "one command at a time (got '" .. o.positional[1] .. "' and '" .. o.positional[2] .. "')"
  end
  local first = o.positional[1]
  if o.man then io.write(M.man()) return EXIT.OK end
  if o.reference then io.write(catalog.reference()) return EXIT.OK end
  if o.commands then
    for _, c in ipairs(catalog.commands) do print(c.name) end
    return EXIT.OK
  end
  if o.presets then
    print(table.concat(M.presets(), "\n"))
    return EXIT.OK
  end
  if o.experiments then -- the shipped experiments, by the names gpuexp runs them
    if gpuexp.data_dir then
      local _, _, _, listing = gpuexp._process.run({"find", ".", "-name", "*.lua"},
        {capture = true, directory = gpuexp.data_dir .. "/experiments"})
      local paths = {}
      for path in (listing or ""):gmatch("[^\n]+") do paths[#paths + 1] = path end
      table.sort(paths)
      for _, path in ipairs(paths) do print((path:gsub("^%./", ""):gsub("%.lua$", ""))) end
    end
    return EXIT.OK
  end
  if o.options then
    if not catalog.find(o.options) then return nil, unknown(o.options) end
    print(table.concat(catalog.options(o.options), "\n"))
    return EXIT.OK
  end
  local text = M.text(first or "help")
  if not text then return nil, unknown(first) end
  io.write(text)
  return EXIT.OK
end

return M
