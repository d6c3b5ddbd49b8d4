-- measure's auto mode without a GPU, on timers that behave as a short sequence does: per-run events
-- read the host's enqueue time (22.5 µs) where the GPU takes 14 µs back to back. Auto must time
-- back to back (a graph, or a batch when the work cannot be captured) and say so; per-run events
-- stay available as mode = "hot"; long work stays hot.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local measure = require("gpuexp.api.measure")

-- per_run_ms: what per-run events read; gpu_ms: what back-to-back runs read; capturable: whether a graph works
local function fake(per_run_ms, gpu_ms, capturable)
  local calls = {}
  return {calls = calls, time = function(_, o)
    calls[#calls + 1] = o
    if o.graph and not capturable then error({kind = "driver", message = "cuStreamBeginCapture failed: not capturable"}) end
    local ms = (o.graph or o.batch) and gpu_ms or per_run_ms
    local samples = {}
    for i = 1, o.reps do samples[i] = ms * (1 + (i % 2) * 1e-4) end
    return {median_ms = ms, samples_ms = samples, sm_clock_mhz = o.clock and 1980 or nil}
  end}
end
local policy = {warmup = 0, min_samples = 10, min_time_ms = 0.5, max_noise_pct = 50, timeout_s = 5, max_samples = 100000}

local sequence = fake(0.0225, 0.014, true)
local r = measure.run_policy(sequence, policy, "auto")
T.eq(r.mode, "graph", "a short sequence whose enqueue shows: timed as graph replays")
T.near(r.median_ms, 0.014, 1e-5, "the GPU's time per run, not the host's")
T.eq(r.launches_per_sample, 3, "runs per graph: enough for 50 µs (3 x 22.5 µs)")
T.near(r.per_run_ms, 0.0225, 1e-12, "the per-run reading is kept in the result")
T.near(r.host_share_pct, 100 * (0.0225 - 0.014) / 0.0225, 1e-9, "and the host's share")
T.eq(sequence.calls[#sequence.calls].graph, 3, "every sample a graph of 3 runs")

local uncapturable = fake(0.0225, 0.014, false)
r = measure.run_policy(uncapturable, policy, "auto")
T.eq(r.mode, "batch", "work a graph cannot capture: back-to-back runs between two events")
T.near(r.median_ms, 0.014, 1e-5, "batch time per run")
T.eq(uncapturable.calls[#uncapturable.calls].batch, 3, "batch size")

r = measure.run_policy(fake(0.0225, 0.014, true), policy, "hot")
T.eq(r.mode, "hot", "per-run events on request"); T.near(r.median_ms, 0.0225, 1e-5, "per-run reading")

r = measure.run_policy(fake(0.0032, 0.0031, true), policy, "auto")
T.eq(r.mode, "hot", "a 3 µs kernel whose launch is hidden (3% apart): per-run events")
r = measure.run_policy(fake(0.0050, 0.0030, true), policy, "auto")
T.eq(r.mode, "graph", "a 3 µs kernel whose launch shows: graph"); T.near(r.median_ms, 0.003, 1e-6, "its GPU time")
r = measure.run_policy(fake(0.0050, 0.0030, true), {warmup = 0, min_samples = 10, min_time_ms = 0.5, max_noise_pct = 50,
  timeout_s = 5, max_samples = 100000, host_share_pct = 80}, "auto")
T.eq(r.mode, "hot", "host_share_pct sets the threshold")

local long = fake(2.0, 1.0, true)
r = measure.run_policy(long, {warmup = 0, min_samples = 10, min_time_ms = 20, max_noise_pct = 50, timeout_s = 5,
  max_samples = 100000}, "auto")
T.eq(r.mode, "hot", "2 ms per run: hot without a back-to-back probe")
for _, call in ipairs(long.calls) do T.ok(not call.graph and not call.batch, "no graph probe for long work") end

r = measure.run_policy(fake(0.0225, 0.014, false), policy, "batch")
T.eq(r.mode, "batch", "batch on request"); T.near(r.median_ms, 0.014, 1e-5, "batch on request: per run")
T.raises(function() measure.measure_sequence({}, {mode = "loop"}) end, "mode must be hot, cold, graph, batch or auto",
  "an unknown mode")
T.done()
