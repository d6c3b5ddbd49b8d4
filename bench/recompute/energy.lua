-- The energy study's figures over its four H200 runs (bench/h200/energy/energy_run*.txt, the tables
-- experiments/energy.lua printed): each kernel's range of power, energy per launch and energy per
-- unit of work, and the tensor cores' advantage per FLOP in each run.
--   RECORD=... RECORD2=... gx bench/recompute/energy.lua   (the runs: $RECORD, $RECORD2, ...)
local R = dofile(gpuexp.script_dir .. "/records.lua")
local runs = {}
for _, path in ipairs(R.records) do runs[#runs + 1] = R.printed(path) end
assert(#runs > 0, "no runs: set RECORD")

local function values(kernel, column)
  local list = {}
  for _, rows in ipairs(runs) do list[#list + 1] = R.row(rows, {kernel = kernel})[column] end
  return R.min(list), R.max(list)
end

for name, kernel in pairs({fma = "fp32_fma", tensor = "fp16_tensor"}) do
  local pmin, pmax = values(kernel, "power_w")
  local emin, emax = values(kernel, "energy_j")
  local umin, umax = values(kernel, "j_per_unit") -- J per TFLOP: pJ per FLOP
  local unit = name == "fma" and "%.1f-%.1f" or "%.2f-%.2f" -- as the doc's table writes each
  print(string.format("%s: %.0f-%.0f W | %.2f-%.2f J | " .. unit, name, pmin, pmax, emin, emax, umin, umax))
  print(string.format("%s pJ: %.2f-%.2f", name, umin, umax))
  print(string.format("%s pJ short: %.1f-%.1f", name, umin, umax))
end
local function units(kernel, format)
  local lo, hi = values(kernel, "j_per_unit")
  return string.format(format, lo, hi)
end
print("pJ both: " .. units("fp16_tensor", "%.2f-%.2f") .. " against " .. units("fp32_fma", "%.1f-%.1f"))
local ratios = {}
for _, rows in ipairs(runs) do
  ratios[#ratios + 1] = R.row(rows, {kernel = "fp32_fma"}).j_per_unit / R.row(rows, {kernel = "fp16_tensor"}).j_per_unit
end
print(string.format("ratio words: %.1fx to %.1fx", R.min(ratios), R.max(ratios)))
print(string.format("ratio: %.1f-%.1fx", R.min(ratios), R.max(ratios)))
