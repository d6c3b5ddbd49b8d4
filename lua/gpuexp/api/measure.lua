-- The measurement policy: warm-up, then batches of event-timed samples until the relative noise is
-- under a target (after a minimum count and a minimum of GPU time) or a timeout; hot, cold (L2
-- flushed before every sample) or graph (many launches per sample, for kernels of a few µs); the
-- SM clock probed after every batch. A batch whose clock is below throttle_pct of the highest
-- batch clock of the measurement is throttled: its samples are dropped (counted in
-- throttled_samples) and the next batch waits recovery_ms first, as NVBench does. Cycles beside
-- times: each sample times its batch's clock (median_cycles), for comparisons that survive a
-- clock that differs between runs.
local option_keys = require("gpuexp.api.option_keys")

local M = {}

-- Documented defaults (NVBench's: 10 samples, 0.5% noise, 0.5 s, 15 s timeout); change per call
-- or for the whole script through gpuexp.measure_defaults.
M.defaults = {
  mode = "auto",          -- "hot" (per-run events), "cold", "graph", "batch", or "auto" (see choose_auto)
  warmup = 10,            -- launches before the first sample
  min_samples = 10,
  min_time_ms = 500,      -- GPU time summed over the samples
  max_noise_pct = 0.5,    -- relative standard deviation to stop at
  timeout_s = 15,         -- wall time after which it stops whatever the noise
  max_samples = 100000,
  graph_launches = nil,   -- runs per graph or batch sample; default: enough for about 50 µs
  host_share_pct = 5,     -- auto: back-to-back timing once per-run events read this much above it
  throttle_pct = 90,      -- a batch below this % of the highest batch clock is dropped (0: keep all)
  recovery_ms = 50,       -- the wait after a throttled batch (NVBench: 50 ms)
  telemetry = false,      -- power, energy, temperature and throttle reasons through NVML (or --telemetry)
}

-- the policy's options (graph_launches has no default, so it is named here), and a launch's
local policy_keys = {graph_launches = true}
for key in pairs(M.defaults) do policy_keys[key] = true end
local known = {}
for _, key in ipairs(gpuexp.launch_keys) do known[key] = true end -- grid, block, ..., cluster, cooperative
for key in pairs(policy_keys) do known[key] = true end

-- The range of each numeric option: {lowest, highest, whole number?, lowest excluded?}. A value
-- outside it (throttle_pct = 150, recovery_ms = -5, max_noise_pct = 0/0) is refused, naming it.
local ranges = {
  warmup = {0, 1e7, true}, min_samples = {1, 1e9, true}, min_time_ms = {0, 1e9}, max_noise_pct = {0, 100, false, true},
  timeout_s = {0, 1e7, false, true}, max_samples = {1, 1e9, true}, graph_launches = {1, 1e7, true},
  throttle_pct = {0, 100}, recovery_ms = {0, 600000},
}

local function checked(key, value, where)
  local range = ranges[key]
  if not range then return value end
  local low, high, whole, open = range[1], range[2], range[3], range[4]
  if type(value) ~= "number" or value ~= value or value < low or value > high or (open and value == low)
    or (whole and math.type(value) ~= "integer" and value ~= math.floor(value)) then
    gpuexp.error("usage", string.format("%s%s = %s: it must be %s %s %.15g to %.15g", where, key,
      value ~= value and "NaN" or tostring(value), whole and "a whole number" or "a number", open and "above" or "from",
      low, high), 2)
  end
  return value
end

local function option(spec, key)
  if spec[key] ~= nil then return checked(key, spec[key], "measure: ") end
  local global = gpuexp.measure_defaults and gpuexp.measure_defaults[key]
  if global ~= nil then return checked(key, global, "gpuexp.measure_defaults.") end
  -- gpuexp --telemetry: every measurement reads power, energy and temperature
  if key == "telemetry" and gpuexp.run_options and gpuexp.run_options.telemetry then return true end
  return M.defaults[key]
end

-- The stopping rule alone: "noise" once there are enough samples and GPU time and the relative
-- noise is under the target, "timeout" or "max_samples" when a limit is hit first, else nil.
function M.stop_reason(stats, total_ms, elapsed_s, limits)
  if stats.samples >= limits.min_samples and total_ms >= limits.min_time_ms and stats.noise_pct <= limits.max_noise_pct then
    return "noise"
  elseif elapsed_s >= limits.timeout_s then
    return "timeout"
  elseif stats.samples >= limits.max_samples then
    return "max_samples"
  end
  return nil
end

local function check_policy(spec, known_keys, what)
  if type(spec) ~= "table" then gpuexp.error("usage", what .. ": expected a table of options", 3) end
  option_keys.check(spec, known_keys, what)
  for key in pairs(ranges) do option(spec, key) end -- every numeric option in its range, a plan too
  local mode = option(spec, "mode")
  if mode ~= "hot" and mode ~= "cold" and mode ~= "graph" and mode ~= "batch" and mode ~= "auto" then
    gpuexp.error("usage", what .. ": mode must be hot, cold, graph, batch or auto", 3)
  end
  return mode
end

-- Telemetry over the sampling (NVML): the energy counter before and after gives the mean power and
-- the energy per launch; the throttle reasons are those seen after any batch (an idle GPU between
-- batches is not a reason). Without NVML the fields are absent and telemetry_note says why.
local function telemetry_start(device)
  device:telemetry() -- every NVML query made once before the window opens
  local before, why = device:telemetry()
  if not before then return {note = why} end
  return {before = before, started = gpuexp.clock(), reasons = {}}
end

local function telemetry_batch(device, state)
  if not state.before then return end
  local now = device:telemetry()
  for name in ((now and now.throttle_reasons) or ""):gmatch("[^,]+") do
    if name ~= "gpu_idle" then state.reasons[name] = true end
  end
  state.temperature_c = now and now.temperature_c or state.temperature_c
end

M.TELEMETRY_COLUMNS = {"power_w", "energy_j", "gpu_busy_pct", "temperature_c", "throttle_reasons", "telemetry_note"}

-- busy_ms: the GPU time of the samples in the window (idle gaps between batches draw power too,
-- and land in energy_j: gpu_busy_pct says how much of the window was the kernel)
local function telemetry_finish(device, state, result, launches, busy_ms)
  if not state.before then result.telemetry_note = state.note return end
  local after, seconds = device:telemetry(), gpuexp.clock() - state.started
  local names = {}
  for name in pairs(state.reasons) do names[#names + 1] = name end
  table.sort(names)
  result.throttle_reasons = table.concat(names, ",")
  result.temperature_c = state.temperature_c
  if after and after.energy_j and state.before.energy_j and seconds > 0 then
    local joules = after.energy_j - state.before.energy_j
    result.power_w = joules / seconds
    result.energy_j = launches > 0 and joules / launches or nil
    result.gpu_busy_pct = 100 * busy_ms / 1000 / seconds
    if result.gpu_busy_pct < 90 then
      result.telemetry_note = string.format("the GPU ran the kernel %.0f%% of the measured window: power_w is diluted and " ..
        "energy_j includes idle time", result.gpu_busy_pct)
    end
  else
    result.power_w = after and after.power_w -- no energy counter (before Volta): the board's reading
    result.telemetry_note = "no total energy counter: power is NVML's reading at the end, energy not known"
  end
end

-- Auto mode: what the GPU takes per run, not what the host takes to enqueue it. Per-run events
-- time a run from its first launch call to its last: when the host's enqueue time (Lua calls, a
-- sequence's several launches) is a noticeable share of the GPU time, they time the host. So the
-- probe's per-run reading is compared with the same work run back to back as the GPU runs it: a
-- blocked batch (N runs enqueued from C while a blocking kernel holds the stream, as NVBench's
-- measure_hot does, so the enqueue speed cannot show; graph replays of tiny kernels are slower than
-- that on an H200). When per-run events read more than host_share_pct above back-to-back, the
-- measurement is the blocked batch (mode "batch"); else per-run events ("hot"). A graph is the
-- reference only when batch timing fails. Work of a millisecond or more is always hot.
-- Returns mode, runs per sample, and the facts behind the choice.
local function choose_auto(timer, per_run_ms, spec)
  if per_run_ms >= 1.0 then return "hot", 0, {} end
  local runs = option(spec, "graph_launches") or M.back_to_back_runs(per_run_ms)
  local kind, back = "batch", nil
  local ok, t = pcall(timer.time, timer, {warmup = 1, reps = 3, batch = runs})
  if ok then back = t.median_ms else
    kind = "graph"
    ok, t = pcall(timer.time, timer, {warmup = 1, reps = 3, graph = runs})
    if ok then back = t.median_ms end
  end
  if not back then return "hot", 0, {auto_note = "back-to-back timing failed: " .. tostring(type(t) == "table" and t.message or t)} end
  local share = back > 0 and 100 * (per_run_ms - back) / per_run_ms or 0
  local facts = {per_run_ms = per_run_ms, back_to_back_ms = back, host_share_pct = share}
  if per_run_ms > back * (1 + option(spec, "host_share_pct") / 100) then return kind, runs, facts end
  return "hot", 0, facts
end

-- Runs per back-to-back sample: enough for about 50 µs of per-run time, at most 200 so that a
-- blocked batch's launches (a sequence's launches count each) stay well inside the driver's queue
-- while the blocking kernel holds the stream (NVBench keeps a batch well under ~1000 launches).
function M.back_to_back_runs(per_run_ms)
  return math.max(2, math.min(200, math.ceil(0.050 / math.max(per_run_ms, 1e-4))))
end

-- How each sample is taken: the mode (auto chooses from the probe's per-run time) and the runs a
-- graph replay or a blocked batch holds (0: not that way). Returns {mode, graph, batch, auto_facts}.
local function sampling_of(timer, spec, mode, single_ms)
  local how = {mode = mode, graph = 0, batch = 0}
  local runs
  if mode == "auto" then
    how.mode, runs, how.auto_facts = choose_auto(timer, single_ms, spec)
  elseif mode == "graph" or mode == "batch" then
    runs = option(spec, "graph_launches") or M.back_to_back_runs(single_ms)
  end
  if how.mode == "graph" then how.graph = runs elseif how.mode == "batch" then how.batch = runs end
  return how
end

-- Samples in batches until the stopping rule says enough (M.stop_reason). A batch run at a clock
-- below throttle_pct of the highest seen is not kept (a higher clock later drops earlier batches
-- too), and the next batch waits recovery_ms after it. Returns {batches ({samples, clock, kept}),
-- samples (the kept ones), clocks, block_timeouts, timing_note, stop_reason}.
local function take_samples(timer, spec, how, device, telemetry)
  local min_samples, min_time_ms = option(spec, "min_samples"), option(spec, "min_time_ms")
  local max_noise, timeout_s, max_samples = option(spec, "max_noise_pct"), option(spec, "timeout_s"), option(spec, "max_samples")
  local throttle_pct, recovery_ms = option(spec, "throttle_pct"), option(spec, "recovery_ms")
  local s = {batches = {}, samples = {}, clocks = {}, block_timeouts = 0}
  local batches = s.batches
  local started, total_ms, reference = gpuexp.clock(), 0, 0
  local samples_wanted = min_samples
  -- the samples of the batches at or above the threshold of the highest clock seen so far
  local function keep()
    s.samples, total_ms = {}, 0
    local threshold = reference * throttle_pct / 100
    for _, b in ipairs(batches) do
      b.kept = not b.clock or b.clock >= threshold
      if b.kept then
        for _, ms in ipairs(b.samples) do s.samples[#s.samples + 1] = ms; total_ms = total_ms + ms end
      end
    end
  end
  while true do
    local t = timer:time{warmup = 0, reps = samples_wanted, cold = how.mode == "cold",
      graph = how.graph > 0 and how.graph or nil, batch = how.batch > 0 and how.batch or nil, clock = true}
    local clock = t.sm_clock_mhz
    if t.block_timeouts then s.block_timeouts, s.timing_note = s.block_timeouts + t.block_timeouts, t.timing_note end
    batches[#batches + 1] = {samples = t.samples_ms, clock = clock}
    if telemetry then telemetry_batch(device, telemetry) end
    s.clocks[#s.clocks + 1] = clock
    local throttled = clock and clock < reference * throttle_pct / 100
    if clock and clock > reference then
      reference = clock
      keep() -- a higher clock: earlier batches may now be below the threshold
    elseif throttled then
      batches[#batches].kept = false
    else
      for _, ms in ipairs(t.samples_ms) do s.samples[#s.samples + 1] = ms; total_ms = total_ms + ms end
    end
    local samples = s.samples
    local stats = gpuexp.stats(#samples > 0 and samples or t.samples_ms, "_ms")
    s.stop_reason = M.stop_reason(stats, #samples > 0 and total_ms or 0, gpuexp.clock() - started,
      {min_samples = min_samples, min_time_ms = min_time_ms, max_noise_pct = max_noise, timeout_s = timeout_s,
       max_samples = max_samples})
    if s.stop_reason then return s end
    if throttled and recovery_ms > 0 then gpuexp.sleep(recovery_ms / 1000) end
    -- the next batch: enough for the remaining minimum time, within bounds
    local mean = math.max(stats.mean_ms, 1e-4)
    samples_wanted = math.max(10, math.min(2000, math.ceil((min_time_ms - total_ms) / mean), max_samples - #samples))
  end
end

-- The result: the kept samples' statistics, how they were taken, the clocks (and the median in
-- cycles of the kept batches that read one), what was dropped as throttled, and the telemetry.
local function result_of(s, how, device, telemetry)
  local dropped, measured, busy_ms = 0, 0, 0
  local cycles = {}
  for _, b in ipairs(s.batches) do
    measured = measured + #b.samples
    for _, ms in ipairs(b.samples) do busy_ms = busy_ms + ms end
    if b.kept == false then dropped = dropped + #b.samples end
    if b.kept and b.clock then
      for _, ms in ipairs(b.samples) do cycles[#cycles + 1] = ms * b.clock * 1e3 end
    end
  end
  local result = gpuexp.stats(s.samples, "_ms")
  local clock_stats = gpuexp.stats(s.clocks)
  result.samples_ms = s.samples
  result.mode = how.mode
  result.launches_per_sample = how.graph > 0 and how.graph or how.batch > 0 and how.batch or 1
  for key, value in pairs(how.auto_facts or {}) do result[key] = value end
  if how.batch > 0 then result.block_timeouts = s.block_timeouts end
  result.timing_note = s.timing_note
  result.batches = #s.clocks
  result.stop_reason = s.stop_reason
  result.sm_clock_mhz = clock_stats.median
  result.sm_clock_min_mhz = clock_stats.min
  result.throttled_samples = dropped
  result.median_cycles = #cycles > 0 and gpuexp.stats(cycles).median or nil
  if telemetry then
    -- (a graph sample is one launch's share of N: the GPU ran N of them)
    telemetry_finish(device, telemetry, result, measured * result.launches_per_sample, busy_ms * result.launches_per_sample)
    M.last_telemetry = {} -- a sweep with --telemetry puts the point's last one in its row
    for _, column in ipairs(M.TELEMETRY_COLUMNS) do M.last_telemetry[column] = result[column] end
  end
  return result
end

-- The policy over anything with :time{warmup, reps, cold, graph, batch, clock} (a bound launch, a sequence).
local function run_policy(timer, spec, mode, device)
  local warmup = option(spec, "warmup")
  -- a first look decides auto mode and the graph size
  local telemetry_on = device and option(spec, "telemetry")
  -- with telemetry, the probe loads the clock probe too, so no one-time work falls in the window
  local probe = timer:time{warmup = warmup, reps = 3, clock = telemetry_on or nil}
  local how = sampling_of(timer, spec, mode, probe.median_ms)
  local telemetry = telemetry_on and telemetry_start(device)
  local result = result_of(take_samples(timer, spec, how, device, telemetry), how, device, telemetry)
  result.warmup = warmup
  result.timer = "cuda_events"
  return result
end

M.run_policy = run_policy -- (tests drive it with a timer of known samples and clocks)

-- gpuexp profile: the commands that capture the run's launches, said once.
local told = false
local function tell_profilers()
  if told then return end
  told = true
  local o = gpuexp.run_options or {}
  local command = "gpuexp profile " .. (o.only and ("--only '" .. o.only .. "' ") or "") .. tostring(gpuexp.script)
  for _, a in ipairs(gpuexp.args or {}) do command = command .. " " .. a end
  io.stderr:write("gpuexp profile: every measured launch runs once between cuProfilerStart and cuProfilerStop; to " ..
    "capture exactly those launches:\n  ncu --profile-from-start off -o gpuexp-profile " .. command ..
    "\n  nsys profile --capture-range=cudaProfilerApi -o gpuexp-profile " .. command .. "\n")
end

-- True in gpuexp profile.
function M.profiling() return gpuexp.run_options and gpuexp.run_options.profile and not gpuexp.plan end

-- gpuexp profile: a warm-up, the L2 flushed for a cold measurement, then the launch once inside
-- the profiler's capture range (nothing else of gpuexp's is launched inside it). run(reps) times.
function M.profile_once(run, warmup, cold, device)
  tell_profilers()
  run(warmup, 1)
  if cold then device:flush_l2() end
  device:synchronize()
  gpuexp._profiler_start()
  local ok, t = pcall(run, 0, 1)
  gpuexp._profiler_stop()
  if not ok then error(t, 0) end
  local result = gpuexp.stats(t.samples_ms, "_ms")
  result.samples_ms, result.mode, result.stop_reason, result.launches_per_sample = t.samples_ms, cold and "cold" or "hot",
    "profile", 1
  return result
end

-- kernel:measure{grid=, block=, shared=, args=, <policy options>} -> statistics (median_ms, min_ms,
-- mean_ms, stddev_ms, noise_pct, p10_ms, p90_ms, samples) and mode, launches_per_sample, batches,
-- stop_reason ("noise", "timeout", "max_samples"), sm_clock_mhz (median of the batches),
-- sm_clock_min_mhz, clock_throttled, throttled_samples (dropped), median_cycles, samples_ms; with
-- telemetry = true: power_w (mean), energy_j (per launch), temperature_c, throttle_reasons, or
-- telemetry_note saying why they are absent. In an offline plan: {samples = 0, mode = ...}.
function M.measure(kernel, spec)
  local mode = check_policy(spec, known, "measure")
  local launch = {}
  for _, key in ipairs(gpuexp.launch_keys) do launch[key] = spec[key] end
  local bound = kernel:bind(launch)
  if gpuexp.plan then
    return {samples = 0, mode = mode == "auto" and "hot" or mode, timer = "none (offline plan)"}
  end
  if M.profiling() then
    return M.profile_once(function(warmup, reps) return bound:time{warmup = warmup, reps = reps} end,
      option(spec, "warmup"), mode == "cold", gpuexp.device())
  end
  return run_policy(bound, spec, mode, gpuexp.device())
end

-- sequence:measure{<policy options>}: the same policy over one run of the sequence; graph mode
-- captures the run (every kernel, copy and joined stream) into one CUDA graph.
function M.measure_sequence(sequence, spec)
  local mode = check_policy(spec or {}, policy_keys, "measure")
  if gpuexp.plan then -- its launches are checked, not run
    sequence:run()
    return {samples = 0, mode = mode == "auto" and "hot" or mode, timer = "none (offline plan)", kernels = sequence.kernels}
  end
  local result
  if M.profiling() then
    result = M.profile_once(function(warmup, reps) return sequence:time{warmup = warmup, reps = reps} end,
      option(spec or {}, "warmup"), mode == "cold", sequence.device)
  else
    result = run_policy(sequence, spec or {}, mode, sequence.device)
  end
  result.kernels = sequence.kernels
  return result
end

-- Marks a result as throttled when a batch ran below 90% of the device's maximum SM clock.
function M.flag_clock(result, device)
  if result.sm_clock_min_mhz and device and device.sm_clock_khz then
    result.max_sm_clock_mhz = device.sm_clock_khz / 1000
    result.clock_throttled = result.sm_clock_min_mhz < 0.9 * result.max_sm_clock_mhz
  end
  return result
end

-- The CSV columns every measured row should carry.
M.columns = {"mode", "samples", "noise_pct", "sm_clock_mhz", "clock_throttled", "throttled_samples", "median_cycles",
  "stop_reason"}

return M
