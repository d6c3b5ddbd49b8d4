-- The error-rate table of every judgment, recomputed from the stored records of the corpus
-- (bench/corpus/README.md, docs/explanation/error-rates.md). No GPU: every judgment is replayed
-- through judges.lua on what collect.sh recorded.
--
--   gpuexp --quiet --no-plan --inline bench/corpus/recompute.lua RECORDS [--write DOC | --check DOC]
--          [--allow-synthetic] [--resamples N] [--tune-seeds N]
--
-- RECORDS: a folder collect.sh wrote (bench/corpus/records/h100). The table goes to stdout;
-- --write puts it in DOC between its markers, --check exits 1 when DOC's table is not the one
-- recomputed (the CI test). A table is never written from synthetic records unless
-- --allow-synthetic says so (the tests' dry runs).
local here = gpuexp.script_dir
local J = dofile(here .. "/judges.lua")
local grid = dofile(here .. "/grid.lua")
local generate = dofile(here .. "/generate.lua")
local json = require("gpuexp.store.json")
local meta = require("gpuexp.store.meta")

-- The issue's targets (issue 33).
local TARGET = {explainer_right = 90, explainer_wrong = 2, diagnose_right = 90, false_calls = 1, detection = 90,
  spearman = 0.8, coverage = 75}
local EXPLAINED_FROM_PCT = 5 -- the explainer's cases: (kernel, cause) pairs slower by at least this
local BEGIN, END = "<!-- error-rate table: begin -->", "<!-- error-rate table: end -->"

local options = {resamples = 20, tune_seeds = 5}
local records_dir, write_doc, check_doc
do
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "--write" then write_doc = arg[i + 1]; i = i + 1
    elseif a == "--check" then check_doc = arg[i + 1]; i = i + 1
    elseif a == "--allow-synthetic" then options.allow_synthetic = true
    elseif a == "--resamples" then options.resamples = math.tointeger(tonumber(arg[i + 1] or "")); i = i + 1
    elseif a == "--tune-seeds" then options.tune_seeds = math.tointeger(tonumber(arg[i + 1] or "")); i = i + 1
    elseif not records_dir and a:sub(1, 2) ~= "--" then records_dir = a
    else io.stderr:write("recompute.lua: unknown argument " .. a .. "\n"); os.exit(2) end
    i = i + 1
  end
  if not records_dir or not options.resamples or not options.tune_seeds then
    io.stderr:write("usage: recompute.lua RECORDS [--write DOC | --check DOC] [--allow-synthetic] [--resamples N] " ..
      "[--tune-seeds N]\n")
    os.exit(2)
  end
end

-- Everything below is main(): a problem of the records raises {records = message} (exit 2), any
-- other error is a bug in the recompute or in a judge it calls (exit 70, with its traceback).
local work_dir -- the temporary folder of the replays' histories and tunes, removed however main ends
local function main()
  ---------------------------------------------------------------------------------------------------
  -- reading the records

  local function quoted(path) return "'" .. path:gsub("'", "'\\''") .. "'" end

  local function exists(path)
    local file = io.open(path, "rb")
    if file then file:close() end
    return file ~= nil
  end

  -- A record file's text (NAME.gz through gzip, else NAME), or nil when neither is there.
  local function read_text(name)
    local path = records_dir .. "/" .. name
    if exists(path .. ".gz") then
      local pipe = assert(io.popen("gzip -dc " .. quoted(path .. ".gz"), "r"))
      local text = pipe:read("a")
      local ok, _, code = pipe:close()
      if not ok then error({records = string.format("%s.gz: gzip -dc failed (exit %s): a damaged record", path, tostring(code))}) end
      return text
    end
    return meta.read_all(path)
  end

  -- The records (one JSON object a line) of a file, or nil when it is not there.
  local function read_records(name)
    local text = read_text(name)
    if not text then return nil end
    local list, line_number = {}, 0
    for line in text:gmatch("[^\n]+") do
      line_number = line_number + 1
      local ok, value = pcall(json.decode, line)
      if not ok or type(value) ~= "table" then
        error({records = string.format("%s/%s:%d: not a JSON record", records_dir, name, line_number)})
      end
      list[#list + 1] = value
    end
    return list
  end

  -- A night's records as {header, points = {id -> record}, order = {ids}, finish}.
  local function night_of(list)
    local night = {points = {}, order = {}}
    for _, r in ipairs(list) do
      if r.record == "header" then night.header = r
      elseif r.record == "point" then night.points[r.id] = r; night.order[#night.order + 1] = r.id
      elseif r.record == "end" then night.finish = r end
    end
    return night
  end

  local corpus_nights, grid_nights = {}, {}
  for n = 1, 99 do
    local list = read_records(string.format("corpus-night-%d.jsonl", n))
    if not list then break end
    corpus_nights[n] = night_of(list)
  end
  for n = 1, 99 do
    local list = read_records(string.format("grid-night-%02d.jsonl", n))
    if not list then break end
    grid_nights[n] = night_of(list)
  end
  local ab_records = read_records("ab.jsonl") or {}
  local tune_brute, tune_truth, tune_live = read_records("tune-brute.jsonl"), read_records("tune-truth.jsonl"),
    read_records("tune-live.jsonl")
  local ncu_text = read_text("ncu.txt")
  if #corpus_nights == 0 then error({records = "no corpus-night-1.jsonl(.gz) in " .. records_dir}) end
  local first = corpus_nights[1].header
  local synthetic = first.synthetic == true
  if synthetic and (write_doc or check_doc) and not options.allow_synthetic then
    error({records = "the records in " .. records_dir .. " are synthetic (collect.sh dry): no table is published from them"})
  end

  ---------------------------------------------------------------------------------------------------
  -- small statistics

  local function median(values)
    local sorted = {}
    for _, v in ipairs(values) do if type(v) == "number" then sorted[#sorted + 1] = v end end
    table.sort(sorted)
    local n = #sorted
    if n == 0 then return nil end
    return n % 2 == 1 and sorted[(n + 1) // 2] or (sorted[n // 2] + sorted[n // 2 + 1]) / 2
  end

  local function ranks(values)
    local order = {}
    for i = 1, #values do order[i] = i end
    table.sort(order, function(a, b) return values[a] < values[b] end)
    local r = {}
    local i = 1
    while i <= #order do
      local j = i
      while j < #order and values[order[j + 1]] == values[order[i]] do j = j + 1 end
      for k = i, j do r[order[k]] = (i + j) / 2 end
      i = j + 1
    end
    return r
  end

  -- Spearman's rank correlation of two lists (nil under 3 pairs)
  local function spearman(x, y)
    if #x < 3 then return nil end
    local rx, ry = ranks(x), ranks(y)
    local mx, my = 0, 0
    for i = 1, #x do mx, my = mx + rx[i], my + ry[i] end
    mx, my = mx / #x, my / #x
    local sxy, sxx, syy = 0, 0, 0
    for i = 1, #x do
      sxy = sxy + (rx[i] - mx) * (ry[i] - my)
      sxx = sxx + (rx[i] - mx) ^ 2
      syy = syy + (ry[i] - my) ^ 2
    end
    if sxx == 0 or syy == 0 then return nil end
    return sxy / math.sqrt(sxx * syy)
  end

  -- The upper end of the one-sided 95% interval of a rate of k in n (Clopper-Pearson, by bisection
  -- on the binomial tail): what "k of n" rules out.
  local function upper95(k, n)
    if n == 0 then return 1 end
    if k >= n then return 1 end
    local function tail(p) -- P(X <= k) for X ~ Binomial(n, p)
      local term, sum = (1 - p) ^ n, 0
      for i = 0, k do
        sum = sum + term
        term = term * (n - i) / (i + 1) * p / (1 - p)
      end
      return sum
    end
    local low, high = k / n, 1
    for _ = 1, 60 do
      local mid = (low + high) / 2
      if tail(mid) > 0.05 then low = mid else high = mid end
    end
    return high
  end

  local function pct(k, n) return n > 0 and 100 * k / n or nil end
  local function rate_text(k, n)
    if n == 0 then return "no cases" end
    return string.format("%d/%d = %.1f%%", k, n, 100 * k / n)
  end
  local function upper_text(k, n) return n > 0 and string.format(" (95%% upper %.1f%%)", 100 * upper95(k, n)) or "" end

  local function temporary_directory()
    local dir = os.tmpname()
    os.remove(dir)
    gpuexp.mkdir(dir)
    return dir
  end
  local function remove_tree(dir) os.execute("rm -rf " .. quoted(dir)) end
  local work = temporary_directory()
  work_dir = work

  -- the most frequent texts of a list, as "text (n)"
  local function most_frequent(list, limit)
    local counts, keys = {}, {}
    for _, text in ipairs(list) do
      if not counts[text] then keys[#keys + 1] = text end
      counts[text] = (counts[text] or 0) + 1
    end
    table.sort(keys, function(a, b) return counts[a] > counts[b] or (counts[a] == counts[b] and a < b) end)
    local parts = {}
    for i = 1, math.min(limit or 3, #keys) do parts[i] = string.format("%s (%d)", keys[i], counts[keys[i]]) end
    return table.concat(parts, "; ")
  end

  -- a finding cut to its counter's words (the numbers left out), for the lists of misses
  local function gist(text)
    if not text then return "(none)" end
    local words = {}
    for word in text:gsub("%s*%b()", ""):gsub(":.*$", ""):gmatch("%S+") do
      if not word:match("^[%+%-]?[%d%.]+") and word ~= "->" then words[#words + 1] = word end
    end
    return #words > 0 and table.concat(words, " ") or text
  end

  ---------------------------------------------------------------------------------------------------
  -- the corpus: its pairs, their realized sizes, the nightly's replays and the explanations

  local corpus_points = corpus_nights[1].points
  local point_ids = {}
  for id in pairs(corpus_points) do point_ids[#point_ids + 1] = id end
  table.sort(point_ids)

  local pairs_list = {}
  for _, id in ipairs(point_ids) do
    local p = corpus_points[id]
    if p.cause and p.good then pairs_list[#pairs_list + 1] = {bad = id, good = p.good, cause = p.cause, why = p.why,
      family = p.family, size = p.size} end
  end

  local function time_of(night, id)
    local r = night.points[id]
    return r and r.timing and r.timing.median_ms
  end

  -- the realized slowdown of each pair: the median over nights of bad / good measured the same night
  for _, pair in ipairs(pairs_list) do
    local ratios = {}
    for _, night in ipairs(corpus_nights) do
      local b, g = time_of(night, pair.bad), time_of(night, pair.good)
      if b and g and g > 0 then ratios[#ratios + 1] = (b / g - 1) * 100 end
    end
    pair.realized_pct = median(ratios)
  end

  local function rows_of(night, ids, key_of)
    local rows = {}
    for _, id in ipairs(ids) do
      local r = night.points[id]
      local row = r and J.row(r)
      if row then rows[key_of and key_of(id) or id] = row end
    end
    return rows
  end

  -- A/A: every point's own nights, judged and explained as the nightly would
  local corpus_aa = J.nightly(work .. "/corpus-aa.sqlite", (function()
    local nights = {}
    for n, night in ipairs(corpus_nights) do nights[n] = rows_of(night, point_ids) end
    return nights
  end)(), point_ids, {experiment = "corpus-aa", explain = function(n) return n >= 2 end})

  -- a change: the good kernel's nights, then a night with the bad one under the same point
  local change_keys = {}
  for i, pair in ipairs(pairs_list) do change_keys[i] = pair.bad end
  local last = #corpus_nights
  local corpus_change = J.nightly(work .. "/corpus-change.sqlite", (function()
    local nights = {}
    for n = 1, last do
      local rows = {}
      for _, pair in ipairs(pairs_list) do
        local r = corpus_nights[n].points[n == last and pair.bad or pair.good]
        rows[pair.bad] = r and J.row(r) or nil
      end
      nights[n] = rows
    end
    return nights
  end)(), change_keys, {experiment = "corpus-change", explain = function(n) return n == last end})[last]

  local explainer = {cases = 0, right = 0, wrong = 0, none = 0, by_cause = {}, misses = {}, wrong_list = {},
    small = {}, detected = 0}
  for _, pair in ipairs(pairs_list) do
    local e = corpus_change[pair.bad]
    pair.entry = e
    pair.first = e and e.explanation and e.explanation[1]
    pair.verdict = e and e.verdict
    local c = explainer.by_cause[pair.cause] or {cases = 0, right = 0, wrong = 0, none = 0, named = {}}
    explainer.by_cause[pair.cause] = c
    if pair.realized_pct and pair.realized_pct >= EXPLAINED_FROM_PCT then
      local how = J.explained_as(pair.first, pair.cause)
      pair.explained = how
      explainer.cases, c.cases = explainer.cases + 1, c.cases + 1
      explainer[how], c[how] = explainer[how] + 1, c[how] + 1
      if pair.verdict == "slower" then explainer.detected = explainer.detected + 1 end
      if how ~= "right" then
        c.named[#c.named + 1] = gist(pair.first)
        explainer.misses[#explainer.misses + 1] = pair
        if how == "wrong" then explainer.wrong_list[#explainer.wrong_list + 1] = pair end
      end
    else
      explainer.small[#explainer.small + 1] = pair
    end
  end

  -- explanations on no-change nights (nights 2..): a finding that names a counter
  local no_change = {n = 0, named = 0, accounted = 0, names = {}, false_alarms = 0, judged = 0, by_size = {}}
  for n = 2, #corpus_nights do
    for _, id in ipairs(point_ids) do
      local e = corpus_aa[n][id]
      if e and e.verdict ~= "new" and e.verdict ~= "missing" and e.verdict ~= "error" then
        no_change.judged = no_change.judged + 1
        if e.verdict ~= "same" then no_change.false_alarms = no_change.false_alarms + 1 end
        if e.explanation then
          no_change.n = no_change.n + 1
          local first = e.explanation[1]
          if not J.matches(first, J.NO_CAUSE) then
            no_change.named = no_change.named + 1
            no_change.names[#no_change.names + 1] = gist(first)
          end
        end
      end
    end
  end

  ---------------------------------------------------------------------------------------------------
  -- diagnose

  local ceilings = first.ceilings
  local diagnosis = {cases = 0, right = 0, by_cause = {}, good = 0, good_defect = 0, good_verdicts = {}, small = 0,
    with_count = 0, small_list = {}, priced = {}}
  for n, night in ipairs(corpus_nights) do
    for _, id in ipairs(point_ids) do
      local r = night.points[id]
      local findings = r and J.diagnose(r, ceilings)
      if findings and findings.verdict then
        local count, floor = J.evidence_count(findings, r.counters)
        if count then
          diagnosis.with_count = diagnosis.with_count + 1
          if count < floor then
            diagnosis.small = diagnosis.small + 1
            diagnosis.small_list[#diagnosis.small_list + 1] = string.format("%s: %s on %.0f", id, findings.verdict, count)
          end
        end
        if r.cause and J.DIAGNOSED[r.cause] then
          local c = diagnosis.by_cause[r.cause] or {cases = 0, right = 0, verdicts = {}}
          diagnosis.by_cause[r.cause] = c
          diagnosis.cases, c.cases = diagnosis.cases + 1, c.cases + 1
          if J.matches(findings.verdict, J.DIAGNOSED[r.cause]) then
            diagnosis.right, c.right = diagnosis.right + 1, c.right + 1
          else
            c.verdicts[#c.verdicts + 1] = findings.verdict
          end
        elseif not r.cause then
          diagnosis.good = diagnosis.good + 1
          if not J.matches(findings.verdict, J.NEUTRAL) then
            diagnosis.good_defect = diagnosis.good_defect + 1
            diagnosis.good_verdicts[#diagnosis.good_verdicts + 1] = findings.verdict .. " on " .. id
          end
        end
        if r.cause then
          local price = J.price(findings)
          if price then
            diagnosis.priced[r.id] = diagnosis.priced[r.id] or {}
            table.insert(diagnosis.priced[r.id], price)
          end
        end
      end
    end
  end

  -- the price tag against the realized gain (the time's ratio bad / good), and ncu's estimates
  local price = {x = {}, y = {}, covered = 0, intervals = 0}
  for _, pair in ipairs(pairs_list) do
    local list = diagnosis.priced[pair.bad]
    if list and pair.realized_pct then
      local realized = 1 + pair.realized_pct / 100
      local estimates = {}
      for _, p in ipairs(list) do
        estimates[#estimates + 1] = p.speedup
        if p.low and p.high then
          price.intervals = price.intervals + 1
          if p.low <= realized and realized <= p.high then price.covered = price.covered + 1 end
        end
      end
      price.x[#price.x + 1] = median(estimates)
      price.y[#price.y + 1] = realized
    end
  end
  price.rho = spearman(price.x, price.y)

  local ncu = {x = {}, y = {}, kernels = 0}
  if ncu_text then
    local estimates, current = {}, nil
    for line in ncu_text:gmatch("[^\n]+") do
      local kernel = line:match("^%s%s([%w_]+) %(%d+, %d+, %d+%)x%(%d+, %d+, %d+%)")
      if kernel then current = kernel; estimates[current] = estimates[current] or {} end
      local value = line:match("Est%.[%w%s]-Speedup:%s*([%d%.]+)%%")
      if current and value then table.insert(estimates[current], tonumber(value)) end
    end
    for _, pair in ipairs(pairs_list) do
      local list = estimates[corpus_points[pair.bad].kernel]
      if list and pair.realized_pct then
        ncu.kernels = ncu.kernels + 1
        local best = 0
        for _, v in ipairs(list) do best = math.max(best, v) end
        ncu.x[#ncu.x + 1] = 1 / math.max(0.01, 1 - best / 100)
        ncu.y[#ncu.y + 1] = 1 + pair.realized_pct / 100
      end
    end
    ncu.rho = spearman(ncu.x, ncu.y)
  end

  ---------------------------------------------------------------------------------------------------
  -- the grid: realized effects, compare, the nightly, the creep

  local cells = {} -- kind.duration.effect -> {kind, duration_ms, effect_pct, ...}
  local cell_order = {}
  for _, kind in ipairs(grid.KINDS) do
    for _, duration in ipairs(grid.DURATIONS_MS) do
      for _, effect in ipairs(grid.EFFECTS_PCT) do
        local id = grid.point_id(kind, duration, effect)
        cells[id] = {id = id, kind = kind, duration_ms = duration, effect_pct = effect,
          base = grid.point_id(kind, duration, 0), compare = {n = 0, calls = 0, thresholds = {}},
          nightly = {n = 0, calls = 0, thresholds = {}}, ab = {live = 0, calls = 0, errors = 0, gpu_s = {}, wall_s = {}, mde = {},
            replayed = 0, same_as_live = 0, resampled = 0, resampled_calls = 0, resampled_gpu_s = {}}, realized = {}}
        cell_order[#cell_order + 1] = id
      end
    end
  end
  local grid_point_ids = {}
  for _, id in ipairs(cell_order) do grid_point_ids[#grid_point_ids + 1] = id end

  local have_grid = #grid_nights > 0
  local creep = {}
  if have_grid then
    for _, night in ipairs(grid_nights) do
      for _, id in ipairs(cell_order) do
        local c = cells[id]
        local b, g = time_of(night, id), time_of(night, c.base)
        if b and g and g > 0 then c.realized[#c.realized + 1] = (b / g - 1) * 100 end
      end
    end
    -- compare: every ordered pair of nights (the base variant then, the cell's variant now)
    for i, base_night in ipairs(grid_nights) do
      for j, new_night in ipairs(grid_nights) do
        if i ~= j then
          local base_rows, new_rows = {}, {}
          for _, id in ipairs(cell_order) do
            local b, n = base_night.points[cells[id].base], new_night.points[id]
            base_rows[id], new_rows[id] = b and J.row(b), n and J.row(n)
          end
          local judged = J.compare(base_rows, new_rows, cell_order)
          for _, id in ipairs(cell_order) do
            local e, c = judged[id], cells[id].compare
            if e and (e.verdict == "same" or e.verdict == "slower" or e.verdict == "faster") then
              c.n = c.n + 1
              if e.verdict ~= "same" then c.calls = c.calls + 1 end
              if e.verdict == "slower" then c.slower = (c.slower or 0) + 1 end
              c.thresholds[#c.thresholds + 1] = e.threshold_pct
            end
          end
        end
      end
    end
    -- the nightly, A/A: each point's own nights (the creep among them, explained every night)
    local all_ids = {table.unpack(grid_point_ids)}
    all_ids[#all_ids + 1] = "creep"
    local aa = J.nightly(work .. "/grid-aa.sqlite", (function()
      local nights = {}
      for n, night in ipairs(grid_nights) do nights[n] = rows_of(night, all_ids) end
      return nights
    end)(), all_ids, {experiment = "grid-aa", explain = function() return true end})
    for n = 2, #grid_nights do
      for _, id in ipairs(grid_point_ids) do
        local e = aa[n][id]
        local c = cells[id]
        if e and (e.verdict == "same" or e.verdict == "slower" or e.verdict == "faster") then
          c.aa = c.aa or {n = 0, calls = 0}
          c.aa.n = c.aa.n + 1
          if e.verdict ~= "same" then c.aa.calls = c.aa.calls + 1 end
          if e.explanation then
            no_change.grid_n = (no_change.grid_n or 0) + 1
            if not J.matches(e.explanation[1], J.NO_CAUSE) then
              no_change.grid_named = (no_change.grid_named or 0) + 1
              no_change.names[#no_change.names + 1] = gist(e.explanation[1])
            end
          end
        end
      end
      local e = aa[n].creep
      if e then
        creep[n] = {verdict = e.verdict, change_pct = e.change_pct, first = e.explanation and e.explanation[1],
          effect_pct = grid_nights[n].points.creep and grid_nights[n].points.creep.effect_pct, basis = e.basis}
      end
    end
    -- the nightly, a change on night k: the base variant's nights, then the cell's variant
    for k = math.max(2, grid.CREEP_FROM - 1), #grid_nights do
      local judged = J.nightly(work .. "/grid-change.sqlite", (function()
        local nights = {}
        for n = 1, k do
          local rows = {}
          for _, id in ipairs(cell_order) do
            local r = grid_nights[n].points[n == k and id or cells[id].base]
            rows[id] = r and J.row(r) or nil
          end
          nights[n] = rows
        end
        return nights
      end)(), cell_order, {experiment = "grid-change", explain = function(n) return n == k end})[k]
      for _, id in ipairs(cell_order) do
        local e, c = judged[id], cells[id]
        if e and (e.verdict == "same" or e.verdict == "slower" or e.verdict == "faster") then
          c.nightly.n = c.nightly.n + 1
          if e.verdict ~= "same" then c.nightly.calls = c.nightly.calls + 1 end
          c.nightly.thresholds[#c.nightly.thresholds + 1] = e.threshold_pct
          if c.effect_pct >= 2 and e.explanation then
            c.explained = c.explained or {n = 0, right = 0}
            c.explained.n = c.explained.n + 1
            if J.explained_as(e.explanation[1], "extra_instructions") == "right" then c.explained.right = c.explained.right + 1 end
          end
        end
      end
    end
  end

  ---------------------------------------------------------------------------------------------------
  -- ab: the live decisions, each replayed from its blocks, and decisions resampled from them

  local ab_header
  local pooled = {} -- cell -> blocks of its live decisions
  local function blocks_of(record)
    local a, b = {}, {}
    for _, entry in ipairs(record.log or {}) do
      if entry.reps == record.reps_per_block then
        if entry.side == "A" then a[#a + 1] = entry else b[#b + 1] = entry end
      end
    end
    local blocks = {}
    local overhead = 0
    if record.wall_s and record.gpu_s and record.summary and record.summary.blocks and record.summary.blocks > 0 then
      overhead = math.max(0, ((record.ab_wall_s or record.wall_s) - record.gpu_s) / record.summary.blocks)
    end
    for i = 1, math.min(#a, #b) do
      blocks[i] = {a = a[i].quantiles, b = b[i].quantiles, seconds = (a[i].sum_ms + b[i].sum_ms) / 1000 + overhead,
        gpu_s = (a[i].sum_ms + b[i].sum_ms) / 1000}
    end
    return blocks
  end

  for _, r in ipairs(ab_records) do
    if r.record == "header" then ab_header = r end
    if r.record == "decision" then
      local c = cells[r.id]
      if c then
        local a = c.ab
        if r.error then
          a.errors = a.errors + 1
          a.error_text = a.error_text or r.error
        else
          a.live = a.live + 1
          if r.verdict == "slower" or r.verdict == "faster" then a.calls = a.calls + 1 end
          if r.verdict == "undecided" then a.undecided = (a.undecided or 0) + 1 end
          a.gpu_s[#a.gpu_s + 1] = r.gpu_s
          a.wall_s[#a.wall_s + 1] = r.wall_s
          a.mde[#a.mde + 1] = r.summary and r.summary.mde_pct
          local blocks = blocks_of(r)
          pooled[r.id] = pooled[r.id] or {}
          for _, block in ipairs(blocks) do table.insert(pooled[r.id], block) end
          local ok, replay = pcall(J.ab_replay, blocks, {seed = r.seed, budget_s = ab_header and ab_header.budget_s})
          if ok then
            a.replayed = a.replayed + 1
            if replay.verdict == r.verdict and replay.blocks == (r.summary and r.summary.blocks) then a.same_as_live = a.same_as_live + 1 end
          end
        end
      end
    end
  end
  -- resampled decisions: a cell's recorded blocks drawn with replacement, as many decisions as asked
  for _, id in ipairs(cell_order) do
    local blocks = pooled[id]
    local a = cells[id].ab
    if blocks and #blocks >= 4 then
      local rng = generate.generator(#id * 131 + a.live)
      for d = 1, options.resamples do
        local drawn = {}
        for i = 1, 2000 do drawn[i] = blocks[rng.int(1, #blocks)] end
        local ok, replay = pcall(J.ab_replay, drawn, {seed = d, budget_s = ab_header and ab_header.budget_s})
        if ok then
          a.resampled = a.resampled + 1
          if replay.verdict == "slower" or replay.verdict == "faster" then a.resampled_calls = a.resampled_calls + 1 end
          local gpu = 0
          for i = 1, replay.blocks do gpu = gpu + drawn[i].gpu_s end
          a.resampled_gpu_s[#a.resampled_gpu_s + 1] = gpu
          a.resampled_mde = a.resampled_mde or {}
          a.resampled_mde[#a.resampled_mde + 1] = replay.summary.mde_pct
        end
      end
    end
  end

  ---------------------------------------------------------------------------------------------------
  -- tune: the returned tie sets against the space measured whole

  local tune = {}
  if tune_brute and tune_truth then
    local function key(p) return string.format("%s/%s/%s", tostring(p.block), tostring(p.items), tostring(p.shape)) end
    local measured, truth, axes = {}, {}, nil
    for _, r in ipairs(tune_brute) do
      if r.record == "header" then axes = r.axes end
      if r.record == "config" and r.timing then measured[key(r.point)] = r.timing end
    end
    for _, r in ipairs(tune_truth) do
      if r.record == "config" and r.timing then truth[key(r.point)] = r.timing.median_ms end
    end
    local best_true, best_key = math.huge, nil
    for k, v in pairs(truth) do if v < best_true then best_true, best_key = v, k end end
    tune.best_true, tune.configs = best_true, 0
    for _ in pairs(truth) do tune.configs = tune.configs + 1 end
    local function judge(result_table)
      local best = result_table.best and truth[key(result_table.best)]
      local worst, has_best = 0, false
      for _, t in ipairs(result_table.ties or {}) do
        local v = truth[key(t.point)]
        if v then worst = math.max(worst, (v / best_true - 1) * 100) end
        if key(t.point) == best_key then has_best = true end
      end
      return {regret_best = best and (best / best_true - 1) * 100, regret_ties = worst, has_best = has_best,
        ties = #(result_table.ties or {}), cost_s = result_table.cost_s}
    end
    tune.runs = {}
    if axes then
      local lua_axes = {}
      for i, axis in ipairs(axes) do lua_axes[i] = {axis[1], axis[2]} end
      for _, strategy in ipairs({"brute", "random", "model"}) do
        for seed = 1, strategy == "brute" and 1 or options.tune_seeds do
          local out = work .. "/tune-" .. strategy .. "-" .. seed
          gpuexp.mkdir(out)
          local ok, r = pcall(J.tune_replay, lua_axes, function(p)
            local t = measured[key(p)]
            if not t then error("no recorded measurement of " .. key(p)) end
            return {median_ms = t.median_ms, samples_ms = t.samples_ms}
          end, {strategy = strategy, seed = seed, max_evals = strategy ~= "brute" and 12 or nil}, out .. "/tune.csv")
          if ok and type(r) == "table" then
            local judged = judge(r)
            judged.strategy, judged.seed, judged.replayed = strategy, seed, true
            tune.runs[#tune.runs + 1] = judged
          else
            tune.runs[#tune.runs + 1] = {strategy = strategy, seed = seed, error = tostring(type(r) == "table" and r.message or r)}
          end
        end
      end
    end
    for _, r in ipairs(tune_live or {}) do
      if r.record == "tune" then
        local judged = r.error and {error = r.error} or judge(r)
        judged.strategy, judged.seed, judged.live = r.strategy, r.seed, true
        tune.runs[#tune.runs + 1] = judged
      end
    end
  end

  remove_tree(work)

  ---------------------------------------------------------------------------------------------------
  -- the table

  local lines = {}
  local function add(text) lines[#lines + 1] = text end
  local function met(ok) return ok == nil and "-" or ok and "yes" or "**no**" end

  local gpu = first.gpu or {}
  -- the GPUs the nights ran on (a part collected on another machine of the model is another GPU)
  local uuids, gpu_count = {}, 0
  for _, nights in ipairs({corpus_nights, grid_nights}) do
    for _, night in ipairs(nights) do
      local uuid = night.header and night.header.gpu and (night.header.gpu.uuid or night.header.gpu.name) or "?"
      if not uuids[uuid] then uuids[uuid] = true; gpu_count = gpu_count + 1 end
    end
  end
  local corpus_seed = math.tointeger(first.seed) or first.seed
  local development = false
  for _, s in ipairs(generate.DEVELOPMENT_SEEDS) do development = development or s == corpus_seed end
  local developed_on = false
  for _, s in ipairs(generate.JUDGES_DEVELOPED_ON or {}) do developed_on = developed_on or s == corpus_seed end
  local held = corpus_seed == generate.HELD_OUT_SEED and "the held-out seed" or development and "a development seed" or
    "neither the held-out nor a development seed"
  if developed_on then held = held .. ", whose records the judges were since developed on: not held out for this table" end
  add(string.format("Measured on %s%s%s, gpuexp %s; corpus seed %s (%s): %d points, %d (kernel, cause) pairs over %d " ..
    "cause labels, %d nights; the grid %d nights; %d gpuexp ab decisions.%s", gpu.name or "?",
    gpu_count > 1 and string.format(" (%d GPUs of the model: the parts ran on different machines)", gpu_count) or "",
    first.driver_version and (", driver " .. first.driver_version) or "", first.gpuexp_version or "?", tostring(corpus_seed),
    held, #point_ids, #pairs_list, (function() local n, seen = 0, {} for _, p in ipairs(pairs_list) do
      if not seen[p.cause] then seen[p.cause] = true; n = n + 1 end end return n end)(), #corpus_nights, #grid_nights,
    (function() local n = 0 for _, r in ipairs(ab_records) do if r.record == "decision" then n = n + 1 end end return n end)(),
    synthetic and " SYNTHETIC RECORDS (collect.sh dry): these numbers are the pipeline's test, not a measurement." or ""))
  local errors, first_error = 0, nil
  for _, nights in ipairs({corpus_nights, grid_nights}) do
    for _, night in ipairs(nights) do
      for _, id in ipairs(night.order) do
        local r = night.points[id]
        if r.error or not (r.timing and r.timing.median_ms) then
          errors = errors + 1
          first_error = first_error or string.format("%s: %s", id, tostring(r.error or "no time"))
        end
      end
    end
  end
  if errors > 0 then
    add("")
    add(string.format("%d point-nights have no measurement (the first: %s); they are left out below.", errors,
      first_error:gsub("\n.*", "")))
  end
  add("")
  add("| judge | measure | result | target | met |")
  add("| --- | --- | --- | --- | --- |")

  -- explainer
  local right_pct, wrong_pct = pct(explainer.right, explainer.cases), pct(explainer.wrong, explainer.cases)
  -- the causes a judge missed, each with what it said most often instead (by_cause[cause][instead])
  local function misses(by_cause, instead)
    local parts, names = {}, {}
    for cause, c in pairs(by_cause) do if c.cases > c.right then names[#names + 1] = cause end end
    table.sort(names)
    for _, cause in ipairs(names) do
      local c = by_cause[cause]
      parts[#parts + 1] = string.format("%s %d/%d (%s)", cause, c.right, c.cases, most_frequent(c[instead], 1))
    end
    return table.concat(parts, ", ")
  end
  add(string.format("| explainer | first cause right, pairs slower by >= %d%% | %s | >= %d%% | %s%s |", EXPLAINED_FROM_PCT,
    rate_text(explainer.right, explainer.cases), TARGET.explainer_right, met(right_pct and right_pct >= TARGET.explainer_right),
    (right_pct and right_pct < TARGET.explainer_right) and (": missed on " .. misses(explainer.by_cause, "named")) or ""))
  add(string.format("| explainer | a wrong cause named first | %s | <= %d%% | %s%s |", rate_text(explainer.wrong, explainer.cases),
    TARGET.explainer_wrong, met(wrong_pct and wrong_pct <= TARGET.explainer_wrong),
    (wrong_pct and wrong_pct > TARGET.explainer_wrong) and (": " .. most_frequent((function()
      local l = {} for _, p in ipairs(explainer.wrong_list) do l[#l + 1] = p.cause .. " as " .. gist(p.first) end return l end)(), 4))
      or ""))
  local nc_n = no_change.n + (no_change.grid_n or 0)
  local nc_named = no_change.named + (no_change.grid_named or 0)
  add(string.format("| explainer | a counter named on a no-change night (corpus %d, grid %d nights x points) | %s%s | 0 | %s%s |",
    no_change.n, no_change.grid_n or 0, rate_text(nc_named, nc_n), upper_text(nc_named, nc_n), met(nc_n > 0 and nc_named == 0),
    nc_named > 0 and (": " .. most_frequent(no_change.names, 3)) or ""))
  if have_grid then
    local k, n = 0, 0
    for _, id in ipairs(cell_order) do
      local c = cells[id]
      if c.explained then k, n = k + c.explained.right, n + c.explained.n end
    end
    add(string.format("| explainer | the grid's slowdowns of 2 and 5%% (more of the same work) named as instructions | %s | - | - |",
      rate_text(k, n)))
  end
  -- diagnose
  local d_pct = pct(diagnosis.right, diagnosis.cases)
  add(string.format("| diagnose | top-1 verdict right (bad kernels x nights) | %s | >= %d%% | %s%s |",
    rate_text(diagnosis.right, diagnosis.cases), TARGET.diagnose_right, met(d_pct and d_pct >= TARGET.diagnose_right),
    (d_pct and d_pct < TARGET.diagnose_right) and (": missed on " .. misses(diagnosis.by_cause, "verdicts")) or ""))
  add(string.format("| diagnose | verdicts from counts under %.1f%% of the instructions (or 100) | %s | 0 | %s%s |",
    J.COUNT_FLOOR_SHARE * 100, rate_text(diagnosis.small, diagnosis.with_count), met(diagnosis.with_count > 0 and diagnosis.small == 0),
    diagnosis.small > 0 and (": " .. most_frequent((function() local l = {} for _, t in ipairs(diagnosis.small_list) do
      l[#l + 1] = t:gsub("^[^:]+: ", ""):gsub(" on %d+$", "") end return l end)(), 3)) or ""))
  add(string.format("| diagnose | a defect named on a good kernel (kernels x nights) | %s | - | %s |",
    rate_text(diagnosis.good_defect, diagnosis.good), diagnosis.good_defect > 0 and ("- : " ..
      most_frequent(diagnosis.good_verdicts, 4)) or "-"))
  -- price tag
  add(string.format("| price tag | Spearman, estimated vs realized gain | %s | >= %.1f | %s |",
    price.rho and string.format("%.2f over %d pairs", price.rho, #price.x) or "no estimate in diagnose's findings",
    TARGET.spearman, price.rho and met(price.rho >= TARGET.spearman) or "**no**: diagnose gives no estimate"))
  add(string.format("| price tag | 80%% interval covers the realized gain | %s | >= %d%% | %s |",
    price.intervals > 0 and rate_text(price.covered, price.intervals) or "no interval given", TARGET.coverage,
    price.intervals > 0 and met(pct(price.covered, price.intervals) >= TARGET.coverage) or "**no**: no interval"))
  add(string.format("| ncu | Spearman, ncu's largest estimated speedup vs realized gain | %s | (beside) | - |",
    ncu.rho and string.format("%.2f over %d pairs", ncu.rho, #ncu.x) or (ncu_text and "too few pairs" or "not collected (part 5)")))

  -- detectors: per duration, A/A false calls and detection where the effect is >= 2x the stated one
  local function per_duration(select)
    local out = {}
    for _, duration in ipairs(grid.DURATIONS_MS) do
      local k, n = 0, 0
      for _, id in ipairs(cell_order) do
        local c = cells[id]
        if c.duration_ms == duration then
          local dk, dn = select(c)
          k, n = k + (dk or 0), n + (dn or 0)
        end
      end
      out[#out + 1] = {duration = duration, k = k, n = n}
    end
    return out
  end
  local function duration_name(ms) return ms < 1 and string.format("%gus", ms * 1000) or string.format("%gms", ms) end
  local function duration_text(list)
    local parts = {}
    for _, d in ipairs(list) do
      parts[#parts + 1] = string.format("%s %s", duration_name(d.duration), d.n > 0 and string.format("%d/%d", d.k, d.n) or "-")
    end
    return table.concat(parts, ", ")
  end
  -- the largest 95% upper bound of the durations' rates: what the counts can rule out
  local function worst_upper(list)
    local worst
    for _, d in ipairs(list) do
      if d.n > 0 then worst = math.max(worst or 0, 100 * upper95(d.k, d.n)) end
    end
    return worst and string.format("; 95%% upper bound up to %.1f%%", worst) or ""
  end
  local function all_under(list, limit)
    local any = false
    for _, d in ipairs(list) do
      if d.n > 0 then any = true; if 100 * d.k / d.n > limit then return false end end
    end
    return any and true or nil
  end
  local function all_over(list, limit)
    local any = false
    for _, d in ipairs(list) do
      if d.n > 0 then any = true; if 100 * d.k / d.n < limit then return false end end
    end
    return any and true or nil
  end
  local compare_aa = per_duration(function(c) if c.effect_pct == 0 then return c.compare.calls, c.compare.n end end)
  local nightly_aa = per_duration(function(c) if c.aa then return c.aa.calls, c.aa.n end end)
  local ab_aa = per_duration(function(c) if c.effect_pct == 0 then return c.ab.calls, c.ab.live end end)
  local ab_aa_resampled = per_duration(function(c) if c.effect_pct == 0 then return c.ab.resampled_calls, c.ab.resampled end end)
  local function stated(list) return median(list) or math.huge end
  local compare_detect = per_duration(function(c)
    if c.effect_pct > 0 and c.effect_pct >= 2 * stated(c.compare.thresholds) then return c.compare.calls, c.compare.n end end)
  local nightly_detect = per_duration(function(c)
    if c.effect_pct > 0 and c.effect_pct >= 2 * stated(c.nightly.thresholds) then return c.nightly.calls, c.nightly.n end end)
  local ab_detect = per_duration(function(c)
    if c.effect_pct > 0 and c.effect_pct >= 2 * stated(c.ab.mde) then return c.ab.calls, c.ab.live end end)
  local ab_detect_resampled = per_duration(function(c)
    if c.effect_pct > 0 and c.effect_pct >= 2 * stated(c.ab.resampled_mde or {}) then
      return c.ab.resampled_calls, c.ab.resampled end end)

  local function detector_rows(name, aa, detect, note)
    local ok_aa, ok_detect = all_under(aa, TARGET.false_calls), all_over(detect, TARGET.detection)
    add(string.format("| %s | A/A false calls by duration%s | %s%s | <= %d%% each | %s |", name, note or "", duration_text(aa),
      worst_upper(aa), TARGET.false_calls, met(ok_aa)))
    add(string.format("| %s | detection where the effect is >= 2x the stated detectable one | %s | >= %d%% | %s |", name,
      duration_text(detect), TARGET.detection, met(ok_detect)))
  end
  if have_grid then
    detector_rows("compare", compare_aa, compare_detect, " (every ordered pair of nights)")
    detector_rows("nightly", nightly_aa, nightly_detect, " (its rule, no re-measure)")
  end
  add(string.format("| nightly | A/A false calls on the corpus' %d kernels (nights 2-%d, its rule, no re-measure) | %s%s | <= %d%% | %s |",
    #point_ids, #corpus_nights, rate_text(no_change.false_alarms, no_change.judged),
    upper_text(no_change.false_alarms, no_change.judged), TARGET.false_calls,
    met(no_change.judged > 0 and 100 * no_change.false_alarms / no_change.judged <= TARGET.false_calls)))
  if #ab_records > 0 then
    detector_rows("ab", ab_aa, ab_detect, " (live decisions)")
    detector_rows("ab", ab_aa_resampled, ab_detect_resampled, string.format(" (%d decisions a cell resampled from the " ..
      "live ones' blocks)", options.resamples))
  end
  if tune.runs then
    local regrets, ties, with_best, n = {}, {}, 0, 0
    for _, r in ipairs(tune.runs) do
      if not r.error then
        n = n + 1
        regrets[#regrets + 1] = r.regret_ties
        ties[#ties + 1] = r.ties
        if r.has_best then with_best = with_best + 1 end
      end
    end
    local worst = 0
    for _, v in ipairs(regrets) do worst = math.max(worst, v) end
    add(string.format("| tune | tie set's worst member against the best of the space measured whole (%d tunes) | median " ..
      "%.2f%%, worst %.2f%%; the best in the tie set %s | within the tie rule's 1%% | %s |", n, median(regrets) or 0, worst,
      rate_text(with_best, n), met(n > 0 and worst <= 1.0)))
  end
  add("")

  -- details: the explainer by cause
  add("Explainer by cause (pairs slower by >= " .. EXPLAINED_FROM_PCT .. "%; first finding right / wrong / naming none):")
  add("")
  add("| cause | right | wrong | none | what was named first instead |")
  add("| --- | --- | --- | --- | --- |")
  local causes = {}
  for cause in pairs(explainer.by_cause) do causes[#causes + 1] = cause end
  table.sort(causes)
  for _, cause in ipairs(causes) do
    local c = explainer.by_cause[cause]
    add(string.format("| %s | %d/%d | %d | %d | %s |", cause, c.right, c.cases, c.wrong, c.none, most_frequent(c.named, 2)))
  end
  if #explainer.small > 0 then
    local parts = {}
    for _, p in ipairs(explainer.small) do
      parts[#parts + 1] = string.format("%s %+.1f%%", p.bad, p.realized_pct or 0/0)
    end
    add("")
    add("Pairs slower by less than " .. EXPLAINED_FROM_PCT .. "% on this GPU (not the explainer's cases): " ..
      table.concat(parts, ", ") .. ".")
  end
  add("")
  -- the issue's cases
  add("The cases of issue 33 (first finding; the realized slowdown):")
  add("")
  add("| case | realized | nightly | first finding |")
  add("| --- | --- | --- | --- |")
  for _, pair in ipairs(pairs_list) do
    if pair.why then
      add(string.format("| %s (%s) | %+.1f%% | %s | %s |", pair.why, pair.bad, pair.realized_pct or 0 / 0, tostring(pair.verdict),
        (pair.first or "(none)"):gsub("|", "/")))
    end
  end
  if have_grid then
    local flagged
    for n = grid.CREEP_FROM, #grid_nights do
      if creep[n] and creep[n].verdict == "slower" then flagged = n; break end
    end
    local early = 0
    for n = 2, grid.CREEP_FROM - 1 do if creep[n] and creep[n].verdict == "slower" then early = early + 1 end end
    add(string.format("| a creep of +%.1f%% a night from night %d (creep) | %s | %s | %s |", grid.CREEP_PCT, grid.CREEP_FROM,
      flagged and string.format("%+.1f%% by night %d", creep[flagged].effect_pct or 0, flagged) or "-",
      flagged and string.format("slower on night %d%s", flagged, early > 0 and string.format(" (and %d night(s) before it began)", early)
        or "") or "never flagged", flagged and (creep[flagged].first or "(none)"):gsub("|", "/") or "-"))
  end
  add("")
  -- diagnose by cause
  add("Diagnose by cause (bad kernels x nights):")
  add("")
  add("| cause | right | verdicts instead |")
  add("| --- | --- | --- |")
  causes = {}
  for cause in pairs(diagnosis.by_cause) do causes[#causes + 1] = cause end
  table.sort(causes)
  for _, cause in ipairs(causes) do
    local c = diagnosis.by_cause[cause]
    add(string.format("| %s | %d/%d | %s |", cause, c.right, c.cases, most_frequent(c.verdicts, 2)))
  end
  add("")
  -- the grid
  if have_grid then
    add("The detectors on the grid: calls / decisions for each duration and injected slowdown (realized: the median of " ..
      "the nights' measured ratio; stated: the median threshold compare and the nightly said, the detectable effect ab said; " ..
      "ab live and resampled; GPU s: ab's GPU time a decision, live):")
    add("")
    add("| kind | duration | injected | realized | compare | stated | nightly | stated | ab live | ab resampled | ab stated | GPU s |")
    add("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for _, id in ipairs(cell_order) do
      local c = cells[id]
      local function frac(k, n) return n > 0 and string.format("%d/%d", k, n) or "-" end
      add(string.format("| %s | %s | %g%% | %s | %s | %s | %s | %s | %s | %s | %s | %s |", c.kind, duration_name(c.duration_ms),
        c.effect_pct, median(c.realized) and string.format("%+.2f%%", median(c.realized)) or "-", frac(c.compare.calls, c.compare.n),
        median(c.compare.thresholds) and string.format("%.2f%%", median(c.compare.thresholds)) or "-",
        c.effect_pct == 0 and (c.aa and frac(c.aa.calls, c.aa.n) or "-") or frac(c.nightly.calls, c.nightly.n),
        median(c.nightly.thresholds) and string.format("%.2f%%", median(c.nightly.thresholds)) or "-",
        frac(c.ab.calls, c.ab.live) .. (c.ab.errors > 0 and string.format(", %d crashed", c.ab.errors) or "") ..
          ((c.ab.undecided or 0) > 0 and string.format(", %d undecided", c.ab.undecided) or ""),
        frac(c.ab.resampled_calls, c.ab.resampled),
        median(c.ab.mde) and string.format("%.2f%%", median(c.ab.mde)) or "-",
        median(c.ab.gpu_s) and string.format("%.2f", median(c.ab.gpu_s)) or "-"))
    end
    add("")
    local replayed, same = 0, 0
    for _, id in ipairs(cell_order) do replayed, same = replayed + cells[id].ab.replayed, same + cells[id].ab.same_as_live end
    if replayed > 0 then
      add(string.format("ab's live decisions replayed from their recorded blocks: %d of %d give the live verdict after the " ..
        "same number of blocks (the resampled decisions rest on that replay).", same, replayed))
      add("")
    end
  end
  if tune.runs then
    add(string.format("Tune on a space of %d configurations measured whole twice (the second pass is the truth): regret " ..
      "of the best returned and of the tie set's worst member, against the truth's best.", tune.configs or 0))
    add("")
    add("| strategy | how | regret of the best | worst in the tie set | tie set | the best in it |")
    add("| --- | --- | --- | --- | --- | --- |")
    for _, r in ipairs(tune.runs) do
      if r.error then
        add(string.format("| %s | %s, seed %s | failed: %s | | | |", r.strategy, r.live and "live" or "replayed", tostring(r.seed),
          r.error:gsub("|", "/"):sub(1, 80)))
      else
        add(string.format("| %s | %s, seed %s | %.2f%% | %.2f%% | %d | %s |", r.strategy, r.live and "live" or "replayed",
          tostring(r.seed), r.regret_best or 0, r.regret_ties or 0, r.ties or 0, r.has_best and "yes" or "no"))
      end
    end
  end

  local table_text = table.concat(lines, "\n") .. "\n"
  io.write(table_text)

  ---------------------------------------------------------------------------------------------------
  -- the doc's block

  local function doc_block(path)
    local text = meta.read_all(path)
    if not text then io.stderr:write("recompute.lua: cannot read " .. path .. "\n"); os.exit(2) end
    local b, e = text:find(BEGIN, 1, true), text:find(END, 1, true)
    if not b or not e or e < b then
      io.stderr:write(string.format("recompute.lua: %s has no %s ... %s block\n", path, BEGIN, END))
      os.exit(2)
    end
    return text, b, e
  end
  if write_doc then
    local text, b, e = doc_block(write_doc)
    local records_line = "Records: `" .. records_dir:gsub("^.*/(bench/corpus/records/)", "%1") .. "`.\n"
    local new = text:sub(1, b - 1) .. BEGIN .. "\n" .. records_line .. "\n" .. table_text .. text:sub(e)
    local file = assert(io.open(write_doc .. ".tmp", "w"))
    file:write(new)
    file:close()
    assert(os.rename(write_doc .. ".tmp", write_doc))
    io.stderr:write("recompute.lua: the table in " .. write_doc .. " is the one recomputed\n")
  elseif check_doc then
    local text, b, e = doc_block(check_doc)
    local stored = text:sub(b + #BEGIN, e - 1):gsub("^\n", ""):gsub("^Records: [^\n]*\n\n", "")
    if stored ~= table_text then
      io.stderr:write("recompute.lua: the table in " .. check_doc .. " is not the one the records give; rerun with --write " ..
        "(the recomputed table is above)\n")
      os.exit(1)
    end
    io.stderr:write("recompute.lua: the table in " .. check_doc .. " is the one the records give\n")
  end
end

local ok, problem = xpcall(main, debug.traceback)
if work_dir then os.execute("rm -rf '" .. work_dir:gsub("'", "'\\''") .. "'") end
if not ok then
  if type(problem) == "table" and problem.records then
    io.stderr:write("recompute.lua: " .. problem.records .. "\n")
    os.exit(2)
  end
  io.stderr:write("recompute.lua: internal error (a bug in the recompute or in a judge it calls): " .. tostring(problem) .. "\n")
  os.exit(70)
end
