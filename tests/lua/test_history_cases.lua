-- The history's WEAK cases of issue 34, each with its right answer: accept's --point names points
-- (one clause, one point), accepting twice adds nothing, an excluded run is refused, the note is
-- shown (history show, the regression state the site and the nightly print); prune --keep counts
-- each kind apart (ad-hoc runs never push nightly runs out); an empty file is an empty history; a
-- history whose disk fails is not "not a gpuexp history"; record and compare say what the
-- metadata lacks (odd axes), and record never advises an --axes it does not take.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run

-- a suite of one experiment of two axes; SLOW=case..n makes that point twice as slow
gpuexp.mkdir(work .. "/suite")
write("suite/two.lua", [[
local slow = os.getenv("SLOW")
gpuexp.sweep{name = "two", axes = {{"case", {"a", "b"}}, {"n", {1, 2}}},
  run = function(p)
    local base = (p.case == "a" and 1 or 2) * p.n
    if slow == p.case .. p.n then base = base * 2 end
    return {median_ms = base, noise_pct = 0.5, samples = 1000}
  end}
]])
local function night(n, environment)
  return run(string.format("nightly suite --arch sm_90 --quiet --history h.sqlite --out night%d", n),
    string.format("GPUEXP_LOCK_DIR=%s %s", work, environment or ""))
end
for n = 1, 3 do T.eq(night(n), 0, "clean night " .. n) end
T.eq(night(4, "SLOW=b1"), 1, "night 4: b1 regressed")
local function history(arguments) return run("history --history h.sqlite " .. arguments) end

-- ---- accept ----
local code, stdout, stderr = history("accept 4 --point 'case=b;n=1'")
T.eq(code, 2, "a clause that is several points is refused: " .. stdout .. stderr)
T.ok(stderr:find("--point: 'case=b' is 2 points of run 4 (case=b n=1; case=b n=2), not one: name each point by all " ..
  "its axes (case, n), points separated by ';'", 1, true), stderr)
local _, listing = history("list")
T.ok(not listing:find("accepted", 1, true), "nothing was accepted: " .. listing)
code, stdout, stderr = history("accept 4 --point 'case=b,n=1' --note 'the new allocator, intended'")
T.eq(code, 0, "one point named by all its axes: " .. stderr)
T.ok(stdout:find("case=b n=1: ACCEPTED at run 4 (the new allocator, intended): its level 4", 1, true),
  "the note is in the state's text: " .. stdout)
code, stdout = history("accept 4 --point 'case=b,n=1'")
T.eq(code, 0, "accepting again")
T.ok(stdout:find("the level of run 4 (case=b,n=1) is accepted already; nothing changed", 1, true), stdout)
local db = gpuexp._db.open(work .. "/h.sqlite", true)
T.eq(db:rows("SELECT count(*) AS n FROM acceptances")[1].n, 1, "one acceptance, not two")
db:close()
code, stdout = history("show 4")
T.ok(stdout:find("accepted case=b n=1 on %d%d%d%d%-.-: the new allocator, intended"), "history show lists it: " .. stdout)
T.ok(stdout:find("ACCEPTED at run 4 (the new allocator, intended)", 1, true), "and its state: " .. stdout)
T.eq(run("history --history h.sqlite site site"), 0, "the site")
T.ok((read("site/index.html") or "") .. (read("site/series-1.html") or "") ~= "", "the site was written")
local pages = io.popen("cat " .. work .. "/site/*.html")
T.ok(pages:read("a"):find("ACCEPTED at run 4 (the new allocator, intended)", 1, true), "the site shows the note")
pages:close()
T.eq(history("exclude 3"), 0, "run 3 excluded")
code, _, stderr = history("accept 3")
T.eq(code, 2, "accepting an excluded run is refused")
T.ok(stderr:find("run 3 is excluded: an excluded night is no level, so it cannot set one (gpuexp history include 3 " ..
  "first)", 1, true), stderr)
T.eq(history("include 3"), 0, "run 3 back")

-- ---- prune --keep: each kind counted apart ----
for i = 1, 4 do
  T.eq(run(string.format("--quiet --arch sm_90 --history h.sqlite -o adhoc%d.csv suite/two.lua", i)), 0, "ad-hoc run " .. i)
end
code, stdout = history("prune --keep 2")
T.eq(code, 0, "prune: " .. stdout)
T.ok(stdout:find("kept the newest 2 of each experiment, sweep, GPU and kind", 1, true), stdout)
db = gpuexp._db.open(work .. "/h.sqlite", true)
local kinds = {}
for _, r in ipairs(db:rows("SELECT kind, count(*) AS n FROM runs GROUP BY kind")) do kinds[r.kind] = r.n end
db:close()
T.eq(kinds.nightly, 2, "two nightly runs kept: the newest ad-hoc runs did not push them out")
T.eq(kinds.run, 2, "and two ad-hoc runs")

