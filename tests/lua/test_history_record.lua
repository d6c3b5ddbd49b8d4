-- A run's --history records the sweep from the ledger's memory (rows, samples, the source of its
-- files), supervised and --inline alike; its files recorded again by hand are that run, not a
-- second one, and what was recorded is what the files hold.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local history = require("gpuexp.store.history")
local samples = require("gpuexp.store.samples")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

ws.write("s.lua", 'gpuexp.sweep{name = "s", axes = {{"x", {1, 2}}}, ' ..
  'run = function(p) return {v = p.x, samples_ms = {p.x, p.x + 0.5}} end}')
for _, how in ipairs({{name = "supervised", flag = ""}, {name = "inline", flag = "--inline "}}) do
  local out = how.name .. ".csv"
  local code = ws.run("--arch sm_90 " .. how.flag .. "--history h.sqlite -o " .. out .. " s.lua")
  T.eq(code, 0, how.name .. ": the run")
  local db = assert(history.open(ws.dir .. "/h.sqlite", true))
  local recorded = db:rows("SELECT id, source FROM runs ORDER BY id DESC LIMIT 1")[1]
  db:close()
  local id = recorded and recorded.id
  T.ok(id and recorded.source, how.name .. ": the run is recorded, with its source")
  local again, stdout = ws.run("history --history h.sqlite record " .. out)
  T.eq(again, 0, how.name .. ": recorded again by hand")
  T.ok(stdout:find(out .. " was recorded already, as run " .. id, 1, true), how.name .. ": that run: " .. stdout)
  db = assert(history.open(ws.dir .. "/h.sqlite", true))
  local rows, samples_text = history.export(db, id)
  db:close()
  T.eq(rows, ws.read(out), how.name .. ": the rows recorded are the file's")
  T.eq(samples_text, ws.read(samples.path_for(out)), how.name .. ": the samples recorded are the file's")
  T.eq(samples_text, "x,field,values\n1,samples_ms,1 1.5\n2,samples_ms,2 2.5\n", how.name .. ": the samples")
end
local db = assert(history.open(ws.dir .. "/h.sqlite", true))
T.eq(db:rows("SELECT count(*) AS n FROM runs")[1].n, 2, "one run each")
db:close()
T.done()
