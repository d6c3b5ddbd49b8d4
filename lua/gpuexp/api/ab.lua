-- gpuexp.ab{...}: two variants of one measurement (A the base, B the change) timed in one process
-- on one GPU, in blocks whose order (AB or BA) is drawn from a seed, until the paired statistics
-- could detect the minimum detectable effect asked for, or the budget ends (judge/paired.lua
-- holds the statistics; docs/howto/ab.md the method). `gpuexp ab` runs a script that calls this with
-- its variants (two commits, binaries, sources or option sets) and prints the verdict as
-- compare does.
local paired = require("gpuexp.judge.paired")
local rule = require("gpuexp.judge.rule")
local search = require("gpuexp.api.search")
local json = require("gpuexp.store.json")
local text_formats = require("gpuexp.store.text")
local csv = require("gpuexp.store.csv")
local stats = require("gpuexp.judge.stats")

local M = {}

-- a seed travels through the request file's JSON, which keeps 14 digits: seeds are 32-bit
M.MAX_SEED = 4294967295

M.defaults = {mde_pct = 1, budget_s = 30, min_blocks = paired.MIN_BLOCKS, max_blocks = 2000, block_ms = 20,
  warmup = 3, confidence = paired.CONFIDENCE, power = paired.POWER, threshold_pct = 0, seed = 1}

local known = {name = true, variants = true, variant = true, a = true, b = true, block_reps = true, cold = true,
  quiet = true}
for key in pairs(M.defaults) do known[key] = true end

-- What `gpuexp ab` asked for (variants and options), from the request file it names in GPUEXP_AB.
local function request()
  local path = os.getenv("GPUEXP_AB")
  if not path or path == "" then return nil end
  local file = io.open(path, "r")
  if not file then gpuexp.error("usage", "ab: the request file " .. path .. " (GPUEXP_AB) cannot be read") end
  local text = file:read("a")
  file:close()
  local ok, value = pcall(json.decode, text)
  if not ok or type(value) ~= "table" then gpuexp.error("usage", "ab: the request file " .. path .. " is not JSON") end
  return value, path
end

-- A side's timer: a bound launch, a sequence (anything with :time{warmup, reps, cold}) or a
-- function(reps) returning the samples in ms.
local function timer_of(side, what)
  if type(side) == "function" then
    return function(reps, warmup)
      if warmup and warmup > 0 then side(warmup) end
      return side(reps)
    end
  end
  local ok, time = pcall(function() return side.time end)
  if ok and time then
    return function(reps, warmup, cold) return side:time{warmup = warmup, reps = reps, cold = cold or nil}.samples_ms end
  end
  gpuexp.error("usage", "ab: " .. what .. " must be a bound launch (kernel:bind{...}), a sequence or a " ..
    "function(reps) returning samples in ms")
end

-- A side's samples of one block, checked: a list of finite times > 0 ms. A timer that returns none,
-- a NaN, an infinity or a 0 ms sample gives nothing a ratio can be taken of: the script's error
-- (exit 2 from the run and from gpuexp ab), never a verdict.
local function checked(samples, side, block)
  local where = block > 0 and ("block " .. block) or "the first look"
  if type(samples) ~= "table" or #samples == 0 then
    gpuexp.error("option", string.format("ab: variant %s's timer returned no samples (%s): it must return a " ..
      "list of times in ms", side, where))
  end
  for i = 1, #samples do
    local v = samples[i]
    if math.type(v) == nil or v ~= v or v <= 0 or v == math.huge then
      gpuexp.error("option", string.format("ab: variant %s's timer returned %s as sample %d (%s): samples are " ..
        "times in ms, finite and > 0", side, tostring(v), i, where))
    end
  end
  return samples
end

-- The statistics are gpuexp's own code, never the script's: an error in them is a bug of gpuexp.
-- o.on_internal(traceback) is told first (gpuexp.ab tells gpuexp ab, which exits 70, never 1: that
-- would read "B is slower"), then the error is raised as it came.
local function statistics(o, f)
  local traceback
  local ok, value = xpcall(f, function(message)
    if type(message) ~= "table" then traceback = debug.traceback(tostring(message), 2) end
    return message
  end)
  if ok then return value end
  if traceback and o.on_internal then o.on_internal(traceback) end
  error(value, 0)
end

