-- The ledger alone (engine/ledger.lua, ledger_sweep.lua, resume.lua), driven as the supervisor and
-- an inline run drive it, with no worker and no GPU: points handed out once, rows written as they
-- finish and put in point order at the end, the samples file, the column layout (explicit,
-- implicit, none good, a new field growing a column), shards and --only and their refusals, the
-- output's folder and lock, --resume from a CSV cut mid-row and mid-quoted-cell and its refusals,
-- the metadata's parts, and the run as the history records it from memory.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local ledger = require("gpuexp.engine.ledger")
local samples = require("gpuexp.store.samples")
local meta = require("gpuexp.store.meta")
local ledger_sweep = require("gpuexp.engine.ledger_sweep")
local history = require("gpuexp.store.history")
local result = require("gpuexp.store.result")
local dir = T.temporary_directory()

local read = require("gpuexp.store.meta").read_all
local write = T.write
local function exists(path)
  local file = io.open(path, "rb")
  if file then file:close() end
  return file ~= nil
end

local axes = {{name = "n", values = {1, 2, 3, 4}}}
local points = {{"1"}, {"2"}, {"3"}, {"4"}}
local function register(book, out, extra)
  local msg = {name = "s", out = out, axes = axes, points = points, info = {gpu = {name = "X"}, script_hash = "h"}}
  for k, v in pairs(extra or {}) do msg[k] = v end
  return book:register(msg)
end

