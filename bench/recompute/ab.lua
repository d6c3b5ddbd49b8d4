-- The A/B study's table rebuilt from the raw output bench/ab_study.lua kept (OUT=DIR): DIR's
-- decisions.csv, long_samples.csv and settings.csv, by the study's own builder (bench/ab_table.lua).
-- Prints the table's lines, then NAME: VALUE lines for the docs (the two rows, the injected change,
-- the study's time).
--   RECORD=DIR/decisions.csv RECORD2=DIR/long_samples.csv RECORD3=DIR/settings.csv gx bench/recompute/ab.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")
local decisions = {}
for _, row in ipairs(R.csv(R.records[1])) do
  decisions[#decisions + 1] = {kind = row.kind, verdict = row.verdict, nvbench = row.nvbench, compare = row.compare,
    gpu_s = tonumber(row.gpu_s), wall_s = tonumber(row.wall_s), blocks = tonumber(row.blocks), mde_pct = tonumber(row.mde_pct)}
end
local long = {a = {}, b = {}}
for _, row in ipairs(R.csv(R.records[2])) do table.insert(long[row.side], tonumber(row.sample_ms)) end
local s = R.csv(R.records[3])[1]
local settings = {gpu = s.gpu, elements = tonumber(s.elements), block_ms = tonumber(s.block_ms), study_s = tonumber(s.study_s)}
local lines = dofile(gpuexp.script_dir .. "/../ab_table.lua")(decisions, long.a, long.b, settings)
for _, line in ipairs(lines) do print(line) end
for _, line in ipairs(lines) do
  if line:match("^| A/A") then print("aa row: " .. line) end
  if line:match("^| 1%% slower") then print("slower row: " .. line) end
  if line:match("^# ") then print("title: " .. line:sub(3)) end
  local change = line:match("^Injected slowdown: B over 1%% more elements, ([+-][%d.]+%%)")
  if change then print("injected: " .. change) end
  local time = line:match("Study time (%d+) s%.$")
  if time then print("study time: " .. time) end
end
print("decisions: " .. #decisions)
print(string.format("time for all: %.0f s for all %d", settings.study_s, #decisions))
print("gpu: " .. settings.gpu)
print("gpu short: " .. (settings.gpu:match("NVIDIA (%S+)") or settings.gpu))