-- ---- an empty file is an empty history, read as one and left as it is ----
write("empty.sqlite", "")
for _, case in ipairs({{"list", 0, "(no runs recorded)"}, {"show 1", 2, "no run 1 in the history"},
                       {"export 1", 2, "no run 1 in the history"}}) do
  code, stdout, stderr = run("history --history empty.sqlite " .. case[1])
  T.eq(code, case[2], "an empty history: " .. case[1] .. ": " .. stderr)
  T.ok((stdout .. stderr):find(case[3], 1, true), case[1] .. ": " .. stdout .. stderr)
  T.ok(not stderr:find("sqlite3_", 1, true), "no raw SQLite text: " .. stderr)
end
code, stdout = run("history merge merged.sqlite empty.sqlite")
T.eq(code, 0, "merging an empty history")
T.ok(stdout:find("empty.sqlite: 0 run(s) added", 1, true), stdout)
T.eq(read("empty.sqlite"), "", "the empty file is left as it was")

-- ---- a history whose disk fails is not "not a gpuexp history" ----
-- (the files it needs next to it cannot grow past 8 KiB: SQLite's I/O error, as on a full disk)
T.eq(run("history --history limited.sqlite record adhoc1.csv"), 0, "a history")
local _, _, exit_code = os.execute(string.format("cd %s && sh -c \"trap '' XFSZ; ulimit -f 16; exec %s history " ..
  "--history limited.sqlite record adhoc2.csv\" > limited.out 2> limited.err", work, binary))
stderr = read("limited.err") or ""
T.eq(exit_code, 6, "the history cannot be used: " .. stderr)
T.ok(stderr:find("cannot open the history limited.sqlite: disk I/O error", 1, true), stderr)
T.ok(not stderr:find("not a gpuexp history", 1, true), "never called not a history: " .. stderr)

-- ---- record and compare: what the metadata lacks ----
write("plain.csv", "a,b,median_ms\n1,2,3\n")
code, _, stderr = run("history --history h.sqlite record plain.csv")
T.eq(code, 6, "a CSV without metadata is not recorded")
T.ok(stderr:find("plain.csv: plain.meta.json does not exist or cannot be read; a run is recorded with the facts its " ..
  "metadata holds", 1, true) and stderr:find("gpuexp compare --axes A,B", 1, true), stderr)
T.ok(not stderr:find("with --axes", 1, true), "no --axes advice for record, which takes none: " .. stderr)
code, _, stderr = run("compare plain.csv plain.csv")
T.ok(code == 2 and stderr:find("plain.csv: no readable plain.meta.json beside it to say which columns are axes " ..
  "(plain.meta.json does not exist or cannot be read): give them with --axes", 1, true),
  "compare, which takes --axes, advises it: " .. stderr)
for _, case in ipairs({
  {'{"sweep":{"axes":[]}}', "plain.meta.json: its sweep.axes is empty (a sweep has at least one axis)"},
  {'{"sweep":{"axes":"a"}}', "plain.meta.json: its sweep.axes is not a list of {name = ..., values = ...}"},
  {'{"sweep":{"axes":{"a":1}}}', "plain.meta.json: its sweep.axes is not a list of {name = ..., values = ...}"},
  {'{"sweep":{"axes":[{"name":"a"},{"name":"a"}]}}', "plain.meta.json: its sweep.axes names 'a' twice (axes 1 and 2)"},
  {'{"sweep":{"axes":[{"name":""}]}}', "plain.meta.json: its sweep.axes[1] is not {name = ..., values = ...}"},
  {'{"sweep":5}', "plain.meta.json: its 'sweep' is not an object"},
  {'{"sweep":{"name":"x"}}', "plain.csv: plain.meta.json names no axes (no sweep.axes): give them with --axes"},
}) do
  write("plain.meta.json", case[1])
  code, _, stderr = run("compare plain.csv plain.csv")
  T.eq(code, 2, "compare, metadata " .. case[1] .. ": " .. stderr)
  T.ok(stderr:find(case[2], 1, true), "compare says what is odd: " .. stderr)
  code, _, stderr = run("history --history h.sqlite record plain.csv")
  T.eq(code, 6, "record, metadata " .. case[1])
  T.ok(not stderr:find("--axes", 1, true) or stderr:find("compare --axes", 1, true), "record: " .. stderr)
end

T.done()
