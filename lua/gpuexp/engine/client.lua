-- The worker side of the ledger service's protocol (engine/service.lua), for both transports:
-- a supervised worker's channel (gpuexp._worker) or this process's own service (engine/inline.lua).
local inline = require("gpuexp.engine.inline")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

-- The worker side of the protocol (engine/service.lua), one for both transports: the messages go
-- over the supervisor's channel when this process is a supervised worker, else to this process's
-- own service (an --inline run, or a script run by a builtin command).
local function client()
  local channel = gpuexp._worker or inline.channel()
  local function receive()
    local reply, reason = channel.receive()
    if not reply then io.stderr:write("gpuexp worker: the supervisor is gone: " .. reason .. "\n"); os.exit(EXIT.GPU, false) end
    return reply
  end
  local function request(message, wants_reply)
    local ok, why = channel.send(message)
    if not ok then io.stderr:write("gpuexp worker: " .. why .. "\n"); os.exit(EXIT.GPU, false) end
    if wants_reply then return receive() end
  end
  local prefetching = false
  return {
    remote = gpuexp._worker ~= nil,
    register = function(_, registration)
      registration.op = "register"
      return request(registration, true)
    end,
    next = function(_, id) return request({op = "next", id = id}, true) end,
    setup_failed = function(_, id, index, message)
      request({op = "setup_failed", id = id, index = index, message = message})
    end,
    -- the setup runs (true) or has run (false): a worker that ends meanwhile is the setup's fault
    setup = function(_, id, running) request({op = "setup", id = id, running = running}) end,
    -- as a point starts: ask for the one after it, whose answer waits in the channel meanwhile
    prefetch = function(_, id)
      request({op = "prefetch", id = id})
      prefetching = true
    end,
    -- a point's row; returns the reply for the point after it (prefetched, else asked for now)
    row = function(self, id, index, row, arrays, versions)
      request({op = "row", id = id, index = index, row = row, arrays = arrays, versions = versions})
      if prefetching then
        prefetching = false
        local reply = receive()
        if reply.index then return reply end
      end
      return self:next(id) -- nothing was free at the prefetch: wait for a point, or the sweep's end
    end,
  }
end

M.new = client

return M
