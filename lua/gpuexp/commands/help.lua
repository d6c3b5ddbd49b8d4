-- gpuexp help [COMMAND]: the commands, or one command's help, which is the text the command itself
-- prints for --help (so there is one text per command). The man page and the bash completion are
-- generated from the same texts: gpuexp help --man, gpuexp help --options COMMAND.
local M = {}

M.commands = {
  {"run", "gpuexp [options] SCRIPT.lua [arguments]: run an experiment (the default command)"},
  {"info", "every GPU's facts"},
  {"occupancy", "theoretical occupancy for any architecture, no GPU needed"},
  {"metrics", "CUPTI metric names, checks and replay passes"},
  {"calibrate", "measure and cache this GPU's ceilings"},
  {"plot", "line plots and rooflines of a CSV"},
  {"merge", "join the shards of a sweep"},
  {"compare", "a verdict per point between runs: same, slower, faster"},
  {"history", "the recorded runs (SQLite)"},
  {"nightly", "a regression suite: run, record, compare, report"},
  {"diagnose", "run a script and diagnose every launch it times"},
  {"doctor", "check this machine and say what to fix"},
  {"help", "this list, or a command's help"},
}

local function shell_quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end

-- A command's help text, as the command prints it.
function M.text(command)
  if command == "help" then
    local lines = {"usage: gpuexp help [COMMAND]",
      "       gpuexp help --man | --commands | --experiments | --options COMMAND", "",
      "commands:"}
    for _, c in ipairs(M.commands) do lines[#lines + 1] = string.format("  %-10s %s", c[1], c[2]) end
    lines[#lines + 1] = ""
    lines[#lines + 1] = "gpuexp help COMMAND (or gpuexp COMMAND --help) prints a command's options and exit codes."
    return table.concat(lines, "\n") .. "\n"
  end
  local known = false
  for _, c in ipairs(M.commands) do known = known or c[1] == command end
  if not known then return nil end
  local pipe = io.popen(shell_quote(gpuexp.executable or "gpuexp") .. (command == "run" and "" or " " .. command) ..
    " --help 2>&1")
  local text = pipe:read("a")
  pipe:close()
  return text
end

-- The options a command's help mentions (for completion).
function M.options(command)
  local text = M.text(command) or ""
  local seen, list = {}, {}
  for option in text:gmatch("%f[%w-](%-%-?[%a][%w-]*)") do
    if not seen[option] and option ~= "--" then seen[option] = true; list[#list + 1] = option end
  end
  table.sort(list)
  return list
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
  for _, c in ipairs(M.commands) do
    lines[#lines + 1] = ".SS " .. (c[1] == "run" and "gpuexp SCRIPT.lua" or "gpuexp " .. c[1])
    lines[#lines + 1] = troff(c[2])
    lines[#lines + 1] = ".PP"
    lines[#lines + 1] = ".nf"
    lines[#lines + 1] = troff((M.text(c[1]) or ""):gsub("\n+$", ""))
    lines[#lines + 1] = ".fi"
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

function M.main(args)
  local first = args[1]
  if first == "--man" then io.write(M.man()) return 0 end
  if first == "--commands" then
    for _, c in ipairs(M.commands) do print(c[1]) end
    return 0
  end
  if first == "--experiments" then -- the shipped experiments, by the names gpuexp runs them
    if gpuexp.data_dir then
      local pipe = io.popen("cd " .. shell_quote(gpuexp.data_dir .. "/experiments") .. " && find . -name '*.lua' | sort")
      for path in pipe:lines() do print((path:gsub("^%./", ""):gsub("%.lua$", ""))) end
      pipe:close()
    end
    return 0
  end
  if first == "--options" then
    if not args[2] then io.stderr:write("gpuexp help: --options needs a command\n") return 2 end
    print(table.concat(M.options(args[2]), "\n"))
    return 0
  end
  local text = M.text(first == nil and "help" or (first == "--help" or first == "-h") and "help" or first)
  if not text then
    io.stderr:write("gpuexp help: unknown command '" .. first .. "' (gpuexp help lists them)\n")
    return 2
  end
  io.write(text)
  return 0
end

return M
