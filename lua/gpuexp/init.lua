-- The Lua half of gpuexp: attaches the library's functions to the global gpuexp table.
local gpuexp = gpuexp

local csv = require("gpuexp.store.csv")
local meta = require("gpuexp.store.meta")
local sweep = require("gpuexp.api.sweep")
local metrics = require("gpuexp.api.metrics")
local measure = require("gpuexp.api.measure")
local lines = require("gpuexp.api.lines") -- before kernel:time is wrapped (api/kernel.lua): it keeps the raw one

local struct = require("gpuexp.api.struct")
gpuexp.struct = struct.struct
gpuexp.layout = struct.layout
gpuexp.sweep = sweep.run
-- gpuexp.tune{...} -> the tie set of a search (docs/howto/tune.md); gpuexp.ab{...} -> a paired verdict (docs/howto/ab.md)
gpuexp.tune = function(spec) return require("gpuexp.api.tune").run(spec) end
gpuexp.ab = function(spec) return require("gpuexp.api.ab").run(spec) end
gpuexp.points = sweep.points
gpuexp.csv = {read = csv.read, open = csv.open} -- the store's CSV module is the library's; scripts get these
gpuexp.metadata = meta.collect
gpuexp.print_table = csv.print_table
gpuexp.metric_presets = metrics.presets
gpuexp.expand_metrics = metrics.expand
gpuexp.stall_reasons = metrics.stall_reasons
gpuexp.metrics = metrics.batch_metrics
gpuexp.measure_defaults = {}
gpuexp.calibrate = function(options) return require("gpuexp.api.calibrate").run(options) end
gpuexp.ceilings = function(device) return require("gpuexp.api.calibrate").cached(device) end
gpuexp.plot = require("gpuexp.api.plot").lines
gpuexp.roofline_plot = require("gpuexp.api.plot").roofline
-- gpuexp.try_plot(gpuexp.plot or gpuexp.roofline_plot, spec) -> path, or nil and why (no gnuplot):
-- for studies, whose numbers matter more than their picture
function gpuexp.try_plot(plot, spec)
  local ok, result = pcall(plot, spec)
  if ok then return result end
  return nil, type(result) == "table" and result.message or tostring(result)
end
gpuexp.measure_columns = measure.columns
-- line profiles (docs/howto/lines.md): kernel:line_profile{launch}, the cubin's lines, two compared
gpuexp._kernel_methods.line_profile = lines.kernel_line_profile
gpuexp.line_table = lines.line_table
gpuexp.line_diff = lines.line_diff
gpuexp.read_line_profile = require("gpuexp.store.line_profile").read
if gpuexp.run_options and gpuexp.run_options.lines and not gpuexp.plan then
  gpuexp.compile = lines.compile_with_lines(gpuexp.compile) -- --lines: every source with its line table
end
-- gpuexp.diagnose(kernel, launch) -> findings (verdict, evidence, text, the numbers), or nil and why
function gpuexp.diagnose(kernel, spec)
  local diagnose = require("gpuexp.api.diagnose")
  local findings, why = diagnose.run(kernel, spec)
  if findings then findings.text = diagnose.format(findings) end
  return findings, why
end
-- Kernel and Sequence: their methods written in Lua (api/kernel.lua)
require("gpuexp.api.kernel").install(gpuexp)

if gpuexp.plan then
  local plan = require("gpuexp.api.plan")
  plan.install(gpuexp)
  -- said once, by the process the command runs in (a supervisor or an inline run), not its worker
  local unused = not gpuexp._worker and plan.unused_options(gpuexp.run_options)
  if unused then io.stderr:write(unused, "\n") end
end

-- gpuexp.lesson(): a study's lesson checks. lesson:expect(condition, text) records what did not hold
-- (text says what went wrong; printed only then); lesson:claim(condition, statement) records a
-- statement of the lesson with its numbers, printed either way, marked yes or NO. lesson:report(held)
-- prints "held on this GPU: <held>" or "did NOT hold on this GPU:", then the claims and the failed
-- expectations. A lesson that does not hold is a finding about this GPU, reported, not a failed run
-- (wrong results use gpuexp.check).
function gpuexp.lesson()
  local lines, failed = {}, 0
  return {
    expect = function(_, condition, text)
      if not condition then failed = failed + 1; lines[#lines + 1] = "  " .. text end
    end,
    claim = function(_, condition, statement)
      if not condition then failed = failed + 1 end
      lines[#lines + 1] = (condition and "  yes: " or "  NO:  ") .. statement
    end,
    report = function(_, held)
      print(failed == 0 and ("held on this GPU: " .. held) or "did NOT hold on this GPU:")
      for _, text in ipairs(lines) do print(text) end
      return failed == 0
    end,
  }
end

-- gpuexp.check(condition, message, ...): a failed check is a script error (exit 1) with
-- the caller's location; returns condition so it can be used inline.
function gpuexp.check(condition, message, ...)
  if not condition then
    error("check failed: " .. string.format(message or "assertion", ...), 2)
  end
  return condition
end

-- The user's line everywhere: an error a library function raises from its own code (a Lua error
-- such as indexing a nil argument, or a C check called from the library) is raised again at the
-- script's line, naming the function. gpuexp.error and the C functions' own checks already name
-- the script's line and pass through as they are.
local function library_error(err)
  return type(err) == "string" and (err:find("^[^:\n]*lua/gpuexp/[%w_/]+%.lua:%d+: ") or not err:find("^[^\n]-:%d+: "))
end
local function at_users_line(name, fn)
  return function(...)
    local results = table.pack(pcall(fn, ...))
    if results[1] then return table.unpack(results, 2, results.n) end
    local err = results[2]
    if library_error(err) then
      gpuexp.error("usage", name .. ": " .. err:gsub("^[^:\n]*lua/gpuexp/[%w_/]+%.lua:%d+: ", ""))
    end
    error(err, 0)
  end
end
-- (tune and ab locate their own errors at the script's line, by the same rule)
local passes_through = {check = true, sweep = true, lesson = true, try_plot = true, tune = true, ab = true}
for _, key in ipairs((function()
  local keys = {}
  for key, value in pairs(gpuexp) do
    if type(value) == "function" and not key:find("^_") and not passes_through[key] then keys[#keys + 1] = key end
  end
  return keys
end)()) do
  local fn = gpuexp[key]
  if debug.getinfo(fn, "S").what == "Lua" then gpuexp[key] = at_users_line("gpuexp." .. key, fn) end
end
for _, class in ipairs({{"kernel", gpuexp._kernel_methods}, {"sequence", gpuexp._sequence_methods},
  {"csv", gpuexp.csv}}) do
  for key, fn in pairs(class[2]) do
    if debug.getinfo(fn, "S").what == "Lua" then
      class[2][key] = at_users_line(class[1] .. (class[1] == "csv" and "." or ":") .. key, fn)
    end
  end
end

return gpuexp
