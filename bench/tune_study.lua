-- The tuning study of issue 29, in one run on one GPU: kernels/tune_matmul.cu over its 1,392
-- configurations (n = 1024).
--   1. brute force measures every configuration: its tie set is the reference;
--   2. racing and model (seed 1) run for real on the GPU: their best, whether it is in brute
--      force's tie set, and their GPU time (the sum of the timed samples) against brute force's;
--   3. 10 seeds of racing, model and random replayed on brute force's recorded samples (a short
--      measurement is the first samples of the long one: a simulation, said so in the table);
--   4. drift: the winners of a racing tune stored in a history; the same tune compiled with
--      -maxrregcount=32 starts from them and reports the stored winner that left the tie set.
-- Prints a Markdown table, and writes it to $OUT/tune_study.md (and brute force's tie set to
-- $OUT/tune_ties.json, for bench/kernel_tuner_study.py) when OUT is set.
--   gpuexp bench/tune_study.lua [n]
local search = require("gpuexp.api.search")
local space = dofile(gpuexp.resolve("kernels/tune_matmul.lua")).new{n = tonumber(arg[1]) or 1024}
gpuexp.measure_defaults.min_time_ms = 40
gpuexp.measure_defaults.warmup = 2
gpuexp.measure_defaults.max_noise_pct = 2 -- a configuration stops at 2% noise, or after 0.3 s whatever its noise
gpuexp.measure_defaults.timeout_s = 0.3

