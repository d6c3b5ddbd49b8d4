-- gpuexp tune [options] SCRIPT.lua: runs a script whose gpuexp.tune{...} searches a space, with the
-- search's options from the command line (they win over the script's: GPUEXP_TUNE carries them to
-- the run, as JSON) and the run's options passed on. The run is an ordinary gpuexp run (supervised,
-- resumable, recorded); its exit code is this command's.
local catalog = require("gpuexp.catalog")
local json = require("gpuexp.store.json")
local parse_args = require("gpuexp.engine.args")

local EXIT = catalog.EXIT
local M = {}

local function say(message) io.stderr:write("gpuexp tune: " .. message .. "\n") end

-- The search's options, by their catalog fields (the rest are the run's, handed on as typed).
local SEARCH_OPTIONS = {"strategy", "seed", "max_evals", "budget_s", "tie_pct", "start"}

-- The command line: the search's options (o.tune), the run's (o.pass), the script and its
-- arguments, from the fields commands/runner.lua parsed.
local function parse(fields, given)
  local o = {tune = {}, pass = parse_args.passed(given), script = fields.script,
    script_args = fields.script_args}
  for _, name in ipairs(SEARCH_OPTIONS) do o.tune[name] = fields[name] end
  -- the seed as its digits: JSON's numbers are doubles, which hold 2^63-1 only as 2^63
  if math.type(o.tune.seed) == "integer" then o.tune.seed = string.format("%d", o.tune.seed) end
  return o
end

function M.run(fields, given)
  local o = parse(fields, given)
  if not o.script then say("which script? (gpuexp tune --help)"); return EXIT.USAGE end
  local argv = {"/usr/bin/env", "GPUEXP_TUNE=" .. json.encode(o.tune), gpuexp.executable or "gpuexp"}
  for _, a in ipairs(o.pass) do argv[#argv + 1] = a end
  argv[#argv + 1] = "--"
  argv[#argv + 1] = o.script
  for _, a in ipairs(o.script_args) do argv[#argv + 1] = a end
  gpuexp._process.init()
  local code = gpuexp._process.run(argv, nil) -- (nil said: with one argument the binding reads its own scratch as #2)
  return code
end

return M
