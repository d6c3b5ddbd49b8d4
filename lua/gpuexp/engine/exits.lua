-- An error value's exit code and text: the one mapping of error kinds (gpuexp.error's, the
-- bindings', src/core/gx_error.h's) to the exit codes of catalog.EXIT, for a script's run, a command
-- and the supervisor alike.
local text = require("gpuexp.store.text")

local EXIT = require("gpuexp.catalog").EXIT

local M = {}

-- What each kind of failure exits with, whoever raised it.
M.BY_KIND = {driver = EXIT.GPU, profiler = EXIT.GPU, compile = EXIT.COMPILE, write = EXIT.WRITE, busy = EXIT.BUSY,
  option = EXIT.USAGE}

-- The kind of an error value ("driver", "usage", ...), or nil for a plain Lua error.
function M.kind(err) return type(err) == "table" and type(err.kind) == "string" and err.kind or nil end

-- The text of an error value: its message, else the error as text.
function M.message(err)
  if type(err) == "table" and err.message then return tostring(err.message) end
  return tostring(err)
end

-- The exit code of an error value: its kind's; an interruption's 128 + the signal; otherwise
-- `otherwise` (a script's own error: EXIT.FAILED; a command's: see M.command).
function M.code(err, otherwise)
  local kind = M.kind(err)
  if kind == "interrupted" then
    local number = gpuexp._process.stop_signal()
    return 128 + (number ~= 0 and number or 2)
  end
  return M.BY_KIND[kind] or otherwise
end

-- A command's failure (compare, nightly, ...: not a script's): its error values exit by kind, a
-- usage error 2 and any other one 1; a plain Lua error is a bug of gpuexp, EXIT.INTERNAL (never 1,
-- which means "a regression was found" there).
function M.command(err)
  local code = M.code(err)
  if code then return code end
  if M.kind(err) == "usage" then return EXIT.USAGE end
  return type(err) == "table" and EXIT.FAILED or EXIT.INTERNAL
end

-- Whether a failure is said by its message alone (a bad option, a busy or unwritable output, an
-- interruption: none is a bug in the script), or with its traceback.
function M.plain(code)
  return code == EXIT.USAGE or code == EXIT.BUSY or code == EXIT.WRITE or code > 128
end

-- A failure's message on standard error, as terminal text (store/text.lua's message: names from data
-- in it cannot move the cursor or recolour the terminal; new lines and tabs stay).
function M.say(message) io.stderr:write(text.message(message), "\n") end

return M
