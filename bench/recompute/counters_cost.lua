-- What the counters cost the shipped nightly, as whole runs: bench/remeasure.sh's counters_cost/
-- (times.tsv: each night's wall time around the whole `gpuexp nightly` process, without and with the
-- counters; the nights' own output beside it). Prints NAME: VALUE lines: both sides' nights, the
-- difference of their means, and the nights' own count of the collection (`counters S s`) for
-- contrast, which leaves out what the counters add around the collection itself.
--   RECORD=bench/remeasure/counters_cost/times.tsv RECORD2=bench/remeasure/header.txt gx bench/recompute/counters_cost.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")
local times = R.records[1]
local folder = times:match("^(.*)/[^/]*$") or "."
local rows = {}
for line in R.text(times):gmatch("[^\n]+") do
  local night, counters, code, ms = line:match("^(%d+)\t(%a+)\t(%d+)\t(%d+)$")
  if night then rows[#rows + 1] = {night = night, counters = counters, code = tonumber(code), s = tonumber(ms) / 1000} end
end
local side = {with = {}, without = {}}
local counted = {}
for _, row in ipairs(rows) do
  assert(row.code == 0 or row.code == 1, "night " .. row.night .. " exited " .. row.code)
  table.insert(side[row.counters], row.s)
  if row.counters == "with" then
    local said = R.line(folder .. "/night" .. row.night .. "_with.txt", "%(counters ([%d.]+) s%)")
    counted[#counted + 1] = {said, row.s}
  end
end
assert(#side.with > 0 and #side.without > 0, "no nights with and without the counters in " .. times)
local function seconds(list)
  local words = {}
  for _, s in ipairs(list) do words[#words + 1] = string.format("%.1f s", s) end
  return table.concat(words, " and ")
end
local cost = (R.mean(side.with) / R.mean(side.without) - 1) * 100
local said, share = {}, {}
for _, c in ipairs(counted) do
  said[#said + 1] = string.format("%.1f s", c[1])
  share[#share + 1] = 100 * c[1] / c[2]
end
local gpu = R.line(R.records[2], "^gpu: .-NVIDIA (%S+)")
print("gpu: " .. gpu)
print("without: " .. seconds(side.without))
print("with: " .. seconds(side.with))
print(string.format("cost: %+.1f%%", cost))
print("counted: " .. table.concat(said, " and "))
print(string.format("counted share: %.0f%%", R.mean(share)))
print(string.format("sentence: on an %s, the nights without counters took %s, with them %s: %+.1f%% as whole runs " ..
  "(the nights' own count of the collection said %s, %.0f%% of a night)", gpu, seconds(side.without), seconds(side.with),
  cost, table.concat(said, " and "), R.mean(share)))
