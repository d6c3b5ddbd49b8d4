-- The referee of the comparison with Kernel Tuner (issue 37, item 5), run by bench/tune/kt_compare.sh
-- after every tune:
--   gpuexp --quiet bench/tune/referee.lua RECORDS TRUTH [SPACE...]
-- For each space (default conv matmul, those with TRUTH/SPACE/brute.json: gpuexp's brute-force
-- record, whose best is the reference), every winner reported (by gpuexp: RECORDS/gpuexp/SPACE/*.json
-- from bench/tune/study.lua; by Kernel Tuner: RECORDS/kernel_tuner/SPACE/*.json from
-- bench/tune/kt_run.py) and brute force's best, each distinct configuration once, re-measured in this
-- one process by one method: the study's full measurement (bench/tune/policy.lua), ROUNDS rounds, each
-- over all the winners in turn (each round starts one further along the list, so that no winner is
-- always first). Writes RECORDS/referee.json after each space: per winner its point and each round's
-- median and samples (or why it failed); bench/tune/kt_table.lua turns them into regrets. Prints a line
-- per winner.
local json = require("gpuexp.store.json")
local records = dofile(gpuexp.script_dir .. "/records.lua")
local RECORDS, TRUTH, wanted = records.arguments("bench/tune/referee.lua")
local spaces_of = dofile(gpuexp.script_dir .. "/spaces.lua")
dofile(gpuexp.script_dir .. "/policy.lua") -- the study's full measurement
local ROUNDS = 5
local read, list, key, whole = records.read, records.runs, records.key, records.whole

local found, device = pcall(gpuexp.device)
local record = {gpu = found and device and device.facts.name or "none", rounds = ROUNDS,
  measure = {min_time_ms = gpuexp.measure_defaults.min_time_ms, min_samples = gpuexp.measure_defaults.min_samples,
    max_samples = gpuexp.measure_defaults.max_samples, max_noise_pct = gpuexp.measure_defaults.max_noise_pct},
  spaces = {}}
local started = gpuexp.clock()
for _, name in ipairs(wanted) do
  local brute = read(TRUTH .. "/" .. name .. "/brute.json")
  if brute then
    local axes = brute.axes
    local winners, by_key = {}, {}
    local function add(point, who)
      local k = key(point, axes)
      if not by_key[k] then
        by_key[k] = {key = k, point = whole(point), medians = {}, samples = {}, reported_by = {}}
        winners[#winners + 1] = by_key[k]
      end
      table.insert(by_key[k].reported_by, who)
    end
    add(brute.best, "brute")
    for _, tool in ipairs({"gpuexp", "kernel_tuner"}) do
      for _, file in ipairs(list(RECORDS .. "/" .. tool .. "/" .. name)) do
        local r = read(RECORDS .. "/" .. tool .. "/" .. name .. "/" .. file)
        if r and r.best then add(r.best, tool .. " " .. file:gsub("%.json$", "")) end
      end
    end
    local space = spaces_of(name)
    if space.setup then space.setup() end
    for round = 1, ROUNDS do
      for i = 1, #winners do
        local w = winners[(i + round - 2) % #winners + 1]
        local ok, row = pcall(space.run, w.point)
        if ok and row.median_ms and (not space.condition or row[space.condition]) then
          table.insert(w.medians, row.median_ms)
          table.insert(w.samples, row.samples_ms)
        else
          w.failed = ok and ("no " .. (row.median_ms and space.condition or "median_ms")) or tostring(row)
        end
      end
    end
    record.spaces[name] = {reference = winners[1].key, axes = axes, winners = winners}
    record.wall_s = gpuexp.clock() - started
    local file = assert(io.open(RECORDS .. "/referee.json", "w"))
    file:write(json.encode(record), "\n")
    file:close()
    local reference = #winners[1].medians > 0 and gpuexp.stats(winners[1].medians).median
    for _, w in ipairs(winners) do
      local ms = #w.medians > 0 and gpuexp.stats(w.medians).median
      print(string.format("referee %s %s: %s%s (%s)", name, w.key, ms and string.format("%.5f ms", ms) or "failed",
        ms and reference and string.format(", %+.2f%% from brute force's best", 100 * (ms / reference - 1)) or "",
        table.concat(w.reported_by, ", ")))
    end
  end
end
