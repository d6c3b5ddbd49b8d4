-- gpuexp.ab{...}: two variants of one measurement (A the base, B the change) timed in one process
-- on one GPU, in blocks whose order (AB or BA) is drawn from a seed, until the paired statistics
-- could detect the minimum detectable effect asked for, or the budget ends (judge/paired.lua
-- holds the statistics; docs/ab.md the method). `gpuexp ab` runs a script that calls this with
-- its variants (two commits, binaries, sources or option sets) and prints the verdict as
-- compare does.
local paired = require("gpuexp.judge.paired")
local rule = require("gpuexp.judge.rule")
local search = require("gpuexp.api.search")
local json = require("gpuexp.store.json")
local text_formats = require("gpuexp.store.text")
local csv = require("gpuexp.store.csv")

local M = {}

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

-- M.interleave{measure_a = f(reps), measure_b = f(reps), reps, mde_pct, budget_s, min_blocks,
-- max_blocks, seed, confidence, power, clock} -> result: the blocks measured in a seeded random
-- order until enough or the budget ends, and the paired verdict. (Tests drive it with synthetic
-- samples; gpuexp.ab with the GPU.)
function M.interleave(o)
  local rng = search.generator(o.seed or 1)
  local clock = o.clock or gpuexp.clock
  local started = clock()
  local ratios, order, all_a, all_b, gpu_ms = {}, {}, {}, {}, 0
  local summary
  local stopped_by = "max_blocks"
  for block = 1, o.max_blocks or M.defaults.max_blocks do
    local b_first = rng.int(2) == 2
    local a, b
    if b_first then b = o.measure_b(o.reps); a = o.measure_a(o.reps) else a = o.measure_a(o.reps); b = o.measure_b(o.reps) end
    order[block] = b_first and "BA" or "AB"
    ratios[block] = paired.block_ratio(a, b)
    for _, v in ipairs(a) do all_a[#all_a + 1] = v; gpu_ms = gpu_ms + v end
    for _, v in ipairs(b) do all_b[#all_b + 1] = v; gpu_ms = gpu_ms + v end
    if block >= 2 then
      summary = paired.summary(ratios, {confidence = o.confidence, power = o.power, bootstrap = false})
      if paired.enough(summary, o.mde_pct or M.defaults.mde_pct, o.min_blocks) then stopped_by = "mde"; break end
    end
    if clock() - started >= (o.budget_s or M.defaults.budget_s) then stopped_by = "budget_s"; break end
  end
  -- the final statistics, with a full bootstrap
  summary = paired.summary(ratios, {confidence = o.confidence, power = o.power, seed = 11})
  local verdict, basis = paired.verdict(summary, o.threshold_pct)
  if stopped_by == "budget_s" and summary.mde_pct > (o.mde_pct or M.defaults.mde_pct) then
    basis = basis .. string.format("; the budget ended before +-%.2g%% could be detected", o.mde_pct or M.defaults.mde_pct)
  end
  local nv_verdict, nv_change, nv_threshold = paired.nvbench(all_a, all_b)
  local stats_a, stats_b = gpuexp.stats(all_a), gpuexp.stats(all_b)
  local noise_a, noise_b = stats_a.stddev / stats_a.mean * 100, stats_b.stddev / stats_b.mean * 100
  local compared = rule.judge{value = stats_b.median, noise_pct = noise_b, samples = #all_b,
    baseline = {{value = stats_a.median, noise_pct = noise_a}}, direction = "lower"}
  return {verdict = verdict, basis = basis, summary = summary, stopped_by = stopped_by, ratios = ratios, order = order,
    a_median_ms = stats_a.median, b_median_ms = stats_b.median, a_samples = #all_a, b_samples = #all_b,
    gpu_s = gpu_ms / 1000, wall_s = clock() - started,
    nvbench = {verdict = nv_verdict, change_pct = nv_change, threshold_pct = nv_threshold},
    compare = {verdict = compared.verdict, change_pct = compared.change_pct, threshold_pct = compared.threshold_pct}}
end

-- The result as judge/compare.lua's, so compare's printers write it (table, Markdown, JSON, JUnit).
function M.as_comparison(results)
  local points, counts = {}, {slower = 0, faster = 0, same = 0, error = 0, new = 0, missing = 0}
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
  for _, key in ipairs({"mde_pct", "budget_s", "block_ms", "confidence", "power"}) do
    if type(o[key]) ~= "number" or o[key] <= 0 then gpuexp.error("usage", "ab: '" .. key .. "' must be a number > 0") end
  end
  if o.confidence >= 1 or o.power >= 1 then gpuexp.error("usage", "ab: confidence and power are fractions below 1") end
  local name = spec.name or "ab"
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
  local function probe(f) return gpuexp.stats(f(3, o.warmup)).median end
  local probe_ms = math.max(probe(measure_a), probe(measure_b), 1e-4)
  local reps = spec.block_reps or math.max(5, math.min(5000, math.ceil(o.block_ms / probe_ms)))
  local cold = spec.cold
  local function side(f)
    return function(n) return f(n, o.warmup, cold) end -- a short warm-up: the other variant ran last
  end
  local interleave_options = {measure_a = side(measure_a), measure_b = side(measure_b), reps = reps}
  for key, value in pairs(o) do interleave_options[key] = value end
  local result = M.interleave(interleave_options)
  result.name, result.reps_per_block, result.mde_target_pct = name, reps, o.mde_pct
  local found, device = pcall(gpuexp.device)
  result.gpu = found and device.facts and device.facts.name or nil
  if asked and asked.result then -- gpuexp ab prints it
    local keep = {}
    for k, v in pairs(result) do keep[k] = v end
    keep.summary = {}
    for k, v in pairs(result.summary) do keep.summary[k] = v < math.huge and v or nil end
    csv.write_file(asked.result, json.encode(keep))
  elseif not request_path and not spec.quiet then
    require("gpuexp.judge.printers").format_table(M.as_comparison({result}), io.stdout)
  end
  return result
end

return M
