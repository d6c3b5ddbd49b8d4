-- The table of issue 38's measurement, recomputed from its files: OUT/lines.csv (one row a case:
-- the sizes measured, the time the profiles took) and OUT/profiles/ (or OUT/profiles.tar.gz: every
-- case's base and new line profiles, <id>.<build>.lines.json, and its SASS counts, taken in other
-- processes, <id>.<build>.sass.lines.json). Every ranking is made again here with the judge of this
-- checkout (judge/lines.lua), from the profiles: by default (both merged, as gpuexp lines reads a
-- --lines folder: the counts rank, the samples give the reasons), with the SASS counts alone and
-- with the PC samples alone. A case measured outside 1-10% (in_range false, or from its change
-- where the run has no such column) is a row marked so, left out of the rates; the first line says
-- how many, and the seed the cases came from.
--   gpuexp --arch sm_90 bench/lines/recompute.lua OUT [--check TABLE.md]
-- prints the Markdown table; --check compares it with a committed table (the docs') and exits 1
-- when they differ.
local csv = require("gpuexp.store.csv")
local meta = require("gpuexp.store.meta")
local line_profile = require("gpuexp.store.line_profile")
local judge = require("gpuexp.judge.lines")

local out = assert(arg[1], "usage: recompute.lua OUT [--check TABLE.md]")
local check_path
for i, a in ipairs(arg) do if a == "--check" then check_path = arg[i + 1] end end

-- the profiles' folder: OUT/profiles, or the tarball unpacked in a temporary folder
local folder = out .. "/profiles"
local unpacked
if not gpuexp._is_directory(folder) then
  unpacked = os.tmpname()
  os.remove(unpacked)
  gpuexp.mkdir(unpacked)
  local code = gpuexp._process.run({"tar", "xzf", out .. "/profiles.tar.gz", "-C", unpacked})
  assert(code == 0, "no " .. folder .. " and no readable " .. out .. "/profiles.tar.gz")
  folder = unpacked .. "/profiles"
end

local rows = csv.read(out .. "/lines.csv")
local RANGE = {1, 10} -- issue 38's slowdowns: a case measured outside is left out of the rates

-- a case's profile of a build by one collector: <id>.<build>.lines.json (PC samples; a dry run's
-- hold both) or <id>.<build>.sass.lines.json (SASS counts, a process of their own); nil when not
-- there, and a file that is there and cannot be read is said
local function profile_of(id, build, counts)
  local path = string.format("%s/%s.%s%s", folder, id, build, line_profile.SUFFIX)
  if counts then path = line_profile.sass_path(path) end
  local profile, why = line_profile.read(path)
  local file = not profile and io.open(path, "rb")
  if file then
    file:close()
    io.stderr:write("recompute: ", why, "\n")
  end
  return profile
end

-- each build's one profile, as gpuexp lines reads a --lines folder: the counts merged into the samples
local function both(sampled, counted)
  if sampled and counted and sampled ~= counted then return assert(line_profile.merge(sampled, counted)) end
  return sampled or counted
end

