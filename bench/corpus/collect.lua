-- One process of the corpus collection (bench/corpus/collect.sh runs it, one process a night, as
-- a scheduler runs a nightly). It writes JSON lines (one record a line: a header, then one a
-- point or decision, then an end record) to OUT.partial, flushed as they are written, and renames
-- it to OUT when the process ends well: a killed process leaves its finished records in the
-- .partial file and no OUT, so the night is run again.
--
--   gpuexp --inline collect.lua tag                               prints the GPU's records folder name
--   gpuexp --inline collect.lua corpus SEED NIGHT OUT             a night of the corpus of causes
--   gpuexp --inline collect.lua grid NIGHT OUT CALIBRATION        a night of the duration x effect grid
--   gpuexp --inline collect.lua ab OUT CALIBRATION SECONDS        gpuexp.ab decisions on the grid
--   gpuexp --inline collect.lua tune brute|live OUT               the tune space measured whole; live tunes
--   gpuexp --inline collect.lua launch SEED                       each chosen point launched once (under ncu)
--
-- In an offline plan (gpuexp --arch sm_90) the measurements are synthetic (synthetic.lua) and
-- every record says so: the dry mode that develops and tests the recompute without a GPU.
local here = gpuexp.script_dir
local generate = dofile(here .. "/generate.lua")
local grid = dofile(here .. "/grid.lua")
local synthetic = dofile(here .. "/synthetic.lua")
local json = require("gpuexp.store.json")
local counters = require("gpuexp.api.counters")
local diagnose = require("gpuexp.api.diagnose")

local families = generate.families
local mode = arg[1]
local SYNTHETIC = gpuexp.plan and true or false

-- The timing policy of the shipped nightly suite (experiments/nightly/kernels.lua): what a night's
-- point is measured with.
local POLICY = {min_time_ms = 200, max_noise_pct = 0.5, timeout_s = 2}
local KEEP_SAMPLES = 500 -- samples kept a point (evenly spaced through the run); the statistics are of all

-- Every counter a judge reads, and those a later judge should be able to read: the nightly's set,
-- diagnose's, ncu's presets for occupancy, stalls (every reason), speed of light, memory, bank
-- conflicts, the tensor pipe and the roofline, and the FP64 pipe, local memory, global atomics
-- and reductions, the SMs' activity and the launched blocks and warps.
local EXTRA = {
  "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed_pipe_fp64.sum",
  "sm__inst_executed_pipe_tensor.sum", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
  "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
  "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
  "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
  "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
  "smsp__thread_inst_executed.sum", "sm__ctas_launched.sum", "smsp__warps_launched.sum",
  "sm__cycles_active.avg", "sm__cycles_elapsed.avg",
}
local PRESETS = {"occupancy", "warp_stalls", "speed_of_light", "memory", "bank_conflicts", "tensor", "roofline"}

