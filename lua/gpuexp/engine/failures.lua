-- A run's failed points, said once at its end by whichever transport ran it (the supervisor, an
-- inline run): the count by status and the first failure, whose message names the script's line.
local text = require("gpuexp.store.text")

local M = {}

-- A run whose points did not all give a row (an error in the run function, a crash, a timeout)
-- never ends as a success, with or without a terminal: says how many failed and the first one
-- (its message names the script's line) on stderr, and returns the exit code (0 when none did).
function M.report(ledger)
  local totals, first = ledger.totals, ledger.totals.first_failure
  if not first then return 0 end
  local failed, kinds = 0, {}
  for _, key in ipairs({"error", "crashed", "timeout"}) do
    failed = failed + totals[key]
    if totals[key] > 0 then kinds[#kinds + 1] = totals[key] .. " " .. (key == "timeout" and "timed out" or key) end
  end
  local outs = {}
  for _, sweep in ipairs(ledger.sweeps) do if sweep.counts.error + sweep.counts.crashed + sweep.counts.timeout > 0 then
    outs[#outs + 1] = sweep.out end end
  local lines = {text.format("gpuexp: %d of %d points failed (%s); their rows say why (status and error columns " ..
    "of %s)", failed, totals.done, table.concat(kinds, ", "), table.concat(outs, ", ")),
    text.format("gpuexp: the first: sweep '%s' point %s (%s%s): %s", first.sweep, first.point, first.status,
      first.earlier and ", a row an earlier part of the run wrote; --resume keeps it" or "",
      tostring(first.error or "no message"))}
  if gpuexp.plan and tostring(first.error):find("a nil value") then
    lines[#lines + 1] = "gpuexp: an offline plan measures nothing, so timings (t.median_ms, ...) are nil: compute from " ..
      "them only when not gpuexp.plan (the plan still checks compiles, arguments and launch configurations)"
  end
  io.stderr:write(table.concat(lines, "\n") .. "\n")
  return require("gpuexp.catalog").EXIT.INCOMPLETE
end

return M