-- M.interleave{measure_a = f(reps), measure_b = f(reps), reps, mde_pct, budget_s, min_blocks,
-- max_blocks, seed, confidence, power, clock, pool_cap} -> result: the blocks measured in a seeded
-- random order until enough or the budget ends, and the paired verdict. Memory does not grow with
-- the samples: each block's samples give its ratio and go; the pooled figures shown beside the
-- verdict (NVBench's rule and compare's on all samples) come from bounded pools (judge/stats.lua's
-- pool: exact mean and noise, the median of a uniform sample of pool_cap). (Tests drive it with
-- synthetic samples; gpuexp.ab with the GPU.)
function M.interleave(o)
  local rng = search.generator(o.seed or 1)
  local clock = o.clock or gpuexp.clock
  local started = clock()
  local ratios, order, gpu_ms = {}, {}, 0
  local pool_a, pool_b = stats.pool(o.pool_cap, 2463534242), stats.pool(o.pool_cap, 88172645463325252)
  local summary
  local stopped_by = "max_blocks"
  local mde_pct = o.mde_pct or M.defaults.mde_pct
  for block = 1, o.max_blocks or M.defaults.max_blocks do
    local b_first = rng.int(2) == 2
    local a, b
    if b_first then b = o.measure_b(o.reps); a = o.measure_a(o.reps) else a = o.measure_a(o.reps); b = o.measure_b(o.reps) end
    order[block] = b_first and "BA" or "AB"
    checked(a, "A", block)
    checked(b, "B", block)
    local enough = statistics(o, function()
      ratios[block] = paired.block_ratio(a, b)
      for i = 1, #a do gpu_ms = gpu_ms + a[i] end
      for i = 1, #b do gpu_ms = gpu_ms + b[i] end
      pool_a:add_all(a)
      pool_b:add_all(b)
      if block < 2 then return false end
      summary = paired.summary(ratios, {confidence = o.confidence, power = o.power, bootstrap = false})
      return paired.enough(summary, mde_pct, o.min_blocks)
    end)
    if enough then stopped_by = "mde"; break end
    if clock() - started >= (o.budget_s or M.defaults.budget_s) then stopped_by = "budget_s"; break end
  end
  return statistics(o, function()
    -- the final statistics, with a full bootstrap
    summary = paired.summary(ratios, {confidence = o.confidence, power = o.power, seed = 11})
    local verdict, basis = paired.verdict(summary, o.threshold_pct, o.min_blocks)
    if stopped_by == "budget_s" and summary.mde_pct > mde_pct then
      basis = basis .. string.format("; the budget ended before +-%.2g%% could be detected", mde_pct)
    end
    local stats_a, stats_b = pool_a:summary(), pool_b:summary()
    local nv_verdict, nv_change, nv_threshold = paired.nvbench(stats_a, stats_b)
    local compared = rule.judge{value = stats_b.median, noise_pct = stats_b.noise_pct, samples = stats_b.count,
      baseline = {{value = stats_a.median, noise_pct = stats_a.noise_pct}}, direction = "lower"}
    return {verdict = verdict, basis = basis, summary = summary, stopped_by = stopped_by, ratios = ratios, order = order,
      a_median_ms = stats_a.median, b_median_ms = stats_b.median, a_samples = stats_a.count, b_samples = stats_b.count,
      pooled_kept = math.max(stats_a.kept, stats_b.kept), gpu_s = gpu_ms / 1000, wall_s = clock() - started,
      nvbench = {verdict = nv_verdict, change_pct = nv_change, threshold_pct = nv_threshold},
      compare = {verdict = compared.verdict, change_pct = compared.change_pct, threshold_pct = compared.threshold_pct}}
  end)
end

-- The result as judge/compare.lua's, so compare's printers write it (table, Markdown, JSON, JUnit).
function M.as_comparison(results)
  local points, counts = {}, {slower = 0, faster = 0, same = 0, error = 0, new = 0, missing = 0, undecided = 0}
  for i, r in ipairs(results) do
    local s = r.summary
    points[i] = {point = r.name, metric = "median_ms", direction = "lower", verdict = r.verdict, base = r.a_median_ms,
      new = r.b_median_ms, change_pct = s.change_pct, threshold_pct = s.mde_pct < math.huge and s.mde_pct or nil,
      basis = r.basis, p_value = s.p, ci_low_pct = s.ci_low and (s.ci_low - 1) * 100,
      ci_high_pct = s.ci_high and (s.ci_high - 1) * 100, judged_baseline = {1}, baseline = {r.a_median_ms}}
    counts[r.verdict] = counts[r.verdict] + 1
  end
  return {points = points, counts = counts}
end