local function metric_list()
  local names, seen = {}, {}
  local function add(name)
    if not seen[name] then seen[name] = true; names[#names + 1] = name end
  end
  for _, name in ipairs(counters.names) do add(name) end
  for _, name in ipairs(diagnose.names) do add(name) end
  for _, preset in ipairs(PRESETS) do add(preset) end
  for _, name in ipairs(EXTRA) do add(name) end
  return names
end

---------------------------------------------------------------------------------------------------
-- the output: JSON lines, flushed; renamed into place at the end

local out_path, out_file
local function open_output(path)
  out_path = path
  out_file = assert(io.open(path .. ".partial", "w"))
end
-- numbers to 7 significant digits (the records' size; no measurement is finer)
local function rounded(value)
  if type(value) == "number" then
    if value ~= value or math.abs(value) == math.huge then return nil end -- JSON has no NaN: the value is left out
    if math.type(value) == "integer" then return value end
    return tonumber(string.format("%.7g", value))
  elseif type(value) == "table" then
    local out = {}
    for k, v in pairs(value) do out[k] = rounded(v) end
    return out
  end
  return value
end

local function emit(record)
  out_file:write(json.encode(rounded(record)), "\n")
  out_file:flush()
end
local function close_output()
  out_file:close()
  assert(os.rename(out_path .. ".partial", out_path))
end

-- Numbers thinned for the records: at most `cap`, evenly spaced through the list, 6 digits.
local function thin(values, cap)
  local out, n = {}, #values
  local step = math.max(1, n / cap)
  local i = 1
  while i <= n + 1e-9 and #out < cap do
    out[#out + 1] = tonumber(string.format("%.6g", values[math.floor(i)]))
    i = i + step
  end
  return out
end

-- 17 quantiles (0, 1/16, ..., 1) of a block's samples: its median exactly, its spread roughly
local function quantiles(values)
  local sorted = {}
  for i = 1, #values do sorted[i] = values[i] end
  table.sort(sorted)
  local q = {}
  for k = 0, 16 do
    local position = 1 + k / 16 * (#sorted - 1)
    local low = math.floor(position)
    local high = math.min(#sorted, low + 1)
    q[#q + 1] = tonumber(string.format("%.6g", sorted[low] + (sorted[high] - sorted[low]) * (position - low)))
  end
  return q
end

-- only the scalar fields of a table (resources carry their parameters' list)
local function scalars(t)
  local out = {}
  for k, v in pairs(t or {}) do
    if type(v) == "number" or type(v) == "string" or type(v) == "boolean" then out[k] = v end
  end
  return out
end

---------------------------------------------------------------------------------------------------
-- the device, its buffers and the facts launches are sized with

local dev = gpuexp.device()
local device_facts
if SYNTHETIC then
  device_facts = {name = "synthetic (offline plan of sm_90)", sm_count = 132, l2_bytes = 50 * 1024 * 1024, synthetic = true}
else
  device_facts = scalars(dev.facts)
  device_facts.name, device_facts.uuid, device_facts.sm_count, device_facts.l2_bytes = dev.name, dev.uuid, dev.sm_count,
    dev.l2_bytes
end
local SM_COUNT = device_facts.sm_count

local buffers = {}
local function buffer(name)
  if not buffers[name] then
    local count = name == "T" and families.TOTALS or families.ELEMENTS
    local b = dev:alloc("f32", count)
    if name == "X" or name == "Z" then b:random{seed = name == "X" and 11 or 12, min = -1, max = 1} else b:fill(0) end
    buffers[name] = b
  end
  return buffers[name]
end

local SCALARS = {i32 = gpuexp.i32, i64 = gpuexp.i64, u64 = gpuexp.u64, f32 = gpuexp.f32}
local function resolve_args(descriptors)
  local args = {}
  for i, d in ipairs(descriptors) do
    if d[1] == "buffer" then args[i] = buffer(d[2]) else args[i] = SCALARS[d[1]](d[2]) end
  end
  return args
end

local function header(kind, extra)
  local record = {record = "header", kind = kind, synthetic = SYNTHETIC, gpu = device_facts, versions = gpuexp.versions(false),
    gpuexp_version = gpuexp.version, started_utc = os.date("!%Y-%m-%dT%H:%M:%SZ"), policy = POLICY,
    metrics = metric_list(), host = gpuexp.hostname and gpuexp.hostname() or nil}
  local ok, metadata = pcall(gpuexp.metadata, dev)
  if ok and type(metadata) == "table" then record.driver_version = metadata.driver_version end
  local ok_ceilings, ceilings = pcall(gpuexp.ceilings)
  if ok_ceilings and type(ceilings) == "table" then record.ceilings = scalars(ceilings) end
  for k, v in pairs(extra or {}) do record[k] = v end
  return record
end

-- The timing record of a measurement: its statistics, how it was taken, its clocks, its samples.
local function timing_record(t)
  local record = {}
  for _, key in ipairs({"median_ms", "mean_ms", "min_ms", "max_ms", "stddev_ms", "noise_pct", "p10_ms", "p90_ms", "samples",
    "mode", "launches_per_sample", "batches", "stop_reason", "sm_clock_mhz", "sm_clock_min_mhz", "throttled_samples",
    "median_cycles", "per_run_ms", "back_to_back_ms"}) do
    record[key] = t[key]
  end
  local max_mhz = device_facts.sm_clock_khz and device_facts.sm_clock_khz / 1000
  record.clock_throttled = t.clock_throttled
  if record.clock_throttled == nil and max_mhz and t.sm_clock_min_mhz then record.clock_throttled = t.sm_clock_min_mhz < 0.9 * max_mhz end
  record.samples_ms = thin(t.samples_ms or {}, KEEP_SAMPLES)
  record.samples_kept_of = t.samples_ms and #t.samples_ms or 0
  return record
end

local function measure(kernel, launch)
  local spec = {grid = launch.grid, block = launch.block, shared = launch.shared, args = resolve_args(launch.args)}
  for k, v in pairs(POLICY) do spec[k] = v end
  return timing_record(kernel:measure(spec))
end

-- The launch's shape as ncu's launch statistics name it, with the occupancy behind the waves.
local function shape_of(kernel, launch, resources)
  local occupancy = scalars(kernel:occupancy{block = launch.block, shared = launch.shared or 0})
  local grid = type(launch.grid) == "table" and (launch.grid[1] or 1) * (launch.grid[2] or 1) * (launch.grid[3] or 1) or launch.grid
  local block = type(launch.block) == "table" and (launch.block[1] or 1) * (launch.block[2] or 1) * (launch.block[3] or 1)
    or launch.block
  local per_sm = occupancy.active_blocks_per_sm or occupancy.blocks_per_sm or 1
  return {grid = launch.grid, block = launch.block, shared = launch.shared or 0, ["launch__grid_size"] = grid,
    ["launch__block_size"] = block, ["launch__registers_per_thread"] = resources.registers,
    ["launch__shared_mem_per_block_dynamic"] = launch.shared or 0,
    ["launch__shared_mem_per_block_static"] = resources.static_shared_bytes,
    ["launch__waves_per_multiprocessor"] = grid / (SM_COUNT * math.max(1, per_sm)), ["launch__sm_count"] = SM_COUNT,
    sms_used = math.min(grid, SM_COUNT), occupancy = occupancy}
end

-- A point's measurement: in a plan, what synthetic.lua invents (fill(record)); on a GPU, its time
-- now and its counters queued for the night's batched collection (items). Any error is the
-- record's, and the night goes on.
local function measure_point(record, kernel, launch, items, fill)
  local ok, problem = pcall(function()
    local resources = scalars(kernel:resources())
    record.resources = resources
    record.launch = shape_of(kernel, launch, resources)
    record.launch.args = launch.args
    if SYNTHETIC then
      fill(record, resources)
    else
      record.timing = measure(kernel, launch)
      items[#items + 1] = {kernel = kernel, launch = launch, record = record}
    end
  end)
  if not ok then record.error = type(problem) == "table" and problem.message or tostring(problem) end
end

-- Counters of many launches in one batched replay (gpuexp.metrics), or one by one when the batch
-- fails; values[i] (nil and a note for a launch without) and the collection's cost.
local function collect_counters(items)
  local names = metric_list()
  local started = gpuexp.clock()
  local spec = {metrics = names, restore = false}
  for i, item in ipairs(items) do
    spec[i] = {kernel = item.kernel, grid = item.launch.grid, block = item.launch.block, shared = item.launch.shared,
      args = resolve_args(item.launch.args)}
  end
  local ok, values, info = pcall(gpuexp.metrics, spec)
  local notes = {}
  if not ok or not values then
    local why = ok and tostring(info) or (type(values) == "table" and values.message or tostring(values))
    values = {}
    for i, s in ipairs(spec) do
      local one_ok, v, one_info = pcall(s.kernel.metrics, s.kernel, {grid = s.grid, block = s.block, shared = s.shared,
        args = s.args, metrics = names})
      if one_ok and v then values[i] = v else
        notes[i] = "no counters: " .. (one_ok and tostring(one_info) or tostring(type(v) == "table" and v.message or v))
      end
    end
    notes.batch = "the batched collection failed (" .. why .. "): one launch at a time"
    info = nil
  end
  return values, notes, {seconds = gpuexp.clock() - started, passes = info and info.passes, batches = info and info.batches}
end

-- The end of a night: the queued points' counters collected in one batch, every record written,
-- the end record with what the night and its counters cost, the file put in place.
local function finish_night(records, items, started)
  local cost
  if #items > 0 then
    local values, notes
    values, notes, cost = collect_counters(items)
    for i, item in ipairs(items) do item.record.counters, item.record.counters_note = values[i], notes[i] end
    cost.note = notes.batch
  end
  for _, record in ipairs(records) do emit(record) end
  emit({record = "end", points = #records, seconds = gpuexp.clock() - started, counters = cost})
  close_output()
end

---------------------------------------------------------------------------------------------------
-- corpus SEED NIGHT OUT

local function compile_corpus(corpus, only)
  local programs, failures = {}, {}
  for _, name in ipairs(corpus.program_order) do
    if not only or only[name] then
      local ok, program = pcall(gpuexp.compile, {source = corpus.programs[name], name = name .. ".cu"})
      if ok then programs[name] = program else failures[name] = type(program) == "table" and program.message or tostring(program) end
    end
  end
  return programs, failures
end

local function corpus_device(programs, corpus)
  local by_kernel = {}
  for _, p in ipairs(corpus.points) do by_kernel[p.kernel] = p.program end
  return {sm_count = SM_COUNT, l2_bytes = device_facts.l2_bytes, blocks_per_sm = function(kernel_name, block, shared)
    local program = programs[by_kernel[kernel_name]]
    if not program then return 2048 // block end
    return program:kernel(kernel_name):occupancy{block = block, shared = shared or 0}.active_blocks_per_sm
  end}
end

local function corpus_night(seed, night, path)
  local started = gpuexp.clock()
  local corpus = generate.corpus(seed)
  local programs, failures = compile_corpus(corpus)
  local device = corpus_device(programs, corpus)
  open_output(path)
  emit(header("corpus", {seed = seed, night = night, development_seeds = generate.DEVELOPMENT_SEEDS,
    held_out_seed = generate.HELD_OUT_SEED, compile_seconds = gpuexp.clock() - started}))
  -- the points in an order of the night's own
  local order = {}
  for i = 1, #corpus.points do order[i] = i end
  generate.generator(seed * 7919 + night).shuffle(order)
  local records, items = {}, {}
  for _, index in ipairs(order) do
    local p = corpus.points[index]
    local record = {record = "point", id = p.id, family = p.family, instance = p.instance, variant = p.variant, cause = p.cause,
      good = p.good, size = p.size, shape = p.shape, why = p.why, kernel = p.kernel, program = p.program, params = p.params,
      variant_params = p.variant_params, modelled_ms = p.modelled_ms}
    local program = programs[p.program]
    if not program then
      record.error = "compile: " .. tostring(failures[p.program])
    else
      local ok, launch = pcall(generate.launch, corpus, p, device)
      if not ok then
        record.error = type(launch) == "table" and launch.message or tostring(launch)
      else
        measure_point(record, program:kernel(p.kernel), launch, items, function(r, resources)
          r.timing = synthetic.point_timing(p, night)
          p.synthetic_ms = r.timing.median_ms
          r.counters = synthetic.counters(p, launch, resources, night)
        end)
      end
    end
    records[#records + 1] = record
  end
  finish_night(records, items, started)
end

---------------------------------------------------------------------------------------------------
-- the grid: calibration, nights, ab decisions

local grid_program
local function grid_kernel(name)
  grid_program = grid_program or gpuexp.compile{source = grid.SOURCE, name = "corpus_grid.cu"}
  return grid_program:kernel(name)
end

-- The median of a grid kernel at a parameter, with a short policy (the calibration's).
local function grid_time(kind, amount)
  local l = grid.launch(kind, amount, SM_COUNT)
  local t = grid_kernel(l.kernel):measure{grid = l.grid, block = l.block, args = resolve_args(l.args), min_time_ms = 100,
    max_noise_pct = 0.5, timeout_s = 2}
  return t.median_ms
end

-- The calibration: for each kind and duration, the parameter of about that duration (A) and
-- those of each effect (A + effect x time / slope). A line through two first measurements (a
-- guess and twice it: the fixed part of a short launch is its intercept) gives A; the slope near
-- A, from A and 1.2 A, gives the effects' parameters, so that each adds its share of A's time.
local function calibrate(path)
  local file = io.open(path, "r")
  if file then
    local text = file:read("a")
    file:close()
    return json.decode(text)
  end
  local calibration = {synthetic = SYNTHETIC, sm_count = SM_COUNT, gpu = device_facts.name, cells = {}}
  for _, kind in ipairs(grid.KINDS) do
    for _, duration in ipairs(grid.DURATIONS_MS) do
      local a0 = grid.guess(kind, duration)
      local c = {kind = kind, duration_ms = duration}
      if SYNTHETIC then
        c.amount, c.slope_ms, c.time_ms = a0, duration / a0, duration
      else
        local t0 = grid_time(kind, a0)
        local a1 = 2 * a0
        local t1 = grid_time(kind, a1)
        local slope = (t1 - t0) / (a1 - a0)
        if not (slope > 0) then slope = t1 / a1 end
        local a = math.max(a0 / 16, a0 + (duration - t0) / slope)
        local t = grid_time(kind, a)
        local a2 = 1.2 * a
        local t2 = grid_time(kind, a2)
        local local_slope = (t2 - t) / (a2 - a)
        c.amount, c.time_ms, c.slope_ms = a, t, local_slope > 0 and local_slope or slope
        c.probe = {{a0, t0}, {a1, t1}, {a, t}, {a2, t2}}
      end
      c.amounts = {}
      for _, effect in ipairs(grid.EFFECTS_PCT) do
        c.amounts[#c.amounts + 1] = c.amount + effect / 100 * c.time_ms / c.slope_ms
      end
      calibration.cells[#calibration.cells + 1] = c
    end
  end
  local out = assert(io.open(path .. ".partial", "w"))
  out:write(json.encode(calibration))
  out:close()
  assert(os.rename(path .. ".partial", path))
  return calibration
end

-- The grid's points: {id, kind, duration_ms, effect_pct, amount} (and the creep's on this night).
local function grid_points(calibration, night)
  local list = {}
  for _, c in ipairs(calibration.cells) do
    for e, effect in ipairs(grid.EFFECTS_PCT) do
      list[#list + 1] = {id = grid.point_id(c.kind, c.duration_ms, effect), kind = c.kind, duration_ms = c.duration_ms,
        effect_pct = effect, amount = c.amounts[e], level_ms = c.time_ms}
    end
    if night and c.kind == grid.CREEP_KIND and c.duration_ms == grid.CREEP_DURATION_MS then
      list[#list + 1] = {id = "creep", kind = c.kind, duration_ms = c.duration_ms, creep = true,
        effect_pct = (grid.creep_amount(c.amount, night) / c.amount - 1) * 100, amount = grid.creep_amount(c.amount, night),
        level_ms = c.time_ms}
    end
  end
  return list
end

local function grid_night(night, path, calibration_path)
  local started = gpuexp.clock()
  local calibration = calibrate(calibration_path)
  local points = grid_points(calibration, night)
  local order = {}
  for i = 1, #points do order[i] = i end
  generate.generator(104729 + night).shuffle(order)
  open_output(path)
  emit(header("grid", {night = night, calibration = calibration}))
  local records, items = {}, {}
  for _, index in ipairs(order) do
    local p = points[index]
    local record = {record = "point", id = p.id, kind = p.kind, duration_ms = p.duration_ms, effect_pct = p.effect_pct,
      amount = p.amount, creep = p.creep}
    local l = grid.launch(p.kind, p.amount, SM_COUNT)
    local ok, kernel = pcall(grid_kernel, l.kernel)
    if not ok then
      record.error = type(kernel) == "table" and kernel.message or tostring(kernel)
    else
      measure_point(record, kernel, l, items, function(r, resources)
        -- a grid point is its kernel with more of the same work: synthetic counters of extra instructions
        local ms = p.level_ms * (1 + p.effect_pct / 100)
        r.timing = synthetic.timing(p.id, ms, night)
        r.counters = synthetic.counters({id = p.id, family = "extra_instructions", params = {n = 32768 * 4,
          work = p.amount / 1000}, variant_params = {extra = p.effect_pct / 100}, modelled_ms = ms,
          cause = p.effect_pct > 0 and "extra_instructions" or nil}, l, resources, night)
      end)
    end
    records[#records + 1] = record
  end
  finish_night(records, items, started)
end

-- A side of an ab decision that times through the bound launch and keeps what each call gave:
-- the calls in order, each block's 17 quantiles, count and sum (recompute.lua replays them).
local function logged_side(bound, side, log)
  local proxy = {}
  function proxy.time(_, options)
    local t = bound:time(options)
    local samples = t.samples_ms or {}
    local sum = 0
    for _, v in ipairs(samples) do sum = sum + v end
    log[#log + 1] = {side = side, warmup = options and options.warmup, reps = options and options.reps,
      n = #samples, sum_ms = sum, quantiles = #samples > 0 and quantiles(samples) or {}}
    return t
  end
  return setmetatable(proxy, {__index = function(_, key)
    local value = bound[key]
    if type(value) == "function" then return function(_, ...) return value(bound, ...) end end
    return value
  end})
end

local AB_BUDGET_S = 10 -- a decision's budget (gpuexp ab's default is 30 s): the part has ~7 minutes for 40 cells

local function ab_part(path, calibration_path, seconds)
  local started = gpuexp.clock()
  local calibration = calibrate(calibration_path)
  local points = grid_points(calibration)
  local base = {}
  for _, p in ipairs(points) do if p.effect_pct == 0 then base[p.kind .. p.duration_ms] = p end end
  open_output(path)
  emit(header("ab", {calibration = calibration, budget_s = AB_BUDGET_S, deadline_s = seconds}))
  local decisions, slowest = 0, 0
  local round = 0
  local done = false
  while not done do
    round = round + 1
    local decided = 0
    for cell, p in ipairs(points) do
      local elapsed = gpuexp.clock() - started
      if elapsed + math.max(slowest, 3) > seconds then done = true; break end
      local a_point = base[p.kind .. p.duration_ms]
      local record = {record = "decision", id = p.id, kind = p.kind, duration_ms = p.duration_ms, effect_pct = p.effect_pct,
        round = round, amount_a = a_point.amount, amount_b = p.amount, seed = round * 1000 + cell}
      local log = {}
      local decision_started = gpuexp.clock()
      local ok, result = pcall(function()
        local la, lb = grid.launch(p.kind, a_point.amount, SM_COUNT), grid.launch(p.kind, p.amount, SM_COUNT)
        local kernel = grid_kernel(la.kernel)
        if SYNTHETIC then
          local ab = require("gpuexp.api.ab")
          local n = 0
          local function side(label, effect)
            return function(reps)
              n = n + 1
              local samples = synthetic.timing(p.id .. label, p.duration_ms * (1 + effect / 100), round * 10000 + n).samples_ms
              local sum = 0
              for _, v in ipairs(samples) do sum = sum + v end
              log[#log + 1] = {side = label, reps = reps, n = #samples, sum_ms = sum, quantiles = quantiles(samples)}
              return samples
            end
          end
          local r = ab.interleave{measure_a = side("A", 0), measure_b = side("B", p.effect_pct), reps = 200, seed = record.seed,
            budget_s = AB_BUDGET_S, clock = function() return n * 0.01 end}
          r.reps_per_block = 200
          return r
        end
        local a = logged_side(kernel:bind{grid = la.grid, block = la.block, args = resolve_args(la.args)}, "A", log)
        local b = logged_side(kernel:bind{grid = lb.grid, block = lb.block, args = resolve_args(lb.args)}, "B", log)
        return gpuexp.ab{name = p.id, a = a, b = b, seed = record.seed, budget_s = AB_BUDGET_S, quiet = true}
      end)
      record.wall_s = gpuexp.clock() - decision_started
      slowest = math.max(slowest, record.wall_s)
      if ok and type(result) == "table" then
        local s = result.summary or {}
        record.verdict, record.basis, record.stopped_by = result.verdict, result.basis, result.stopped_by
        record.summary = {}
        for k, v in pairs(s) do if type(v) == "number" and v == v and math.abs(v) < math.huge then record.summary[k] = v end end
        record.gpu_s, record.ab_wall_s, record.reps_per_block = result.gpu_s, result.wall_s, result.reps_per_block
        record.a_median_ms, record.b_median_ms = result.a_median_ms, result.b_median_ms
        record.a_samples, record.b_samples = result.a_samples, result.b_samples
        record.nvbench, record.compare = result.nvbench, result.compare
      else
        record.error = ok and ("gpuexp.ab returned " .. tostring(result)) or
          (type(result) == "table" and result.message or tostring(result))
      end
      record.log = log
      emit(record)
      decisions = decisions + 1
      if not record.error then decided = decided + 1 end
    end
    -- a round in which no decision was taken will not be followed by one that takes any
    if decided == 0 and not done then
      emit({record = "note", text = "round " .. round .. ": every decision failed (above); no more rounds"})
      done = true
    end
  end
  emit({record = "end", decisions = decisions, rounds = round, seconds = gpuexp.clock() - started})
  close_output()
end

---------------------------------------------------------------------------------------------------
-- tune: a small space measured whole (twice, in two processes: the second is the truth the
-- tunes are judged against) and gpuexp.tune run live on it

local TUNE_N = 1 << 24
local TUNE_SOURCE = [[
// the tune space's kernel (bench/corpus/collect.lua): ITEMS elements a thread, n / ITEMS apart
extern "C" __global__ void tune_kernel(float *__restrict__ y, const float *__restrict__ x, long long n)
{
    const long long part = n / ITEMS, stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < part; i += stride) {
        float v[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; k++) v[k] = x[i + k * part];
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            for (int w = 0; w < 12; w++) v[k] = fmaf(v[k], 1.0001f, 0.5f);
            y[i + k * part] = v[k];
        }
    }
}
]]
local TUNE_AXES = {{"block", {64, 128, 256, 512, 1024}}, {"items", {1, 2, 4, 8}}, {"shape", {"exact", "persistent"}}}

local tune_programs = {}
local function tune_launch(p)
  tune_programs[p.items] = tune_programs[p.items] or gpuexp.compile{source = TUNE_SOURCE, name = "corpus_tune.cu",
    defines = {ITEMS = p.items}}
  local kernel = tune_programs[p.items]:kernel("tune_kernel")
  local threads = TUNE_N // p.items
  local grid = p.shape == "persistent" and SM_COUNT * math.max(1, 2048 // p.block) or (threads + p.block - 1) // p.block
  return kernel, {grid = grid, block = p.block, args = {{"buffer", "Y"}, {"buffer", "X"}, {"i64", TUNE_N}}}
end

local function tune_configs()
  local list = {}
  for _, block in ipairs(TUNE_AXES[1][2]) do
    for _, items in ipairs(TUNE_AXES[2][2]) do
      for _, shape in ipairs(TUNE_AXES[3][2]) do list[#list + 1] = {block = block, items = items, shape = shape} end
    end
  end
  return list
end

local function synthetic_tune_ms(p)
  return 0.05 * (1 + 0.04 * math.abs(math.log(p.block / 256, 2)) + 0.03 * math.abs(math.log(p.items / 2, 2))
    + (p.shape == "persistent" and 0.01 or 0))
end

local function tune_part(which, path)
  local started = gpuexp.clock()
  open_output(path)
  emit(header("tune", {which = which, axes = TUNE_AXES, n = TUNE_N, policy = POLICY}))
  if which == "brute" or which == "truth" then
    local configs = tune_configs()
    generate.generator(which == "brute" and 31 or 37).shuffle(configs)
    for _, p in ipairs(configs) do
      local record = {record = "config", point = p, pass = which}
      local ok, problem = pcall(function()
        if SYNTHETIC then
          record.timing = synthetic.timing(string.format("tune%d.%d.%s", p.block, p.items, p.shape), synthetic_tune_ms(p),
            which == "brute" and 1 or 2)
        else
          local kernel, launch = tune_launch(p)
          record.timing = measure(kernel, launch)
        end
      end)
      if not ok then record.error = type(problem) == "table" and problem.message or tostring(problem) end
      emit(record)
    end
  else
    -- the tunes' rounds go to a folder of their own, removed after (the records keep their results)
    local rounds = os.tmpname()
    os.remove(rounds)
    gpuexp.mkdir(rounds)
    for _, strategy in ipairs({"model", "racing"}) do
      local record = {record = "tune", strategy = strategy, seed = 1}
      local tune_started = gpuexp.clock()
      local ok, result = pcall(gpuexp.tune, {name = "corpus_" .. strategy, axes = TUNE_AXES, strategy = strategy, seed = 1,
        quiet = true, out = rounds .. "/tune.csv",
        run = function(p)
          if SYNTHETIC then
            local t = synthetic.timing(string.format("tune%d.%d.%s", p.block, p.items, p.shape), synthetic_tune_ms(p), 3)
            return {median_ms = t.median_ms, samples_ms = t.samples_ms}
          end
          local kernel, launch = tune_launch(p)
          local spec = {grid = launch.grid, block = launch.block, args = resolve_args(launch.args)}
          local t = kernel:measure(spec)
          return {median_ms = t.median_ms, samples_ms = t.samples_ms}
        end})
      record.wall_s = gpuexp.clock() - tune_started
      if ok and type(result) == "table" then
        record.best, record.cost_s, record.stopped_by, record.measured = result.best, result.cost_s, result.stopped_by,
          result.measured
        record.ties = {}
        for i, t in ipairs(result.ties or {}) do record.ties[i] = {point = t.point, value = t.value, ratio = t.ratio, p = t.p} end
        record.evaluations = result.evaluations
      else
        record.error = ok and ("gpuexp.tune returned " .. tostring(result)) or
          (type(result) == "table" and result.message or tostring(result))
      end
      emit(record)
    end
    os.execute("rm -rf '" .. rounds:gsub("'", "'\\''") .. "'")
  end
  emit({record = "end", seconds = gpuexp.clock() - started})
  close_output()
end

---------------------------------------------------------------------------------------------------
-- launch SEED: the M-size and "why" instances of the corpus launched once each, for ncu (its
-- estimated speedups on the same kernels)

local function launch_part(seed)
  local corpus = generate.corpus(seed)
  local chosen = {}
  for _, p in ipairs(corpus.points) do if p.size == "M" then chosen[p.program] = true end end
  local programs = compile_corpus(corpus, chosen)
  local device = corpus_device(programs, corpus)
  for _, p in ipairs(corpus.points) do
    local program = programs[p.program]
    if program then
      local launch = generate.launch(corpus, p, device)
      local ok, problem = pcall(function()
        program:kernel(p.kernel):launch{grid = launch.grid, block = launch.block, shared = launch.shared,
          args = resolve_args(launch.args)}
        dev:synchronize()
      end)
      io.stderr:write(string.format("launched %s%s\n", p.kernel, ok and "" or (": " .. tostring(problem))))
    end
  end
end

---------------------------------------------------------------------------------------------------

local function gpu_tag()
  local name = (device_facts.name or "gpu"):lower()
  return name:match("h200") and "h200" or name:match("h100") and "h100" or name:match("b200") and "b200"
    or (name:gsub("[^%w]+", "_"):gsub("^_", ""):gsub("_$", ""))
end

local function usage()
  io.stderr:write("usage: gpuexp --inline collect.lua tag | corpus SEED NIGHT OUT | grid NIGHT OUT CALIBRATION | " ..
    "ab OUT CALIBRATION SECONDS | tune brute|truth|live OUT | launch SEED\n")
  os.exit(2)
end

if mode == "tag" then
  print(SYNTHETIC and "synthetic" or gpu_tag())
elseif mode == "corpus" then
  local seed, night = math.tointeger(tonumber(arg[2] or "")), math.tointeger(tonumber(arg[3] or ""))
  if not seed or not night or not arg[4] then usage() end
  corpus_night(seed, night, arg[4])
elseif mode == "grid" then
  local night = math.tointeger(tonumber(arg[2] or ""))
  if not night or not arg[3] or not arg[4] then usage() end
  grid_night(night, arg[3], arg[4])
elseif mode == "ab" then
  local seconds = tonumber(arg[4] or "")
  if not arg[2] or not arg[3] or not seconds then usage() end
  ab_part(arg[2], arg[3], seconds)
elseif mode == "tune" then
  if (arg[2] ~= "brute" and arg[2] ~= "truth" and arg[2] ~= "live") or not arg[3] then usage() end
  tune_part(arg[2], arg[3])
elseif mode == "launch" then
  local seed = math.tointeger(tonumber(arg[2] or ""))
  if not seed then usage() end
  launch_part(seed)
else
  usage()
end
