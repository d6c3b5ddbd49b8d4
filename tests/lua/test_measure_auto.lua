-- measure's auto mode without a GPU, on timers that behave as a short sequence does: per-run events
-- read the host's enqueue time (22.5 µs) where the GPU takes 14 µs back to back. Auto must time
-- back to back (a blocked batch; a graph only when batch timing fails) and say so; per-run events
-- stay available as mode = "hot"; long work stays hot.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local measure = require("gpuexp.api.measure")

-- per_run_ms: what per-run events read; gpu_ms: what blocked batches read; capturable: whether a
-- graph works; graph_ms: what graph replays read (as on an H200, slower than a blocked batch);
-- batch_fails: batch timing raises; timeouts: each batch sample reports this many blocking-kernel timeouts
local function fake(per_run_ms, gpu_ms, capturable, graph_ms, batch_fails, timeouts)
  local calls = {}
  return {calls = calls, time = function(_, o)
    calls[#calls + 1] = o
    if o.graph and not capturable then error({kind = "driver", message = "cuStreamBeginCapture failed: not capturable"}) end
    if o.batch and batch_fails then error({kind = "driver", message = "cuLaunchKernel failed"}) end
    local ms = o.graph and (graph_ms or gpu_ms) or o.batch and gpu_ms or per_run_ms
    local samples = {}
    for i = 1, o.reps do samples[i] = ms * (1 + (i % 2) * 1e-4) end
    local t = {median_ms = ms, samples_ms = samples, sm_clock_mhz = o.clock and 1980 or nil}
    if o.batch and timeouts then t.block_timeouts, t.timing_note = timeouts, "the blocking kernel timed out" end
    return t
  end}
end
local policy = {warmup = 0, min_samples = 10, min_time_ms = 0.5, max_noise_pct = 50, timeout_s = 5, max_samples = 100000}

-- the H200's numbers: graph replays (15.9 µs) slower than the GPU's back-to-back time (13.5 µs)
local sequence = fake(0.0232, 0.0135, true, 0.0159)
local r = measure.run_policy(sequence, policy, "auto")
T.eq(r.mode, "batch", "a short sequence whose enqueue shows: timed as a blocked batch, not graph replays")
T.near(r.median_ms, 0.0135, 1e-5, "the GPU's back-to-back time per run, not the host's nor the graph's")
T.eq(r.launches_per_sample, 3, "runs per batch: enough for 50 µs (3 x 23.2 µs)")
T.near(r.per_run_ms, 0.0232, 1e-12, "the per-run reading is kept in the result")
T.near(r.back_to_back_ms, 0.0135, 1e-12, "the blocked batch is the back-to-back reference")
T.near(r.host_share_pct, 100 * (0.0232 - 0.0135) / 0.0232, 1e-9, "and the host's share")
T.eq(r.block_timeouts, 0, "no blocking-kernel timeout")
T.eq(r.timing_note, nil, "no note when every sample was held")
for _, call in ipairs(sequence.calls) do T.ok(not call.graph, "no graph probe when batch timing works") end
T.eq(sequence.calls[#sequence.calls].batch, 3, "every sample a batch of 3 runs")

local tiny = fake(0.0030, 0.0027, true)
measure.run_policy(tiny, policy, "auto")
T.eq(tiny.calls[2].batch, 17, "a 3 µs kernel: 17 runs per batch for 50 µs")
T.eq(measure.back_to_back_runs(0.0001), 200, "at most 200 runs: the launches fit the driver's queue while held")
T.eq(measure.back_to_back_runs(0.5), 2, "at least 2 runs")

local unbatchable = fake(0.0225, 0.014, true, 0.015, true)
r = measure.run_policy(unbatchable, policy, "auto")
T.eq(r.mode, "graph", "batch timing fails: graph replays are the back-to-back reference")
T.near(r.median_ms, 0.015, 1e-5, "graph time per run")
T.eq(unbatchable.calls[#unbatchable.calls].graph, 3, "graph size")

local timing_out = fake(0.0225, 0.014, true, nil, false, 2)
r = measure.run_policy(timing_out, policy, "batch")
T.ok(r.block_timeouts >= 2, "timeouts of the blocking kernel are counted in the result")
T.eq(r.timing_note, "the blocking kernel timed out", "and said in a note")

r = measure.run_policy(fake(0.0225, 0.014, true, 0.016), policy, "graph")
T.eq(r.mode, "graph", "graph on request"); T.near(r.median_ms, 0.016, 1e-5, "graph replays on request")

r = measure.run_policy(fake(0.0225, 0.014, true), policy, "hot")
T.eq(r.mode, "hot", "per-run events on request"); T.near(r.median_ms, 0.0225, 1e-5, "per-run reading")

r = measure.run_policy(fake(0.0032, 0.0031, true), policy, "auto")
T.eq(r.mode, "hot", "a 3 µs kernel whose launch is hidden (3% apart): per-run events")
r = measure.run_policy(fake(0.0050, 0.0030, true), policy, "auto")
T.eq(r.mode, "batch", "a 3 µs kernel whose launch shows: blocked batch"); T.near(r.median_ms, 0.003, 1e-6, "its GPU time")
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
