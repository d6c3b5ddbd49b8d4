-- The measurement policy without a GPU: statistics and the stopping rule on synthetic samples.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local measure = require("gpuexp.api.measure")
local limits = {min_samples = 10, min_time_ms = 5, max_noise_pct = 0.5, timeout_s = 15, max_samples = 1000}

-- samples with a known relative noise: 1 ms +- 0.2% alternating -> stddev ~0.2%
local quiet = {}
for i = 1, 10 do quiet[i] = i % 2 == 0 and 1.002 or 0.998 end
local s = gpuexp.stats(quiet, "_ms")
T.near(s.noise_pct, 0.2108, 0.001, "relative noise of +-0.2%")
T.near(s.median_ms, 1.0, 1e-12, "median")
T.eq(measure.stop_reason(s, 10, 0.1, limits), "noise", "enough, quiet, long enough: stop")
T.eq(measure.stop_reason(gpuexp.stats({1, 1, 1}, "_ms"), 3, 0.1, limits), nil, "too few samples: go on")
T.eq(measure.stop_reason(s, 2, 0.1, limits), nil, "too little GPU time: go on")
-- noisy: one outlier in twenty moves the mean and the noise, not the median
local noisy = {}
for i = 1, 19 do noisy[i] = 1.0 end
noisy[20] = 5.0
local n = gpuexp.stats(noisy, "_ms")
T.eq(n.median_ms, 1.0, "median ignores the outlier")
T.ok(n.noise_pct > 50, "the outlier shows in the noise: " .. n.noise_pct)
T.eq(measure.stop_reason(n, 24, 1, limits), nil, "noisy: go on")
T.eq(measure.stop_reason(n, 24, 16, limits), "timeout", "noisy past the timeout: stop, and say why")
local many = gpuexp.stats(noisy, "_ms")
many.samples = 1000
T.eq(measure.stop_reason(many, 24, 1, limits), "max_samples", "the sample cap")
-- p10/p90 by linear interpolation
local q = gpuexp.stats({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "_ms")
T.near(q.p10_ms, 1.9, 1e-12, "p10"); T.near(q.p90_ms, 9.1, 1e-12, "p90")
T.eq(table.concat(gpuexp.measure_columns, ","),
  "mode,samples,noise_pct,sm_clock_mhz,clock_throttled,throttled_samples,median_cycles,stop_reason", "CSV columns")

-- throttled batches: a timer whose batches run at the clocks given, each sample 1 ms at 1980 MHz
-- (slower in proportion below it). The batch at 1500 MHz (under 90% of the highest clock) is
-- dropped and counted, and the next batch waits recovery_ms; the batch at 1800 (91%) is kept.
local function clocked_timer(clocks)
  local n = 0
  return {time = function(_, o)
    if not o.clock then return {median_ms = 1, samples_ms = {1, 1, 1}} end
    n = n + 1
    local clock = clocks[math.min(n, #clocks)]
    local samples = {}
    for i = 1, o.reps do samples[i] = 1980 / clock * (1 + (i % 2) * 0.001) end
    return {samples_ms = samples, sm_clock_mhz = clock}
  end}
end
local policy = {warmup = 0, min_samples = 10, min_time_ms = 40, max_noise_pct = 50, timeout_s = 5, max_samples = 100000}
local started = gpuexp.clock()
local r = measure.run_policy(clocked_timer({1980, 1500, 1800, 1980, 1980, 1980}), policy, "hot")
T.eq(r.throttled_samples, 30, "the throttled batch's 30 samples dropped")
T.ok(gpuexp.clock() - started >= 0.05, "and the next batch waited 50 ms")
T.eq(r.batches, 3, "batches until 40 ms of kept samples")
T.ok(r.max_ms < 1980 / 1800 + 0.01, "no sample of the 1500 MHz batch is kept: " .. r.max_ms)
T.near(r.median_cycles, 1980e3, 2.5e3, "cycles (1980 MHz x 1 ms, and 1800 MHz x 1.1 ms): a sample's time times its batch's clock")
-- a clock that rises later: the earlier, slower batches fall under the threshold and are dropped
r = measure.run_policy(clocked_timer({1500, 1980, 1980, 1980, 1980}), policy, "hot")
T.eq(r.throttled_samples, 10, "a batch below 90% of a clock seen later is dropped too")
T.near(r.median_ms, 1.0, 0.002, "the median of the kept samples")
-- throttle_pct = 0 keeps every batch
r = measure.run_policy(clocked_timer({1980, 1500, 1980, 1980, 1980}), {warmup = 0, min_samples = 10, min_time_ms = 40,
  max_noise_pct = 50, timeout_s = 5, max_samples = 100000, throttle_pct = 0}, "hot")
T.eq(r.throttled_samples, 0, "throttle_pct = 0: nothing dropped")
-- a study's lesson: every failed expectation is reported; the report says whether it held
local lesson = gpuexp.lesson()
lesson:expect(true, "never shown")
T.eq(lesson:report("all good"), true, "held")
local failing = gpuexp.lesson()
failing:expect(1 > 2, "one is not more than two")
T.eq(failing:report("unused"), false, "did not hold")
T.eq(#gpuexp.stall_reasons, 19, "every stall reason ncu knows")
T.ok(gpuexp.cache_directory():find("test%-cache"), "the cache folder the C core uses: " .. gpuexp.cache_directory())
T.done()
