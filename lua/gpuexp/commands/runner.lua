-- The one command runner (as asv's Command): every command, the run included, is a module of
-- commands/ with run(fields, given, context) and, when it has value types of its own, TYPES. Here,
-- once for all of them: its command line parsed from its catalog entry (engine/args.lua), --help
-- printed from the catalog, a usage error said in the one style (`gpuexp NAME: what`, exit 2), and
-- the exit code of what run returns: a number, nothing (0), or nil and a usage error's message.
local args = require("gpuexp.engine.args")
local exits = require("gpuexp.engine.exits")

local catalog = require("gpuexp.catalog")
local EXIT = catalog.EXIT
local M = {}

-- How a command's messages begin: "gpuexp compare: ", and "gpuexp: " for a run (its command has
-- no name on the command line).
function M.prefix(name)
  return (name == "run" or name == nil) and "gpuexp: " or ("gpuexp " .. name .. ": ")
end

-- A usage error, said in the one style; returns its exit code.
function M.usage_error(name, message)
  exits.say(M.prefix(name) .. message)
  return EXIT.USAGE
end

-- A command's failure raised as an error value (a file it cannot read, a bad argument: not a bug)
-- or as a Lua error (a bug: exit 70, with its traceback): said, and its exit code returned.
local function failed(name, err, traceback)
  local code = exits.command(err)
  if code == EXIT.INTERNAL then
    exits.say(string.format("gpuexp: internal error in %s (exit %d; please report it with the text below):\n%s",
      catalog.find(name).module, EXIT.INTERNAL, traceback or exits.message(err)))
    return code
  end
  local message = exits.message(err)
  if not message:find("^gpuexp[ :]") then message = M.prefix(name) .. message:gsub("^" .. name .. ": ", "") end
  exits.say(message)
  return code
end

-- Runs the command `name` with words (its command line after its name); context goes to its run
-- ({binary =, process =, words =, named =}). Returns the exit code.
function M.run(name, words, context)
  local command = assert(catalog.find(name), name)
  local module = require(command.module)
  local fields, why, given = args.parse(command, words, module.TYPES)
  if not fields then return M.usage_error(name, why) end
  if fields.help then
    io.write(module.help and module.help(fields, context) or catalog.help(name))
    return EXIT.OK
  end
  if not command.native then M.library(name, words, context) end
  local traceback
  local results = table.pack(xpcall(module.run, function(err)
    traceback = debug.traceback(exits.message(err), 2)
    return err
  end, fields, given, context))
  gpuexp._process.stop_handled()
  if not results[1] then return failed(name, results[2], traceback) end
  local code, problem = results[2], results[3]
  if code == nil and problem then return M.usage_error(name, problem) end
  if math.type(code) ~= "integer" then -- no exit code of its own: a stop signal it caught, else 0
    local stop = gpuexp._process.stop_signal()
    code = stop ~= 0 and 128 + stop or EXIT.OK
  end
  return code
end

-- What a command written in Lua sees beside its arguments (as a script would): the gpuexp library
-- (gpuexp.init, the API a script gets: commands run sweeps, compile and time as scripts do), no plan,
-- the default GPU; the run command sets its own (engine/run.lua's prepare).
function M.library(name, words, context)
  if name == "run" then return end
  local run = require("gpuexp.engine.run")
  run.prepare{script = name, args = words, options = {}, argv = {context.binary, name, table.unpack(words)},
    inline = true, device = 0}
  require("gpuexp.init")
end

return M
