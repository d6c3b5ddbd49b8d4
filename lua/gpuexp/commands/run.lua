-- gpuexp [run] [options] SCRIPT.lua [arguments...]: the run command (and its aliases gpuexp diagnose
-- and gpuexp profile). Its options are the catalog's run entries, parsed once by the command runner
-- into typed values; here the script is found (a file, or a shipped experiment by name, with a
-- suggestion when it is neither), a machine without a GPU gets the offline plan, and engine/run.lua
-- runs the script (supervised, in this process, or as a supervisor's worker).
local catalog = require("gpuexp.catalog")
local doctor = require("gpuexp.commands.doctor")
local run_engine = require("gpuexp.engine.run")

local EXIT = catalog.EXIT
local M = {}

-- The help of the command as it was called: gpuexp --help lists the commands; gpuexp run --help,
-- gpuexp diagnose --help and gpuexp profile --help are their own.
function M.help(o, context)
  if o.diagnose then return catalog.help("diagnose") end
  if o.profile then return catalog.help("profile") end
  if not context.named then return catalog.summary() .. "\n" .. catalog.help("run") end
  return catalog.help("run")
end

local function is_file(path)
  local file = io.open(path, "r")
  if not file then return false end
  file:close()
  return true
end

-- The .lua files beside a path that names no file (bnak.lua -> bank.lua), as the path would name them.
local function files_beside(path)
  local folder, prefix = path:match("^(.*/)[^/]*$")
  local names = gpuexp._directory_entries(folder or ".") or {}
  local list = {}
  for _, name in ipairs(names) do
    if name:match("%.lua$") then list[#list + 1] = (prefix and folder or "") .. name end
  end
  table.sort(list)
  return list
end

-- What a script name that names no file was likely meant to be: a shipped experiment's path given
-- from another folder (experiments/x.lua), a file beside it, or a misspelled command or experiment.
local function script_hint(script)
  local base = script:match("^experiments/(.*)$") or script
  local word = base:gsub("%.lua$", "")
  if base ~= script and gpuexp._find_experiment(word) then
    return " (the shipped experiment runs by name from any folder: gpuexp " .. word .. ")"
  end
  local hint = gpuexp._did_you_mean(script, files_beside(script))
  if hint ~= "" or (word:find("/") and base == script) then return hint end
  local names = catalog.command_names()
  for _, name in ipairs(gpuexp._experiment_names()) do names[#names + 1] = name end
  return gpuexp._did_you_mean(word, names)
end

-- The script: a file, or a shipped experiment by name (gpuexp occupancy_sweep). Returns its path,
-- or nil and the usage error, said with a hint.
local function find_script(script)
  if not is_file(script) and not script:find("^/") and not script:find("^%./") then
    local shipped = gpuexp._find_experiment(script)
    if shipped then return shipped end
  end
  local file, why = io.open(script, "r")
  if file then
    file:close()
    return script
  end
  why = why:gsub("^.-: ([^:]*)$", "%1") -- io.open's "PATH: reason"
  return nil, "cannot open " .. script .. ": " .. why .. (why == "No such file or directory" and script_hint(script) or "")
end

-- With no GPU here, say so and make the run an offline plan for the stated default architecture.
local function automatic_plan()
  local found, why = run_engine.gpu_here()
  if found then return nil end
  local arch = catalog.PLAN_ARCH
  io.stderr:write(string.format("gpuexp: no GPU found (%s)\n", why))
  io.stderr:write(string.format("gpuexp: showing the offline PLAN for %s instead (choose with --arch; --no-plan " ..
    "fails instead):\n        kernels compiled for %s, occupancy from the model, timing columns EMPTY\n", arch, arch))
  return arch
end

-- Whether a path given on the command line names the script itself (gpuexp --trace k.lua k.lua).
local function is_script(path, script)
  local real = path and gpuexp._realpath(path)
  return real ~= nil and real == gpuexp._realpath(script)
end

-- The command line a supervisor's worker runs: this binary, the options as typed (and the plan,
-- decided here once, so workers do not say "no GPU found" again), then -- SCRIPT ARGS.
local function worker_argv(binary, words, script_index, plan, automatic)
  local list = {binary}
  local options = script_index - 1 - (words[script_index - 1] == "--" and 1 or 0)
  for i = 1, options do list[#list + 1] = words[i] end
  if automatic then list[#list + 1] = "--arch"; list[#list + 1] = plan end
  list[#list + 1] = "--"
  for i = script_index, #words do list[#list + 1] = words[i] end
  return list
end

-- o: the run's fields; context: {binary =, words = (the command line after the binary, "run" left
-- out and an alias made its option: gpuexp diagnose X is gpuexp --diagnose X), process = (what C
-- learned: whether this is a supervised worker, and its GPU)}.
function M.run(o, _, context)
  if o.version then return doctor.print_versions() end
  if not o.script then return nil, "no script given\n(gpuexp --help lists the commands; gpuexp run --help the options)" end
  local process = context.process
  local script, why = find_script(o.script)
  if not script then return nil, why end
  local arch, automatic = o.plan_arch, false
  if not process.worker and not arch and not o.no_plan then
    arch = automatic_plan()
    automatic = arch ~= nil
  end
  if not process.worker and is_script(o.trace, script) then
    return nil, "--trace names the script " .. script .. " itself; give it another file"
  end
  if not process.worker and o.trace and arch then
    io.stderr:write("gpuexp: --trace: an offline plan runs nothing on a GPU; no trace is written\n")
  end
  context.words[o.script_index] = script -- a shipped experiment by its path, for the workers and --resume
  local options = {}
  for field, value in pairs(o) do options[field] = value end
  options.script, options.script_args, options.script_index, options.positional = nil, nil, nil, nil
  options.help, options.version = nil, nil
  local command_line = {context.binary, table.unpack(context.words)} -- as typed, for "finish the run with: ..."
  local run = {script = script, args = o.script_args, options = options, argv = command_line,
    worker_argv = worker_argv(context.binary, context.words, o.script_index, arch, automatic),
    worker = process.worker, inline = o.inline or o.profile, -- profile: in the profiler's process
    device = process.worker and process.device or o.device or 0, plan = arch}
  run_engine.prepare(run)
  require("gpuexp.init")
  local code = run_engine.start(run)
  code = require("gpuexp.api.lines").count_pass(run, code) -- --lines: the SASS counts, in a process of their own
  if arch and not process.worker then
    io.stderr:write(string.format("gpuexp: this was an offline PLAN for %s: nothing ran on a GPU%s\n", arch,
      automatic and " (no GPU was found)" or ""))
  end
  return code
end

return M
