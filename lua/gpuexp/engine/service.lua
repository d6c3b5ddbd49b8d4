-- The ledger service: the one place that answers a worker's messages, owns the run's ledger
-- (engine/ledger.lua) and decides what the end of a sweep and of the run mean (closing, the
-- history, the failures report, the exit code). Two transports carry the messages: the
-- supervisor (engine/supervisor.lua: worker processes over a pipe, with deadlines, crashes and
-- restarts) and the inline run (engine/inline.lua: the script's own process calls handle directly).
-- The worker side of both is engine/client.lua.
local ledger = require("gpuexp.engine.ledger")

local EXIT = require("gpuexp.catalog").EXIT
local text = require("gpuexp.store.text")
local M = {}

-- The protocol. A worker slot (one worker process, or the inline script) sends these messages,
-- in this order per sweep: register once; then next; per point, setup (around the sweep's setup,
-- first point only), prefetch as the point starts, row as it ends; setup_failed instead of the
-- rest when the setup raised. `id` is the sweep's id from the register reply (its output path).
-- A reply is sent with config.send(slot, reply); messages marked "no reply" get none. `order` is the
-- message's place in a sweep's exchange (docs/development.md's table is generated from this one:
-- tests/docs/development.lua).
M.PROTOCOL = {
  register = {order = 1, fields = "name, out, make_folder, axes, points, columns, info, timeout_s, expect_failures, " ..
    "mode, offline_arch, quiet", reply = "{id, total, done_before} or {error, kind}",
    when = "once per sweep per worker, before any other message about it"},
  next = {order = 2, fields = "id", reply = "{index} (a point, started now), {done, rows, columns} (the sweep is " ..
    "complete), or none until the last points running on other workers end",
    when = "after register, and after a row whose prefetch found no point"},
  setup = {order = 3, fields = "id, running", reply = "none",
    when = "around the sweep's setup (running = true, then false), inside the first point"},
  prefetch = {order = 4, fields = "id", reply = "{index} (the next point, nil when none is free now); it waits in " ..
    "the channel until the row is sent", when = "as a point starts, at most one ahead"},
  row = {order = 5, fields = "id, index, row (column -> cell text), arrays (column -> numbers), versions", reply =
    "none of its own: the prefetch's reply is the next point (a next follows when it had none)",
    when = "when the point it started ends (ok, error, or crashed in an inline run)"},
  setup_failed = {order = 6, fields = "id, index, message", reply = "none", when = "instead of the first point's row " ..
    "when the setup raised; the worker then raises the setup's error"},
}

local Service = {}
Service.__index = Service

-- A stop signal's name, as the run's messages and metadata give it (both transports stop on these).
function M.signal_name(number)
  return ({[1] = "SIGHUP", [2] = "SIGINT", [15] = "SIGTERM"})[number] or ("signal " .. number)
end

-- The settings both transports take alike from the run's options (gpuexp.run_options, typed by the
-- command line's parser): -> {point_timeout_s, shard, only}, or nil and why (a usage error, exit 2:
-- a Slurm or Kubernetes job array's share, read from the environment, that is not one).
function M.run_settings(o)
  local shard, why = require("gpuexp.engine.options").shard_from(o.shard)
  if not shard and why then return nil, why end
  return {point_timeout_s = o.point_timeout, shard = shard, only = o.only}
end

-- config: ledger (the options of ledger.new), history (a path, "" for the default, nil: none),
-- night (options.night_of), point_timeout_s (the run's point limit, 0: none), device_column
-- (rows say which GPU measured them), show (progress on stderr), send(slot, reply).
function M.new(config)
  -- what the sweeps write is kept in memory (every sample) only for the history to record it
  config.ledger.keep = config.history ~= nil
  return setmetatable({config = config, book = ledger.new(config.ledger), quiet = {}, failed_setup = {},
    started = gpuexp.clock()}, Service)
end

-- The progress line on a terminal: points done of the run, failures, elapsed time and ETA.
function Service:progress(final)
  local totals = self.book.totals
  local current = self.book.sweeps[#self.book.sweeps]
  if not self.config.show or totals.points == 0 or (current and self.quiet[current.out]) then return end
  self.done_at_start = self.done_at_start or totals.done
  local elapsed = gpuexp.clock() - self.started
  local ran = totals.done - self.done_at_start
  local eta = ran > 0 and elapsed / ran * (totals.points - totals.done) or 0
  local extra = ""
  if totals.crashed > 0 then extra = extra .. string.format(", %d crashed", totals.crashed) end
  if totals.timeout > 0 then extra = extra .. string.format(", %d timed out", totals.timeout) end
  if totals.error > 0 then extra = extra .. string.format(", %d errors", totals.error) end
  io.stderr:write("\r", text.format("%s: %d/%d points%s, %.1f s elapsed, ETA %.0f s   ",
    current and current.name or "run", totals.done, totals.points, extra, elapsed, eta))
  if final or totals.done == totals.points then io.stderr:write("\n") end
  io.stderr:flush()
  self.shown = true
end

-- A line on stderr that must not run into the progress line, its names shown as terminal text.
function Service:say(message)
  if self.shown then io.stderr:write("\n") end
  io.stderr:write(text.message(message))
end

-- The reply that ends a sweep for a slot: its rows and columns.
local function done_reply(sweep) return {done = true, rows = sweep:rows(), columns = sweep.columns} end

-- A point handed to a slot ahead (prefetch) that it never started goes to the next slot that asks.
local function give_back_prefetched(slot)
  if slot.prefetched then slot.prefetched.sweep:give_back(slot.prefetched.index) end
  slot.prefetched = nil
end

-- Every slot waiting for the end of a sweep gets its rows once no point of it is left.
function Service:release(sweep, slots)
  if not sweep:complete() then return end
  sweep:close()
  for _, slot in ipairs(slots) do
    if slot.waiting == sweep then
      slot.waiting = nil
      self.config.send(slot, done_reply(sweep))
    end
  end
end

-- A point starts on a slot: it is the one a crash or a timeout of that slot's worker is charged to.
local function start_point(self, slot, sweep, index)
  slot.point = {sweep = sweep, index = index, started = gpuexp.clock(),
    limit = sweep.timeout_s or self.config.point_timeout_s or 0}
end

local handlers = {}

function handlers.register(self, slot, message)
  local sweep, reason, kind = self.book:register(message)
  if not sweep then return self.config.send(slot, {error = reason, kind = kind}) end
  self.quiet[sweep.out] = message.quiet or nil
  self.config.send(slot, {id = sweep.out, total = #sweep.mine, done_before = #sweep.mine - #sweep.queue})
end

function handlers.next(self, slot, message)
  local sweep = self.book:sweep(message.id)
  if slot.restart_from then
    -- the cost of a restart: process, context, cached cubins, buffers and data, setup
    self.book.restarts[#self.book.restarts + 1] = {after_point = slot.crashed_point,
      seconds = gpuexp.clock() - slot.restart_from, device = slot.device}
    slot.restart_from = nil
  end
  if self.failed_setup[sweep.out] then slot.waiting = sweep; return end -- no point runs after it
  local index, complete = sweep:next_point(slot)
  if index then
    start_point(self, slot, sweep, index)
    self.config.send(slot, {index = index})
  elseif complete then
    sweep:close()
    self.config.send(slot, done_reply(sweep))
  else
    slot.waiting = sweep -- the last points run elsewhere
  end
end

-- the worker asks for its next point as it starts one, so the answer is there when that one
-- ends: no round trip between points. The point is the worker's, but not started.
function handlers.prefetch(self, slot, message)
  local sweep = self.book:sweep(message.id)
  local index = not self.failed_setup[sweep.out] and sweep:next_point(slot) or nil
  if index then slot.prefetched = {sweep = sweep, index = index} end
  self.config.send(slot, {index = index})
end

-- while a sweep's setup runs, a worker that ends is the setup's doing, not its point's
function handlers.setup(self, slot, message)
  slot.in_setup = message.running and self.book:sweep(message.id).name or nil
end

function handlers.row(self, slot, message, slots)
  local sweep = self.book:sweep(message.id)
  if message.versions then sweep.info.versions = message.versions end -- CUPTI, once a point loaded it
  if self.config.device_column then message.row.device = tostring(slot.device) end -- which GPU measured it
  sweep:finish_point(message.index, message.row, message.arrays)
  slot.point = nil
  local prefetched = slot.prefetched
  if prefetched then -- the worker goes straight on with it
    slot.prefetched = nil
    start_point(self, slot, prefetched.sweep, prefetched.index)
  end
  self:progress()
  self:release(sweep, slots)
end

-- the setup raised: its point is not its fault, no worker starts the sweep again, and the sweep
-- ends (the worker raises the setup's error: the run ends with it, exit 1)
function handlers.setup_failed(self, slot, message)
  local sweep = self.book:sweep(message.id)
  sweep.in_flight[message.index] = nil
  give_back_prefetched(slot)
  slot.point, slot.in_setup = nil, nil
  self.failed_setup[sweep.out] = message.message
  if next(sweep.in_flight) == nil then sweep:close("the sweep's setup failed") end
end

-- Answers one message of a slot. slots: every slot of the run (a sweep's end releases the ones
-- waiting for it). A message naming no sweep of this run is refused (a worker's bug, exit 70).
function Service:handle(slot, message, slots)
  local handler = handlers[message.op]
  if not handler then error("internal: the ledger service got an unknown message '" .. tostring(message.op) .. "'") end
  if message.op ~= "register" and not self.book:sweep(message.id) then
    error("internal: a '" .. message.op .. "' message for a sweep this run does not have: " .. tostring(message.id))
  end
  handler(self, slot, message, slots or {slot})
end

-- A slot's worker ended during its point (state "crashed") or was ended for its deadline
-- ("timeout"): the point becomes a row saying so, and a point prefetched but never started goes
-- to the next worker that asks. Returns the point charged, or nil when it ran none.
function Service:worker_lost(slot, state, text, slots)
  give_back_prefetched(slot)
  local point = slot.point
  slot.point, slot.waiting = nil, nil
  if not point then return nil end
  slot.crashed_point = point.sweep.name .. " #" .. point.index
  point.sweep:finish_point(point.index, {status = state, error = text,
    device = self.config.device_column and tostring(slot.device) or nil})
  self:say(string.format("gpuexp: sweep '%s' point %d %s: %s\n", point.sweep.name, point.index,
    state == "timeout" and "timed out" or "crashed", text))
  self:progress()
  self:release(point.sweep, slots or {slot})
  return point
end

-- The setup ended its worker: the point is not done (a fresh worker would only do the same again,
-- so --resume runs it once the setup is fixed). Returns the sweep's name.
function Service:setup_ended(slot)
  give_back_prefetched(slot)
  local point = slot.point
  if point then point.sweep:give_back(point.index) end
  slot.point = nil
  return slot.in_setup
end

-- Every sweep still open is closed (written, unlocked, its metadata's part ended), a sweep whose
-- setup failed saying so.
function Service:close(ended)
  for _, sweep in ipairs(self.book.sweeps) do
    if self.failed_setup[sweep.out] then sweep:close("the sweep's setup failed") end
  end
  self.book:close(ended)
end

-- The end of the run: the sweeps closed, the run recorded in the history when asked (a history
-- that cannot be written exits 6, its CSV files kept), the failed points said. exit_code: the
-- script's own (0 when it ended well); returns the run's.
function Service:finish(exit_code, ended)
  self:close(ended)
  self:progress(true)
  if not gpuexp.quiet then -- where the rows went, said once (a script may print nothing of its own)
    for _, sweep in ipairs(self.book.sweeps) do
      if not self.quiet[sweep.out] then
        self:say(string.format("gpuexp: wrote %d row%s to %s\n", sweep.recorded, sweep.recorded == 1 and "" or "s",
          sweep.out))
      end
    end
  end
  local history_path = self.config.history
  if history_path then -- a plan too when asked (it never joins a GPU's baselines)
    local outs, runs = {}, {}
    for n, sweep in ipairs(self.book.sweeps) do outs[n], runs[n] = sweep.out, sweep:result() end
    local history = require("gpuexp.store.history")
    local path = history_path == "" and history.default_path() or history_path
    local ids, why = history.record_outputs(path, runs, self.config.night)
    if not ids then
      io.stderr:write(text.message("gpuexp: the run was NOT recorded in the history " .. path .. ": " .. why ..
        "\ngpuexp: its CSV files are kept; record them later with: gpuexp history --history " .. path ..
        " record " .. table.concat(outs, " ") .. "\n"))
      if exit_code == 0 then exit_code = EXIT.HISTORY end
    elseif #ids > 0 and not gpuexp.quiet then
      io.stderr:write(string.format("gpuexp: recorded in %s as run%s %s\n", path, #ids > 1 and "s" or "",
        table.concat(ids, ", ")))
    end
  end
  local failed = self.book:report_failures()
  if exit_code == 0 then exit_code = failed end
  return exit_code
end

return M
