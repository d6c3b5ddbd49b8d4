-- The Lua half of Kernel and Sequence: the methods written in Lua over the C types (l_kernel.c,
-- l_sequence.c): time, measure and metrics, and what follows a timed launch (gpuexp diagnose,
-- --counters, --lines). Its state (the point's last diagnosis, whether the launches are gpuexp's own) is
-- this module's, read through its functions, never through the gpuexp table.
local metrics = require("gpuexp.api.metrics")
local measure = require("gpuexp.api.measure")
local lines = require("gpuexp.api.lines") -- before kernel:time is wrapped (M.install): it keeps the raw one
local text = require("gpuexp.store.text")

local M = {}

local last_diagnosis -- gpuexp diagnose: the findings of the last timed launch since M.forget()
local own_depth = 0 -- > 0 while gpuexp times launches of its own (calibration): not the script's

-- A sweep point starts: no diagnosis yet.
function M.forget() last_diagnosis = nil end

-- The findings of the point's last diagnosed launch (gpuexp diagnose), or nil.
function M.last_diagnosis() return last_diagnosis end

-- Runs fn(...) as gpuexp's own launches (calibration's kernels are not the script's: gpuexp diagnose
-- and --counters leave them alone); returns what pcall(fn, ...) returns.
function M.gpuexps_own(fn, ...)
  own_depth = own_depth + 1
  local results = table.pack(pcall(fn, ...))
  own_depth = own_depth - 1
  return table.unpack(results, 1, results.n)
end

-- After a timed launch: gpuexp diagnose SCRIPT diagnoses it; gpuexp --counters (nightly) remembers
-- it, and the sweep collects the fixed counter set of the point's last one when the point ends
-- (api/counters.lua). The sweep puts both in the point's row. --lines profiles it (api/lines.lua).
local function after_timed(kernel, spec, result)
  local options = gpuexp.run_options
  if not options or gpuexp.plan or own_depth > 0 then return end
  if options.diagnose and spec then -- kernels (a sequence has no single launch to diagnose)
    local findings, why = gpuexp.diagnose(kernel, spec)
    if findings then
      print(text.message(findings.text))
      last_diagnosis = findings
    else
      io.stderr:write(text.format("gpuexp diagnose: no counters for %s: %s\n", kernel.name, tostring(why)))
    end
  end
  if options.counters then require("gpuexp.api.counters").remember(kernel, spec) end
  if options.lines then lines.after_timed(kernel, spec, result) end
end

-- Puts the methods on the C types' method tables (gpuexp._kernel_methods, _sequence_methods).
function M.install(gpuexp)
  gpuexp._kernel_methods.metrics = metrics.kernel_metrics
  local time_launch = gpuexp._kernel_methods.time
  gpuexp._kernel_methods.time = function(kernel, spec)
    if measure.profiling() then -- gpuexp profile: once, inside the capture range
      local launch = {}
      for k, v in pairs(spec) do if k ~= "reps" and k ~= "warmup" and k ~= "cold" then launch[k] = v end end
      return measure.profile_once(function(warmup, reps)
        launch.warmup, launch.reps = warmup, reps
        return time_launch(kernel, launch)
      end, spec.warmup or 3, spec.cold, gpuexp.device())
    end
    local result = time_launch(kernel, spec)
    after_timed(kernel, spec, result)
    return result
  end
  -- sequence:measure{...} and sequence:metrics{...}: the policy and the counters over one run
  gpuexp._sequence_methods.measure = function(sequence, spec)
    local result = measure.measure_sequence(sequence, spec)
    if not gpuexp.plan then measure.flag_clock(result, sequence.device) end
    after_timed(sequence)
    return result
  end
  gpuexp._sequence_methods.metrics = metrics.sequence_metrics
  -- kernel:measure{...}: the measurement policy (gpuexp.measure), with the clock flag for its device
  gpuexp._kernel_methods.measure = function(kernel, spec)
    local result = measure.measure(kernel, spec)
    if not gpuexp.plan then measure.flag_clock(result, gpuexp.device()) end
    after_timed(kernel, spec, result)
    return result
  end
end

return M
