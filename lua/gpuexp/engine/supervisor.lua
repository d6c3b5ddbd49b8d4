-- The supervisor: `gpuexp SCRIPT.lua` runs the script in worker processes (one per GPU) and hands
-- out sweep points from one queue. A point that kills its worker (a sticky CUDA error, a signal,
-- an exit) becomes a `crashed` row and a fresh worker goes on after it; a point past its time
-- limit becomes a `timeout` row; Ctrl-C ends the workers and keeps every finished row. This
-- process never touches a GPU context. It is the pipe transport of the ledger service
-- (engine/service.lua), which answers the workers' messages and ends the run.
local exits = require("gpuexp.engine.exits")
local text = require("gpuexp.store.text")
local options = require("gpuexp.engine.options")
local service = require("gpuexp.engine.service")

local catalog = require("gpuexp.catalog")
local EXIT = catalog.EXIT
local M = {}


local function usage(message)
  io.stderr:write("gpuexp: " .. message .. "\n(see gpuexp --help)\n")
  return EXIT.USAGE
end

local function describe_command(argv)
  local parts = {}
  for i, a in ipairs(argv) do parts[i] = text.shell(a) end
  return table.concat(parts, " ")
end

-- The command that finishes this run: the same one with --resume.
local function resume_command(command)
  local argv = {}
  for i, a in ipairs(command) do argv[i] = a end
  local has_resume = false
  for _, a in ipairs(argv) do has_resume = has_resume or a == "--resume" end
  if not has_resume then table.insert(argv, 2, "--resume") end
  return describe_command(argv)
end

-- --devices: the GPUs, one worker each; models mixed only with --allow-mixed. Returns the list,
-- or nil and the exit code (the message said).
local function choose_devices(o)
  if o.devices and gpuexp.plan then -- checked all the same: a typo must not pass in a plan
    local list, why = options.parse_devices(o.devices == "all" and "0" or o.devices)
    if not list then return nil, usage(why) end
    return {o.device}
  elseif not o.devices then
    return {o.device}
  end
  local devices, why = options.parse_devices(o.devices)
  if not devices then return nil, usage(why) end
  local names = {}
  for i, ordinal in ipairs(devices) do
    local ok, name = pcall(gpuexp._device_name, ordinal)
    if not ok then io.stderr:write("gpuexp: GPU " .. ordinal .. ": " .. tostring(name) .. "\n"); return nil, EXIT.GPU end
    names[i] = name
    if name ~= names[1] and not o.allow_mixed then
      return nil, usage(string.format("--devices mixes GPU models (GPU %d is %s, GPU %d is %s); timings would not be " ..
        "comparable (--allow-mixed runs anyway)", devices[1], names[1], ordinal, name))
    end
  end
  return devices
end

