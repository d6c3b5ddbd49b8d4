-- The tuning study's tables (docs/howto/tune.md), recomputed offline from bench/tune/run.sh's records:
--   gpuexp --quiet bench/tune/replay.lua OUTDIR [SPACE...] [--seeds A-B]
-- For each space (default conv transpose matmul, those with OUTDIR/SPACE/brute.json):
--   the real runs on the GPU (seed 1): brute force, racing and model, their best, whether it is in
--   brute force's tie set, GPU time (the sum of the timed samples) and wall time;
--   replays of seeds A-B (default 1-10: the published table; develop on others) of racing, model
--   and random on brute force's recorded samples (a short level is the first samples of the full
--   measurement, as many as the level's policy takes: a simulation, said so), max_evals a tenth;
--   the regret bound's coverage over 50 replays (racing and model, seeds A to A+24 each): the 90%
--   bound against the true regret (the winner's brute-force median over the best's, - 1), and its median;
--   the cold-cache runs: wall against 1.3 x max(GPU time, compile CPU time / cores).
-- Prints Markdown and writes it to OUTDIR/tune_tables.md.
local json = require("gpuexp.store.json")
local search = require("gpuexp.api.search")
local tune = require("gpuexp.api.tune")
dofile(gpuexp.script_dir .. "/policy.lua") -- the study's full measurement: the short levels are simulated from it

