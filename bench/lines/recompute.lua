-- The table of issue 38's measurement, recomputed from its files: OUT/lines.csv (one row a case:
-- the sizes measured, the time the profiles took) and OUT/profiles/ (or OUT/profiles.tar.gz: every
-- case's base and new line profiles, <id>.<build>.lines.json, and its SASS counts, taken in other
-- processes, <id>.<build>.sass.lines.json). Every ranking is made again here with the judge of this
-- checkout (judge/lines.lua), from the profiles: with PC samples, and with the SASS counts alone.
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



-- a case's SASS counts of a build (<id>.<build>.sass.lines.json), or nil; a file that is there and
-- cannot be read is said
local function sass_of(id, build)
  local path = string.format("%s/%s.%s.sass%s", folder, id, build, line_profile.SUFFIX)
  local profile, why = line_profile.read(path)
  local file = not profile and io.open(path, "rb")
  if file then
    file:close()
    io.stderr:write("recompute: ", why, "\n")
  end
  return profile
end

local cases, by_cause, order = {}, {}, {}
local pair_seconds = {}
for _, row in ipairs(rows) do
  local base = line_profile.read(string.format("%s/%s.base%s", folder, row.id, line_profile.SUFFIX))
  local new = base and line_profile.read(string.format("%s/%s.new%s", folder, row.id, line_profile.SUFFIX))
  if base and new and type(row.change_pct) == "number" then
    local diff = judge.diff(base, new, {measured_pct = row.change_pct})
    -- the SASS counts: their own files (a process of their own), else the profile's own counts
    local sass_base, sass_new = sass_of(row.id, "base"), sass_of(row.id, "new")
    if not (sass_base and sass_new) then sass_base, sass_new = base, new end
    local counted = judge.diff(judge.counts_only(sass_base), judge.counts_only(sass_new), {measured_pct = row.change_pct})
    local c = {id = row.id, cause = row.cause, lines = row.kernel_lines, change = row.change_pct, basis = diff.basis,
      rank = judge.rank_of(diff, "case_kernel.cu", row.line), rank_counts = judge.rank_of(counted, "case_kernel.cu", row.line),
      top = diff.rows[1] and judge.where(diff.rows[1]) or "", share = diff.rows[1] and diff.rows[1].share or 0,
      accounted = diff.accounted, reason = diff.rows[1] and diff.rows[1].reason or "", seconds = row.profile_s,
      line = row.line}
    cases[#cases + 1] = c
    if not by_cause[c.cause] then by_cause[c.cause] = {}; order[#order + 1] = c.cause end
    table.insert(by_cause[c.cause], c)
    if type(row.profile_s) == "number" then pair_seconds[#pair_seconds + 1] = row.profile_s end
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
local top1, top3 = tally(cases, "rank")
local c1, c3 = tally(cases, "rank_counts")
table.sort(pair_seconds)
local median_s = #pair_seconds > 0 and pair_seconds[(#pair_seconds + 1) // 2] or 0
local changes = {}
for _, c in ipairs(cases) do changes[#changes + 1] = c.change end
table.sort(changes)
say(string.format("%d line-level regressions on %s (%d causes), slowdowns %.1f%% to %.1f%%: the injected line ranked",
  #cases, gpu, #order, changes[1] or 0, changes[#changes] or 0))
say("")
say("| cause | cases | top-1 | top-3 | top-1, SASS counts alone | top-3, SASS counts alone |")
say("| --- | ---: | ---: | ---: | ---: | ---: |")
for _, cause in ipairs(order) do
  local list = by_cause[cause]
  local a, b = tally(list, "rank")
  local x, y = tally(list, "rank_counts")
  say(string.format("| %s | %d | %d | %d | %d | %d |", cause, #list, a, b, x, y))
end
say(string.format("| **all** | %d | %s | %s | %s | %s |", #cases, pct(top1, #cases), pct(top3, #cases), pct(c1, #cases),
  pct(c3, #cases)))
say("")
say(string.format("Time per pair (the base and new builds' line profiles): median %.1f s, most %.1f s.", median_s,
  pair_seconds[#pair_seconds] or 0))
say("")
say("| case | lines | slowdown | basis | rank | rank (counts) | top line | its share | reason that grew | accounted | pair s |")
say("| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | --- | --- | ---: |")
for _, c in ipairs(cases) do
  say(string.format("| %s | %d | %+.2f%% | %s | %s | %s | %s | %.0f%% | %s | %s | %.1f |", c.id, c.lines, c.change, c.basis,
    tostring(c.rank or "-"), tostring(c.rank_counts or "-"), c.top, 100 * c.share, c.reason, tostring(c.accounted),
    c.seconds or 0))
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
