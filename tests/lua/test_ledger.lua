-- The ledger alone (engine/ledger.lua), driven as the supervisor and an inline run drive it, with
-- no worker and no GPU: points handed out once, rows written as they finish and put in point order
-- at the end, the samples file, a new field growing a column, shards, --resume skipping finished
-- points, and a second sweep on the same output refused.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local ledger = require("gpuexp.engine.ledger")
local samples = require("gpuexp.store.samples")
local meta = require("gpuexp.store.meta")
local dir = T.temporary_directory()

local read = require("gpuexp.store.meta").read_all

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
T.done()
