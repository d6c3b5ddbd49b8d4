-- The ledger service alone (engine/service.lua), driven with the protocol's messages as both
-- transports send them, with no process and no GPU: each message's reply (or none), the slots'
-- state (the point a crash is charged to, the prefetched one, waiting), the ledger's state, a
-- worker lost during its point, a failed setup, a sweep's end releasing the slots waiting for it,
-- and the end of the run (the history, the failures report, the exit code).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local service = require("gpuexp.engine.service")
local meta = require("gpuexp.store.meta")
local read = meta.read_all
local EXIT = require("gpuexp.catalog").EXIT
local dir = T.temporary_directory()

-- A service whose replies are kept per slot, in order.
local function new_service(extra)
  local inbox = {}
  local config = {ledger = {host = "h", devices = {0, 1}, command = {"gpuexp", "s.lua"}, device_column = true},
    point_timeout_s = 7, device_column = true,
    send = function(slot, reply) inbox[slot] = inbox[slot] or {}; table.insert(inbox[slot], reply) end}
  for k, v in pairs(extra or {}) do config[k] = v end
  local s = service.new(config)
  -- the replies slot got since the last look
  local function replies(slot)
    local got = inbox[slot] or {}
    inbox[slot] = {}
    return got
  end
  return s, replies
end

local function registration(out, extra)
  local msg = {op = "register", name = "s", out = out, axes = {{name = "n", values = {1, 2, 3}}},
    points = {{"1"}, {"2"}, {"3"}}, info = {gpu = {name = "X", uuid = "u"}, script_hash = "h"}}
  for k, v in pairs(extra or {}) do msg[k] = v end
  return msg
end

