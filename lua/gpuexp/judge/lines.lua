-- A regression explained to the source line: two line profiles of one kernel (store/line_profile.lua:
-- a base build and a new one, each one launch's SASS counts and PC samples mapped to lines) aligned
-- line by line, and the lines ranked by their share of the time that moved.
--
-- Alignment. Files are matched by name. With both builds' source text, the lines are aligned as a
-- diff aligns them (the longest common subsequence of the texts, after the common head and tail):
-- a line that moved keeps its partner, and inside a changed hunk a deleted and an inserted line are
-- paired when their texts are alike (SIMILAR: a line edited in place, such as float made double);
-- the rest are added (no base) or removed (no new). Without text, lines are matched by number.
-- Instructions with no line (a cubin without -lineinfo) are matched by function and pc offset.
--
-- Time. The basis is the SASS counts whenever both profiles have them: a line's cost is estimated
-- from its warp instructions, plus global and local sectors and shared wavefronts weighed by COST
-- (exact counts see every instruction a change adds; the estimate does not see FP64's or MUFU's
-- cost, nor latency). PC samples, when there (taken in another process: CUPTI's two collectors
-- share none, gx_lines.h), still give each line's stall reason that grew and the check of the
-- samples the kernel gained against the time it gained; they rank only when a profile has no
-- counts (said in the notes): a line's samples per launch (PC sampling samples one warp of each SM
-- every 2^period cycles) are its share of the SM time. On the H100 the counts ranked the injected
-- line first in 31 of 33 cases, the samples in 18 (bench/lines/records/h100): a 1-10% change moves
-- a line by fewer samples than their noise.
--
-- Ranking and marks. Lines are ranked by the time they gained. The reason that grew is the stall
-- reason whose samples grew most on the line. With samples as the basis, a line within NOISE
-- standard errors of no change (Poisson samples) is marked within noise (counts are exact). As the
-- counter explainer (judge/explain.lua), a line accounts for the change when it holds at least
-- ACCOUNT_SHARE of the time that moved; when no line does and the top lines together do not either,
-- the result says the lines do not account for it (time spread over the kernel: occupancy, the
-- clock, the memory system); when the samples' total change is far from the measured change, that
-- is said too.
local text = require("gpuexp.store.text")

local M = {}

M.SIMILAR = 0.5        -- texts at least this alike (0-1) are one line edited, in a changed hunk
M.ACCOUNT_SHARE = 0.5  -- a line accounts for the change when it holds this share of it
M.NOISE = 3            -- standard errors of a line's change that are still noise
M.TOP = 10             -- lines shown by default
M.MAX_CELLS = 4e6      -- the alignment's table beyond this: unique lines matched instead
-- the cost of a count, in warp-instruction issues, when there is no PC sampling
M.COST = {inst_executed = 1, sectors_mem_global = 2, sectors_mem_local = 4, l1tex_pipe_lsu_wavefronts_mem_shared = 1}

-- ---- one profile, line by line ----

local function basename(path) return (tostring(path):match("([^/]+)$")) end

