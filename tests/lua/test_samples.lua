-- The samples file's one owner, store/samples.lua: its path, header, appending as points finish,
-- writing whole, reading back by column name, a damaged file named by file and line; and the
-- result model and the history reading it through that module.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local samples = require("gpuexp.store.samples")
local result = require("gpuexp.store.result")
local history = require("gpuexp.store.history")
local dir = T.temporary_directory()

local read, write = T.read, T.write

-- the path and the header
T.eq(samples.path_for("results/copy.csv"), "results/copy.samples.csv", "the samples file beside a CSV")
T.eq(samples.path_for("run"), "run.samples.csv", "a name without .csv")
T.eq(table.concat(samples.columns({"n", "mode"}), ","), "n,mode,field,values", "the header: axes, field, values")
T.eq(samples.values_text({1, 0.5, 1 / 3, 2.5e-7}), "1 0.5 0.333333333 2.5e-07", "values as %.9g, space-separated")

-- appending: the header once, the fields of a point in name order, a cell with a comma quoted
local path = dir .. "/sweep.samples.csv"
local appender = samples.appender(path, {"n", "label"})
T.ok(not io.open(path), "no file before the first point with samples")
appender:write({"1", "a,b"}, {samples_ms = {1.5, 2}, cycles = {3000}})
appender:write({"2", "c"}, {samples_ms = {4}})
appender:close()
appender:close() -- again: nothing
local expected = 'n,label,field,values\n1,"a,b",cycles,3000\n1,"a,b",samples_ms,1.5 2\n2,c,samples_ms,4\n'
T.eq(read(path), expected, "the appended file")
-- a resumed run appends to the file it finds, with no second header
local again = samples.appender(path, {"n", "label"})
again:write({"3", "d"}, {samples_ms = {5, 6}})
again:close()
T.eq(read(path), expected .. "3,d,samples_ms,5 6\n", "appended after a resume")

-- a file a kill left empty gets its header
local empty = write(dir .. "/empty.samples.csv", "")
local refill = samples.appender(empty, {"n"})
refill:write({"1"}, {samples_ms = {1}})
refill:close()
T.eq(read(empty), "n,field,values\n1,samples_ms,1\n", "an empty file gets the header")