-- ---- one slot: register, next, prefetch, row, the end of the sweep ----
local s, replies = new_service()
local a, b = {device = 0, slot = 0}, {device = 1, slot = 1}
local slots = {a, b}
local out = dir .. "/s.csv"
s:handle(a, registration(out), slots)
local got = replies(a)
T.eq(#got, 1, "register: one reply")
T.eq(got[1].id, out, "register: the sweep's id is its output")
T.eq(got[1].total, 3, "register: the points of this share")
T.eq(got[1].done_before, 0, "register: none done before")
T.eq(#s.book.sweeps, 1, "the ledger holds the sweep")
T.eq(s.book.totals.points, 3, "the ledger's total")

s:handle(a, {op = "next", id = out}, slots)
got = replies(a)
T.eq(got[1].index, 1, "next: the first point")
T.eq(a.point.index, 1, "the point a crash is charged to")
T.eq(a.point.limit, 7, "the run's point limit")
s:handle(a, {op = "setup", id = out, running = true}, slots)
T.eq(#replies(a), 0, "setup: no reply")
T.eq(a.in_setup, "s", "the slot is in the sweep's setup")
s:handle(a, {op = "setup", id = out, running = false}, slots)
T.eq(a.in_setup, nil, "the setup is over")
s:handle(a, {op = "prefetch", id = out}, slots)
got = replies(a)
T.eq(got[1].index, 2, "prefetch: the next point")
T.eq(a.prefetched.index, 2, "the prefetched point is the slot's, not started")
T.eq(a.point.index, 1, "the running point is still 1")
s:handle(a, {op = "row", id = out, index = 1, row = {v = "10", status = "ok"}, arrays = {t = {1.5, 2}}}, slots)
T.eq(#replies(a), 0, "row: no reply of its own (the prefetch's is the next point)")
T.eq(a.point.index, 2, "the prefetched point runs now")
T.eq(a.prefetched, nil, "nothing prefetched")
T.eq(s.book.totals.done, 1, "one point done")
T.eq(read(out), "n,device,v,status,error\n1,0,10,ok,\n", "the row written at once, with the GPU that measured it")
T.ok(read(dir .. "/s.samples.csv"):find("1,t,1.5 2", 1, true), "its samples written")

-- ---- a second slot: the last point; a slot waiting for the points of others ----
s:handle(b, registration(out, {info = {gpu = {name = "X", uuid = "v"}}}), slots)
T.eq(replies(b)[1].id, out, "the same sweep, registered by a second worker")
s:handle(b, {op = "next", id = out}, slots)
T.eq(replies(b)[1].index, 3, "the second worker gets point 3")
s:handle(b, {op = "prefetch", id = out}, slots)
got = replies(b)
T.eq(got[1].index, nil, "prefetch: no point free")
T.eq(b.prefetched, nil, "nothing prefetched")
s:handle(a, {op = "row", id = out, index = 2, row = {v = "20"}}, slots)
s:handle(a, {op = "next", id = out}, slots)
T.eq(#replies(a), 0, "next: no reply while point 3 runs elsewhere")
T.eq(a.waiting, s.book.sweeps[1], "the first worker waits for the sweep's end")
s:handle(b, {op = "row", id = out, index = 3, row = {v = "30"}}, slots)
got = replies(a)
T.eq(#got, 1, "the sweep's end releases the waiting worker")
T.ok(got[1].done, "its reply: done")
T.eq(#got[1].rows, 3, "with the rows")
T.eq(a.waiting, nil, "no longer waiting")
s:handle(b, {op = "next", id = out}, slots)
T.ok(replies(b)[1].done, "next after the end: done")
T.ok(s.book.sweeps[1].closed, "the sweep is closed")
T.eq(read(out), "n,device,v,status,error\n1,0,10,ok,\n2,0,20,ok,\n3,1,30,ok,\n", "every row, each with its GPU")
T.eq(#meta.read_json(dir .. "/s.meta.json").gpus, 2, "both GPUs in the metadata")

-- ---- a worker lost during its point: a crashed row, its prefetched point given back ----
local lost_out = dir .. "/lost.csv"
s:handle(a, registration(lost_out, {columns = {"v"}}), slots)
replies(a)
s:handle(a, {op = "next", id = lost_out}, slots)
s:handle(a, {op = "prefetch", id = lost_out}, slots)
replies(a)
local charged = s:worker_lost(a, "crashed", "the worker exited with code 134 during the point", slots)
T.eq(charged.index, 1, "the point charged")
T.eq(a.point, nil, "the slot runs no point")
T.eq(a.prefetched, nil, "the prefetched point is given back")
T.eq(read(lost_out), ("n,v,device,status,error\n1,,0,crashed,the worker exited with code 134 during the point\n"),
  "a crashed row, at once")
a.restart_from, a.crashed_point = gpuexp.clock() - 0.5, "s #1"
s:handle(a, {op = "next", id = lost_out}, slots)
T.eq(replies(a)[1].index, 2, "the given-back point goes to the next to ask")
T.eq(#s.book.restarts, 1, "the restart's cost recorded")
T.eq(s.book.restarts[1].after_point, "s #1", "after the crashed point")
T.ok(s.book.restarts[1].seconds >= 0.5, "its seconds")
T.eq(s:worker_lost(b), nil, "a worker lost outside a point is charged nothing")

-- ---- a refused registration ----
local refused, refused_replies = new_service({ledger = {host = "h", only = {{j = "1"}}}})
refused:handle(a, registration(dir .. "/only.csv"), {a})
got = refused_replies(a)
T.ok(got[1].error:find("--only names the axis 'j'", 1, true), "the reason: " .. tostring(got[1].error))
T.eq(got[1].kind, "option", "its kind (exit 2)")
T.eq(read(dir .. "/only.csv"), nil, "nothing written")
T.raises(function() refused:handle(a, {op = "next", id = dir .. "/only.csv"}) end, "a sweep this run does not have",
  "a message about no sweep")
T.raises(function() refused:handle(a, {op = "rows"}) end, "unknown message 'rows'", "an unknown message")

-- ---- a failed setup: the sweep ends, no point is handed out after it ----
local set, set_replies = new_service()
local setup_out = dir .. "/setup.csv"
set:handle(a, registration(setup_out), {a})
set:handle(a, {op = "next", id = setup_out}, {a})
set_replies(a)
set:handle(a, {op = "setup_failed", id = setup_out, index = 1, message = "s.lua:2: no device"}, {a})
T.eq(#set_replies(a), 0, "setup_failed: no reply")
T.eq(a.point, nil, "its point is not the worker's fault")
T.ok(set.book.sweeps[1].closed, "the sweep is closed at once (nothing else of it runs)")
T.eq(meta.read_json(dir .. "/setup.meta.json").parts[1].ended, "the sweep's setup failed", "the metadata says why")
set:handle(a, {op = "next", id = setup_out}, {a})
T.eq(#set_replies(a), 0, "no point is handed out after a failed setup")
T.eq(set:finish(1, "the script failed (exit code 1)"), 1, "the run ends with the script's exit code")

-- ---- the end of the run: the failures report, the history ----
T.eq(s:finish(0), EXIT.INCOMPLETE, "a crashed point: exit 5")
local ok_run, ok_replies = new_service({history = dir .. "/h.db"})
local ok_out = dir .. "/ok.csv"
ok_run:handle(a, registration(ok_out, {expect_failures = true}), {a})
for index = 1, 3 do
  ok_run:handle(a, {op = "next", id = ok_out}, {a})
  ok_run:handle(a, {op = "row", id = ok_out, index = index, row = {v = "1", status = index == 2 and "error" or "ok",
    error = index == 2 and "cannot launch" or nil}}, {a})
end
ok_replies(a)
T.eq(ok_run:finish(0), 0, "expected failures: exit 0")
T.ok(gpuexp._is_directory(dir) and read(dir .. "/h.db") ~= nil, "recorded in the history")
local unwritable, unwritable_replies = new_service({history = dir .. "/ok.csv/h.db"}) -- under a file
local other_out = dir .. "/other.csv"
unwritable:handle(a, registration(other_out), {a})
for index = 1, 3 do
  unwritable:handle(a, {op = "next", id = other_out}, {a})
  unwritable:handle(a, {op = "row", id = other_out, index = index, row = {v = "1"}}, {a})
end
unwritable_replies(a)
T.eq(unwritable:finish(0), EXIT.HISTORY, "a history that cannot be written: exit 6")
T.eq(read(other_out), "n,device,v,status,error\n1,0,1,ok,\n2,0,1,ok,\n3,0,1,ok,\n", "its CSV kept")

-- ---- the options both transports take: checked and typed once, by the command line's parser ----
local args = require("gpuexp.engine.args")
local function settings(line)
  local fields, why = args.parse("run", line)
  if not fields then return nil, why end
  return service.run_settings(fields)
end
T.eq(settings({"x.lua"}).point_timeout_s, 300, "the default point limit")
local checked, why = settings({"--shard", "2/2", "x.lua"})
T.eq(checked, nil, "a bad --shard")
T.ok(why:find("--shard takes I/N", 1, true), why)
T.eq(select(2, settings({"--point-timeout", "-1", "x.lua"})):match("^%-%-point%-timeout"), "--point-timeout",
  "a bad --point-timeout")
T.eq(settings({"--only", "n=1;n=2", "x.lua"}).only[2].n, "2", "--only's clauses")
T.eq(settings({"--shard", "1/4", "x.lua"}).shard.count, 4, "--shard's share")
for op in pairs(service.PROTOCOL) do T.ok(service.PROTOCOL[op].reply and service.PROTOCOL[op].when, op) end

T.done()