-- a whole run: points handed out once each, finished out of order
local out = dir .. "/s.csv"
local book = ledger.new({host = "h", started_utc = "2026-01-01T00:00:00Z"})
local sweep = assert(register(book, out))
local handed = {}
for _ = 1, 4 do handed[#handed + 1] = assert(sweep:next_point("w1")) end
T.eq(table.concat(handed, ","), "1,2,3,4", "every point handed out once, in point order")
local none, complete = sweep:next_point("w1")
T.eq(none, nil, "no fifth point")
T.eq(complete, false, "not complete while points are in flight")
sweep:finish_point(2, {median_ms = "2.5"}, {samples_ms = {2.4, 2.6}})
sweep:finish_point(1, {median_ms = "1.5", gflops = "7"}, {samples_ms = {1.4}}) -- a field earlier rows lacked
sweep:finish_point(4, {median_ms = "4.5", status = "error", error = "bad"}, nil)
-- a point given back (its worker ended before starting it) goes to the next to ask
sweep:give_back(3)
T.eq(sweep:next_point("w2"), 3, "a point given back is handed out again")
sweep:finish_point(3, {median_ms = "3.5"}, nil)
T.eq(read(out), "n,median_ms,gflops,status,error\n1,1.5,7,ok,\n2,2.5,,ok,\n4,4.5,,error,bad\n3,3.5,,ok,\n",
  "rows as they finished (the new column rewrote the earlier ones)")
T.ok(sweep:complete(), "complete when every point has a row")
T.eq(book.totals.done, 4, "totals: done")
T.eq(book.totals.error, 1, "totals: error")
book:close()
T.eq(read(out), "n,median_ms,gflops,status,error\n1,1.5,7,ok,\n2,2.5,,ok,\n3,3.5,,ok,\n4,4.5,,error,bad\n",
  "at the end, the CSV in point order")
T.eq(read(samples.path_for(out)), "n,field,values\n2,samples_ms,2.4 2.6\n1,samples_ms,1.4\n",
  "the samples file, as points finished")
local info = assert(meta.read_json(meta.path_for(out)))
T.eq(info.parts[1].ended, "complete", "the metadata's part ended complete")
T.eq(read(out .. ".lock"), nil, "the lock is released")
-- the rows as a result, from memory
local run = sweep:result()
T.eq(run:value(require("gpuexp.store.result").key({"1"}), "gflops"), 7, "the result from memory")
T.eq(#run:sample_entries(), 2, "the result carries the samples it wrote")
T.ok(run.source, "and its source")

-- a run not recorded in a history (keep = false): the same files, nothing kept in memory beyond the rows
local lean_out = dir .. "/lean.csv"
local lean_book = ledger.new({host = "h", keep = false})
local lean = assert(register(lean_book, lean_out))
for index = 1, 4 do lean:finish_point(index, {median_ms = tostring(index)}, {samples_ms = {index, index}}) end
lean_book:close()
T.eq(#lean.sample_entries, 0, "keep = false: no sample kept")
T.eq(#lean.chunks, 0, "keep = false: the CSV's text not kept")
T.eq(select(2, read(samples.path_for(lean_out)):gsub("\n", "")), 5, "keep = false: the samples file written all the same")
T.eq(select(2, read(lean_out):gsub("\n", "")), 5, "keep = false: the CSV written all the same")

-- a shard: its share of the points, its own file
local shard_book = ledger.new({host = "h", shard = {index = 1, count = 2}})
local shard = assert(register(shard_book, dir .. "/p.csv"))
T.eq(shard.out, dir .. "/p.shard-1-of-2.csv", "a shard's own output")
T.eq(table.concat(shard.mine, ","), "2,4", "shard 1 of 2 has points 2 and 4")
T.eq(shard:next_point(), 2, "its first point")
shard:finish_point(2, {median_ms = "2"}, nil)
shard_book:close()

-- --resume: the finished points are skipped, the rest run
local resumed_book = ledger.new({host = "h", resume = true, shard = {index = 1, count = 2}})
local resumed = assert(register(resumed_book, dir .. "/p.csv"))
T.eq(resumed:next_point(), 4, "a resumed run starts at the first unfinished point")
resumed:finish_point(4, {median_ms = "4"}, nil)
resumed_book:close()
T.eq(read(dir .. "/p.shard-1-of-2.csv"), "n,median_ms,status,error\n2,2,ok,\n4,4,ok,\n", "the resumed shard's rows")
local parts = assert(meta.read_json(meta.path_for(dir .. "/p.shard-1-of-2.csv"))).parts
T.eq(#parts, 2, "one part per invocation")
T.eq(parts[2].resumed, true, "the second part says it resumed")

-- another sweep on the same output in the same run is refused
local twice = ledger.new({host = "h"})
assert(register(twice, dir .. "/t.csv"))
local again, why = register(twice, dir .. "/t.csv", {name = "other"})
T.eq(again, nil, "a second sweep on one output")
T.ok(why:find("sweep 'other' writes to " .. dir .. "/t.csv, which sweep 's' of this run writes too", 1, true), why)
twice:close()

-- ---- the column layout: one rule ----
local fields = {"median_ms", "n", "status", "gflops", "median_ms", "error"}
T.eq(table.concat(ledger_sweep.layout({"n", "mode"}, fields), ","),
  "n,mode,median_ms,gflops,status,error", "axes, fields once each in their order, then status and error")
T.eq(table.concat(ledger_sweep.layout({"n"}, {}), ","), "n,status,error", "no fields: axes, status, error")
local grown = ledger_sweep.layout({"n"}, {"b"})
T.eq(table.concat(ledger_sweep.grow(grown, {n = "1", b = "2", z = "3", a = "4", status = "ok"}), ","), "a,z",
  "the fields the columns lack, in name order")
T.eq(table.concat(grown, ","), "n,b,a,z,status,error", "grown before status and error")

-- explicit columns (a device column for a run on several GPUs): the header at once, in that order
local explicit_book = ledger.new({host = "h", device_column = true})
local explicit = assert(register(explicit_book, dir .. "/e.csv", {columns = {"median_ms", "n", "note", "status"}}))
T.eq(table.concat(explicit.columns, ","), "n,median_ms,note,device,status,error", "explicit columns")
T.eq(read(dir .. "/e.csv"), "n,median_ms,note,device,status,error\n", "the header is written at once")
explicit:finish_point(3, {median_ms = "3", device = "1"}, nil)
explicit:finish_point(1, {median_ms = "1", device = "0"}, nil)
explicit_book:close()
T.eq(read(dir .. "/e.csv"), "n,median_ms,note,device,status,error\n3,3,,1,ok,\n1,1,,0,ok,\n",
  "an incomplete sweep keeps its rows as they finished")
local explicit_info = assert(meta.read_json(meta.path_for(dir .. "/e.csv")))
T.eq(explicit_info.parts[1].ended, "incomplete", "the part ended incomplete")
T.eq(explicit_info.sweep.complete, false, "the sweep is not complete")
T.eq(explicit_info.sweep.rows_ok, 2, "its good rows counted")

-- no columns given: rows wait for the first good one, whose fields (in name order) make them
local held_book = ledger.new({host = "h"})
local held = assert(register(held_book, dir .. "/i.csv"))
T.eq(held.columns, nil, "no columns before a good row")
held:finish_point(2, {status = "error", error = "no launch"}, nil)
T.eq(read(dir .. "/i.csv"), "", "an error row is held until the columns are known")
held:finish_point(1, {median_ms = "1", a_field = "x"}, nil)
T.eq(read(dir .. "/i.csv"), "n,a_field,median_ms,status,error\n2,,,error,no launch\n1,x,1,ok,\n",
  "the header from the first good row, the held row first")
held_book:close()
T.eq(held_book.totals.error, 1, "the error row counted")
-- no good row at all: the axes, status and error
local bad_book = ledger.new({host = "h"})
local bad = assert(register(bad_book, dir .. "/b.csv"))
bad:finish_point(3, {status = "crashed", error = "signal 11"}, nil)
bad_book:close()
T.eq(read(dir .. "/b.csv"), "n,status,error\n3,crashed,signal 11\n", "no good row: axes, status, error")
T.eq(bad_book.totals.first_failure.point, "n=3", "the run's first failure")
T.eq(bad_book.totals.crashed, 1, "a crash counted")

-- --only: the points a clause names (axis name -> cell text), with --shard too
local two_axes = {{name = "n", values = {1, 2}}, {name = "mode", values = {"a", "b"}}}
local two_points = {{"1", "a"}, {"1", "b"}, {"2", "a"}, {"2", "b"}}
local only_book = ledger.new({host = "h", only = {{mode = "b"}, {n = "2", mode = "a"}}})
local only = assert(register(only_book, dir .. "/o.csv", {axes = two_axes, points = two_points}))
T.eq(table.concat(only.mine, ","), "2,3,4", "--only's share")
T.eq(only.out, dir .. "/o.csv", "--only writes the sweep's own output")
only_book:close()
local only_info = assert(meta.read_json(meta.path_for(dir .. "/o.csv")))
local share_indices = {}
for k, index in ipairs(only_info.sweep.share_indices) do share_indices[k] = math.tointeger(index) end
T.eq(table.concat(share_indices, ","), "2,3,4", "the metadata names the share's points")
T.eq(only_info.sweep.points_in_share, 3, "and counts them")
local both_book = ledger.new({host = "h", only = {{mode = "a"}}, shard = {index = 1, count = 2}})
local both = assert(register(both_book, dir .. "/o.csv", {axes = two_axes, points = two_points}))
T.eq(table.concat(both.mine, ","), "", "shard 1 of 2 (points 2 and 4) has no point of mode a")
both_book:close()
-- its refusals, before anything is written
local function refused(options, out, extra, what)
  local sweep, why, kind = register(ledger.new(options), out, extra)
  T.eq(sweep, nil, what)
  T.ok(not exists(out) and not exists(out .. ".lock") and not exists(meta.path_for(out)), what .. ": nothing written")
  return why, kind
end
local why_only, kind_only = refused({host = "h", only = {{size = "1"}}}, dir .. "/r.csv",
  {axes = two_axes, points = two_points}, "--only naming no axis")
T.eq(why_only, "--only names the axis 'size', which sweep 's' does not have (its axes: n, mode); nothing was run " ..
  "or written", "the axis named")
T.eq(kind_only, "option", "an option error")
why_only, kind_only = refused({host = "h", only = {{mode = "c"}}}, dir .. "/r.csv",
  {axes = two_axes, points = two_points}, "--only matching no point")
T.eq(why_only, "--only matches no point of sweep 's' (its points: n = 1|2, mode = a|b); nothing was run or written",
  "the points named")
T.eq(kind_only, "option", "an option error")

-- the output's folder: one the user named must exist; the default one is made
local why_dir, kind_dir = refused({host = "h"}, dir .. "/missing/x.csv", nil, "a missing folder")
T.eq(why_dir, "cannot write " .. dir .. "/missing/x.csv: the folder " .. dir .. "/missing does not exist (it is not " ..
  "created)", "the folder named")
T.eq(kind_dir, "write", "a write error")
local made_book = ledger.new({host = "h"})
assert(register(made_book, dir .. "/made/x.csv", {make_folder = true}))
made_book:close()
T.eq(read(dir .. "/made/x.csv"), "n,status,error\n", "the default folder is made")

-- the lock: a second writer of an output is refused while the first writes it, welcome after
local first_book = ledger.new({host = "h"})
assert(register(first_book, dir .. "/l.csv"))
local second, why_lock, kind_lock = register(ledger.new({host = "h"}), dir .. "/l.csv")
T.eq(second, nil, "a second writer")
T.eq(kind_lock, "busy", "is told to wait (exit 75)")
T.ok(why_lock:find(dir .. "/l.csv: another run is writing it (", 1, true), why_lock)
first_book:close()
local later_book = ledger.new({host = "h"})
T.ok(register(later_book, dir .. "/l.csv"), "the output is free once the first closed")
later_book:close()

-- --resume from a CSV cut mid-row: a part killed after points 1 and 2 (its lock gone with it),
-- the third row and its samples line cut off
local cut = dir .. "/cut.csv"
local killed_book = ledger.new({host = "h", started_utc = "2026-01-01T00:00:00Z"})
local killed = assert(register(killed_book, cut))
for index = 1, 2 do
  killed:next_point()
  killed:finish_point(index, {median_ms = tostring(index)}, {samples_ms = {index}})
end
killed.file:close()
killed.samples:close()
gpuexp._process.unlock(cut .. ".lock")
write(cut, read(cut) .. "3,3.")
write(samples.path_for(cut), read(samples.path_for(cut)) .. "3,samples_ms,3.")
local cut_book = ledger.new({host = "h", resume = true})
local cut_sweep = assert(register(cut_book, cut))
T.eq(read(cut), "n,median_ms,status,error\n1,1,ok,\n2,2,ok,\n", "the cut row dropped")
T.eq(cut_sweep.dropped_bytes, 4, "its bytes counted")
T.eq(table.concat(cut_sweep.queue, ","), "3,4", "the finished points are not run again")
T.eq(cut_book.totals.done, 2, "they count as done")
cut_sweep:finish_point(4, {median_ms = "4"}, {samples_ms = {4}})
cut_sweep:finish_point(3, {median_ms = "3"}, {samples_ms = {3}})
cut_book:close()
T.eq(read(cut), "n,median_ms,status,error\n1,1,ok,\n2,2,ok,\n3,3,ok,\n4,4,ok,\n", "complete, in point order")
T.eq(read(samples.path_for(cut)), "n,field,values\n1,samples_ms,1\n2,samples_ms,2\n4,samples_ms,4\n3,samples_ms,3\n",
  "the samples' cut line dropped, the rest appended")
local cut_parts = assert(meta.read_json(meta.path_for(cut))).parts
T.eq(#cut_parts, 2, "one part per invocation")
T.eq(cut_parts[1].ended, "killed (no end was recorded)", "the killed part is said")
T.eq(cut_parts[1].started_utc, "2026-01-01T00:00:00Z", "as it started")
T.eq(cut_parts[2].resumed, true, "the second part resumed")
T.eq(cut_parts[2].ended, "complete", "and completed")

-- the run as the history records it: from memory, with the samples of both parts; the same files
-- recorded again by hand are that run, not a second one
local db_path = dir .. "/history.sqlite"
local ids = assert(history.record_outputs(db_path, {cut_sweep:result()}))
local db = assert(history.open(db_path))
T.eq(db:rows("SELECT count(*) AS n FROM rows WHERE run_id = ?", ids[1])[1].n, 4, "every row recorded")
local _, exported_samples = history.export(db, ids[1])
T.eq(exported_samples, read(samples.path_for(cut)), "the samples of both parts, as the file holds them")
local again_id, _, again = history.record_file(db, cut, {kind = "run"})
T.eq(again_id, ids[1], "recorded again by hand: the run's id")
T.eq(again, true, "and said to be there already")
T.eq(db:rows("SELECT count(*) AS n FROM runs")[1].n, 1, "one run")
db:close()
-- the same for a resumed file appended to (no cut row): the shard's
local shard_out = dir .. "/p.shard-1-of-2.csv"
local shard_ids = assert(history.record_outputs(db_path, {resumed:result()}))
db = assert(history.open(db_path))
local shard_again, _, shard_twice = history.record_file(db, shard_out, {kind = "run"})
T.eq(shard_again, shard_ids[1], "a resumed run recorded again by hand: the run's id")
T.eq(shard_twice, true, "and said to be there already")
db:close()
-- no file is read back: the files gone, the run is still recorded whole
local memory_book = ledger.new({host = "h"})
local memory = assert(register(memory_book, dir .. "/m.csv"))
memory:finish_point(1, {median_ms = "1"}, {samples_ms = {0.5, 1.5}})
memory_book:close()
local from_memory = memory:result()
for _, path in ipairs({dir .. "/m.csv", meta.path_for(dir .. "/m.csv"), samples.path_for(dir .. "/m.csv")}) do
  os.remove(path)
end
T.eq(table.concat(from_memory:samples(result.key({"1"}), "samples_ms"), " "), "0.5 1.5", "the samples in memory")
local memory_ids = assert(history.record_outputs(db_path, {from_memory}))
db = assert(history.open(db_path))
T.eq(db:rows("SELECT samples FROM samples WHERE run_id = ?", memory_ids[1])[1].samples, "0.5 1.5",
  "the samples recorded from memory")
T.eq(db:rows("SELECT count(*) AS n FROM rows WHERE run_id = ?", memory_ids[1])[1].n, 1, "the row recorded")
T.ok(memory_ids[1] ~= ids[1], "another run")
db:close()

-- --resume from a CSV cut inside a quoted cell that holds a newline: that row is dropped whole
local quoted = dir .. "/q.csv"
local quoted_first = ledger.new({host = "h"})
local quoted_sweep = assert(register(quoted_first, quoted))
quoted_sweep:finish_point(1, {median_ms = "1"}, nil)
quoted_first:close()
write(quoted, read(quoted) .. '2,,error,"line one\nline t')
local quoted_book = ledger.new({host = "h", resume = true})
local quoted_resumed = assert(register(quoted_book, quoted))
T.eq(read(quoted), "n,median_ms,status,error\n1,1,ok,\n", "the row cut inside its quoted cell dropped")
T.eq(table.concat(quoted_resumed.queue, ","), "2,3,4", "its point runs again")
quoted_resumed:finish_point(2, {status = "error", error = "line one\nline two"}, nil)
quoted_book:close()
T.eq(read(quoted), 'n,median_ms,status,error\n1,1,ok,\n2,,error,"line one\nline two"\n', "and its row written whole")

-- a resume refused: the script changed, or a row is for a point the sweep has not; the output is
-- left as it was, unlocked
local before = read(quoted)
local changed, why_changed, kind_changed = register(ledger.new({host = "h", resume = true}), quoted,
  {info = {gpu = {name = "X"}, script_hash = "other"}})
T.eq(changed, nil, "a changed script")
T.eq(why_changed, "cannot resume " .. quoted .. ": the script changed (hash h -> other) (--allow-changed resumes " ..
  "anyway)", "the change named")
T.eq(kind_changed, "option", "an option error")
T.eq(read(quoted), before, "the rows kept")
T.ok(not exists(quoted .. ".lock"), "the output unlocked")
local allowed_book = ledger.new({host = "h", resume = true, allow_changed = true})
local allowed = assert(register(allowed_book, quoted, {info = {gpu = {name = "X"}, script_hash = "other"}}))
T.eq(table.concat(allowed.queue, ","), "3,4", "--allow-changed resumes anyway")
allowed_book:close()
write(quoted, before .. "9,9,ok,\n")
local stranger, why_stranger = register(ledger.new({host = "h", resume = true, allow_changed = true}), quoted)
T.eq(stranger, nil, "a row for no point")
T.eq(why_stranger, "cannot resume " .. quoted .. ": it has a row for a point this sweep does not have (9); the axes " ..
  "changed", "is named")
T.ok(not exists(quoted .. ".lock"), "the output unlocked")
T.done()
