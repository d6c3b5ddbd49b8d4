-- gpuexp's process, from its command line to its exit code. src/cli/main.c makes the one Lua state
-- (the bindings in the gpuexp table, stop signals caught, a supervised worker's channel attached)
-- and calls M.main with the command line; the command it names (lua/gpuexp/catalog.lua) is run by
-- the one command runner (commands/runner.lua), and anything else is a script for the run command
-- (commands/run.lua): gpuexp SCRIPT.lua, gpuexp run SCRIPT.lua, gpuexp diagnose SCRIPT.lua.
local catalog = require("gpuexp.catalog")
local runner = require("gpuexp.commands.runner")

local M = {}

-- argv: the command line ([0] this binary); process: what C learned before Lua ({worker =, device =,
-- slot =}, or {attach_error =} when GPUEXP_WORKER is malformed). Returns the exit code.
function M.main(argv, process)
  gpuexp._check_stdout_at_exit(catalog.STDOUT_EXIT[1]) -- a report lost on a full disk is exit 7, never 0 or 1
  if process.attach_error then return runner.usage_error("run", process.attach_error) end
  gpuexp.stderr_is_terminal = gpuexp._isatty(2)
  local words = {}
  for i = 1, #argv do words[i] = argv[i] end
  local context = {binary = argv[0], process = process, words = words}
  local first = words[1]
  if first == "run" then -- gpuexp run SCRIPT: the default command, named
    table.remove(words, 1)
    context.named = true
    return runner.run("run", words, context)
  end
  -- a command's name is a word: a script's path (x.lua, dir/x) is never looked up
  local command = first and not first:find("^%-") and not first:find("[./]") and catalog.find(first)
  if command and command.run_option then -- gpuexp diagnose SCRIPT is gpuexp --diagnose SCRIPT
    words[1] = command.run_option
    return runner.run("run", words, context)
  elseif command then
    table.remove(words, 1)
    return runner.run(command.name, words, context)
  end
  return runner.run("run", words, context)
end

return M
