-- The batched metrics run stage by stage (bench/h200/metrics_batch/startup_stages.txt: a build that
-- stamped each stage; per configuration the walls of 4 runs and their median, and the stamps of the
-- last run): each configuration's median wall, and each stage's time over the configurations' runs
-- shown, as NAME: VALUE lines (a range LOW-HIGH where they differ).
--   RECORD=bench/h200/metrics_batch/startup_stages.txt gx bench/recompute/stages.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")
local runs, current = {}, nil
for line in R.text():gmatch("[^\n]+") do
  local name, median = line:match("^== (%S+) rc=0 walls=.* median=([%d.]+)")
  if name then
    current = {name = name, median = tonumber(median), stamps = {}, order = {}}
    runs[#runs + 1] = current
  elseif current then
    local stage, at = line:match("^%s+%d+ (%S+)%s+([%d.]+)$")
    if stage then
      current.order[#current.order + 1] = {stage, tonumber(at)}
      current.stamps[stage] = current.stamps[stage] or tonumber(at) -- the first of repeated stages
    end
  end
end
assert(#runs > 0, "no runs in " .. R.records[1])

for _, run in ipairs(runs) do print(string.format("median %s: %.3f s", run.name, run.median)) end

-- a stage's time in the runs shown of the two configurations the pages describe (the process without
-- counters, every_inline, and with the batch, batch_inline) that have it, as a range
local DESCRIBED = {every_inline = true, batch_inline = true}
local printed = {}
local function stage(name, from, to, fn)
  local values = {}
  for _, run in ipairs(runs) do if DESCRIBED[run.name] then
    local s = run.stamps
    local v = fn and fn(run) or (s[from] and s[to] and s[to] - s[from])
    if v then values[#values + 1] = v end
  end end
  local lo, hi = R.min(values), R.max(values)
  local text = string.format("%.2f", lo) == string.format("%.2f", hi) and string.format("%.2f", lo) or
    string.format("%.2f-%.2f", lo, hi)
  print(name .. ": " .. text)
  printed[name] = text
  return lo, hi
end
stage("cuInit", "driver_dlopen_end", "cuinit_end")
stage("context", "ctx_begin", "ctx_end")
stage("teardown", "script_end", "lua_closed")
stage("script without counters", nil, nil, function(run)
  return not run.stamps.profiler_open_begin and run.stamps.script_end - run.stamps.ctx_end or nil
end)
stage("cuptiProfilerInitialize", "profiler_open_begin", "profiler_initialize_end")
stage("cuptiProfilerGetCounterAvailability", "chipname_end", "availability_end")
local function starts(run, which)
  local list, begin = {}, nil
  for _, stamp in ipairs(run.order) do
    if stamp[1] == "start_begin" then begin = stamp[2] end
    if stamp[1] == "start_end" and begin then list[#list + 1] = stamp[2] - begin end
  end
  if #list == 0 then return nil end
  if which == "first" then return list[1] end
  return R.max({table.unpack(list, 2)})
end
stage("first cuptiRangeProfilerStart", nil, nil, function(run) return starts(run, "first") end)
stage("next cuptiRangeProfilerStart", nil, nil, function(run) return starts(run, "next") end)
stage("passes", nil, nil, function(run) -- after the first Start: the passes, Stop and decode
  local s = run.stamps
  return s.start_end and s.script_end - s.start_end or nil
end)

-- the pages' sentences
print(string.format("parts: %s, context %s, teardown %s", printed.cuInit, printed.context, printed.teardown))
print(string.format("cupti parts: %s, cuptiProfilerGetCounterAvailability %s, the first cuptiRangeProfilerStart %s, " ..
  "the three passes %s", printed.cuptiProfilerInitialize, printed.cuptiProfilerGetCounterAvailability,
  printed["first cuptiRangeProfilerStart"], printed.passes))
local startup = 0
for _, name in ipairs({"cuptiProfilerInitialize", "cuptiProfilerGetCounterAvailability", "first cuptiRangeProfilerStart"}) do
  startup = startup + tonumber(printed[name]:match("[%d.]+$"))
end
print(string.format("cupti startup: %.1f", startup))
for _, run in ipairs(runs) do
  if run.name == "every_inline" then print(string.format("process: %.2f", run.median)) end
end
for _, run in ipairs(runs) do
  if run.name == "batch_inline_noavail" then
    for _, other in ipairs(runs) do
      if other.name == "batch_inline" then print(string.format("noavail saves: %.2f", other.median - run.median)) end
    end
  end
end
-- with the run's walls ($RECORD2, run_metrics.txt): the most the batch could gain over ncu in one
-- process with nothing of gpuexp's own left, the process and CUPTI's start-up only
if R.records[2] then
  local ncu = R.line(R.records[2], "ncu, one process for all 24 launches%s+([%d.]+)")
  local process
  for _, run in ipairs(runs) do if run.name == "every_inline" then process = run.median end end
  print(string.format("at most: %.0f", ncu / (process + startup)))
end
