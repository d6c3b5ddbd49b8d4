-- The comparison with Kernel Tuner (issue 37, item 5), its tables rebuilt offline from the records of
-- bench/tune/kt_compare.sh alone:
--   gpuexp --quiet --inline bench/tune/kt_table.lua RECORDS TRUTH [SPACE...]
-- RECORDS: gpuexp/SPACE/STRATEGY-SEED.json (bench/tune/study.lua), kernel_tuner/SPACE/STRATEGY-SEED.json
-- (bench/tune/kt_run.py), referee.json (bench/tune/referee.lua); TRUTH: SPACE/brute.json, gpuexp's
-- brute-force record (bench/h100/tune37/tune37_records.tar.gz): its tie set and every configuration's
-- median. For each space (default conv matmul): a row per run (strategy x seed: wall s, GPU s, the
-- winner, its referee time, its regret against brute force's best as the referee measured both, its
-- regret in brute force's record, whether it is in brute force's tie set), then a line per strategy.
-- Prints Markdown and writes RECORDS/kt_table.md.
local records = dofile(gpuexp.script_dir .. "/records.lua")
local RECORDS, TRUTH, wanted = records.arguments("bench/tune/kt_table.lua")
local read, list, key = records.read, records.runs, records.key
local function cell(v) return tostring(math.tointeger(v) or v) end
local function median(values)
  if #values == 0 then return nil end
  return gpuexp.stats(values).median
end
local function pct(x) return x and string.format("%+.2f%%", 100 * x) or "" end
local function num(x, format) return type(x) == "number" and string.format(format, x) or "" end