-- The source lines of a file of the profile (a list), or nil.
local function source_lines(profile, file)
  local source = profile.sources and (profile.sources[file] or profile.sources[basename(file)])
  if not source then return nil end
  local lines = {}
  for line in (source .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  if lines[#lines] == "" then lines[#lines] = nil end
  return lines
end

-- The profile's instructions summed per line: {lines = {[key] = L}, files = {[file] = true},
-- samples (per launch, all lines), launches, has_samples, has_counts}. A line L: {key, file, line,
-- function, pc (no line), instructions, counts = {[metric] = n}, samples (per launch),
-- reasons = {[reason] = per launch}}.
function M.per_line(profile)
  local index = {}
  for i, name in ipairs(profile.metrics or {}) do index[i] = name end
  local launches = profile.pc and profile.pc.done and (profile.pc.launches or 0) > 0 and profile.pc.launches or nil
  -- samples are per 2^period cycles: scaled to 2^9, so profiles of other periods compare
  local scale = launches and (2 ^ ((profile.pc.period or 9) - 9)) / launches or 0
  local result = {lines = {}, files = {}, samples = 0, launches = launches, has_samples = launches ~= nil,
    has_counts = profile.sass and profile.sass.done or false, static = profile.static}
  -- a file is known by its name alone when no other file of the profile has that name: two builds
  -- in two trees (bisect's worktrees) name the same file by different paths
  local names, paths = {}, {}
  for _, r in ipairs(profile.instructions or {}) do
    if r.file and not paths[r.file] then
      paths[r.file] = true
      names[basename(r.file)] = (names[basename(r.file)] or 0) + 1
    end
  end
  local function file_key(file) return names[basename(file)] == 1 and basename(file) or file end
  for _, r in ipairs(profile.instructions or {}) do
    local key, L
    if r.file and r.line and r.line > 0 then
      key = file_key(r.file) .. ":" .. r.line
      result.files[file_key(r.file)] = r.file
    else
      key = string.format("%s+0x%x", tostring(r["function"]), r.pc)
    end
    L = result.lines[key]
    if not L then
      L = {key = key, file = r.file and file_key(r.file), path = r.file, line = r.line, ["function"] = r["function"], pc = (not r.line) and r.pc or nil,
        instructions = 0, counts = {}, samples = 0, reasons = {}}
      result.lines[key] = L
    end
    L.instructions = L.instructions + 1
    for i, n in pairs(r.counts or {}) do
      local name = index[i] or tostring(i)
      L.counts[name] = (L.counts[name] or 0) + n
    end
    for reason, n in pairs(r.samples or {}) do
      if not tostring(reason):find("not_issued", 1, true) then
        local v = n * scale
        L.reasons[reason] = (L.reasons[reason] or 0) + v
        L.samples = L.samples + v
        L.raw = (L.raw or 0) + n
        result.samples = result.samples + v
      end
    end
  end
  return result
end

-- The estimated cost of a line from its counts (no PC sampling).
local function cost_of(L)
  local c = 0
  for name, weight in pairs(M.COST) do c = c + (L.counts[name] or 0) * weight end
  return c
end

-- ---- alignment ----

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

-- How alike two lines' texts are (0-1): the longest common subsequence of their characters (of
-- the first 200, spaces left out) against the longer one.
function M.similarity(a, b)
  a, b = trim(a):gsub("%s+", ""):sub(1, 200), trim(b):gsub("%s+", ""):sub(1, 200)
  if a == b then return 1 end
  if #a == 0 or #b == 0 then return 0 end
  local previous, current = {}, {}
  for j = 0, #b do previous[j] = 0 end
  for i = 1, #a do
    current[0] = 0
    local ca = a:byte(i)
    for j = 1, #b do
      if ca == b:byte(j) then current[j] = previous[j - 1] + 1
      else current[j] = math.max(previous[j], current[j - 1]) end
    end
    previous, current = current, previous
  end
  return previous[#b] / math.max(#a, #b)
end

-- Pairs of a changed hunk: each inserted line with the most alike deleted line at or after the
-- last one paired (order kept), when alike enough.
local function pair_hunk(base, new, deleted, inserted, map)
  local from = 1
  for _, j in ipairs(inserted) do
    local best, best_k = M.SIMILAR, nil
    for k = from, #deleted do
      local s = M.similarity(base[deleted[k]], new[j])
      if s >= best then best, best_k = s, k end
    end
    if best_k then
      map[deleted[best_k]] = {line = j, kind = "changed", similarity = best}
      from = best_k + 1
    end
  end
end

-- The base lines' partners in new: {[base line] = {line, kind = "same"|"changed"}}, by the
-- longest common subsequence of the (trimmed) texts after the common head and tail.
function M.align_texts(base, new)
  local map = {}
  local nb, nn = #base, #new
  local head = 0
  while head < nb and head < nn and trim(base[head + 1]) == trim(new[head + 1]) do
    head = head + 1
    map[head] = {line = head, kind = "same"}
  end
  local tail = 0
  while tail < nb - head and tail < nn - head and trim(base[nb - tail]) == trim(new[nn - tail]) do
    map[nb - tail] = {line = nn - tail, kind = "same"}
    tail = tail + 1
  end
  local b0, b1, n0, n1 = head + 1, nb - tail, head + 1, nn - tail
  local rows, columns = b1 - b0 + 1, n1 - n0 + 1
  local pairs_found = {}
  if rows > 0 and columns > 0 and rows * columns <= M.MAX_CELLS then
    -- the table of common subsequence lengths of the middles, from the end
    local t = {}
    for i = rows + 1, 1, -1 do t[i] = {} end
    for j = 1, columns + 1 do t[rows + 1][j] = 0 end
    local bt, nt = {}, {}
    for i = 1, rows do bt[i] = trim(base[b0 + i - 1]) end
    for j = 1, columns do nt[j] = trim(new[n0 + j - 1]) end
    for i = rows, 1, -1 do
      local ti, tn = t[i], t[i + 1]
      ti[columns + 1] = 0
      for j = columns, 1, -1 do
        if bt[i] == nt[j] then ti[j] = tn[j + 1] + 1
        else ti[j] = math.max(tn[j], ti[j + 1]) end
      end
    end
    local i, j = 1, 1
    while i <= rows and j <= columns do
      if bt[i] == nt[j] then
        pairs_found[#pairs_found + 1] = {b0 + i - 1, n0 + j - 1}
        i, j = i + 1, j + 1
      elseif t[i + 1][j] >= t[i][j + 1] then i = i + 1
      else j = j + 1 end
    end
  elseif rows > 0 and columns > 0 then
    -- too large for the table: lines that occur once in each, in order
    local count_b, count_n, where_n = {}, {}, {}
    for i = b0, b1 do local s = trim(base[i]); count_b[s] = (count_b[s] or 0) + 1 end
    for j = n0, n1 do local s = trim(new[j]); count_n[s] = (count_n[s] or 0) + 1; where_n[s] = j end
    local last = n0 - 1
    for i = b0, b1 do
      local s = trim(base[i])
      if count_b[s] == 1 and count_n[s] == 1 and where_n[s] > last then
        pairs_found[#pairs_found + 1] = {i, where_n[s]}
        last = where_n[s]
      end
    end
  end
  -- matched lines, and the hunks between them paired by likeness
  local previous_b, previous_n = b0 - 1, n0 - 1
  pairs_found[#pairs_found + 1] = {b1 + 1, n1 + 1}
  for _, p in ipairs(pairs_found) do
    local deleted, inserted = {}, {}
    for i = previous_b + 1, p[1] - 1 do deleted[#deleted + 1] = i end
    for j = previous_n + 1, p[2] - 1 do inserted[#inserted + 1] = j end
    if #deleted > 0 and #inserted > 0 then pair_hunk(base, new, deleted, inserted, map) end
    if p[1] <= b1 then map[p[1]] = {line = p[2], kind = "same"} end
    previous_b, previous_n = p[1], p[2]
  end
  return map
end

-- A line with no instructions (its partner has some).
local function blank(file, line)
  return {key = file .. ":" .. line, file = file, line = line, instructions = 0, counts = {}, samples = 0, reasons = {}}
end

-- The rows of the comparison: every line either build has code on, with its partner in the other
-- build (a line with no code there when it has none) and the alignment's kind: same, changed,
-- added, removed, or "by number" (no text to align by).
local function align(base_profile, new_profile, b, n)
  local rows, used_new, notes, maps = {}, {}, {}, {}
  local files = {}
  for file in pairs(b.files) do files[file] = true end
  for file in pairs(n.files) do files[file] = true end
  for file in pairs(files) do
    local base_text = b.files[file] and source_lines(base_profile, b.files[file])
    local new_text = n.files[file] and source_lines(new_profile, n.files[file])
    local m = {base_text = base_text, new_text = new_text}
    if b.files[file] and n.files[file] then
      if base_text and new_text then
        m.map, m.inverse = M.align_texts(base_text, new_text), {}
        for base_line, to in pairs(m.map) do m.inverse[to.line] = {line = base_line, kind = to.kind} end
      else
        m.by_number = true
        notes[#notes + 1] = string.format("%s: no source text in %s: lines matched by number", basename(file),
          base_text and "the new profile" or new_text and "the base profile" or "either profile")
      end
    end
    maps[file] = m
  end
  for key, L in pairs(b.lines) do
    local m = L.file and maps[L.file]
    local partner, kind = nil, "removed"
    if m and m.map then
      local to = m.map[L.line]
      if to then partner, kind = n.lines[L.file .. ":" .. to.line] or blank(L.file, to.line), to.kind end
    elseif m and m.by_number then
      partner, kind = n.lines[key] or blank(L.file, L.line), "by number"
    elseif not L.file and n.lines[key] then
      partner, kind = n.lines[key], "same"
    end
    if partner then used_new[partner.key] = true end
    rows[#rows + 1] = {file = L.file, base = L, new = partner, kind = kind}
  end
  for key, L in pairs(n.lines) do
    if not used_new[key] then
      local m = L.file and maps[L.file]
      local base, kind = nil, "added"
      if m and m.inverse and m.inverse[L.line] then
        base, kind = blank(L.file, m.inverse[L.line].line), m.inverse[L.line].kind
      elseif m and m.by_number then
        base, kind = blank(L.file, L.line), "by number"
      end
      rows[#rows + 1] = {file = L.file, base = base, new = L, kind = kind}
    end
  end
  for _, row in ipairs(rows) do
    local m = maps[row.file or ""]
    if m then
      row.base_text = row.base and row.base.line and m.base_text and m.base_text[row.base.line]
      row.new_text = row.new and row.new.line and m.new_text and m.new_text[row.new.line]
    end
  end
  return rows, notes
end

-- ---- the comparison ----

local EMPTY = {counts = {}, reasons = {}, samples = 0, instructions = 0}

-- The reason whose samples grew most on a row, and by how much (per launch, scaled).
local function grown_reason(row)
  local best, most = nil, 0
  local seen = {}
  for reason in pairs((row.base or EMPTY).reasons) do seen[reason] = true end
  for reason in pairs((row.new or EMPTY).reasons) do seen[reason] = true end
  for reason in pairs(seen) do
    local d = ((row.new or EMPTY).reasons[reason] or 0) - ((row.base or EMPTY).reasons[reason] or 0)
    if d > most then best, most = reason, d end
  end
  return best, most
end

-- diff(base, new, options) -> {rows (ranked, the time gained first), basis ("counts", "samples",
-- "static" or "none"), total_pct (the kernel's change on that basis), samples_pct (its PC samples'
-- change, when both profiles have them), measured_pct, accounted,
-- accounting (a sentence), notes, ...}. options: measured_pct (the change the timing measured),
-- top (rows kept: all when nil).
function M.diff(base_profile, new_profile, options)
  options = options or {}
  local b, n = M.per_line(base_profile), M.per_line(new_profile)
  local result = {kernel = new_profile.kernel or base_profile.kernel, notes = {}, measured_pct = options.measured_pct,
    base_label = base_profile.label, new_label = new_profile.label}
  local sampled = b.has_samples and n.has_samples and b.samples > 0 and n.samples > 0
  local function which(has_b, has_n)
    return (not has_b and not has_n) and "either profile" or (has_b and "the new profile" or "the base profile")
  end
  if b.has_counts and n.has_counts then
    result.basis = "counts"
    if not sampled then
      result.notes[#result.notes + 1] = "no PC samples in " .. which(b.has_samples and b.samples > 0, n.has_samples and n.samples > 0) ..
        ": no stall reasons, and the time is estimated from SASS counts alone (FP64, MUFU and latency unseen)"
    end
  elseif sampled then
    result.basis = "samples"
    result.notes[#result.notes + 1] = "no SASS counts in " .. which(b.has_counts, n.has_counts) ..
      ": ranked by PC samples, which a change of a few percent moves by little more than their noise"
  elseif b.static and n.static then
    result.basis = "static"
    result.notes[#result.notes + 1] = "static line tables (no GPU): SASS instructions per line, not executions"
  else
    result.basis = "none"
    result.notes[#result.notes + 1] = "the profiles have neither PC samples nor SASS counts in common: nothing to rank"
  end
  -- an empty profile (neither collector gave an instruction) is said as such: it is not a build
  -- without line information
  local empty, unmapped = {}, {}
  for _, side in ipairs({{"base", base_profile}, {"new", new_profile}}) do
    local p = side[2]
    if #(p.instructions or {}) == 0 then empty[#empty + 1] = side[1]
    elseif not p.line_info then unmapped[#unmapped + 1] = side end
  end
  if #empty > 0 then
    result.notes[#result.notes + 1] = (#empty == 2 and "both profiles are" or ("the " .. empty[1] .. " profile is")) ..
      " empty: no PC samples and no SASS counts (why is in the notes below)"
  end
  if #unmapped > 0 then
    local why = unmapped[1][2].map_error
    result.notes[#result.notes + 1] = "no line information in " .. (#unmapped == 2 and "either build" or ("the " .. unmapped[1][1] .. " build")) ..
      (why and (" (" .. why .. ")") or "") .. ": instructions matched by function and offset (SASS only)"
  end
  for _, p in ipairs({base_profile, new_profile}) do
    if p.sass and p.sass.error then result.notes[#result.notes + 1] = "SASS metrics: " .. p.sass.error end
    if p.pc and p.pc.error then result.notes[#result.notes + 1] = "PC sampling: " .. p.pc.error end
  end
  local rows, notes = align(base_profile, new_profile, b, n)
  for _, note in ipairs(notes) do result.notes[#result.notes + 1] = note end
  local function weight(L)
    if not L then return 0 end
    if result.basis == "samples" then return L.samples end
    if result.basis == "counts" then return cost_of(L) end
    return L.instructions
  end
  local base_total = 0
  for _, L in pairs(b.lines) do base_total = base_total + weight(L) end
  local new_total = 0
  for _, L in pairs(n.lines) do new_total = new_total + weight(L) end
  result.base_total, result.new_total = base_total, new_total
  result.total_pct = base_total > 0 and (new_total - base_total) / base_total * 100 or nil
  -- the samples' own change (the check against the measured time), whatever ranks
  if sampled then result.samples_pct = (n.samples - b.samples) / b.samples * 100 end
  local moved = 0
  for _, row in ipairs(rows) do
    local wb, wn = weight(row.base), weight(row.new)
    row.delta = wn - wb
    row.delta_pct = base_total > 0 and row.delta / base_total * 100 or 0
    if row.delta > 0 then moved = moved + row.delta end
    if sampled then
      row.reason, row.reason_delta = grown_reason(row)
      if row.reason_delta and b.samples > 0 then row.reason_pct = row.reason_delta / b.samples * 100 end
    end
    if result.basis == "samples" then
      -- Poisson counts: the variance of a per-launch rate is its raw samples over launches squared
      local function variance(L, launches, period)
        if not L or not launches then return 0 end
        local scale = 2 ^ ((period or 9) - 9) / launches
        return (L.raw or 0) * scale * scale
      end
      local se = math.sqrt(variance(row.base, b.launches, base_profile.pc.period) +
        variance(row.new, n.launches, new_profile.pc.period))
      row.noise = math.abs(row.delta) <= M.NOISE * math.max(se, 1e-12)
    end
    local cb, cn = (row.base or EMPTY).counts, (row.new or EMPTY).counts
    row.inst_base, row.inst_new = cb.inst_executed, cn.inst_executed
    row.counts_base, row.counts_new = cb, cn
  end
  result.moved = moved
  -- the kernel's change past its own noise (Poisson samples): spread thin, it is still a change
  if result.basis == "samples" then
    local variance = 0
    for _, side in ipairs({{b, base_profile}, {n, new_profile}}) do
      local scale = 2 ^ ((side[2].pc.period or 9) - 9) / side[1].launches
      for _, L in pairs(side[1].lines) do variance = variance + (L.raw or 0) * scale * scale end
    end
    result.significant = new_total - base_total > M.NOISE * math.sqrt(variance)
  end
  -- ranked: the time gained first; then by the instructions gained (ties of no samples)
  table.sort(rows, function(x, y)
    if x.delta ~= y.delta then return x.delta > y.delta end
    local ix = (x.inst_new or 0) - (x.inst_base or 0)
    local iy = (y.inst_new or 0) - (y.inst_base or 0)
    if ix ~= iy then return ix > iy end
    return tostring((x.new or x.base).key) < tostring((y.new or y.base).key)
  end)
  for rank, row in ipairs(rows) do
    row.rank = rank
    row.share = moved > 0 and row.delta > 0 and row.delta / moved or 0
    row.accounts = row.delta > 0 and not row.noise and row.share >= M.ACCOUNT_SHARE
  end
  result.rows = rows
  M.account(result)
  if options.top then
    local kept = {}
    for i = 1, math.min(options.top, #rows) do kept[i] = rows[i] end
    result.rows = kept
    result.line_count = #rows
  else
    result.line_count = #rows
  end
  return result
end

-- The accounting sentence and flag of a diff: whether its top lines account for the change.
function M.account(result)
  local rows = result.rows
  local top = rows[1]
  if result.basis == "none" or not top then
    result.accounted, result.accounting = false, "nothing to rank"
    return
  end
  if top.delta <= 0 or top.noise then
    result.accounted = false
    local moved = result.total_pct and string.format("%+.1f%%", result.total_pct) or "?"
    if result.significant then
      result.accounting = string.format("the lines do not account for it: the kernel's samples moved %s, but no line " ..
        "gained past its noise (spread over the kernel: occupancy, the clock, the memory system?)", moved)
    else
      result.accounting = string.format("no line gained time past its noise (the kernel's %s moved %s)",
        result.basis == "samples" and "samples" or "estimated time", moved)
    end
  elseif top.accounts then
    result.accounted = true
    result.accounting = string.format("%s accounts for %.0f%% of the time that moved", M.where(top), top.share * 100)
  else
    local share, used = 0, 0
    for i = 1, math.min(3, #rows) do
      if rows[i].delta > 0 and not rows[i].noise then share, used = share + rows[i].share, i end
    end
    result.accounted = share >= M.ACCOUNT_SHARE
    result.accounting = result.accounted
      and string.format("the top %d lines account for %.0f%% of the time that moved", used, share * 100)
      or string.format("the lines do not account for it: the top %d hold %.0f%% of the time that moved, the rest is " ..
        "spread over the kernel (occupancy, the clock, the memory system?)", used, share * 100)
  end
  -- the samples against the measured change: a kernel whose samples did not move as its time did
  local measured = result.measured_pct
  if measured and measured > 0 and result.samples_pct then
    if result.samples_pct < measured * M.ACCOUNT_SHARE then
      result.accounted = false
      result.accounting = result.accounting .. string.format("; the samples moved %+.1f%% where the time moved %+.1f%%: " ..
        "they do not account for it", result.samples_pct, measured)
    end
  end
end

-- "file:line" of a row's new line (its base line when removed), or the function+pc of SASS only.
function M.where(row)
  local L = row.new or row.base
  if L.file then return string.format("%s:%d", basename(L.file), L.line) end
  return L.key
end

local function count_text(v)
  if not v then return "-" end
  if v >= 1e9 then return string.format("%.2fG", v / 1e9) end
  if v >= 1e6 then return string.format("%.2fM", v / 1e6) end
  if v >= 1e4 then return string.format("%.1fk", v / 1e3) end
  return string.format("%d", math.floor(v + 0.5))
end
M.count_text = count_text

-- A row's cells as text: where, kind, share, time, instructions before -> after, the reason, marks.
function M.row_cells(row, basis)
  local reason = row.reason and row.reason_delta and row.reason_delta > 0 and row.reason or ""
  local marks = {}
  if row.noise then marks[#marks + 1] = "within noise" end
  if row.delta > 0 and not row.accounts and not row.noise then marks[#marks + 1] = "does not explain it alone" end
  if row.delta <= 0 then marks[#marks + 1] = "no time gained" end
  local line_text = row.new_text or row.base_text or ""
  return {
    rank = tostring(row.rank),
    where = M.where(row) .. (row.kind == "changed" and row.base and row.base.line and row.new and row.new.line
      and row.base.line ~= row.new.line and string.format(" (was %d)", row.base.line) or ""),
    kind = row.kind,
    share = row.delta > 0 and string.format("%.0f%%", row.share * 100) or "",
    time = string.format("%+.2f%%", row.delta_pct),
    instructions = string.format("%s -> %s", count_text(row.inst_base), count_text(row.inst_new)),
    samples = basis == "samples" and string.format("%s -> %s", count_text((row.base or EMPTY).samples),
      count_text((row.new or EMPTY).samples)) or "",
    reason = reason,
    marks = table.concat(marks, ", "),
    text = trim(line_text),
    base_text = row.kind == "changed" and row.base_text and trim(row.base_text) or nil,
  }
end

M.COLUMNS = {"rank", "where", "kind", "share", "time", "instructions", "samples", "reason", "marks", "text"}

-- A short summary of a diff for a report (a value: JSON as it is): the accounting, the notes and
-- the top lines' cells.
function M.summary(result, top)
  local lines = {}
  for i = 1, math.min(top or M.TOP, #result.rows) do
    if result.rows[i].delta > 0 or i == 1 then lines[#lines + 1] = M.row_cells(result.rows[i], result.basis) end
  end
  return {kernel = result.kernel, basis = result.basis, total_pct = result.total_pct, samples_pct = result.samples_pct,
    measured_pct = result.measured_pct,
    accounted = result.accounted, accounting = result.accounting, notes = result.notes, lines = lines,
    line_count = result.line_count}
end

-- One sentence for an explanation: the top line, its share, its reason, its text.
function M.sentence(summary)
  local top = summary.lines[1]
  if not top or summary.basis == "none" then
    -- nothing ranked: why (CUPTI's refusal of a stage, a profile without line information) is the news
    local why = summary.notes and #summary.notes > 0 and (": " .. table.concat(summary.notes, "; ")) or ""
    return tostring(summary.accounting) .. why
  end
  return string.format("line %s (%s%s%s): `%s`; %s", top.where, top.time, top.share ~= "" and (", " .. top.share .. " of the time moved") or "",
    top.reason ~= "" and (", " .. top.reason .. " grew") or "", top.text, summary.accounting)
end

-- ---- what the measurement asks of a diff ----

-- A copy of a profile with one collector's data alone: "counts" (its PC samples left out) or
-- "samples" (its SASS counts left out): what each ranks by itself.
function M.only(profile, kept)
  local copy = {}
  for k, v in pairs(profile) do copy[k] = v end
  if kept == "counts" then copy.pc = {done = false, error = "left out (the SASS counts alone)"}
  else copy.sass = {done = false, error = "left out (the PC samples alone)"} end
  copy.instructions = {}
  for i, r in ipairs(profile.instructions) do
    copy.instructions[i] = {["function"] = r["function"], pc = r.pc, file = r.file, line = r.line,
      counts = kept == "counts" and r.counts or nil, samples = kept == "samples" and r.samples or nil}
  end
  return copy
end

-- The rank of the new build's `line` of the file named `file` (its last path part) among a diff's
-- rows, or nil.
function M.rank_of(diff, file, line)
  for r, row in ipairs(diff.rows) do
    if row.new and row.new.line == line and row.new.file and basename(row.new.file) == file then return r end
  end
  return nil
end

-- ---- a night's line profiles, in its folder ----

-- Where a night's confirm stage writes an experiment's line profiles' summaries (a JSON list of
-- {point, key, summary}), under the night's folder: the site reads them, as it reads the diagnoses.
function M.night_path(night_dir, experiment)
  return string.format("%s/confirm/%s.lines.json", night_dir, experiment)
end

-- The line summary of a recorded night's regression e (of run), from the night's folder, or nil.
-- read: a table kept for the night's other points (the file read once).
function M.recorded(e, run, read)
  local output = run.info and run.info.sweep and run.info.sweep.output
  if read.lines == nil then
    read.lines = false
    if output then
      local value = require("gpuexp.store.meta").read_json(M.night_path(output:match("^(.*)/[^/]*$") or ".",
        run.record.experiment))
      if type(value) == "table" then read.lines = value end
    end
  end
  for _, entry in ipairs(read.lines or {}) do
    if type(entry) == "table" and entry.key == e.key and type(entry.summary) == "table" then return entry.summary end
  end
  return nil
end

-- ---- printing ----

local function header(summary)
  local parts = {string.format("kernel %s: the %s of the kernel moved %s", tostring(summary.kernel),
    summary.basis == "samples" and "PC samples" or summary.basis == "counts" and "estimated time (SASS counts)"
    or "static instructions", summary.total_pct and string.format("%+.2f%%", summary.total_pct) or "?")}
  if summary.basis ~= "samples" and summary.samples_pct then
    parts[#parts + 1] = string.format(", its PC samples %+.2f%%", summary.samples_pct)
  end
  if summary.measured_pct then parts[#parts + 1] = string.format(" (measured %+.2f%%)", summary.measured_pct) end
  return table.concat(parts)
end

-- Terminal text: the header, the accounting, the notes, then the ranked lines.
function M.text(summary, file)
  local term = text.terminal
  file:write(term(header(summary)), "\n", term(summary.accounting), "\n")
  for _, note in ipairs(summary.notes or {}) do file:write("note: ", term(note), "\n") end
  local cells = {}
  for i, c in ipairs(summary.lines) do
    local row = {}
    for k, v in pairs(c) do row[k] = term(v) end
    if c.base_text then row.text = term(c.text) .. "   (was: " .. term(c.base_text) .. ")" end
    cells[i] = row
  end
  require("gpuexp.store.csv").print_table(cells, M.COLUMNS, file)
end

function M.markdown(summary, file)
  local md = text.markdown
  file:write(md(header(summary)), ". ", md(summary.accounting), ".\n\n")
  for _, note in ipairs(summary.notes or {}) do file:write("- note: ", md(note), "\n") end
  if #(summary.notes or {}) > 0 then file:write("\n") end
  file:write("| # | line | kind | share | time | warp instructions | samples | reason that grew | marks | source |\n")
  file:write("| ---: | --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- |\n")
  for _, c in ipairs(summary.lines) do
    -- as escaped text, not a code span (in which Markdown's escapes would show)
    local source = md(c.text)
    if c.base_text then source = source .. " (was: " .. md(c.base_text) .. ")" end
    file:write(string.format("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.rank, md(c.where), c.kind,
      c.share, c.time, c.instructions, c.samples, md(c.reason), md(c.marks), source))
  end
  file:write("\n")
end

function M.html(summary, file, escape)
  file:write("<p>", escape(header(summary)), ". ", escape(summary.accounting), ".</p>\n")
  for _, note in ipairs(summary.notes or {}) do file:write("<p class='note'>note: ", escape(note), "</p>\n") end
  file:write("<table><tr><th>#</th><th>line</th><th>kind</th><th>share</th><th>time</th><th>warp instructions</th>",
    "<th>samples</th><th>reason that grew</th><th>marks</th><th>source</th></tr>\n")
  for _, c in ipairs(summary.lines) do
    file:write(string.format("<tr><td class='n'>%s</td><td>%s</td><td>%s</td><td class='n'>%s</td><td class='n'>%s</td>" ..
      "<td class='n'>%s</td><td class='n'>%s</td><td>%s</td><td>%s</td><td><code>%s</code>%s</td></tr>\n", c.rank,
      escape(c.where), c.kind, c.share, c.time, c.instructions, c.samples, escape(c.reason), escape(c.marks), escape(c.text),
      c.base_text and (" (was <code>" .. escape(c.base_text) .. "</code>)") or ""))
  end
  file:write("</table>\n")
end

return M
