-- The supervisor: `gpuexp SCRIPT.lua` runs the script in worker processes (one per GPU) and hands
-- out sweep points from one queue. A point that kills its worker (a sticky CUDA error, a signal,
-- an exit) becomes a `crashed` row and a fresh worker goes on after it; a point past its time
-- limit becomes a `timeout` row; Ctrl-C ends the workers and keeps every finished row. This
-- process never touches a GPU context.
local ledger = require("gpuexp.engine.ledger")
local options = require("gpuexp.engine.options")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}


local function usage(message)
  io.stderr:write("gpuexp: " .. message .. "\n(see gpuexp --help)\n")
  return EXIT.USAGE
end

local function describe_command(argv)
  local parts = {}
  for i, a in ipairs(argv) do
    parts[i] = a:match("^[%w%./_,:=+-]+$") and a or "'" .. a:gsub("'", "'\\''") .. "'"
  end
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

function M.main()
  local o = gpuexp.run_options
  local point_timeout, why = options.parse_point_timeout(o.point_timeout)
  if not point_timeout then return usage(why) end
  -- outside the points (starting a worker, the script's setup, compiling) a hang is caught too,
  -- but never sooner than the default point limit: a short --point-timeout is for the points
  local outside_timeout = point_timeout > 0 and math.max(point_timeout, options.DEFAULT_POINT_TIMEOUT_S) or 0
  local shard
  shard, why = options.shard_from(o.shard)
  if not shard and why then return usage(why) end
  local only
  if o.only then
    only, why = options.parse_only(o.only)
    if not only then return usage(why) end
  end
  local devices = {o.device}
  if o.devices and gpuexp.plan then -- checked all the same: a typo must not pass in a plan
    local list
    list, why = options.parse_devices(o.devices == "all" and "0" or o.devices)
    if not list then return usage(why) end
  elseif o.devices then
    devices, why = options.parse_devices(o.devices)
    if not devices then return usage(why) end
    local names = {}
    for i, ordinal in ipairs(devices) do
      local ok, name = pcall(gpuexp._device_name, ordinal)
      if not ok then io.stderr:write("gpuexp: GPU " .. ordinal .. ": " .. tostring(name) .. "\n"); return EXIT.GPU end
      names[i] = name
      if name ~= names[1] and not o.allow_mixed then
        return usage(string.format("--devices mixes GPU models (GPU %d is %s, GPU %d is %s); timings would not be " ..
          "comparable (--allow-mixed runs anyway)", devices[1], names[1], ordinal, name))
      end
    end
  end
  gpuexp._process.init()
  local started_utc = os.date("!%Y-%m-%dT%H:%M:%SZ")
  local book = ledger.new{resume = o.resume, allow_changed = o.allow_changed, shard = shard, only = only,
    point_timeout_s = point_timeout, host = gpuexp.hostname(), devices = devices, command = o.argv,
    started_utc = started_utc, device_column = #devices > 1}

  local slots = {}
  local show = gpuexp.stderr_is_terminal and not gpuexp.quiet
  local started = gpuexp.clock()
  local done_at_start
  local exit_code, ended, setup_failed

  local function spawn(slot)
    slot.process = gpuexp._process.spawn(o.worker_argv, slot.device, slot.slot, slot.slot > 0)
    slot.point, slot.waiting, slot.prefetched = nil, nil, nil
    slot.deadline = outside_timeout > 0 and gpuexp.clock() + outside_timeout or nil
  end

  local function progress(final)
    if not show then return end
    local totals = book.totals
    if totals.points == 0 then return end
    done_at_start = done_at_start or totals.done
    local elapsed = gpuexp.clock() - started
    local ran = totals.done - done_at_start
    local eta = ran > 0 and elapsed / ran * (totals.points - totals.done) or 0
    local extra = ""
    if totals.crashed > 0 then extra = extra .. string.format(", %d crashed", totals.crashed) end
    if totals.timeout > 0 then extra = extra .. string.format(", %d timed out", totals.timeout) end
    if totals.error > 0 then extra = extra .. string.format(", %d errors", totals.error) end
    local current = book.sweeps[#book.sweeps]
    io.stderr:write(string.format("\r%s: %d/%d points%s, %.1f s elapsed, ETA %.0f s   ",
      current and current.name or "run", totals.done, totals.points, extra, elapsed, eta))
    if final or totals.done == totals.points then io.stderr:write("\n") end
    io.stderr:flush()
  end

  local function send(slot, message)
    slot.process:send(message) -- a failed send: the worker's end is seen on the next wait
  end

  -- Every worker waiting for the end of a sweep gets its rows once no point of it is left.
  local function release(sweep)
    if sweep:complete() then
      sweep:close()
      for _, slot in ipairs(slots) do
        if slot.waiting == sweep then
          slot.waiting = nil
          slot.deadline = outside_timeout > 0 and gpuexp.clock() + outside_timeout or nil
          send(slot, {done = true, rows = sweep:rows(), columns = sweep.columns})
        end
      end
    end
  end

  -- A point starts on a slot: it is the one a crash or a timeout of the worker is charged to.
  local function start_point(slot, sweep, index, now)
    local limit = sweep.timeout_s or point_timeout
    slot.point = {sweep = sweep, index = index, started = now, limit = limit}
    slot.deadline = limit > 0 and now + limit or nil
  end

  local function dispatch(slot, message)
    local now = gpuexp.clock()
    if message.op == "prefetch" then
      -- the worker asks for its next point as it starts one, so the answer is there when that one
      -- ends: no round trip between points. The point is the worker's, but not started.
      local sweep = book:sweep(message.id)
      local index = sweep:next_point(slot)
      if index then slot.prefetched = {sweep = sweep, index = index} end
      send(slot, {index = index})
      return
    end
    if message.op == "setup" then
      -- while a sweep's setup runs, a worker that ends is the setup's doing, not its point's (the
      -- point's deadline still holds)
      slot.in_setup = message.running and book:sweep(message.id).name or nil
      return
    end
    slot.deadline = outside_timeout > 0 and now + outside_timeout or nil
    if message.op == "register" then
      local sweep, reason, kind = book:register(message)
      if not sweep then
        send(slot, {error = reason, kind = kind})
      else
        send(slot, {id = sweep.out, total = #sweep.mine, done_before = #sweep.mine - #sweep.queue})
      end
    elseif message.op == "row" then
      local sweep = book:sweep(message.id)
      if message.versions then sweep.info.versions = message.versions end -- CUPTI, once a point loaded it
      if #devices > 1 then message.row.device = tostring(slot.device) end -- which GPU measured it
      sweep:finish_point(message.index, message.row, message.arrays)
      slot.point = nil
      local prefetched = slot.prefetched
      if prefetched then -- the worker goes straight on with it
        slot.prefetched = nil
        start_point(slot, prefetched.sweep, prefetched.index, now)
      end
      progress()
      release(sweep)
    elseif message.op == "next" then
      local sweep = book:sweep(message.id)
      if slot.restart_from then
        -- the cost of a restart: process, context, cached cubins, buffers and data, setup
        book.restarts[#book.restarts + 1] = {after_point = slot.crashed_point, seconds = now - slot.restart_from,
          device = slot.device}
        slot.restart_from = nil
      end
      local index, complete = sweep:next_point(slot)
      if index then
        start_point(slot, sweep, index, now)
        send(slot, {index = index})
      elseif complete then
        sweep:close()
        send(slot, {done = true, rows = sweep:rows(), columns = sweep.columns})
      else
        slot.waiting, slot.deadline = sweep, nil -- the last points run elsewhere
      end
    elseif message.op == "setup_failed" then
      -- the worker raises the setup's error and exits: its point is not its fault, and no other
      -- worker starts the sweep again (the run ends with the script's error, exit 1)
      local sweep = book:sweep(message.id)
      sweep.in_flight[message.index] = nil
      slot.point, setup_failed = nil, message.message
    end
  end

  local function stop_all(signal_name)
    for _, slot in ipairs(slots) do
      if slot.process and slot.process.pid > 0 then slot.process:kill(signal_name) end
    end
    for _, slot in ipairs(slots) do
      if slot.process then slot.process:reap(2) end
      slot.finished = true
    end
  end

  -- A worker ended (or was ended for its deadline, reason "timeout").
  local function handle_end(slot, reason)
    local status = slot.process:status() or {}
    local code, how = slot.process:reap(reason == "timeout" and 0 or 5)
    if slot.prefetched then -- handed out, never started: the next worker runs it
      slot.prefetched.sweep:give_back(slot.prefetched.index)
      slot.prefetched = nil
    end
    local point = slot.point
    if point and slot.in_setup and reason ~= "timeout" then
      -- the setup ended its process (os.exit, a crash): a fresh worker would only do it again, for
      -- every point. Stop here; the point is not done, so --resume runs it once the setup is fixed.
      point.sweep:give_back(point.index)
      slot.point, slot.finished = nil, true
      if show then io.stderr:write("\n") end
      io.stderr:write(string.format("gpuexp: sweep '%s': its setup ended the worker (%s%s); no point was run. " ..
        "Stopping: a new worker would run the same setup again\n", slot.in_setup, how,
        status.context_error and (": " .. status.context_error) or ""))
      exit_code, ended = exit_code or EXIT.FAILED, "the setup of sweep '" .. slot.in_setup .. "' ended its worker"
      stop_all("TERM")
      return
    end
    if point then
      local text
      if reason == "timeout" then
        text = string.format("the point ran past its %g s limit and its worker was ended; %s", point.limit,
          status.last_launch or "")
      elseif status.context_error then
        text = string.format("%s; %s", status.context_error, status.last_launch or "")
      else
        text = string.format("the worker %s during the point; %s", how, status.last_launch or "")
      end
      local state = reason == "timeout" and "timeout" or "crashed"
      slot.crashed_point = point.sweep.name .. " #" .. point.index
      point.sweep:finish_point(point.index, {status = state, error = text, device = #devices > 1 and tostring(slot.device) or nil})
      if show then io.stderr:write("\n") end
      io.stderr:write(string.format("gpuexp: sweep '%s' point %d %s: %s\n", point.sweep.name, point.index,
        state == "timeout" and "timed out" or "crashed", text))
      progress()
      release(point.sweep)
      -- a fresh worker re-runs the script's setup and goes on after this point
      slot.restarts = (slot.restarts or 0) + 1
      spawn(slot)
      slot.restart_from = gpuexp.clock() -- until the new worker asks for its next point
      return
    end
    slot.finished = true
    if reason == "timeout" then
      io.stderr:write(string.format("gpuexp: the script ran past the %g s limit outside any sweep point (%s); " ..
        "ended\n", outside_timeout, status.last_launch or ""))
      exit_code, ended = exit_code or 1, "timeout outside a sweep point"
      stop_all("KILL")
    elseif code ~= 0 then
      if setup_failed then
        io.stderr:write("gpuexp: the sweep's setup failed (above); no point was run\n")
      elseif code >= 128 then
        io.stderr:write(string.format("gpuexp: the worker %s outside any sweep point%s\n", how,
          status.context_error and (": " .. status.context_error) or ""))
      end
      exit_code, ended = exit_code or code, "the script failed (exit code " .. code .. ")"
      stop_all("TERM")
    else
      exit_code = exit_code or 0
    end
  end

  for i, ordinal in ipairs(devices) do
    slots[i] = {device = ordinal, slot = i - 1}
    spawn(slots[i])
  end
  local interrupted, fatal
  local function guarded(fn, ...)
    local ok, problem = pcall(fn, ...)
    if not ok then fatal = problem end
    return ok
  end
  while not fatal do
    local live, processes = {}, {}
    for _, slot in ipairs(slots) do
      if not slot.finished then live[#live + 1] = slot; processes[#processes + 1] = slot.process end
    end
    if #live == 0 then break end
    local now, soonest = gpuexp.clock(), nil
    for _, slot in ipairs(live) do
      if slot.deadline and (not soonest or slot.deadline < soonest) then soonest = slot.deadline end
    end
    local ready = gpuexp._process.wait(processes, soonest and math.max(0, soonest - now) or -1)
    if ready == "signal" then
      interrupted = gpuexp._process.stop_signal()
      stop_all("TERM")
      break
    elseif ready == nil then
      now = gpuexp.clock()
      for _, slot in ipairs(live) do
        if slot.deadline and now >= slot.deadline and not fatal then
          slot.process:kill("KILL")
          guarded(handle_end, slot, "timeout")
        end
      end
    else
      local slot = live[ready]
      local message = slot.process:receive()
      if message then guarded(dispatch, slot, message) else guarded(handle_end, slot, "ended") end
    end
  end

  local totals = book.totals
  if fatal then -- an output could not be written (a full disk): stop, keep what is whole
    stop_all("TERM")
    local message = type(fatal) == "table" and fatal.message or tostring(fatal)
    pcall(book.close, book, "stopped: " .. message)
    if show then io.stderr:write("\n") end
    io.stderr:write(string.format("gpuexp: %s\ngpuexp: stopped: %d of %d points done; every row written is whole. " ..
      "Once the cause is fixed, finish the run with: %s\n", message, totals.done, totals.points, resume_command(o.argv)))
    local kind = type(fatal) == "table" and fatal.kind
    return kind == "write" and EXIT.WRITE or kind == "busy" and EXIT.BUSY or EXIT.FAILED
  end
  if interrupted then
    local name = ({[2] = "SIGINT", [15] = "SIGTERM", [1] = "SIGHUP"})[interrupted] or ("signal " .. interrupted)
    book:close("interrupted by " .. name)
    if show then io.stderr:write("\n") end
    local outs = {}
    for _, sweep in ipairs(book.sweeps) do outs[#outs + 1] = sweep.out end
    io.stderr:write(string.format("gpuexp: interrupted (%s): %d of %d points done, their rows kept in %s\n" ..
      "gpuexp: finish the run with: %s\n", name, totals.done, totals.points,
      #outs > 0 and table.concat(outs, ", ") or "(no sweep had started)", resume_command(o.argv)))
    return 128 + interrupted
  end
  book:close(ended)
  progress(true)
  if o.history then -- a plan is recorded too when asked (no GPU: it never joins a GPU's baselines)
    local outs, runs = {}, {}
    for n, sweep in ipairs(book.sweeps) do outs[n], runs[n] = sweep.out, sweep:result() end
    local history = require("gpuexp.store.history")
    local path = o.history == "" and history.default_path() or o.history
    local ids, why = history.record_outputs(path, runs, options.night_of(o))
    if not ids then
      io.stderr:write("gpuexp: the run was NOT recorded in the history " .. path .. ": " .. why ..
        "\ngpuexp: its CSV files are kept; record them later with: gpuexp history --history " .. path ..
        " record " .. table.concat(outs, " ") .. "\n")
      if (exit_code or 0) == 0 then exit_code = EXIT.HISTORY end
    elseif #ids > 0 and not gpuexp.quiet then
      io.stderr:write(string.format("gpuexp: recorded in %s as run%s %s\n", path, #ids > 1 and "s" or "",
        table.concat(ids, ", ")))
    end
  end
  local failed = book:report_failures()
  if (exit_code or 0) == 0 then exit_code = failed end
  return exit_code or 0
end

return M