local lines = {}
local function say(text) print(text); lines[#lines + 1] = text end
local referee = read(RECORDS .. "/referee.json") or {spaces = {}}
-- Kernel Tuner's strategies, then gpuexp's, each in this order; seeds in order
local ORDER = {random_sample = 1, genetic_algorithm = 2, bayes_opt = 3, dual_annealing = 4, racing = 5, model = 6}

for _, name in ipairs(wanted) do
  local brute = read(TRUTH .. "/" .. name .. "/brute.json")
  if brute then
    local axes = brute.axes
    local tied, recorded, best_value = {}, {}, math.huge
    for _, t in ipairs(brute.ties) do tied[key(t.point, axes)] = true end
    for _, e in ipairs(brute.evaluated) do
      if e.value then recorded[key(e.point, axes)] = e.value; best_value = math.min(best_value, e.value) end
    end
    -- the referee's time of each configuration it measured: the median of its rounds' medians
    local refereed, reference = {}, nil
    local judged = referee.spaces[name]
    if judged then
      for _, w in ipairs(judged.winners) do refereed[w.key] = median(w.medians) end
      reference = refereed[judged.reference]
    end
    local runs = {}
    for _, tool in ipairs({"kernel_tuner", "gpuexp"}) do
      for _, file in ipairs(list(RECORDS .. "/" .. tool .. "/" .. name)) do
        local r = read(RECORDS .. "/" .. tool .. "/" .. name .. "/" .. file)
        if r then r.tool = tool; runs[#runs + 1] = r end
      end
    end
    table.sort(runs, function(a, b)
      local oa, ob = ORDER[a.strategy] or 9, ORDER[b.strategy] or 9
      if oa ~= ob then return oa < ob end
      if a.strategy ~= b.strategy then return a.strategy < b.strategy end
      return (a.seed or 0) < (b.seed or 0)
    end)
    local gpus, named = {}, {}
    for _, r in ipairs(runs) do
      if r.gpu and not named[r.gpu] then named[r.gpu] = true; gpus[#gpus + 1] = r.gpu end
    end
    say(string.format("### %s: %d configurations, budget %d evaluations (a tenth), %s", name, brute.configurations,
      math.ceil(brute.configurations / 10), #gpus > 0 and table.concat(gpus, ", ") or "no run measured"))
    say("")
    say(string.format("Brute force (%s, not re-run): best %s at %.5f ms, tie set of %d. Referee (%s, %d rounds " ..
      "in one process): brute force's best at %s ms.", brute.gpu or "?", key(brute.best, axes), best_value, #brute.ties,
      referee.gpu or "not run", referee.rounds or 0, num(reference, "%.5f")))
    say("")
    say("| tool | strategy | seed | cache | configurations measured | wall s | GPU s | winner | referee ms | " ..
      "regret (referee) | regret (brute force's record) | in the tie set |")
    say("| --- | --- | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |")
    local per = {}
    for _, r in ipairs(runs) do
      local tool = r.tool == "gpuexp" and "gpuexp" or "Kernel Tuner " .. tostring(r.version or "")
      local s = per[r.strategy] or {tool = tool, strategy = r.strategy, runs = 0, tied = 0, regrets = {}, walls = {},
        gpus = {}, failed = 0}
      per[r.strategy] = s
      s.runs = s.runs + 1
      if not r.best then
        s.failed = s.failed + 1
        say(string.format("| %s | %s | %s | %s | %s | %s | | failed: %s | | | | |", tool, r.strategy, cell(r.seed),
          r.cache or "none", cell(r.evaluations or ""), num(r.wall_s, "%.1f"),
          (tostring(r.error or "no winner"):sub(1, 80):gsub("|", "/"))))
      else
        local k = key(r.best, axes)
        local ms = refereed[k]
        local regret = ms and reference and ms / reference - 1
        local in_record = recorded[k] and recorded[k] / best_value - 1
        if tied[k] then s.tied = s.tied + 1 end
        s.regrets[#s.regrets + 1] = regret
        s.walls[#s.walls + 1] = r.wall_s
        s.gpus[#s.gpus + 1] = r.gpu_s
        local measured = r.tool == "gpuexp" and r.measured or r.evaluations
        local cache = r.tool == "gpuexp" and (r.cache or "?") or "none"
        if r.stopped_by_time then cache = cache .. ", stopped by time" end
        say(string.format("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", tool, r.strategy,
          cell(r.seed), cache, cell(measured or ""), num(r.wall_s, "%.1f"), num(r.gpu_s, "%.2f"), k,
          num(ms, "%.5f"), pct(regret), pct(in_record), tied[k] and "yes" or "NO"))
      end
    end
    say("")
    say("| tool | strategy | runs | in the tie set | regret (referee), median (max) | wall s, median | GPU s, median |")
    say("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    local strategies = {}
    for strategy in pairs(per) do strategies[#strategies + 1] = strategy end
    table.sort(strategies, function(a, b)
      local oa, ob = ORDER[a] or 9, ORDER[b] or 9
      if oa ~= ob then return oa < ob end
      return a < b
    end)
    for _, strategy in ipairs(strategies) do
      local s = per[strategy]
      local worst = nil
      for _, v in ipairs(s.regrets) do worst = math.max(worst or v, v) end
      say(string.format("| %s | %s | %d%s | %d of %d | %s | %s | %s |", s.tool, strategy, s.runs,
        s.failed > 0 and string.format(" (%d failed)", s.failed) or "", s.tied, s.runs,
        worst and string.format("%s (%s)", pct(median(s.regrets)), pct(worst)) or "", num(median(s.walls), "%.1f"),
        num(median(s.gpus), "%.2f")))
    end
    say("")
  end
end
say("Wall s: each run's own (Kernel Tuner: tune_kernel's call, its NVRTC compiles in the run, nothing cached " ..
  "between runs; gpuexp: gpuexp.tune's call, cache `cold` from an empty cubin cache, `warm` from one that seed 1's " ..
  "racing filled). GPU s: the kernels' timed runs (Kernel Tuner: its iteration times of each configuration it ran; " ..
  "gpuexp: result.cost_s, the sum of the timed samples). Regret (referee): the winner's time over brute force's " ..
  "best, both re-measured by the referee in one process, - 1; in the tie set: brute force's tie set on the record.")
local file = io.open(RECORDS .. "/kt_table.md", "w")
if file then file:write(table.concat(lines, "\n"), "\n"); file:close() end
