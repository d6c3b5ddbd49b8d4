-- The inline transport of the ledger service (engine/service.lua): a script run in gpuexp's own
-- process (--inline, gpuexp profile, a script a command runs) sends its messages to a service of
-- this process as function calls; engine/client.lua is the worker side of both transports.
local exits = require("gpuexp.engine.exits")

local M = {}

-- The inline transport's service (below), once a sweep has run in this process.
local inline

-- An inline run that cannot go on (a stop signal, a lost CUDA context, an output error) closes its
-- sweeps with what is whole, as the supervisor does, saying why in their metadata.
local function close_inline(ended)
  if inline then pcall(inline.service.close, inline.service, ended) end
end


-- The inline transport: this process's own ledger service (engine/service.lua), made at the
-- first sweep with the run's options; the messages go to it as a function call and its replies
-- wait in a queue for the client to read, as they would in a worker's channel. An output that
-- cannot be written (a full disk) stops the run as the supervisor stops it: every sweep closed
-- with what is whole, then the error raised (exit 7).
local function inline_channel()
  if not inline then
    local o = gpuexp.run_options or {}
    local run_options = require("gpuexp.engine.options")
    local engine = require("gpuexp.engine.service")
    local checked, why = engine.run_settings(o)
    if not checked then gpuexp.error("option", why) end
    local replies = {}
    local devices = {gpuexp.device_ordinal or 0}
    local service = engine.new{
      ledger = {resume = o.resume, allow_changed = o.allow_changed, shard = checked.shard, only = checked.only,
        host = gpuexp.hostname(), devices = devices, command = o.argv},
      history = o.history, night = run_options.night_of(o), show = gpuexp.stderr_is_terminal and not gpuexp.quiet,
      send = function(_, reply) replies[#replies + 1] = reply end}
    local slot = {device = devices[1], slot = 0}
    inline = {service = service, channel = {
      send = function(message)
        local ok, problem = pcall(service.handle, service, slot, message)
        if ok then return true end
        close_inline("stopped: " .. exits.message(problem))
        error(problem, 0)
      end,
      receive = function()
        local reply = table.remove(replies, 1)
        if not reply then error("internal: the ledger service gave no reply (an inline run has no other worker)") end
        return reply
      end,
    }}
  end
  return inline.channel
end

-- The end of a script run in this process (--inline, gpuexp profile): the run ends as a supervised
-- one does (engine/service.lua's finish: sweeps closed, the history, the failed points said), once.
-- exit_code: the script's own (0: it ended well), ended: why it stopped; returns the run's exit code.
function M.finish(exit_code, ended)
  if not inline then return exit_code end
  local service = inline.service
  inline = nil
  return service:finish(exit_code, ended)
end

M.close = close_inline
M.channel = inline_channel

return M
