-- Line profiles without a GPU (issue 38): the alignment of two builds' lines (texts that moved,
-- lines edited in place, large files), the ranking and its marks on hand-made profiles and on the
-- recorded ones (tests/fixtures/lines: made by make.lua; bench/lines/records when a GPU run's are
-- there), the profile file (round trip, damage named), gpuexp lines (formats, folders, refusals),
-- and what an offline plan does (the cubin's line table; kernel:line_profile says why not).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local judge = require("gpuexp.judge.lines")
local line_profile = require("gpuexp.store.line_profile")
local json = require("gpuexp.store.json")
local binary = arg[1]
local root = gpuexp.script_dir .. "/../.."

-- ---- alignment ----
local function lines_of(text)
  local list = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do list[#list + 1] = line end
  return list
end
local map = judge.align_texts({"a", "b", "c", "d"}, {"a", "b", "X", "c", "d"})
T.eq(map[3].line, 4, "a line after an insertion moves down")
T.eq(map[4].line, 5, "and the next")
T.eq(map[3].kind, "same", "as the same line")
map = judge.align_texts({"x = 1;", "float t = a * 2.0f + b;", "y = t;"}, {"x = 1;", "double t = a * 2.0 + b;", "y = t;"})
T.eq(map[2].line, 2, "a line edited in place keeps its place")
T.eq(map[2].kind, "changed", "as changed")
-- both ends changed: the middle aligned by the longest common subsequence
map = judge.align_texts({"head();", "a = 1;", "b = 2;", "c = 3;", "tail();"},
  {"head2();", "a = 1;", "x = 9;", "b = 2;", "c = 3;", "tail2();"})
T.eq(map[2].line, 2, "the common subsequence: a")
T.eq(map[3].line, 4, "b moved down")
T.eq(map[4].line, 5, "c moved down")
T.eq(map[3].kind, "same", "b is the same line")
T.eq(map[1].kind, "changed", "head edited")
map = judge.align_texts({"a", "b", "c"}, {"a", "completely different text here", "c"})
T.eq(map[2], nil, "a replaced line unlike the old one is no partner")
map = judge.align_texts({"  a", "b  ", "c"}, {"a", "b", "c"})
T.eq(map[1].kind, "same", "indentation does not count")
-- the middle larger than the table allows: lines unique in both are matched in order
local saved = judge.MAX_CELLS
judge.MAX_CELLS = 4
map = judge.align_texts({"h", "1", "2", "3", "4", "t"}, {"h", "0", "1", "2", "3", "4", "t"})
judge.MAX_CELLS = saved
T.eq(map[2].line, 3, "without the table: unique lines matched")
T.eq(map[5].line, 6, "in order")
T.near(judge.similarity("acc = acc * 0.5f;", "acc = acc * 0.5f;"), 1, 0, "the same text")
T.ok(judge.similarity("float t = x;", "double t = x;") >= judge.SIMILAR, "an edited line is alike")
T.ok(judge.similarity("a = b;", "for (int k = 0; k < n; ++k) {") < judge.SIMILAR, "another line is not")

-- ---- ranking, on hand-made profiles ----
-- spec: {[line] = {inst, samples = {reason = n}}}; source: the file's text
local function profile(source, spec, options)
  options = options or {}
  local p = {format = line_profile.FORMAT, version = line_profile.VERSION, kernel = "k", metrics = {"inst_executed"},
    reasons = {"selected", "long_scoreboard", "barrier"}, sass = {done = options.counts or options.samples == false},
    pc = {done = options.samples ~= false,
    launches = options.launches or 1, period = 9}, line_info = options.line_info ~= false,
    sources = options.no_text and {} or {[options.file or "k.cu"] = source}, instructions = {}}
  local pc = 0
  local lines = {}
  for line in pairs(spec) do lines[#lines + 1] = line end
  table.sort(lines)
  for _, line in ipairs(lines) do
    local s = spec[line]
    p.instructions[#p.instructions + 1] = {["function"] = "k", pc = pc, file = options.line_info ~= false and
      (options.path or "k.cu") or nil, line = options.line_info ~= false and line or nil,
      counts = (options.counts or options.samples == false) and {s.inst or 0} or nil,
      samples = options.samples ~= false and s.samples or nil}
    pc = pc + 16
  end
  return p
end

local BASE = "a;\nb;\nc;\nd;\ne;\n"
local NEW = "a;\nb;\nX;\nc;\nd;\ne;\n" -- X added at line 3
local base = profile(BASE, {[1] = {inst = 100, samples = {selected = 1000}}, [2] = {inst = 100, samples = {selected = 1000}},
  [3] = {inst = 100, samples = {selected = 1000}}, [4] = {inst = 100, samples = {long_scoreboard = 1000}}})
local new = profile(NEW, {[1] = {inst = 100, samples = {selected = 1000}}, [2] = {inst = 100, samples = {selected = 1010}},
  [3] = {inst = 50, samples = {long_scoreboard = 300}}, [4] = {inst = 100, samples = {selected = 995}},
  [5] = {inst = 100, samples = {long_scoreboard = 1000}}})
local diff = judge.diff(base, new, {measured_pct = 7.5})
T.eq(diff.basis, "samples", "ranked by samples")
T.eq(diff.rows[1].new.line, 3, "the added line first")
T.eq(diff.rows[1].kind, "added", "as added")
T.eq(diff.rows[1].reason, "long_scoreboard", "with the reason that grew")
T.near(diff.rows[1].delta_pct, 7.5, 1e-9, "300 samples of 4000: +7.5%")
T.ok(diff.rows[1].accounts and diff.accounted, "it accounts for the change: " .. diff.accounting)
T.near(diff.total_pct, 7.625, 1e-9, "the kernel's samples moved +7.6%")
local moved
for _, row in ipairs(diff.rows) do if row.new and row.new.line == 4 then moved = row end end
T.eq(moved.base.line, 3, "the line after the insertion is paired with its old self")
T.eq(moved.kind, "same", "unchanged")
T.ok(moved.noise, "its -5 samples are noise")
local cells = judge.row_cells(diff.rows[1], diff.basis)
T.eq(cells.where, "k.cu:3", "where")
T.eq(cells.text, "X;", "its text")
T.eq(cells.instructions, "- -> -", "no counts: no instructions before and after")

-- the measured change far above what the samples moved: said, not accounted
diff = judge.diff(base, new, {measured_pct = 40})
T.ok(not diff.accounted, "samples +7.6% against a measured +40%")
T.ok(diff.accounting:find("do not account", 1, true), "said: " .. diff.accounting)

-- samples per launch: a base sampled over 2 launches, a new over 1
local twice = profile(BASE, {[1] = {inst = 100, samples = {selected = 2000}}, [2] = {inst = 100, samples = {selected = 2000}},
  [3] = {inst = 100, samples = {selected = 2000}}, [4] = {inst = 100, samples = {long_scoreboard = 2000}}}, {launches = 2})
diff = judge.diff(twice, new)
T.eq(diff.rows[1].new.line, 3, "launches: per-launch samples compared")
T.near(diff.rows[1].delta_pct, 7.5, 1e-9, "as before")

-- a line edited in place, with a line moving it down (a comment above)
local EDITED = "a;\n// note\nb;\nfloat t = x * 2.0f;\nd;\n"
local base_edit = profile("a;\nb;\nfloat t = x * 2.0f;\nd;\n", {[1] = {inst = 10, samples = {selected = 100}},
  [2] = {inst = 10, samples = {selected = 100}}, [3] = {inst = 10, samples = {selected = 100}}, [4] = {inst = 10, samples = {selected = 100}}})
local new_edit = profile("a;\n// note\nb;\ndouble t = x * 2.0;\nd;\n", {[1] = {inst = 10, samples = {selected = 100}},
  [3] = {inst = 10, samples = {selected = 100}}, [4] = {inst = 14, samples = {selected = 100, long_scoreboard = 60}},
  [5] = {inst = 10, samples = {selected = 100}}})
diff = judge.diff(base_edit, new_edit)
T.eq(diff.rows[1].new.line, 4, "the edited line first")
T.eq(diff.rows[1].kind, "changed", "as changed")
T.eq(diff.rows[1].base.line, 3, "paired with its old line")
cells = judge.row_cells(diff.rows[1], diff.basis)
T.eq(cells.where, "k.cu:4 (was 3)", "where it was")
T.eq(cells.base_text, "float t = x * 2.0f;", "its old text")
T.ok(EDITED, "")

-- time spread over every line: no line accounts, and that is said
local spread_base, spread_new = {}, {}
for line = 1, 20 do
  spread_base[line] = {inst = 10, samples = {selected = 10000}}
  spread_new[line] = {inst = 10, samples = {selected = 10600}}
end
local text20 = string.rep("s;\n", 20)
diff = judge.diff(profile(text20, spread_base), profile(text20, spread_new))
T.ok(not diff.rows[1].accounts, "no one line accounts for a change spread over 20")
T.ok(not diff.accounted and diff.accounting:find("do not account", 1, true), "said: " .. diff.accounting)
T.eq(judge.row_cells(diff.rows[1], diff.basis).marks, "does not explain it alone", "marked")
-- spread thinner: no line past its noise, the kernel's change still is
for line = 1, 20 do spread_base[line].samples.selected, spread_new[line].samples.selected = 1000, 1060 end
diff = judge.diff(profile(text20, spread_base), profile(text20, spread_new))
T.ok(diff.rows[1].noise and diff.significant, "each line within its noise, the kernel's +6% is not")
T.ok(not diff.accounted and diff.accounting:find("no line gained past its noise (spread", 1, true), "said: " .. diff.accounting)

-- no change past the noise
diff = judge.diff(profile(BASE, {[1] = {samples = {selected = 1000}}}), profile(BASE, {[1] = {samples = {selected = 1010}}}))
T.ok(diff.rows[1].noise and not diff.accounted, "+10 of 1000 samples is noise: " .. diff.accounting)

-- no PC samples: SASS counts weighed (a bank conflict shows in wavefronts, not instructions)
local counts_base = profile(BASE, {[1] = {inst = 100}, [2] = {inst = 100}}, {samples = false})
local counts_new = profile(BASE, {[1] = {inst = 100}, [2] = {inst = 100}}, {samples = false})
counts_base.metrics = {"inst_executed", "l1tex_pipe_lsu_wavefronts_mem_shared"}
counts_new.metrics = counts_base.metrics
counts_base.instructions[2].counts = {100, 100}
counts_new.instructions[2].counts = {100, 3200}
diff = judge.diff(counts_base, counts_new)
T.eq(diff.basis, "counts", "no samples: counts")
T.eq(diff.rows[1].new.line, 2, "the conflicting line first")
T.ok(diff.notes[1]:find("SASS counts", 1, true), "the estimate said: " .. diff.notes[1])

-- ---- the basis: SASS counts whenever both profiles have them ----
-- the samples favour line 4 (its stalls grew: latency the counts do not see), the counts the
-- added line 3 (its instructions are new): the counts rank, the samples give the reason and the
-- check against the measured time
local both_base = profile(BASE, {[1] = {inst = 1000, samples = {selected = 1000}}, [2] = {inst = 1000, samples = {selected = 1000}},
  [3] = {inst = 1000, samples = {selected = 1000}}, [4] = {inst = 1000, samples = {long_scoreboard = 1000}}}, {counts = true})
local both_new = profile(NEW, {[1] = {inst = 1000, samples = {selected = 1000}}, [2] = {inst = 1000, samples = {selected = 1000}},
  [3] = {inst = 80, samples = {barrier = 40}}, [4] = {inst = 1000, samples = {selected = 1000}},
  [5] = {inst = 1000, samples = {long_scoreboard = 1200}}}, {counts = true})
diff = judge.diff(both_base, both_new, {measured_pct = 6})
T.eq(diff.basis, "counts", "both collectors: ranked by the counts")
T.eq(diff.rows[1].new.line, 3, "the added line first by its instructions (the samples would put line 5 first)")
T.eq(diff.rows[1].reason, "barrier", "its reason that grew, from the samples")
T.near(diff.total_pct, 2, 1e-9, "80 instructions of 4000: +2% estimated")
T.near(diff.samples_pct, 6, 1e-9, "the samples moved +6%")
T.ok(diff.accounted and #diff.notes == 0, "no note when both are there: " .. table.concat(diff.notes, "; "))
T.ok(not diff.rows[1].noise, "exact counts are not noise")
T.eq(judge.row_cells(diff.rows[1], diff.basis).instructions, "- -> 80", "instructions before and after")
summary = judge.summary(diff)
T.eq(summary.samples_pct, diff.samples_pct, "the summary holds the samples' change")
T.eq(judge.where(judge.diff(judge.only(both_base, "samples"), judge.only(both_new, "samples")).rows[1]), "k.cu:5",
  "the samples alone rank line 5 first")
T.eq(judge.where(judge.diff(judge.only(both_base, "counts"), judge.only(both_new, "counts")).rows[1]), "k.cu:3",
  "the counts alone line 3")
-- the samples' check holds with counts as the basis: samples +6% against a measured +20%
diff = judge.diff(both_base, both_new, {measured_pct = 20})
T.eq(diff.basis, "counts", "still the counts")
T.ok(not diff.accounted and diff.accounting:find("the samples moved +6.0% where the time moved +20.0%", 1, true),
  "the samples' check said: " .. diff.accounting)
-- samples rank only without counts, and that is said
diff = judge.diff(judge.only(both_base, "samples"), both_new)
T.eq(diff.basis, "samples", "no counts in the base: the samples rank")
T.ok(diff.notes[1]:find("no SASS counts in the base profile: ranked by PC samples", 1, true), "said: " .. diff.notes[1])
diff = judge.diff(both_base, judge.only(both_new, "counts"))
T.eq(diff.basis, "counts", "no samples in the new: the counts rank")
T.ok(diff.notes[1]:find("no PC samples in the new profile: no stall reasons", 1, true), "said: " .. diff.notes[1])
-- a launch's two profiles (two processes) merged: the samples of one, the counts of the other
local merged = assert(line_profile.merge(judge.only(both_new, "samples"), judge.only(both_new, "counts")))
T.ok(merged.sass.done and merged.pc.done, "merged: both stages")
diff = judge.diff(assert(line_profile.merge(judge.only(both_base, "samples"), judge.only(both_base, "counts"))), merged)
T.eq(diff.basis, "counts", "merged profiles: the counts rank")
T.eq(diff.rows[1].new.line, 3, "merged: the added line first")
T.eq(diff.rows[1].reason, "barrier", "merged: its reason")
local other = judge.only(both_base, "counts")
other.kernel = "other"
T.eq(line_profile.merge(both_new, other), nil, "two kernels are not merged")
local moved_line = judge.only(both_new, "counts")
moved_line.instructions[2].line = 9
T.ok(select(2, line_profile.merge(judge.only(both_new, "samples"), moved_line)):find("two builds", 1, true),
  "one instruction on two lines: two builds, not merged")

-- no line information: instructions matched by function and offset, and said
diff = judge.diff(profile(BASE, {[1] = {samples = {selected = 100}}, [2] = {samples = {selected = 100}}}, {line_info = false}),
  profile(BASE, {[1] = {samples = {selected = 100}}, [2] = {samples = {selected = 400}}}, {line_info = false}))
T.eq(judge.where(diff.rows[1]), "k+0x10", "SASS only: function+offset")
local said = false
for _, note in ipairs(diff.notes) do said = said or note:find("no line information", 1, true) ~= nil end
T.ok(said, "no line information said")

-- an empty profile (neither collector gave an instruction: H100 try 1) is said as empty, not as a
-- build without line information
local empty = profile(NEW, {}, {line_info = false})
empty.pc.error, empty.sass = "PC sampling gave no samples", {done = false}
diff = judge.diff(profile(BASE, {[1] = {samples = {selected = 100}}}), empty)
T.eq(diff.basis, "none", "nothing to rank against an empty profile")
local said_empty, said_unmapped = false, false
for _, note in ipairs(diff.notes) do
  said_empty = said_empty or note:find("the new profile is empty", 1, true) ~= nil
  said_unmapped = said_unmapped or note:find("no line information", 1, true) ~= nil
end
T.ok(said_empty and not said_unmapped, "said empty, not unmapped: " .. table.concat(diff.notes, "; "))

-- two trees: one file by two paths (bisect's worktrees) is one file
diff = judge.diff(profile(BASE, {[3] = {samples = {selected = 100}}}, {path = "/tmp/tree-1/src/k.cu", file = "/tmp/tree-1/src/k.cu"}),
  profile(NEW, {[4] = {samples = {selected = 100}}, [3] = {samples = {selected = 50}}}, {path = "/tmp/tree-2/src/k.cu",
  file = "/tmp/tree-2/src/k.cu"}))
T.eq(diff.rows[1].kind, "added", "files matched by name across trees")
T.eq(diff.rows[1].new.line, 3, "the added line")

-- no source text: lines matched by number, said
diff = judge.diff(profile(BASE, {[2] = {samples = {selected = 100}}}, {no_text = true}),
  profile(BASE, {[2] = {samples = {selected = 300}}}, {no_text = true}))
T.eq(diff.rows[1].kind, "by number", "matched by number")

-- the printers: text, Markdown, HTML; hostile source text escaped
local hostile = profile("a;\n<script>alert(1)</script>|`x`\n", {[1] = {samples = {selected = 10}}})
local hostile_new = profile("a;\n<script>alert(1)</script>|`x`\n", {[1] = {samples = {selected = 10}}, [2] = {samples = {selected = 500}}})
local summary = judge.summary(judge.diff(hostile, hostile_new))
local parts = {}
local sink = {write = function(self, ...) for _, s in ipairs({...}) do parts[#parts + 1] = s end return self end}
judge.html(summary, sink, require("gpuexp.judge.printers").html)
T.ok(not table.concat(parts):find("<script>", 1, true), "HTML escapes the source's text")
parts = {}
judge.markdown(summary, sink)
T.ok(table.concat(parts):find("| 1 | k.cu:2 |", 1, true), "Markdown's row")
T.ok(not table.concat(parts):find("</script>|`x`", 1, true), "Markdown escapes a cell's bar")

-- ---- the recorded profiles: each case's line ranked first ----
local fixtures = root .. "/tests/fixtures/lines"
local manifest = json.decode(T.read(fixtures .. "/cases.json"))
T.ok(#manifest >= 3, "the fixtures' cases")
for _, case in ipairs(manifest) do
  local b = assert(line_profile.read(string.format("%s/%s.base%s", fixtures, case.name, line_profile.SUFFIX)))
  local n = assert(line_profile.read(string.format("%s/%s.new%s", fixtures, case.name, line_profile.SUFFIX)))
  local d = judge.diff(b, n)
  if case.line then
    T.eq(d.rows[1].new.line, case.line, case.name .. ": its line first")
    T.eq(d.rows[1].kind, case.kind, case.name .. ": " .. case.kind)
  end
  T.eq(d.rows[1].accounts, case.top_accounts, case.name .. ": whether the top line accounts")
end
-- a GPU run's records (bench/lines/records/<gpu>/), when there: the committed table is theirs
local listing = io.popen("ls -d " .. root .. "/bench/lines/records/*/ 2>/dev/null")
for folder in listing:lines() do
  local code = os.execute(string.format("%s --quiet --arch sm_90 %s/bench/lines/recompute.lua %s --check %s/docs/explanation/explained-to-the-line.md >/dev/null",
    binary, root, folder, root))
  T.ok(code, "the table of " .. folder .. " is the docs' (bench/lines/recompute.lua)")
end
listing:close()

-- ---- the file ----
local dir = T.temporary_directory()
local path = dir .. "/a" .. line_profile.SUFFIX
line_profile.write(path, new)
local back = assert(line_profile.read(path))
T.eq(#back.instructions, #new.instructions, "round trip: instructions")
T.eq(back.instructions[3].samples.long_scoreboard, 300, "round trip: samples")
T.eq(math.type(back.instructions[3].pc), "integer", "round trip: integer offsets")
T.eq(back.sources["k.cu"], NEW, "round trip: the source")
local function damaged(text, needle)
  local p = T.write(dir .. "/bad" .. line_profile.SUFFIX, text)
  local value, why = line_profile.read(p)
  T.eq(value, nil, "damaged: " .. needle)
  T.ok(why:find(needle, 1, true) and why:find(p, 1, true), "named: " .. tostring(why))
end
damaged('{"format":"gpuexp-line-profile","version":1,"kernel":"k","metrics":[],"reasons":[],"instructions":[{"pc":1', "not JSON")
damaged('{"format":"other"}', "not a gpuexp line profile")
damaged('{"format":"gpuexp-line-profile","version":9,"kernel":"k","instructions":[]}', "version 9")
damaged('{"format":"gpuexp-line-profile","version":1,"kernel":"k","metrics":[],"reasons":[],"instructions":[{"pc":"x"}]}',
  "instruction 1 has no integer pc")
damaged('{"format":"gpuexp-line-profile","version":1,"kernel":"k","metrics":[],"reasons":[],"instructions":[{"pc":1,"samples":{"a":"b"}}]}',
  "samples of a not a number")
damaged("", "is empty")

-- ---- gpuexp lines ----
local ws = T.workspace(binary)
gpuexp.mkdir(ws.dir .. "/b")
gpuexp.mkdir(ws.dir .. "/n")
line_profile.write(ws.dir .. "/b/k-1" .. line_profile.SUFFIX, base)
line_profile.write(ws.dir .. "/n/k-1" .. line_profile.SUFFIX, new)
local code, out, err = ws.run("lines b/k-1.lines.json n/k-1.lines.json")
T.eq(code, 0, "two files: " .. err)
T.ok(out:find("k.cu:3 +added", 1) and out:find("accounts for", 1, true), "the table: " .. out)
code, out = ws.run("lines b n --markdown")
T.eq(code, 0, "two folders")
T.ok(out:find("| 1 | k.cu:3 | added |", 1, true), "Markdown: " .. out)
code, out = ws.run("lines b n --json")
local decoded = json.decode(out)
T.eq(decoded[1].lines[1].where, "k.cu:3", "JSON: the summaries")
-- a launch whose shape changed: paired by kernel name, said
os.rename(ws.dir .. "/n/k-1" .. line_profile.SUFFIX, ws.dir .. "/n/k-2" .. line_profile.SUFFIX)
code, out = ws.run("lines b n")
T.eq(code, 0, "paired by kernel")
T.ok(out:find("paired by the kernel's name", 1, true), "said: " .. out)
code, out, err = ws.run("lines b/k-1.lines.json n")
T.eq(code, 2, "a file and a folder")
T.ok(err:find("two profiles or two --lines folders", 1, true), err)
code, _, err = ws.run("lines b missing.lines.json")
T.eq(code, 2, "a missing profile")
T.ok(err:find("missing.lines.json does not exist", 1, true), err)
code, _, err = ws.run("lines b")
T.eq(code, 2, "one argument")
gpuexp.mkdir(ws.dir .. "/empty")
code, _, err = ws.run("lines b empty")
T.eq(code, 2, "an empty folder")
T.ok(err:find("holds no line profile", 1, true), err)
code, _, err = ws.run("lines --top 0 b n")
T.eq(code, 2, "--top 0")
-- folders of --lines runs: each launch's PC samples (X.lines.json) read with its SASS counts beside
-- them (X.sass.lines.json), a launch with counts alone paired by its counts' name
for _, side in ipairs({{"bc", both_base}, {"nc", both_new}}) do
  gpuexp.mkdir(ws.dir .. "/" .. side[1])
  line_profile.write(ws.dir .. "/" .. side[1] .. "/k-1" .. line_profile.SUFFIX, judge.only(side[2], "samples"))
  line_profile.write(ws.dir .. "/" .. side[1] .. "/k-1" .. line_profile.SASS_SUFFIX, judge.only(side[2], "counts"))
  line_profile.write(ws.dir .. "/" .. side[1] .. "/k-3" .. line_profile.SASS_SUFFIX, judge.only(side[2], "counts"))
end
code, out, err = ws.run("lines bc nc --json")
T.eq(code, 0, "folders with SASS counts beside: " .. err)
decoded = json.decode(out)
T.eq(#decoded, 2, "two launches, each once: " .. out)
for _, summary in ipairs(decoded) do
  T.eq(summary.basis, "counts", "ranked by the counts: " .. out)
  T.eq(summary.lines[1].where, "k.cu:3", "the added line first")
end

-- ---- --lines: the SASS counts' second run ----
local api = require("gpuexp.api.lines")
local argv = api.count_argv({"gx", "--out", "r.csv", "--only", "n=1", "--history", "h.db", "--point-timeout=30", "-d", "1",
  "--lines", "L", "--trace", "t.json", "--", "exp.lua", "--only", "x"}, "L", "/tmp/w/counts.csv")
T.eq(table.concat(argv, " "), "gx --quiet --inline --lines L --lines-only sass --out /tmp/w/counts.csv --only n=1 " ..
  "--point-timeout=30 -d 1 -- exp.lua --only x", "the second run: what picks the points, nothing that writes again")
T.eq(api.count_pass({options = {lines = "L", lines_only = "pc"}}, 0), 0, "--lines-only: no second run")
T.eq(api.count_pass({options = {lines = "L"}, plan = "sm_90"}, 0), 0, "a plan: no second run")
T.eq(api.count_pass({options = {lines = "L"}}, 3), 3, "a run that failed on the GPU: no second run")

-- ---- an offline plan ----
ws.write("plan.lua", [[
local source = 'extern "C" __global__ void k(float *y, int n) { int i = threadIdx.x; if (i < n) y[i] = y[i] * 2.0f; }'
local with = gpuexp.compile{source = source, name = "k.cu", options = {"-lineinfo"}}:kernel("k")
local without = gpuexp.compile{source = source, name = "k.cu"}:kernel("k")
local p, why = with:line_profile{grid = 1, block = 32, args = {gpuexp.device():alloc("f32", 32), gpuexp.i32(32)}}
print("profile", p, why)
local t = gpuexp.line_table(with)
print("table", t.line_info, #t.instructions > 0, t.static, t.sources["k.cu"] == source, t.line_table)
print("table map", t.map_error)
local u = gpuexp.line_table(without)
print("no lines", u.line_info, u.map_error)
print("no table", u.line_table)
local ok, problem = pcall(with.line_profile, with, {grid = 1, block = 32, args = {}, bogus = 1})
print("bogus", problem.message)
]])
code, out, err = ws.run("--arch sm_90 plan.lua")
T.eq(code, 0, "the plan: " .. err)
T.ok(out:find("profile\tnil\tno line profiles in an offline plan", 1, true), "kernel:line_profile in a plan: " .. out)
if out:find("table map\tCUPTI not found", 1, true) then
  -- (the sanitizer job leaves CUPTI out: its SASS-to-source correlation maps the lines)
  T.ok(out:find("table\tfalse\ttrue\ttrue\tfalse\ttrue", 1, true), "no CUPTI: instructions and the cubin's table, no lines: " .. out)
  io.stderr:write("note: CUPTI not found: the offline line mapping is not checked here\n")
else
  T.ok(out:find("table\ttrue\ttrue\ttrue\ttrue\ttrue", 1, true), "the line table offline (and the cubin has one): " .. out)
end
T.ok(out:find("no table\tfalse", 1, true), "a cubin without -lineinfo has no line table: " .. out)
T.ok(out:find("no lines\tfalse\tthe cubin has no line table (compile with -lineinfo", 1, true) or
  out:find("no lines\tfalse\tCUPTI not found", 1, true) and out:find("table map\tCUPTI not found", 1, true), "no -lineinfo: " .. out)
T.ok(out:find("bogus\tplan.lua:12: line_profile: unknown option 'bogus'", 1, true), "an unknown key, at the script's line: " .. out)
code, out, err = ws.run("--arch sm_90 --lines L plan.lua")
T.ok(err:find("--lines", 1, true), "--lines in a plan is said to do nothing: " .. err)
T.done()