-- gpuexp.ab{name=, variant = function(v) -> timer, variants = {A = {...}, B = {...}} | a =, b =,
-- mde_pct=, budget_s=, ...} -> result (nil in an offline plan, which says what it would do).
function M.run(spec)
  if type(spec) ~= "table" then gpuexp.error("usage", "ab: expected a table of options") end
  require("gpuexp.api.option_keys").check(spec, known, "ab")
  local asked, request_path = request()
  local o = {}
  for key, value in pairs(M.defaults) do o[key] = spec[key] == nil and value or spec[key] end
  for key, value in pairs(asked and asked.options or {}) do o[key] = value end -- the command line wins
  local function finite(value) return math.type(value) ~= nil and value == value and math.abs(value) < math.huge end
  for _, key in ipairs({"mde_pct", "budget_s", "block_ms", "confidence", "power"}) do
    if not finite(o[key]) or o[key] <= 0 then gpuexp.error("usage", "ab: '" .. key .. "' must be a finite number > 0") end
  end
  if not finite(o.threshold_pct) or o.threshold_pct < 0 then
    gpuexp.error("usage", "ab: 'threshold_pct' must be a finite number >= 0")
  end
  o.seed = math.tointeger(o.seed)
  if not o.seed or o.seed < 0 or o.seed > M.MAX_SEED then
    gpuexp.error("usage", "ab: 'seed' must be a whole number from 0 to " .. M.MAX_SEED)
  end
  if o.confidence >= 1 or o.power >= 1 then gpuexp.error("usage", "ab: confidence and power are fractions below 1") end
  local name = spec.name or "ab"
  if spec.block_reps ~= nil and (not math.tointeger(spec.block_reps) or spec.block_reps < 1) then
    gpuexp.error("usage", "ab: 'block_reps' must be a whole number >= 1")
  end
  -- the two sides: given directly, or built by variant(v) from the variants (the command's first)
  local a, b = spec.a, spec.b
  if spec.variant then
    if type(spec.variant) ~= "function" then gpuexp.error("usage", "ab: 'variant' must be a function(v) -> timer") end
    local variants = {}
    for _, side in ipairs({"A", "B"}) do
      local v = {name = side}
      for key, value in pairs(spec.variants and spec.variants[side] or {}) do v[key] = value end
      for key, value in pairs(asked and asked.variants and asked.variants[side] or {}) do v[key] = value end
      variants[side] = v
    end
    a, b = spec.variant(variants.A), spec.variant(variants.B)
  end
  if a == nil or b == nil then gpuexp.error("usage", "ab: give a and b, or variant = function(v) and variants") end
  local measure_a, measure_b = timer_of(a, "a (or variant(A))"), timer_of(b, "b (or variant(B))")
  if gpuexp.plan then
    io.stderr:write(text_formats.format("gpuexp ab '%s' (offline plan): would time A and B in interleaved blocks of " ..
      "about %g ms each, in a seeded random order, until a change of %g%% is detectable at %g%% power and %g%% " ..
      "confidence (at least %d blocks) or %g s pass; both variants were built and their launches checked\n", name,
      o.block_ms, o.mde_pct, o.power * 100, o.confidence * 100, o.min_blocks, o.budget_s))
    if asked and asked.result then csv.write_file(asked.result, json.encode({plan = true})) end
    return nil
  end
  -- a first look: each side warmed, then the block size for about block_ms a side
  local function probe(f, side) return stats.median(checked(f(3, o.warmup), side, 0)) end
  local probe_ms = math.max(probe(measure_a, "A"), probe(measure_b, "B"), 1e-4)
  local reps = spec.block_reps or math.max(5, math.min(5000, math.ceil(o.block_ms / probe_ms)))
  local cold = spec.cold
  local function side(f)
    return function(n) return f(n, o.warmup, cold) end -- a short warm-up: the other variant ran last
  end
  -- an error of gpuexp's own statistics is said in the result file: gpuexp ab exits 70 for it
  local function on_internal(traceback)
    if asked and asked.result then pcall(csv.write_file, asked.result, json.encode({internal_error = traceback})) end
  end
  local interleave_options = {measure_a = side(measure_a), measure_b = side(measure_b), reps = reps,
    on_internal = on_internal}
  for key, value in pairs(o) do interleave_options[key] = value end
  local result = M.interleave(interleave_options)
  result.name, result.reps_per_block, result.mde_target_pct = name, reps, o.mde_pct
  local found, device = pcall(gpuexp.device)
  result.gpu = found and device.facts and device.facts.name or nil
  if asked and asked.result then -- gpuexp ab prints it
    local keep = statistics({on_internal = on_internal}, function()
      local copy = {}
      for k, v in pairs(result) do copy[k] = v end
      copy.summary = {}
      for k, v in pairs(result.summary) do copy.summary[k] = v < math.huge and v or nil end
      return json.encode(copy)
    end)
    csv.write_file(asked.result, keep)
  elseif not request_path and not spec.quiet then
    require("gpuexp.judge.printers").format_table(M.as_comparison({result}), io.stdout)
  end
  return result
end

return M