local usage = "usage: gpuexp bench/tune/replay.lua OUTDIR [SPACE...] [--seeds A-B]"
local OUTDIR = assert(arg[1], usage)
local wanted, first_seed, last_seed = {}, 1, 10
local i = 2
while arg[i] do
  if arg[i] == "--seeds" then
    first_seed, last_seed = (arg[i + 1] or ""):match("^(%d+)%-(%d+)$")
    first_seed, last_seed = tonumber(first_seed), tonumber(last_seed)
    assert(first_seed and last_seed and first_seed <= last_seed, usage)
    i = i + 2
  else
    wanted[#wanted + 1] = arg[i]
    i = i + 1
  end
end
local seeds = last_seed - first_seed + 1
if #wanted == 0 then wanted = {"conv", "transpose", "matmul"} end

local function load(space, run)
  local file = io.open(string.format("%s/%s/%s.json", OUTDIR, space, run), "r")
  if not file then return nil end
  local record = json.decode(file:read("a"))
  file:close()
  return record
end

local lines = {}
local function say(text) print(text); lines[#lines + 1] = text end
local function pct(x) return string.format("%.1f%%", 100 * x) end
local function bound_text(v) return type(v) == "number" and string.format("+%.2f%%", 100 * v) or tostring(v) end

local function cell(v) return math.type(v) == "float" and v == math.floor(v) and string.format("%d", v) or tostring(v) end
local function key_of(point, axes)
  local cells = {}
  for i, axis in ipairs(axes) do cells[i] = cell(point[axis[1]]) end
  return table.concat(cells, "/")
end
local function show(point, axes)
  local cells = {}
  for i, axis in ipairs(axes) do cells[i] = axis[1] .. "=" .. cell(point[axis[1]]) end
  return table.concat(cells, " ")
end

-- A short level's samples: the first ones of the full measurement, as many as the measurement loop
-- (api/measure.lua) takes under the level's policy (api/tune.lua's level_policy of the study's
-- policy.lua): a first batch of min_samples, then batches of at least 10 until min_time_ms is
-- reached (or max_samples, or the recorded samples run out).
local full_policy = gpuexp.measure_defaults
local function short_count(samples, level)
  if level >= 1 then return #samples end
  local p = tune.level_policy(level, full_policy)
  local limit = math.min(#samples, p.max_samples)
  local n, total = 0, 0
  local wanted = p.min_samples
  while true do
    for s = n + 1, math.min(limit, n + wanted) do total = total + samples[s] end
    n = math.min(limit, n + wanted)
    if n >= limit or (n >= p.min_samples and total >= p.min_time_ms) then return n end
    wanted = math.max(10, math.min(2000, math.ceil((p.min_time_ms - total) / math.max(total / n, 1e-4)), limit - n))
  end
end

local timing = {}
for _, name in ipairs(wanted) do
  local brute = load(name, "brute")
  if brute then
    local axes = brute.axes
    local tied = {}
    for _, t in ipairs(brute.ties) do tied[key_of(t.point, axes)] = true end
    -- brute force's record: each configuration's samples; the truth is its full median
    local recorded, best_value = {}, math.huge
    for _, e in ipairs(brute.evaluated) do
      if e.value then
        recorded[key_of(e.point, axes)] = e
        best_value = math.min(best_value, e.value)
      end
    end
    local where_keys = {}
    local list = {}
    for _, e in ipairs(brute.evaluated) do where_keys[key_of(e.point, axes)] = true; list[#list + 1] = e.point end
    local norm_axes = {}
    for i, axis in ipairs(axes) do norm_axes[i] = {name = axis[1], values = axis[2]} end
    local coords, sizes = search.space(list, norm_axes)
    local function replay(batch, level)
      local results = {}
      for i, index in ipairs(batch) do
        local e = recorded[key_of(list[index], axes)]
        if e and e.samples and #e.samples > 0 then
          local n = short_count(e.samples, level)
          local samples, cost = {}, 0
          for s = 1, n do samples[s] = e.samples[s]; cost = cost + e.samples[s] end
          results[i] = {value = gpuexp.stats(samples).median, samples = samples, cost_s = cost / 1000}
        else
          results[i] = {cost_s = 0} -- failed (or broke the condition) in brute force's run
        end
      end
      return results
    end
    local function run(strategy, seed)
      return search.run{count = #list, coords = coords, sizes = sizes, strategy = strategy, seed = seed,
        max_evals = math.ceil(#list / 10), evaluate = replay}
    end
    say(string.format("### %s: %d configurations, %s", name, brute.configurations, brute.gpu))
    say("")
    say(string.format("Brute force: best %s at %.4g ms, tie set of %d; %.2f s of GPU time, %.0f s wall (%s cache).",
      show(brute.best, axes), brute.ties[1].value, #brute.ties, brute.gpu_s, brute.wall_s, brute.cache))
    say("")
    say("| run (on the GPU, seed 1) | measured | GPU time (% of brute force's) | wall s | best | in the tie set | regret bound (90%) | true regret |")
    say("| --- | ---: | ---: | ---: | --- | --- | ---: | ---: |")
    for _, runname in ipairs({"brute", "racing", "model"}) do
      local r = load(name, runname)
      if r then
        local winner = recorded[key_of(r.best, axes)]
        local true_regret = winner and winner.value / best_value - 1
        say(string.format("| %s | %d | %.2f s (%s) | %.1f | %s | %s | %s | %s |", runname, r.measured, r.gpu_s,
          pct(r.gpu_s / brute.gpu_s), r.wall_s, show(r.best, axes), tied[key_of(r.best, axes)] and "yes" or "NO",
          bound_text(r.regret and r.regret.bound), true_regret and string.format("%.2f%%", 100 * true_regret) or "?"))
        if r.compile and (runname == "brute" or runname == "racing") and r.cache == "cold" then
          timing[#timing + 1] = {space = name, run = runname, r = r}
        end
      end
    end
    say("")
    say(string.format("Replayed on brute force's recorded samples (a simulation), seeds %d-%d, max_evals a tenth of the space:",
      first_seed, last_seed))
    say("")
    say("| strategy | seeds in the tie set | GPU time, median (max) % of brute force's | measured, median |")
    say("| --- | ---: | ---: | ---: |")
    for _, strategy in ipairs({"racing", "model", "random"}) do
      local hits, fractions, measured = 0, {}, {}
      for seed = first_seed, last_seed do
        local r = run(strategy, seed)
        if tied[key_of(list[r.finalists[r.ties.best].index], axes)] then hits = hits + 1 end
        fractions[#fractions + 1], measured[#measured + 1] = r.cost_s / brute.gpu_s, r.measured
      end
      local f = gpuexp.stats(fractions)
      say(string.format("| %s | %d of %d | %s (%s) | %d |", strategy, hits, seeds, pct(f.median), pct(f.max),
        gpuexp.stats(measured).median))
    end
    local covered, widths, runs = 0, {}, 0
    for _, strategy in ipairs({"racing", "model"}) do
      for seed = first_seed, first_seed + 24 do
        local r = run(strategy, seed)
        local winner = recorded[key_of(list[r.finalists[r.ties.best].index], axes)]
        local true_regret = winner.value / best_value - 1
        runs = runs + 1
        if r.regret.bound >= true_regret then covered = covered + 1 end
        widths[#widths + 1] = r.regret.bound
      end
    end
    table.sort(widths)
    say("")
    say(string.format("Regret bound (replays, racing and model seeds %d-%d): the 90%% bound covers the true regret in " ..
      "%d of %d; median bound %s.", first_seed, first_seed + 24, covered, runs,
      bound_text((widths[runs // 2] + widths[runs // 2 + 1]) / 2)))
    say("")
  end
end

if #timing > 0 then
  say("### Cold-cache tunes: wall time against the GPU's and the compiler's")
  say("")
  say("| space | run | wall s | GPU time s | compile CPU s | cores | target 1.3 x max(GPU, compile / cores) s | within |")
  say("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
  for _, t in ipairs(timing) do
    local r = t.r
    local target = 1.3 * math.max(r.gpu_s, r.compile.compile_s / r.cores)
    say(string.format("| %s | %s | %.1f | %.1f | %.1f | %d | %.1f | %s |", t.space, t.run, r.wall_s, r.gpu_s,
      r.compile.compile_s, r.cores, target, r.wall_s <= target and "yes" or "NO"))
  end
  -- where each one's wall time went (result.timing, docs/howto/tune.md), where the records have it
  local parts = require("gpuexp.api.tune").TIMING
  local header = false
  for _, t in ipairs(timing) do
    local w = t.r.timing
    if w then
      if not header then
        header = true
        say("")
        say("| space | run | wall s | " .. table.concat(parts, " | ") .. " | runs | helpers busy | jobs' time outside the compiler s |")
        say("| --- | --- | ---:" .. string.rep(" | ---:", #parts + 3) .. " |")
      end
      local cells = {}
      for i, key in ipairs(parts) do cells[i] = string.format("%.1f", w[key]) end
      say(string.format("| %s | %s | %.1f | %s | %d | %.0f%% | %.1f |", t.space, t.run, w.wall_s, table.concat(cells, " | "),
        w.runs, 100 * (t.r.compile.busy or 0), t.r.compile.latency_s or 0))
    end
  end
end

local file = io.open(OUTDIR .. "/tune_tables.md", "w")
if file then file:write(table.concat(lines, "\n"), "\n"); file:close() end
