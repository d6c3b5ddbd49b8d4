-- Fleets: gpuexp history merge joins the histories of several hosts by the runs' identities. Two
-- hosts' nights (offline plans recorded into their own files, with the GPU set per host in the
-- metadata) merge into one history that lists both; merging again adds nothing; a history written
-- before runs had identities (schema 2) merges idempotently too; baselines stay per GPU model.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local json = require("cjson")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, run = ws.dir, ws.write, ws.run

write("k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1, 2, 3}}}, ' ..
  'run = function(p) return {median_ms = p.x, noise_pct = 0.5, samples = 100} end}')
-- a host's runs: the sweep's CSV with the host's GPU written into its metadata, then recorded
local function host_runs(host, gpu, nights)
  for n = 1, nights do
    local out = string.format("%s_%d.csv", host, n)
    T.eq(run("--arch sm_90 --quiet -o " .. out .. " k.lua"), 0, "a run on " .. host)
    local path = work .. "/" .. out:gsub("%.csv$", ".meta.json")
    local info = json.decode(assert(io.open(path)):read("a"))
    info.host, info.gpu = host, {name = gpu, uuid = "GPU-" .. host}
    write(out:gsub("%.csv$", ".meta.json"), json.encode(info))
    local code, _, stderr = run(string.format("history --history %s.sqlite record --kind nightly %s", host, out))
    T.eq(code, 0, "recorded on " .. host .. ": " .. stderr)
  end
end
host_runs("alpha", "NVIDIA H200", 3)
host_runs("beta", "NVIDIA H100 80GB HBM3", 2)

local code, stdout = run("history merge fleet.sqlite alpha.sqlite beta.sqlite")
T.eq(code, 0, "merge")
T.ok(stdout:find("alpha.sqlite: 3 run(s) added, 0 already there", 1, true), stdout)
T.ok(stdout:find("beta.sqlite: 2 run(s) added, 0 already there", 1, true), stdout)
code, stdout = run("history merge fleet.sqlite alpha.sqlite beta.sqlite")
T.ok(code == 0 and stdout:find("alpha.sqlite: 0 run(s) added, 3 already there", 1, true), "again: nothing added: " .. stdout)

local fleet = assert(gpuexp._db.open(work .. "/fleet.sqlite"))
local hosts = fleet:rows("SELECT host, gpu_name, count(*) AS n FROM runs GROUP BY host ORDER BY host")
T.eq(#hosts, 2, "both hosts")
T.eq(hosts[1].n, 3, "alpha's runs"); T.eq(hosts[2].gpu_name, "NVIDIA H100 80GB HBM3", "beta's GPU")
local rows = fleet:rows("SELECT count(*) AS n FROM rows")[1].n
T.eq(rows, 15, "every row of every run")
-- each run's rows came with it: the same cells as on its host
local alpha = assert(gpuexp._db.open(work .. "/alpha.sqlite"))
local original = alpha:rows("SELECT cells FROM rows WHERE run_id = 1 ORDER BY position")
local uuid = alpha:rows("SELECT uuid FROM runs WHERE id = 1")[1].uuid
local copied = fleet:rows("SELECT rows.cells AS cells FROM rows JOIN runs ON runs.id = rows.run_id WHERE runs.uuid = ? " ..
  "ORDER BY position", uuid)
T.eq(#copied, #original, "the run's rows")
for i, r in ipairs(original) do T.eq(copied[i].cells, r.cells, "row " .. i) end
alpha:close()
fleet:close()
-- baselines stay per GPU model: a beta run's baseline holds beta's runs only
local history = require("gpuexp.store.history")
local db = assert(history.open(work .. "/fleet.sqlite"))
local beta_newest = db:rows("SELECT id FROM runs WHERE host = 'beta' ORDER BY id DESC LIMIT 1")[1].id
for _, id in ipairs(history.baseline_ids(db, beta_newest, 5)) do
  T.eq(db:rows("SELECT host FROM runs WHERE id = ?", id)[1].host, "beta", "a beta baseline run is beta's")
end
db:close()

-- a history written before runs had identities: its runs get the same derived identity wherever
-- it is read, so merging it twice adds them once
local old = assert(gpuexp._db.open(work .. "/old.sqlite"))
local schema = assert(io.open(gpuexp.script_dir .. "/../../lua/gpuexp/store/history.lua")):read("a")
  :match("local SCHEMA = %[%[(.-)%]%]"):gsub("\n%s*uuid TEXT[^\n]*", ""):gsub("source TEXT,", "source TEXT")
T.ok(not schema:find("\n%s*uuid TEXT"), "schema 2 has no runs.uuid")
old:exec(schema)
old:exec("INSERT INTO gpuexp_schema(version) VALUES (2)")
old:run("INSERT INTO runs(recorded_utc, kind, experiment, sweep, host, gpu_name, axes, columns) VALUES " ..
  "('2026-01-01T00:00:00Z', 'nightly', 'k', 'k', 'gamma', 'NVIDIA A100', '[\"x\"]', '[\"x\",\"median_ms\"]')")
old:run("INSERT INTO rows(run_id, position, key, status, cells) VALUES (1, 1, '1', 'ok', '[\"1\",\"1\"]')")
old:close()
local before = assert(io.open(work .. "/old.sqlite", "rb")):read("a")
for pass = 1, 2 do
  code, stdout = run("history merge fleet.sqlite old.sqlite")
  T.ok(code == 0 and stdout:find(string.format("old.sqlite: %d run(s) added, %d already there", pass == 1 and 1 or 0,
    pass == 1 and 0 or 1), 1, true), "an old history, pass " .. pass .. ": " .. stdout)
end
T.eq(assert(io.open(work .. "/old.sqlite", "rb")):read("a"), before, "the merged file is read, never written")
-- and opening it to write brings it to the current schema with the same identity
db = assert(history.open(work .. "/old.sqlite"))
local migrated = db:rows("SELECT uuid FROM runs")[1].uuid
db:close()
fleet = assert(gpuexp._db.open(work .. "/fleet.sqlite"))
T.eq(#fleet:rows("SELECT id FROM runs WHERE uuid = ?", migrated), 1, "the migrated run is the merged one")
fleet:close()
code = run("history merge fleet.sqlite nothing.sqlite")
T.eq(code, 6, "a missing history: exit 6")
T.done()
