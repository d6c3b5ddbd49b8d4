-- gpuexp compare BASE.csv [MORE_BASE.csv...] NEW.csv: the verdict of every point of a run against
-- one or more baseline runs, as a table, Markdown, JSON or JUnit XML.
local csv = require("gpuexp.store.csv")
local text = require("gpuexp.store.text")
local result = require("gpuexp.store.result")
local compare = require("gpuexp.judge.compare")
local printers = require("gpuexp.judge.printers")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}


local function fail(code, message)
  io.stderr:write("gpuexp compare: " .. text.message(message) .. "\n")
  return code
end

-- compare's --metric: COL[:lower|:higher] (judge/compare.lua).
M.TYPES = {metric = function(_, text) return compare.parse_metric(text) end}

-- The runs of the paths (the last one the new run), read and checked to be of one sweep with a
-- row to judge; or nil, the exit code and why.
local function read_runs(paths, axes)
  local runs = {}
  for n, path in ipairs(paths) do
    local run, why = result.read(path, axes)
    if not run then return nil, EXIT.USAGE, why end
    if n > 1 and table.concat(run.axes, ",") ~= table.concat(runs[1].axes, ",") then
      return nil, EXIT.USAGE, string.format("%s has the axes %s, %s has %s: not runs of one sweep", path,
        table.concat(run.axes, ","), paths[1], table.concat(runs[1].axes, ","))
    end
    runs[n] = run
  end
  local new = table.remove(runs)
  if #new.order == 0 then
    return nil, EXIT.USAGE, new.label .. " has no rows (a run stopped before its first point?): nothing to judge"
  end
  return runs, new
end

-- nil when the runs come from one machine, or are plans for one architecture (or
-- --allow-different-gpu), else the exit code and why. Refused like two GPUs: a plan's values are
-- the model's for its architecture, so an sm_86 plan against an sm_90 one would call the
-- architecture's difference a regression (exit 1).
local function check_machines(runs, new, allow_different)
  local machine = require("gpuexp.store.meta").machine
  for _, base in ipairs(runs) do
    local differences = compare.gpu_differences(base.info, new.info)
    if #differences > 0 then
      local plans = (machine(base.info) or {}).plan or (machine(new.info) or {}).plan
      local why = string.format(plans and "%s and %s are offline plans for different architectures (%s)" or
        "%s and %s were measured on different machines (%s)", base.label, new.label, table.concat(differences, "; "))
      if not allow_different then
        return EXIT.GPU, why .. (plans and "; each holds the model's values for its own, not comparable" or
          "; their timings are not comparable") .. " (--allow-different-gpu compares anyway)"
      end
      io.stderr:write("gpuexp compare: WARNING: " .. text.message(why) .. "; compared anyway (--allow-different-gpu)\n")
    end
  end
end

-- The metrics judged (--metric, else the time column), each a column of every run holding numbers;
-- or nil and why.
local function judged_metrics(metrics, runs, new)
  metrics = metrics or {}
  if #metrics == 0 then
    local name = compare.default_metric(new)
    if not name then return nil, new.label .. " has no time column (*_ms); choose one with --metric" end
    metrics[1] = {name = name, direction = "lower"}
  end
  for _, metric in ipairs(metrics) do
    local found = false
    for _, name in ipairs(new.columns) do found = found or name == metric.name end
    if not found then
      return nil, string.format("%s has no column '%s'%s (its columns: %s)", new.label, metric.name,
        gpuexp._did_you_mean(metric.name, new.columns), table.concat(new.columns, ", "))
    end
    for _, run in ipairs(runs) do
      local bad = run:check_numbers(metric.name)
      if bad then return nil, bad end
    end
    local bad = new:check_numbers(metric.name)
    if bad then return nil, bad end
  end
  return metrics
end

-- o: the command line's fields (commands/runner.lua parsed them from the catalog).
function M.run(o)
  local paths, format, output = o.positional, o.format or "table", o.output
  local options = {floor_pct = o.threshold, rule = o.rule, significance = true}
  if #paths < 2 then return fail(EXIT.USAGE, "needs BASE.csv and NEW.csv (see gpuexp compare --help)") end
  local runs, new, problem = read_runs(paths, o.axes)
  if not runs then return fail(new, problem) end
  local refused, refusal = check_machines(runs, new, o.allow_different_gpu)
  if refused then return fail(refused, refusal) end
  local metrics, bad = judged_metrics(o.metric, runs, new)
  if not metrics then return fail(EXIT.USAGE, bad) end
  options.metrics = metrics
  local judged = compare.compare(runs, new, options)
  local bases = {}
  for n, base in ipairs(runs) do bases[n] = base.label end
  -- runs with no values (offline plans, a column never filled) judge nothing: never "0 slower"
  local names = {}
  for n, metric in ipairs(metrics) do names[n] = metric.name end
  if #judged.points == 0 then
    return fail(EXIT.USAGE, string.format("no point of %s or %s has a value in %s (an offline plan measures " ..
      "nothing): nothing to judge", new.label, table.concat(bases, ", "), table.concat(names, ", ")))
  end
  if judged.counts.new == #judged.points then
    return fail(EXIT.USAGE, string.format("no point of %s has a baseline value in %s (%s): nothing to judge against",
      new.label, table.concat(names, ", "), table.concat(bases, ", ")))
  end
  local function print_to(file)
    if format == "markdown" then printers.format_markdown(judged, file)
    elseif format == "json" then printers.format_json(judged, file, {baseline_runs = bases, new_run = new.label,
      rule = options.rule, floor_pct = options.floor_pct, gpu = new.info.gpu and new.info.gpu.name})
    elseif format == "junit" then printers.format_junit(judged, file, new.info.sweep and new.info.sweep.name)
    else printers.format_table(judged, file) end
  end
  if output then -- written whole, through a temporary file and a rename (a full disk is exit 7)
    local written, problem = pcall(csv.write_printed, output, print_to, true)
    if not written and not csv.is_write_error(problem) then error(problem, 0) end -- a bug: exit 70, not 7
    if not written then return fail(EXIT.WRITE, problem.message) end
  else
    print_to(io.stdout)
  end
  for _, e in ipairs(judged.points) do if compare.is_regression(e) then return EXIT.FAILED end end
  return EXIT.OK
end

return M