local work = os.tmpname()
os.remove(work)
gpuexp.mkdir(work)
local history = work .. "/history.sqlite"
local lines = {}
local function say(text) print(text); lines[#lines + 1] = text end

local function tune(name, strategy, seed, extra)
  local spec = {name = name, axes = space.axes, where = space.where, setup = space.setup, run = space.run,
    objective = "median_ms", condition = "verified", sources = space.sources, options = space.options,
    strategy = strategy, seed = seed, out = work .. "/" .. name .. ".csv", quiet = true}
  for k, v in pairs(extra or {}) do spec[k] = v end
  local started = gpuexp.clock()
  local result = gpuexp.tune(spec)
  if result then result.wall_s = gpuexp.clock() - started end
  return result
end

local function key(point)
  return string.format("%d/%d/%d/%d/%d", point.bx, point.by, point.tm, point.tn, point.unroll)
end
local function show(point) return string.format("bx=%d by=%d tm=%d tn=%d u=%d", point.bx, point.by, point.tm, point.tn,
  point.unroll) end

local brute = tune("brute", "brute", 1)
if not brute then -- an offline plan: a few configurations were compiled and checked
  os.execute("rm -rf '" .. work .. "'")
  print("offline plan: nothing measured")
  return
end
local tied = {}
for _, t in ipairs(brute.ties) do tied[key(t.point)] = true end
local facts = gpuexp.device().facts
say(string.format("# gpuexp tune study: %s, kernels/tune_matmul.cu, n = %d, %d configurations", facts.name, space.n,
  brute.configurations))
say("")
say(string.format("Brute force: best %s at %.4g ms; tie set of %d (%s); %.2f s of GPU time (timed samples), %.0f s " ..
  "wall.", show(brute.best), brute.ties[1].value, #brute.ties, brute.rule, brute.cost_s, brute.wall_s))
say("")
say("| run | seed | configurations measured | full-measurement equivalents | GPU time (% of brute force's) | wall s | best | in brute force's tie set |")
say("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
say(string.format("| brute force (GPU) | - | %d | %.0f | %.2f s (100%%) | %.0f | %s | yes |", brute.measured, brute.evaluations,
  brute.cost_s, brute.wall_s, show(brute.best)))
for _, strategy in ipairs({"racing", "model"}) do
  local r = tune(strategy, strategy, 1)
  say(string.format("| %s (GPU) | 1 | %d | %.1f | %.2f s (%.1f%%) | %.0f | %s | %s |", strategy, r.measured, r.evaluations,
    r.cost_s, 100 * r.cost_s / brute.cost_s, r.wall_s, show(r.best), tied[key(r.best)] and "yes" or "NO"))
end

-- the replay: brute force's samples of each configuration, a prefix of them for a short level
local points = gpuexp.points(space.axes, space.where)
local axes = {}
for i, axis in ipairs(space.axes) do axes[i] = {name = axis[1], values = axis[2]} end
local coords, sizes = search.space(points, axes)
local recorded = {}
for _, e in ipairs(brute.evaluated) do recorded[key(e.point)] = e end
local function replay(batch, level)
  local results = {}
  for i, index in ipairs(batch) do
    local e = recorded[key(points[index])]
    if e and e.value and e.samples then
      local n = math.min(#e.samples, math.max(5, math.ceil(level * #e.samples)))
      local samples, cost = {}, 0
      for s = 1, n do samples[s] = e.samples[s]; cost = cost + e.samples[s] end
      results[i] = {value = gpuexp.stats(samples).median, samples = samples, cost_s = cost / 1000}
    else
      results[i] = {cost_s = 0} -- failed or not verified in brute force's run
    end
  end
  return results
end
say("")
say("Replayed on brute force's recorded samples (a simulation: a short measurement is the first samples of the " ..
  "full one), max_evals = a tenth of the space:")
say("")
say("| strategy | seeds in brute force's tie set | GPU time, median (max) % of brute force's | measured, median |")
say("| --- | ---: | ---: | ---: |")
for _, strategy in ipairs({"racing", "model", "random"}) do
  local hits, fractions, measured = 0, {}, {}
  for seed = 1, 10 do
    local r = search.run{count = #points, coords = coords, sizes = sizes, strategy = strategy, seed = seed,
      max_evals = math.ceil(#points / 10), evaluate = replay}
    local best = points[r.finalists[r.ties.best].index]
    if tied[key(best)] then hits = hits + 1 end
    fractions[seed], measured[seed] = 100 * r.cost_s / brute.cost_s, r.measured
  end
  local f = gpuexp.stats(fractions)
  say(string.format("| %s | %d of 10 | %.1f%% (%.1f%%) | %d |", strategy, hits, f.median, f.max, gpuexp.stats(measured).median))
end

-- drift: the stored winner of a tune, then the kernel compiled with other options
local stored = tune("drift", "racing", 1, {history = history})
local changed = dofile(gpuexp.resolve("kernels/tune_matmul.lua")).new{n = space.n, options = {"-maxrregcount=32"}}
local again = gpuexp.tune{name = "drift", axes = changed.axes, where = changed.where, setup = changed.setup,
  run = changed.run, objective = "median_ms", condition = "verified", sources = changed.sources,
  options = changed.options, strategy = "racing", seed = 1, start = "stored", history = history,
  out = work .. "/drift-maxrregcount.csv", quiet = true}
say("")
say(string.format("Drift: stored winner %s (%.4g ms); recompiled with -maxrregcount=32 and tuned from it: best %s " ..
  "(%.4g ms), %d stored winner(s) out of the tie set:", show(stored.best), stored.ties[1].value, show(again.best),
  again.ties[1].value, #again.drift))
for _, text in ipairs(require("gpuexp.store.winners").drift_lines(history)) do say(text) end

os.execute("rm -rf '" .. work .. "'")
local out = os.getenv("OUT")
if out and out ~= "" then
  local file = assert(io.open(out .. "/tune_study.md", "w"))
  file:write(table.concat(lines, "\n"), "\n")
  file:close()
  -- brute force's tie set, for bench/kernel_tuner_study.py
  local points = {}
  for i, t in ipairs(brute.ties) do points[i] = t.point end
  file = assert(io.open(out .. "/tune_ties.json", "w"))
  file:write(require("gpuexp.store.json").encode(points), "\n")
  file:close()
end