-- The run's settings from its options: the service's config and the supervisor's own (the
-- limit outside the points, the devices). nil and the exit code on a bad option.
local function settings(o)
  local checked, why = service.run_settings(o)
  if not checked then return nil, usage(why) end
  local point_timeout, shard, only = checked.point_timeout_s, checked.shard, checked.only
  local devices, code = choose_devices(o)
  if not devices then return nil, code end
  return {
    devices = devices,
    -- outside the points (starting a worker, the script's setup, compiling) a hang is caught too,
    -- but never sooner than the default point limit: a short --point-timeout is for the points
    outside_timeout = point_timeout > 0 and math.max(point_timeout, catalog.POINT_TIMEOUT_S) or 0,
    service = {ledger = {resume = o.resume, allow_changed = o.allow_changed, shard = shard, only = only,
      point_timeout_s = point_timeout, host = gpuexp.hostname(), devices = devices, command = o.argv,
      started_utc = os.date("!%Y-%m-%dT%H:%M:%SZ"), device_column = #devices > 1},
      history = o.history, night = options.night_of(o), point_timeout_s = point_timeout,
      device_column = #devices > 1, show = gpuexp.stderr_is_terminal and not gpuexp.quiet},
  }
end

-- The workers of a run: one slot per GPU, its process, its deadline, its restarts.
local Run = {}
Run.__index = Run

-- A slot's deadline: its point's limit while it runs one, none while it waits for other
-- workers' points, else the limit outside the points.
function Run:arm(slot)
  if slot.waiting then
    slot.deadline = nil
  elseif slot.point then
    slot.deadline = slot.point.limit > 0 and slot.point.started + slot.point.limit or nil
  else
    slot.deadline = self.outside_timeout > 0 and gpuexp.clock() + self.outside_timeout or nil
  end
end

function Run:spawn(slot)
  slot.process = gpuexp._process.spawn(self.o.worker_argv, slot.device, slot.slot, slot.slot > 0)
  slot.point, slot.waiting, slot.prefetched, slot.in_setup = nil, nil, nil, nil
  self:arm(slot)
end

function Run:stop_all(signal_name)
  for _, slot in ipairs(self.slots) do
    if slot.process and slot.process.pid > 0 then slot.process:kill(signal_name) end
  end
  for _, slot in ipairs(self.slots) do
    if slot.process then slot.process:reap(2) end
    slot.finished = true
  end
end

-- The run stops with this exit code (the first reason wins) and why, every worker ended.
function Run:stop(code, ended, signal_name)
  self.exit_code, self.ended = self.exit_code or code, self.ended or ended
  self:stop_all(signal_name)
end

-- A worker ended (or was ended for its deadline, reason "timeout").
function Run:worker_ended(slot, reason)
  local status = slot.process:status() or {}
  local code, how = slot.process:reap(reason == "timeout" and 0 or 5)
  local lost = status.context_error and (": " .. status.context_error) or ""
  if slot.point and slot.in_setup and reason ~= "timeout" then
    -- the setup ended its process (os.exit, a crash): a fresh worker would only do it again, for
    -- every point. Stop here; the point is not done, so --resume runs it once the setup is fixed.
    local name = self.service:setup_ended(slot)
    slot.finished = true
    self.service:say(string.format("gpuexp: sweep '%s': its setup ended the worker (%s%s); no point was run. " ..
      "Stopping: a new worker would run the same setup again\n", name, how, lost))
    return self:stop(EXIT.FAILED, "the setup of sweep '" .. name .. "' ended its worker", "TERM")
  end
  if slot.point then
    local point = slot.point
    local text
    if reason == "timeout" then
      text = string.format("the point ran past its %g s limit and its worker was ended; %s", point.limit,
        status.last_launch or "")
    elseif status.context_error then
      text = string.format("%s; %s", status.context_error, status.last_launch or "")
    else
      text = string.format("the worker %s during the point; %s", how, status.last_launch or "")
    end
    self.service:worker_lost(slot, reason == "timeout" and "timeout" or "crashed", text, self.slots)
    -- a fresh worker re-runs the script's setup and goes on after this point
    slot.restarts = (slot.restarts or 0) + 1
    self:spawn(slot)
    slot.restart_from = gpuexp.clock() -- until the new worker asks for its next point
    return
  end
  self.service:worker_lost(slot) -- a prefetched point goes to another worker
  slot.finished = true
  if reason == "timeout" then
    io.stderr:write(string.format("gpuexp: the script ran past the %g s limit outside any sweep point (%s); " ..
      "ended\n", self.outside_timeout, status.last_launch or ""))
    self:stop(1, "timeout outside a sweep point", "KILL")
  elseif code ~= 0 then
    if code >= 128 then
      io.stderr:write(string.format("gpuexp: the worker %s outside any sweep point%s\n", how, lost))
    end
    self:stop(code, "the script failed (exit code " .. code .. ")", "TERM")
  else
    self.exit_code = self.exit_code or 0
  end
end

-- Calls fn; an error (an output that cannot be written: a full disk) stops the run.
function Run:guarded(fn, ...)
  local ok, problem = pcall(fn, ...)
  if not ok then self.fatal = problem end
end

-- Waits for the workers until every one has ended, a stop signal or an output error.
function Run:loop()
  while not self.fatal do
    local live, processes = {}, {}
    for _, slot in ipairs(self.slots) do
      if not slot.finished then live[#live + 1] = slot; processes[#processes + 1] = slot.process end
    end
    if #live == 0 then return end
    local now, soonest = gpuexp.clock(), nil
    for _, slot in ipairs(live) do
      if slot.deadline and (not soonest or slot.deadline < soonest) then soonest = slot.deadline end
    end
    local ready = gpuexp._process.wait(processes, soonest and math.max(0, soonest - now) or -1)
    if ready == "signal" then
      self.interrupted = gpuexp._process.stop_signal()
      return self:stop_all("TERM")
    elseif ready == nil then
      now = gpuexp.clock()
      for _, slot in ipairs(live) do
        if slot.deadline and now >= slot.deadline and not self.fatal then
          slot.process:kill("KILL")
          self:guarded(self.worker_ended, self, slot, "timeout")
        end
      end
    else
      local slot = live[ready]
      local message = slot.process:receive()
      if message then
        self:guarded(function()
          self.service:handle(slot, message, self.slots)
          self:arm(slot)
        end)
      else
        self:guarded(self.worker_ended, self, slot, "ended")
      end
    end
  end
end

-- The end of a run stopped by an output error or a signal: what is whole is kept, and the command
-- that finishes the run is said.
function Run:stopped()
  local totals, o = self.service.book.totals, self.o
  if self.fatal then
    self:stop_all("TERM")
    local message = exits.message(self.fatal)
    pcall(self.service.close, self.service, "stopped: " .. message)
    if #self.service.book.sweeps == 0 then -- nothing written: nothing to resume ("0 of 0 points" said nothing)
      self.service:say(string.format("gpuexp: %s\ngpuexp: stopped before any sweep started: nothing was written\n",
        message))
    else
      self.service:say(string.format("gpuexp: %s\ngpuexp: stopped: %d of %d points done; every row written is whole. " ..
        "Once the cause is fixed, finish the run with: %s\n", message, totals.done, totals.points, resume_command(o.argv)))
    end
    return exits.code(self.fatal, EXIT.FAILED)
  end
  local name = service.signal_name(self.interrupted)
  self.service:close("interrupted by " .. name)
  local outs = {}
  for _, sweep in ipairs(self.service.book.sweeps) do outs[#outs + 1] = sweep.out end
  if #outs == 0 then -- nothing written: nothing to resume
    self.service:say(string.format("gpuexp: interrupted (%s) before any sweep started: nothing was written\n", name))
  else
    self.service:say(string.format("gpuexp: interrupted (%s): %d of %d points done, their rows kept in %s\n" ..
      "gpuexp: finish the run with: %s\n", name, totals.done, totals.points, table.concat(outs, ", "),
      resume_command(o.argv)))
  end
  return 128 + self.interrupted
end

function M.main()
  local o = gpuexp.run_options
  local set, code = settings(o)
  if not set then return code end
  gpuexp._process.init()
  local run = setmetatable({o = o, slots = {}, outside_timeout = set.outside_timeout}, Run)
  set.service.send = function(slot, reply)
    slot.process:send(reply) -- a failed send: the worker's end is seen on the next wait
    run:arm(slot)
  end
  run.service = service.new(set.service)
  for i, ordinal in ipairs(set.devices) do
    run.slots[i] = {device = ordinal, slot = i - 1}
    run:spawn(run.slots[i])
  end
  run:loop()
  if run.fatal or run.interrupted then return run:stopped() end
  return run.service:finish(run.exit_code or 0, run.ended)
end

return M
