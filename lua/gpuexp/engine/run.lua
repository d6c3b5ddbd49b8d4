-- A script's run, which goes one of three ways, chosen here in one place (M.start): in worker
-- processes that this process supervises (engine/supervisor.lua: the default), in this process
-- (--inline, gpuexp profile: engine/inline.lua is its transport), or as one of a supervisor's
-- workers (engine/client.lua sends over the channel the supervisor gave it). Here too: what the
-- script sees (M.prepare: gpuexp.script, gpuexp.run_options, arg, ...), the script run under its
-- error handler and --trace, and the exit code of how it ended.
--
-- A run is {script =, args = (the script's arguments), options = (the run options by catalog
-- field, typed: gpuexp.run_options), argv = (the command line as typed), worker_argv = (a
-- worker's), worker = (this process is a supervised worker), inline =, device =, plan = (the
-- offline plan's architecture, or nil)}.
local exits = require("gpuexp.engine.exits")
local inline = require("gpuexp.engine.inline")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

-- The script's folder, absolute when it can be resolved (a kernel file is found from it).
local function folder_of(script)
  local folder = script:match("^(.*)/[^/]*$") or "."
  if folder == "" then folder = "/" end
  return gpuexp._realpath(folder) or folder
end

-- What the script (and the library under it) sees of its run: the gpuexp table's facts, the run
-- options, arg (arg[0] the script, arg[1..] its arguments, as lua.c gives them), and what the
-- bindings read (the default GPU, the plan's architecture, the script's folder).
function M.prepare(run)
  local script_dir = folder_of(run.script)
  gpuexp.script, gpuexp.script_dir, gpuexp.out = run.script, script_dir, run.options.out
  gpuexp.quiet = run.options.quiet == true
  gpuexp.stderr_is_terminal = gpuexp._isatty(2)
  gpuexp.device_ordinal = run.device
  gpuexp.plan, gpuexp.offline_arch = run.plan ~= nil, run.plan
  gpuexp.supervised_run = not run.inline and not run.worker -- this process supervises (no CUDA here)
  local options = {}
  for field, value in pairs(run.options) do options[field] = value end
  options.plan_arch, options.device, options.argv, options.worker_argv = run.plan, run.device, run.argv, run.worker_argv
  gpuexp.run_options = options
  local args = {[0] = run.script}
  for i, a in ipairs(run.args) do args[i] = a end
  gpuexp.args = args
  arg = args -- luacheck: ignore (the global scripts read, as lua.c sets it)
  gpuexp._set_run{device = run.device, offline_arch = run.plan, script_dir = script_dir}
end

-- Whether this machine has a GPU; when not, why ("the driver reports 0 devices", no driver, ...).
function M.gpu_here()
  local ok, count = pcall(gpuexp.device_count)
  if ok and count > 0 then return true end
  return false, ok and "the driver reports 0 devices" or exits.message(count)
end

-- The error handler around the script: the error value kept as it is, its traceback beside it (up
-- to the call that ran the script: the frames below are gpuexp's, not the script's).
local traceback
local function handler(err)
  local message = type(err) == "table" and err.message or nil
  if message == nil and (type(err) == "string" or type(err) == "number") then message = err end
  if message == nil then -- error({}) or error(nil): say what was raised and where, not just "table"
    local where = ""
    for level = 2, 100 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.currentline > 0 then where = string.format("%s:%d: ", info.short_src, info.currentline) break end
    end
    message = string.format("%sthe script raised a %s value, not an error message (%s)", where, type(err), tostring(err))
  end
  traceback = debug.traceback(tostring(message), 2):gsub("\n\t%[C%]: in function 'xpcall'.*$", "")
  return err
end

-- --trace in the process that runs the script: nil, or the exit code of a trace that cannot start
-- (a bad path 2, an unwritable file 7, no CUPTI 3). A second worker of the run (another GPU, a fresh
-- one after a crash) writes FILE with its pid before the extension instead.
local function start_trace(run)
  local path, why, kind = gpuexp._trace_start(run.options.trace, run.worker)
  if path then
    if path ~= run.options.trace then io.stderr:write("gpuexp: this worker's trace goes to " .. path .. "\n") end
    return nil
  end
  exits.say("gpuexp: --trace: " .. why)
  return kind == "usage" and EXIT.USAGE or kind == "system" and EXIT.WRITE or EXIT.GPU
end

-- The script, loaded and run with its arguments (and --trace): returns whether it ended well and
-- its exit code so far (a failure's, said; 0), or nil and the code when it did not run at all.
local function run_script(run)
  local chunk, problem = loadfile(run.script)
  if not chunk then
    if problem:find("^cannot open ") or problem:find("^cannot read ") then -- the file itself
      exits.say("gpuexp: " .. problem)
      return nil, EXIT.USAGE
    end
    exits.say(problem) -- a syntax error: the script's own (its file and line)
    return false, EXIT.FAILED
  end
  local tracing = run.options.trace and not run.plan
  if tracing then
    local code = start_trace(run)
    if code then return nil, code end
  end
  traceback = nil
  local results = table.pack(xpcall(chunk, handler, table.unpack(run.args)))
  gpuexp._process.stop_handled() -- the run came back: no watchdog while it closes
  local code = 0
  if not results[1] then
    local err = results[2]
    code = exits.code(err, EXIT.FAILED)
    -- --no-plan on a machine without a GPU: said as that, not as a bug in the script (no traceback)
    local no_gpu = code == EXIT.GPU and run.options.no_plan and not M.gpu_here()
    -- (a worker its supervisor stops says nothing: the supervisor says why, a user's signal or a full disk)
    if not (run.worker and code > 128) then
      exits.say((exits.plain(code) or no_gpu) and exits.message(err) or traceback or exits.message(err))
    end
    if no_gpu then
      exits.say("gpuexp: no GPU found; --no-plan shows no offline plan instead (without it, or with --arch ARCH, " ..
        "gpuexp shows the plan)")
    end
  end
  if tracing then
    local stopped, why = gpuexp._trace_stop()
    if not stopped then
      exits.say("gpuexp: " .. why)
      if code == 0 then code = EXIT.WRITE end
    end
  end
  return results[1], code
end

-- The script in this process: as a supervised worker (its rows go to the supervisor, which ends the
-- run), or on its own (--inline, gpuexp profile), where its end is the run's end as a supervised
-- run's is (engine/inline.lua's finish: sweeps closed, the history recorded, the failed points said).
local function in_this_process(run)
  local ended_well, code = run_script(run)
  if ended_well == nil then return code end
  if not run.worker then
    if ended_well and code == 0 then
      code = inline.finish(0)
    elseif not ended_well and code ~= EXIT.INTERNAL and code <= 128 then
      code = inline.finish(code, "the script failed (exit code " .. code .. ")")
    end
  end
  local stop = gpuexp._process.stop_signal()
  if ended_well and stop ~= 0 then code = 128 + stop end -- the script caught the interruption itself
  return code
end

-- Runs the script of a prepared run (M.prepare) the way it goes; returns the exit code.
function M.start(run)
  if run.worker or run.inline then return in_this_process(run) end
  -- with --trace, the first worker writes FILE.tmp (renamed to FILE at its end) and a worker that
  -- finds FILE.tmp taken writes FILE.PID.json: a FILE.tmp left by an earlier run goes now
  if run.options.trace and not run.plan then os.remove(run.options.trace .. ".tmp") end
  return require("gpuexp.engine.supervisor").main()
end

return M