local cases, by_cause, order, seeds, out_of_range = {}, {}, {}, {}, {}
local pair_seconds = {}
for _, row in ipairs(rows) do
  local sampled = {base = profile_of(row.id, "base"), new = profile_of(row.id, "new")}
  local counted = {base = profile_of(row.id, "base", true), new = profile_of(row.id, "new", true)}
  local base, new = both(sampled.base, counted.base), both(sampled.new, counted.new)
  if base and new and type(row.change_pct) == "number" then
    local diff = judge.diff(base, new, {measured_pct = row.change_pct})
    -- each collector alone: the SASS counts (their own files, else the profile's own counts), the PC samples
    local function alone(kept, b, n)
      if not (b and n) then return nil end
      return judge.rank_of(judge.diff(judge.only(b, kept), judge.only(n, kept), {measured_pct = row.change_pct}),
        "case_kernel.cu", row.line)
    end
    local seed = row.seed or (new.case and new.case.seed)
    seeds[tostring(math.tointeger(seed) or seed)] = true
    local in_range = row.in_range
    if type(in_range) ~= "boolean" then in_range = row.change_pct >= RANGE[1] and row.change_pct <= RANGE[2] end
    local c = {id = row.id, cause = row.cause, lines = row.kernel_lines, change = row.change_pct, basis = diff.basis,
      rank = judge.rank_of(diff, "case_kernel.cu", row.line),
      rank_counts = alone("counts", counted.base or base, counted.new or new),
      rank_samples = alone("samples", sampled.base, sampled.new),
      top = diff.rows[1] and judge.where(diff.rows[1]) or "", share = diff.rows[1] and diff.rows[1].share or 0,
      accounted = diff.accounted, reason = diff.rows[1] and diff.rows[1].reason or "", in_range = in_range,
      seconds = type(row.profile_s) == "number" and row.profile_s + (type(row.sass_s) == "number" and row.sass_s or 0) or nil,
      line = row.line}
    cases[#cases + 1] = c
    if not by_cause[c.cause] then by_cause[c.cause] = {}; order[#order + 1] = c.cause end
    if in_range then
      table.insert(by_cause[c.cause], c)
    else
      out_of_range[#out_of_range + 1] = c
    end
    if c.seconds then pair_seconds[#pair_seconds + 1] = c.seconds end
  end
end

local function tally(list, key)
  local top1, top3 = 0, 0
  for _, c in ipairs(list) do
    if c[key] == 1 then top1 = top1 + 1 end
    if c[key] and c[key] <= 3 then top3 = top3 + 1 end
  end
  return top1, top3
end

local function pct(a, b) return b > 0 and string.format("%d/%d (%.0f%%)", a, b, 100 * a / b) or "-" end

local lines = {}
local function say(s) lines[#lines + 1] = s end
local info = meta.read_json(out .. "/lines.meta.json")
local gpu = type(info) == "table" and type(info.gpu) == "table" and info.gpu.name or "?"
local kept = {}
for _, c in ipairs(cases) do if c.in_range then kept[#kept + 1] = c end end
local top1, top3 = tally(kept, "rank")
local c1, c3 = tally(kept, "rank_counts")
local s1, s3 = tally(kept, "rank_samples")
table.sort(pair_seconds)
local median_s = #pair_seconds > 0 and pair_seconds[(#pair_seconds + 1) // 2] or 0
local changes = {}
for _, c in ipairs(cases) do changes[#changes + 1] = c.change end
table.sort(changes)
local seed_list = {}
for seed in pairs(seeds) do seed_list[#seed_list + 1] = seed end
table.sort(seed_list)
local bases = {}
for _, c in ipairs(kept) do bases[c.basis] = (bases[c.basis] or 0) + 1 end
local basis_list = {}
for basis, n in pairs(bases) do basis_list[#basis_list + 1] = string.format("%s in %d", basis, n) end
table.sort(basis_list)
say(string.format("%d line-level regressions on %s (seed %s; %d causes), slowdowns %.1f%% to %.1f%%; %d in %g-%g%%, " ..
  "%d out of range and left out of the rates: the injected line ranked", #cases, gpu, table.concat(seed_list, ", "),
  #order, changes[1] or 0, changes[#changes] or 0, #kept, RANGE[1], RANGE[2], #out_of_range))
say("")
say(string.format("| cause | cases | top-1 | top-3 | top-1, SASS counts alone | top-3, SASS counts alone | " ..
  "top-1, PC samples alone | top-3, PC samples alone |"))
say("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for _, cause in ipairs(order) do
  local list = by_cause[cause]
  local a, b = tally(list, "rank")
  local x, y = tally(list, "rank_counts")
  local u, v = tally(list, "rank_samples")
  say(string.format("| %s | %d | %d | %d | %d | %d | %d | %d |", cause, #list, a, b, x, y, u, v))
end
say(string.format("| **all** | %d | %s | %s | %s | %s | %s | %s |", #kept, pct(top1, #kept), pct(top3, #kept),
  pct(c1, #kept), pct(c3, #kept), pct(s1, #kept), pct(s3, #kept)))
say("")
say(string.format("Ranked by default (the SASS counts where both profiles have them, else the PC samples): %s. " ..
  "Time per pair (both builds' line profiles, each collector in a process of its own): median %.1f s, most %.1f s.",
  #basis_list > 0 and table.concat(basis_list, ", ") or "none", median_s, pair_seconds[#pair_seconds] or 0))
say("")
say("| case | lines | slowdown | in range | basis | rank | rank (counts) | rank (samples) | top line | its share | " ..
  "reason that grew | accounted | pair s |")
say("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | --- | ---: | --- | --- | ---: |")
for _, c in ipairs(cases) do
  say(string.format("| %s | %d | %+.2f%% | %s | %s | %s | %s | %s | %s | %.0f%% | %s | %s | %.1f |", c.id, c.lines, c.change,
    c.in_range and "yes" or "**no**", c.basis, tostring(c.rank or "-"), tostring(c.rank_counts or "-"),
    tostring(c.rank_samples or "-"), c.top, 100 * c.share, c.reason, tostring(c.accounted), c.seconds or 0))
end
local text = table.concat(lines, "\n") .. "\n"
if unpacked then gpuexp._process.run({"rm", "-rf", "--", unpacked}) end
if check_path then
  local committed = meta.read_all(check_path) or ""
  local from, to = committed:find(text, 1, true)
  if not from then
    io.stderr:write("the table in " .. check_path .. " is not the one the records give:\n" .. text)
    os.exit(1)
  end
  print("the table in " .. check_path .. " is the one the records give")
  return
end
io.write(text)