-- a last line cut by a kill is dropped before the resumed run appends (the file stays readable)
local cut = write(dir .. "/cut.samples.csv", "n,field,values\n1,samples_ms,1 2\n2,samp")
local resumed = samples.appender(cut, {"n"})
resumed:write({"3"}, {samples_ms = {5}})
resumed:close()
T.eq(read(cut), "n,field,values\n1,samples_ms,1 2\n3,samples_ms,5\n", "the cut line dropped")
T.eq(#assert(samples.read(cut, {"n"})), 2, "and the file reads")
local long = {}
for i = 1, 3000 do long[i] = string.format("%d,samples_ms,%d", i, i) end -- the cut line after several KiB
local cut_long = write(dir .. "/cut_long.samples.csv", "n,field,values\n" .. table.concat(long, "\n") .. "\n" ..
  "3001,samples_ms," .. string.rep("9 ", 5000))
local resumed_long = samples.appender(cut_long, {"n"})
resumed_long:write({"3001"}, {samples_ms = {9}})
resumed_long:close()
T.eq(read(cut_long), "n,field,values\n" .. table.concat(long, "\n") .. "\n3001,samples_ms,9\n",
  "a cut line longer than a read")

-- a resumed run's entries taken back (the ledger keeps them for the history): the cut last line
-- dropped from the file first, so that a cut line is never read as a whole one
local back = write(dir .. "/back.samples.csv", "n,field,values\n1,samples_ms,1 2\n2,samples_ms,3 4")
local taken = assert(samples.take_back(back, {"n"}))
T.eq(#taken, 1, "the whole lines only")
T.eq(taken[1].values .. "|" .. taken[1].where, "1 2|" .. back .. ":2", "the entry and where it was read")
T.eq(read(back), "n,field,values\n1,samples_ms,1 2\n", "the cut line dropped from the file")
T.eq(samples.take_back(dir .. "/none_yet.samples.csv", {"n"}), nil, "no file: nothing to take back")
-- the appender returns what it wrote, in the file's order
local said_path = dir .. "/said.samples.csv"
local said_appender = samples.appender(said_path, {"n"})
local said = said_appender:write({"7"}, {b = {1}, a = {2.5}})
said_appender:close()
T.eq(#said, 2, "an entry a field")
T.eq(said[1].field .. "=" .. said[1].values .. " " .. said[2].field .. "=" .. said[2].values .. " " .. said[1].cells[1],
  "a=2.5 b=1 7", "the entries written")
T.eq(read(said_path), "n,field,values\n7,a,2.5\n7,b,1\n", "as the file has them")

-- reading back: every entry with its axis cells, field, values and where it was read
local entries = assert(samples.read(path, {"n", "label"}))
T.eq(#entries, 4, "entries")
T.eq(table.concat(entries[1].cells, "|"), "1|a,b", "first entry's axis cells")
T.eq(entries[2].field, "samples_ms", "second entry's field")
T.eq(entries[2].values, "1.5 2", "second entry's values")
T.eq(entries[4].where, path .. ":5", "the line an entry was read from")
-- the whole-file writer gives the same text as the appender
T.eq(samples.text({"n", "label"}, entries), read(path), "written whole, the same text")

-- columns are found by name, in any order
local reordered = write(dir .. "/reordered.samples.csv", "field,values,label,n\nsamples_ms,7 8,x,9\n")
local found = assert(samples.read(reordered, {"n", "label"}))
T.eq(table.concat(found[1].cells, "|"), "9|x", "axis cells by name")
T.eq(found[1].values, "7 8", "values by name")

-- no file: no samples, no problem
local none, why = samples.read(dir .. "/none.samples.csv", {"n"})
T.eq(none, nil, "no file, no entries")
T.eq(why, nil, "no file is not a problem")

-- a damaged file is named by file and line
local ragged = write(dir .. "/ragged.samples.csv", "n,field,values\n1,samples_ms,1 2\n2,samples_ms\n")
none, why = samples.read(ragged, {"n"})
T.eq(none, nil, "a ragged file gives no entries")
-- (the csv reader's message, led by the calling script's line as every gpuexp error is)
local function names(problem, text, what)
  T.ok(problem and problem:find(text, 1, true), what .. ": " .. tostring(problem))
end
names(why, ragged .. ":3: 2 cells where the header has 3", "a ragged row named")
local unclosed = write(dir .. "/unclosed.samples.csv", 'n,field,values\n1,samples_ms,"1 2\n')
none, why = samples.read(unclosed, {"n"})
names(why, unclosed .. ":2: a quoted cell is never closed", "an unclosed quote named")
local headless = write(dir .. "/headless.samples.csv", "n,field\n1,samples_ms\n")
none, why = samples.read(headless, {"n"})
T.eq(why, headless .. ":1: no column 'values' (a samples file's header is n,field,values)", "a missing column named")
none, why = samples.read(reordered, {"n", "size"})
T.ok(why and why:find(reordered .. ":1: no column 'size'", 1, true), "a missing axis column named: " .. tostring(why))

-- a write that fails (a full disk) is a write error naming the file
local full = samples.appender("/dev/full", {"n"})
local ok, problem = pcall(full.write, full, {"1"}, {samples_ms = {1}})
T.ok(not ok, "a write to a full disk fails")
T.eq(type(problem) == "table" and problem.kind, "write", "a write error (exit code 7)")
T.ok(tostring(problem.message):find("cannot write /dev/full", 1, true), tostring(problem.message))

-- the result model reads a CSV's samples through the module (columns by name)
local csv_path = write(dir .. "/run.csv", "n,label,median_ms,status,error\n9,x,7.5,ok,\n")
write(dir .. "/run.meta.json", '{"sweep": {"name": "run", "axes": [{"name": "n", "values": [9]}, ' ..
  '{"name": "label", "values": ["x"]}], "complete": true}, "script": "run.lua"}')
write(samples.path_for(csv_path), read(reordered))
local run = assert(result.read(csv_path))
local values = run:samples(result.key({"9", "x"}), "samples_ms")
T.eq(values and table.concat(values, " "), "7 8", "the result's samples of the point")

-- metadata that is JSON but no object (a damaged file) is said, not a Lua error
write(dir .. "/numeric.csv", "n,status,error\n1,ok,\n")
write(dir .. "/numeric.meta.json", "5")
local unread, unread_why = result.read(dir .. "/numeric.csv")
T.eq(unread, nil, "a run whose metadata is a number")
T.ok(unread_why:find("no readable " .. dir .. "/numeric.meta.json beside it", 1, true), unread_why)

-- the history records them by name and exports them in the file's own layout
local db = assert(history.open(dir .. "/history.sqlite"))
local id = assert(history.record_file(db, csv_path, {kind = "run"}))
local rows_text, samples_text = history.export(db, id)
T.eq(rows_text, "n,label,median_ms,status,error\n9,x,7.5,ok,\n", "the exported rows")
T.eq(samples_text, "n,label,field,values\n9,x,samples_ms,7 8\n", "the exported samples")
-- a damaged samples file stops the record, named by file and line, and records nothing
local damaged_csv = write(dir .. "/damaged.csv", read(csv_path))
write(dir .. "/damaged.meta.json", read(dir .. "/run.meta.json"))
write(samples.path_for(damaged_csv), "n,label,field,values\n9,x,samples_ms\n")
local recorded, problem_text = history.record_file(db, damaged_csv, {kind = "run"})
T.eq(recorded, nil, "a run with a damaged samples file is not recorded")
local damaged_run = assert(result.read(damaged_csv))
local no_entries, entries_problem = damaged_run:sample_entries()
T.eq(no_entries, nil, "the result's samples of a damaged file")
names(entries_problem, samples.path_for(damaged_csv) .. ":2: 3 cells where the header has 4", "the result names it")
T.eq(damaged_run:samples(result.key({"9", "x"}), "samples_ms"), nil, "and gives no samples")
names(problem_text, samples.path_for(damaged_csv) .. ":2: 3 cells where the header has 4", "the damage named")
T.eq(db:rows("SELECT count(*) AS n FROM runs")[1].n, 1, "only the good run is in the history")
-- a damaged history (a number where the axes are, a list where a cell is, a key that is no text) is
-- named by its run, never a Lua error further on
db:run("UPDATE runs SET axes = '5' WHERE id = ?", id)
local loaded, damage = history.load_run(db, id)
T.eq(loaded, nil, "a damaged run does not load")
T.eq(damage, "run " .. id .. " of the history is damaged: its axes, columns or metadata are not what gpuexp writes",
  "the damage named")
local exported, export_damage = history.export(db, id)
T.eq(exported, nil, "nor exports")
T.ok(export_damage:find("run " .. id .. " of the history is damaged", 1, true), export_damage)
db:run("UPDATE runs SET axes = 'null' WHERE id = ?", id) -- JSON null: no axes, as before
db:run("UPDATE rows SET cells = '[[1]]' WHERE run_id = ?", id)
loaded, damage = history.load_run(db, id)
T.eq(damage, "run " .. id .. " of the history is damaged: a row's cells are not what gpuexp writes", "a damaged row")
exported, export_damage = history.export(db, id)
T.eq(export_damage, "run " .. id .. " of the history is damaged: a row's cells are not what gpuexp writes", "exported")
db:close()
T.done()
