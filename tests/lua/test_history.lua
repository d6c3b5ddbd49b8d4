-- The history is transactional: a `gpuexp history record` killed with SIGKILL in the middle of a
-- large run leaves the file with that run entirely or not at all, and the next writer works.
-- covers: src/core/gx_db.c
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work = ws.dir
local ROWS = 60000
local lines = {"i,median_ms,status,error"}
for i = 1, ROWS do lines[#lines + 1] = string.format("%d,%.6f,ok,", i, 1 + i * 1e-6) end
ws.write("big.csv", table.concat(lines, "\n") .. "\n")
local points = {}
for i = 1, ROWS do points[i] = {tostring(i)} end
local info = {sweep = {name = "big", axes = {{name = "i", values = {}}}, complete = true, point_cells = points}, script = "big.lua"}
ws.write("big.meta.json", require("cjson").encode(info))
local history = work .. "/history.sqlite"
-- kill the writer at several moments; after each, the file is consistent
local killed_midway = 0
for _, delay in ipairs({0.05, 0.15, 0.3, 0.6}) do
  os.execute(string.format("cd %s && (%s history --history %s record big.csv > /dev/null 2>&1 & echo $! > pid; sleep %g; " ..
    "kill -9 $(cat pid) 2>/dev/null; wait) 2>/dev/null", work, binary, history, delay))
  local db = assert(gpuexp._db.open(history))
  -- a kill before the writer made the schema leaves a history with no tables: no run in it
  local made = #db:rows("SELECT name FROM sqlite_master WHERE name = 'runs'") > 0
  local runs = made and db:rows("SELECT id FROM runs") or {}
  for _, run in ipairs(runs) do
    local rows = db:rows("SELECT count(*) AS n FROM rows WHERE run_id = ?", run.id)[1].n
    T.eq(rows, ROWS, "a recorded run has all its rows (run " .. run.id .. ")")
  end
  local integrity = db:rows("PRAGMA integrity_check")[1].integrity_check
  T.eq(integrity, "ok", "SQLite's integrity check after a kill at " .. delay .. " s")
  if #runs == 0 then killed_midway = killed_midway + 1 end
  db:close()
end
T.ok(killed_midway >= 1, "at least one kill landed before the commit (else the test proves nothing)")
-- and the next writer records normally
T.eq(ws.run("history --history " .. history .. " record big.csv"), 0, "recording after the kills")
local _, listing = ws.run("history --history " .. history .. " list --limit 1000")
T.ok(listing:find("big"), "the run is listed")
T.done()
