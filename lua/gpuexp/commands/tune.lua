-- gpuexp tune [options] SCRIPT.lua: runs a script whose gpuexp.tune{...} searches a space, with the
-- search's options from the command line (they win over the script's: GPUEXP_TUNE carries them to
-- the run, as JSON) and the run's options passed on. The run is an ordinary gpuexp run (supervised,
-- resumable, recorded); its exit code is this command's.
local catalog = require("gpuexp.catalog")
local json = require("gpuexp.store.json")

local EXIT = catalog.EXIT
local M = {}

local function say(message) io.stderr:write("gpuexp tune: " .. message .. "\n") end

-- the run options passed on, with a value or without
local passed_with_value = {["-d"] = true, ["--device"] = true, ["-a"] = true, ["--arch"] = true, ["-o"] = true,
  ["--out"] = true, ["--history"] = true, ["--point-timeout"] = true, ["--shard"] = true, ["--devices"] = true}
local passed_flags = {["-q"] = true, ["--quiet"] = true, ["--resume"] = true, ["--record"] = true,
  ["--inline"] = true, ["--allow-changed"] = true, ["--no-plan"] = true}

local function number_option(name, text, integer)
  local value = tonumber(text)
  if not value or value ~= value or value < 0 or (integer and math.type(math.tointeger(value)) ~= "integer") then
    error({usage = name .. " takes a" .. (integer and "n integer" or " number") .. " >= 0, got '" .. tostring(text) .. "'"})
  end
  return integer and math.tointeger(value) or value
end

local function parse(args)
  local o = {tune = {}, pass = {}}
  local i = 1
  local function value(name)
    i = i + 1
    if args[i] == nil then error({usage = name .. " needs a value"}) end
    return args[i]
  end
  while i <= #args do
    local a = args[i]
    if a == "-h" or a == "--help" then o.help = true
    elseif a == "--strategy" then
      o.tune.strategy = value(a)
      if not require("gpuexp.api.search").STRATEGIES[o.tune.strategy] then
        error({usage = "--strategy is brute, random, racing or model"})
      end
    elseif a == "--seed" then o.tune.seed = number_option(a, value(a), true)
    elseif a == "--max-evals" then o.tune.max_evals = number_option(a, value(a))
    elseif a == "--budget-s" then o.tune.budget_s = number_option(a, value(a))
    elseif a == "--tie-pct" then o.tune.tie_pct = number_option(a, value(a))
    elseif a == "--start" then
      o.tune.start = value(a)
      if o.tune.start ~= "stored" then error({usage = "--start takes 'stored' (the history's winners)"}) end
    elseif passed_with_value[a] then
      o.pass[#o.pass + 1] = a
      o.pass[#o.pass + 1] = value(a)
    elseif passed_flags[a] then o.pass[#o.pass + 1] = a
    elseif a:sub(1, 1) == "-" then error({usage = "unknown option '" .. a .. "'"})
    else
      o.script = a
      o.script_args = {table.unpack(args, i + 1)}
      break
    end
    i = i + 1
  end
  for key, v in pairs(o.tune) do
    if (key == "max_evals" or key == "budget_s") and v == 0 then error({usage = "--" .. key:gsub("_", "-") .. " must be > 0"}) end
  end
  return o
end

function M.main(args)
  local ok, o = pcall(parse, args)
  if not ok then say(type(o) == "table" and o.usage or tostring(o)); return EXIT.USAGE end
  if o.help then io.write(catalog.help("tune")) return EXIT.OK end
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
