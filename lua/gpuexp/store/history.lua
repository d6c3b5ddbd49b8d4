-- The history: every recorded run of a sweep in one SQLite file (the run's facts, every row with
-- every column, the per-sample times), written in one transaction per run so a killed run leaves
-- the file as it was. commands/history.lua lists, shows, exports, excludes and prunes; nightly
-- draws its baselines from here.
local csv = require("gpuexp.store.csv")
local meta = require("gpuexp.store.meta")
local result = require("gpuexp.store.result")
local samples = require("gpuexp.store.samples")

local M = {}

M.SCHEMA_VERSION = 4 -- 2 added runs.source, 3 runs.uuid, 4 runs.judge and the acceptances

local SCHEMA = [[
CREATE TABLE IF NOT EXISTS gpuexp_schema(version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY,
  recorded_utc TEXT NOT NULL,
  started_utc TEXT,
  finished_utc TEXT,
  kind TEXT NOT NULL,             -- run (gpuexp --history), nightly, confirm (a nightly's re-measure)
  nightly TEXT,                   -- the nightly that made it (its start time)
  suite TEXT,
  experiment TEXT NOT NULL,       -- the script's file name without .lua
  sweep TEXT NOT NULL,
  script TEXT,
  script_hash TEXT,
  kernel_hashes TEXT,             -- JSON: source name -> source key
  arguments TEXT,                 -- JSON
  git_commit TEXT,
  git_dirty INTEGER,
  gpuexp_version TEXT,
  host TEXT,
  gpu_name TEXT,                  -- an offline plan's: "offline plan for sm_86" (meta.plan_name)
  gpu_uuid TEXT,
  driver_version TEXT,
  cuda_driver TEXT,
  sm_clock_max_khz INTEGER,
  throttled_rows INTEGER,
  complete INTEGER,
  rows_ok INTEGER,
  rows_failed INTEGER,
  excluded INTEGER NOT NULL DEFAULT 0,
  axes TEXT NOT NULL,             -- JSON list of axis names
  columns TEXT NOT NULL,          -- JSON list of column names, in CSV order
  meta TEXT,                      -- the whole .meta.json
  source TEXT,                    -- hash of the CSV and metadata recorded: the same files are one run
  uuid TEXT,                      -- the run's identity across hosts (history merge)
  judge TEXT                      -- JSON: the options a nightly judged it with (threshold, baseline, metric, rule)
);
CREATE TABLE IF NOT EXISTS rows(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  key TEXT NOT NULL,              -- the axis cells joined by a unit separator
  status TEXT,
  cells TEXT NOT NULL,            -- JSON list of the cells' text, in the order of runs.columns
  PRIMARY KEY(run_id, key)
);
CREATE TABLE IF NOT EXISTS samples(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  field TEXT NOT NULL,
  samples TEXT NOT NULL,          -- the values, space-separated, as in the .samples.csv file
  PRIMARY KEY(run_id, key, field)
);
CREATE TABLE IF NOT EXISTS acceptances(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT,                       -- the point (its axis cells joined); NULL: every point of the run
  accepted_utc TEXT NOT NULL,
  note TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs(experiment, sweep, gpu_name, driver_version, id);
]]

-- What turns a history of schema N into N + 1.
local MIGRATIONS = {
  [1] = "ALTER TABLE runs ADD COLUMN source TEXT",
  [2] = "ALTER TABLE runs ADD COLUMN uuid TEXT",
  [3] = "ALTER TABLE runs ADD COLUMN judge TEXT", -- the acceptances table is made by SCHEMA
}

-- The identity of a run recorded before runs had one: made from what recorded it, so that every
-- copy of that history gives the run the same one (history merge of an old file stays idempotent).
function M.derived_uuid(run)
  local parts = {}
  for i, field in ipairs({"host", "gpu_uuid", "recorded_utc", "started_utc", "kind", "nightly", "experiment", "sweep",
    "source", "script_hash"}) do
    parts[i] = tostring(run[field])
  end
  return "d" .. gpuexp.hash(table.concat(parts, "\31"))
end


-- The default file: $GPUEXP_HISTORY, else $XDG_DATA_HOME/gpuexp/history.sqlite, else
-- ~/.local/share/gpuexp/history.sqlite.
function M.default_path()
  local explicit = os.getenv("GPUEXP_HISTORY")
  if explicit and explicit ~= "" then return explicit end
  local data = os.getenv("XDG_DATA_HOME")
  if not data or data == "" then data = (os.getenv("HOME") or ".") .. "/.local/share" end
  return data .. "/gpuexp/history.sqlite"
end

local function message_of(problem)
  return type(problem) == "table" and problem.message or tostring(problem)
end

-- M.remove(path): a history file gone, with SQLite's write-ahead log and shared memory beside it.
function M.remove(path)
  for _, suffix in ipairs({"", "-wal", "-shm"}) do os.remove(path .. suffix) end
end

-- M.open(path [, readonly]) -> db, or nil and why (the folder is made; the schema created or
-- checked). readonly: for reading only (list, show, export), which works on a history this user
-- cannot write (another user's, a read-only disk).
function M.open(path, readonly)
  if readonly then
    local file = io.open(path, "rb")
    if not file then return nil, path .. ": no history there (nothing was recorded yet)" end
    file:close()
  else
    -- the folder made, and the name checked, as an output's: no link of another user on the way
    local dir = path:match("^(.*)/[^/]*$")
    if dir and dir ~= "" then
      local ok, problem = gpuexp._output_folder(dir, true)
      if not ok then return nil, problem end
    end
    local writable, why = gpuexp._output_check(path)
    if not writable then return nil, why end
  end
  local ok, db = pcall(gpuexp._db.open, path, readonly)
  if not ok then return nil, message_of(db) end
  -- an empty file (nothing recorded yet, or a writer killed before its first commit) is an empty
  -- history: read as one, from memory, the file left as it is
  if readonly and db:rows("SELECT count(*) AS n FROM sqlite_master")[1].n == 0 then
    db:close()
    return M.open(":memory:")
  end
  local done, problem = pcall(function()
    -- all of the schema or none of it: a writer killed while it makes a new history leaves an
    -- empty file, never a history with half its tables
    if not readonly then db:exec("BEGIN IMMEDIATE;\n" .. SCHEMA .. "\nCOMMIT;") end
    local versions = db:rows("SELECT version FROM gpuexp_schema")
    local found = versions[1] and versions[1].version
    if #versions == 0 and not readonly then
      db:run("INSERT INTO gpuexp_schema(version) VALUES (?)", M.SCHEMA_VERSION)
    elseif found and MIGRATIONS[found] and not readonly then -- an older history: brought up to date, in one go
      local migrated, why = M.transaction(db, function()
        for version = found, M.SCHEMA_VERSION - 1 do db:exec(MIGRATIONS[version]) end
        for _, run in ipairs(db:rows("SELECT * FROM runs WHERE uuid IS NULL")) do
          db:run("UPDATE runs SET uuid = ? WHERE id = ?", M.derived_uuid(run), run.id)
        end
        db:run("UPDATE gpuexp_schema SET version = ?", M.SCHEMA_VERSION)
      end)
      if not migrated then error({message = path .. ": could not bring the history to schema " .. M.SCHEMA_VERSION ..
        ": " .. tostring(why)}, 0) end
    elseif found and found < M.SCHEMA_VERSION and readonly then -- read as it is
    elseif #versions == 0 or found ~= M.SCHEMA_VERSION then
      error({message = string.format("%s holds history schema %s, and this gpuexp reads schema %d: %s", path,
        tostring(found or "none"), M.SCHEMA_VERSION, (found or 0) > M.SCHEMA_VERSION and
        "it was written by a newer gpuexp; use that one, or give another --history" or "it is not a gpuexp history")}, 0)
    end
    if not readonly then
      db:exec("CREATE UNIQUE INDEX IF NOT EXISTS runs_by_uuid ON runs(uuid)")
      M.name_plans(db)
    end
  end)
  if not done then db:close() return nil, message_of(problem) end
  return db
end

-- The machine of a stored run: its GPU's name, or an offline plan's (its architecture, from the
-- metadata: a run recorded before plans carried it as their GPU); nil when neither is known.
function M.machine_of(record)
  if record.gpu_name then return record.gpu_name end
  local info = record.meta and require("gpuexp.store.json").decode(record.meta)
  local machine = meta.machine(info)
  return machine and machine.name
end

-- Plans recorded with no GPU name (before they carried their architecture as one) get their plan's
-- name, so that every series (experiment, sweep, GPU, driver) holds one architecture: a plan for
-- sm_86 is never the baseline of a plan for sm_90.
function M.name_plans(db)
  local unnamed = db:rows("SELECT id, meta FROM runs WHERE gpu_name IS NULL")
  if #unnamed == 0 then return end
  local named, why = M.transaction(db, function()
    for _, record in ipairs(unnamed) do
      local name = M.machine_of(record)
      if name then db:run("UPDATE runs SET gpu_name = ? WHERE id = ?", name, record.id) end
    end
  end)
  if not named then error({message = "could not name the offline plans of the history: " .. tostring(why)}, 0) end
end

-- Runs fn(db) inside one transaction; rolls back and returns nil, why on any failure.
function M.transaction(db, fn)
  local ok, problem = pcall(db.exec, db, "BEGIN IMMEDIATE")
  if not ok then return nil, message_of(problem) end
  local result
  ok, problem = pcall(function() result = fn(db) end)
  if ok then ok, problem = pcall(db.exec, db, "COMMIT") end
  if not ok then
    pcall(db.exec, db, "ROLLBACK")
    return nil, message_of(problem)
  end
  return result or true
end

-- The experiment's git commit (and whether the tree has changes), when its script is in a repository.
-- git runs as every child does (its own process group, a time limit: a git that waits on a lock or
-- a network file system does not hold the run).
local function git_state(script)
  local dir = script and script:match("^(.*)/[^/]*$") or "."
  local function git(...)
    local ok, code, _, timed_out, output = pcall(gpuexp._process.run, {"git", "-C", dir, ...},
      {capture = true, timeout_s = 30})
    return ok and code == 0 and not timed_out and output or nil
  end
  local commit = (git("rev-parse", "HEAD") or ""):match("^(%x+)\n?$")
  if not commit then return nil end
  local changes = git("status", "--porcelain", "--untracked-files=no") or ""
  return commit, changes ~= ""
end

local function json_text(value) return require("gpuexp.store.json").encode(value) end

-- M.record(db, run, extra) -> run id, or nil and why. run: a result (store/result.lua) of a sweep
-- written at run.label: its metadata, rows, samples and source (the hash that tells the same files
-- recorded twice) are the result's, read from the files (history record) or carried from the
-- ledger's memory (a run's --history): this reads no file. extra: kind ("run", "nightly",
-- "confirm"), nightly, suite, experiment. One transaction: all of the run or none of it.
function M.record(db, run, extra)
  extra = extra or {}
  local csv_path = run.label
  local info = run.info
  if type(info.sweep) ~= "table" then return nil, csv_path .. ": no readable " .. meta.path_for(csv_path) end
  local axes, columns = run.axes, run.columns
  local index_of = run.column_index
  local sample_entries, damaged = run:sample_entries()
  if damaged then return nil, damaged end
  local source = run.source
  if not source then return nil, csv_path .. ": the run is still being written (its sweep is not closed)" end
  local failed, throttled = 0, 0
  local status_at, throttled_at = index_of.status, index_of.clock_throttled
  local records = {}
  for n, key in ipairs(run.order) do records[n] = run.records[key] end
  for _, cells in ipairs(records) do
    if status_at and cells[status_at] ~= "ok" then failed = failed + 1 end
    if throttled_at and cells[throttled_at] == "true" then throttled = throttled + 1 end
  end
  local commit, dirty = git_state(info.script)
  local gpu = info.gpu or {}
  local machine = meta.machine(info) or {}
  local first_part = info.parts and info.parts[1] or {}
  -- the same files recorded again (history record twice, or by hand after the run): their run,
  -- not a second one
  local already = db:rows("SELECT id FROM runs WHERE source = ? AND kind = ? AND nightly IS ?", source,
    extra.kind or "run", extra.nightly)[1]
  if already then return already.id, nil, true end
  local experiment = extra.experiment or (info.script or csv_path):match("([^/]+)%.lua$") or info.sweep.name
  return M.transaction(db, function()
    local _, run_id = db:run([[INSERT INTO runs(recorded_utc, started_utc, finished_utc, kind, nightly, suite,
      experiment, sweep, script, script_hash, kernel_hashes, arguments, git_commit, git_dirty, gpuexp_version, host,
      gpu_name, gpu_uuid, driver_version, cuda_driver, sm_clock_max_khz, throttled_rows, complete, rows_ok,
      rows_failed, axes, columns, meta, source, uuid)
      VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,lower(hex(randomblob(16))))]],
      os.date("!%Y-%m-%dT%H:%M:%SZ"), first_part.started_utc or info.time_utc, info.sweep.finished_utc,
      extra.kind or "run", extra.nightly, extra.suite, experiment, info.sweep.name, info.script, info.script_hash,
      json_text(info.kernels or {}), json_text(info.arguments or {}), commit, dirty == nil and nil or (dirty and 1 or 0),
      info.gpuexp_version, info.host, machine.name, gpu.uuid, info.driver_version,
      info.versions and info.versions.driver_cuda, gpu.sm_clock_max_khz, throttled,
      info.sweep.complete and 1 or 0, #records - failed, failed, json_text(axes), json_text(columns), json_text(info),
      source)
    for position, cells in ipairs(records) do
      local full = {}
      for c = 1, #columns do full[c] = cells[c] or "" end
      db:run("INSERT OR REPLACE INTO rows(run_id, position, key, status, cells) VALUES (?,?,?,?,?)", run_id, position,
        run:key_of(cells), status_at and cells[status_at] or nil, json_text(full))
    end
    for _, s in ipairs(sample_entries) do
      db:run("INSERT OR REPLACE INTO samples(run_id, key, field, samples) VALUES (?,?,?,?)", run_id, s.key, s.field,
        s.values)
    end
    return run_id
  end)
end

-- M.record_file(db, csv_path, extra): M.record of a CSV written earlier, read strictly (the file
-- and line of any problem).
function M.record_file(db, csv_path, extra)
  -- a CSV that is there but empty (or malformed) is said as such first: its metadata says nothing of it
  local present = io.open(csv_path, "rb")
  if present then
    present:close()
    local readable, problem = pcall(csv.read_cells, csv_path, true)
    if not readable then return nil, type(problem) == "table" and problem.message or tostring(problem) end
  end
  -- a run is recorded with its facts (GPU, driver, script...), which only its metadata holds: a CSV
  -- without one (another tool's) can be compared (gpuexp compare --axes), not recorded
  local info, unreadable = meta.read_json(meta.path_for(csv_path))
  if not info or type(info.sweep) ~= "table" then
    return nil, string.format("%s: %s; a run is recorded with the facts its metadata holds (gpuexp writes it; " ..
      "gpuexp --resume finishes an interrupted run and writes it). Another tool's CSV can be compared, not recorded: " ..
      "gpuexp compare --axes A,B", csv_path, unreadable or (meta.path_for(csv_path) .. " has no 'sweep' object"))
  end
  local axes, odd = result.axes_of(info, csv_path)
  if not axes then
    return nil, odd or string.format("%s: %s names no axes (no sweep.axes): it is not the metadata of a run gpuexp " ..
      "wrote", csv_path, meta.path_for(csv_path))
  end
  local run, problem = result.read(csv_path, axes)
  if not run then return nil, problem end
  return M.record(db, run, extra)
end

-- M.record_outputs(path, runs, night) -> list of run ids, or nil and why: opens the history,
-- records each run (a result of a sweep of this run, from the ledger's memory), closes it. night:
-- {id, kind, suite, experiment} for a run of gpuexp nightly (its --night options), else nil: a
-- run of kind "run".
function M.record_outputs(path, runs, night)
  if path == "" then path = M.default_path() end -- --record
  local extra = {kind = "run"}
  if night and night.id then
    extra = {kind = night.kind or "nightly", nightly = night.id, suite = night.suite, experiment = night.experiment}
  end
  local db, why = M.open(path)
  if not db then return nil, why end
  local ids = {}
  for _, run in ipairs(runs) do
    local id, problem = M.record(db, run, extra)
    if not id then db:close() return nil, problem end
    ids[#ids + 1] = id
  end
  db:close()
  return ids
end

local function decode(text)
  return (require("gpuexp.store.json").decode(text or "null"))
end

-- A list of texts the history holds as JSON (axes, columns, a row's cells): {} when there is none
-- (SQL NULL, JSON null); nil when a damaged file holds something else there (a number, an object,
-- a cell that is not a text), so that the caller names the damage instead of failing on it later.
local function stored_texts(text)
  local value = decode(text)
  if value == nil or value == require("gpuexp.store.json").null then return {} end
  if type(value) ~= "table" or (#value == 0 and next(value) ~= nil) then return nil end
  local list = {}
  for i = 1, #value do
    local cell = value[i]
    if cell == require("gpuexp.store.json").null then cell = "" end
    if type(cell) ~= "string" then return nil end
    list[i] = cell
  end
  return list
end

local function damaged(id, what)
  return string.format("run %s of the history is damaged: %s not what gpuexp writes", tostring(id), what)
end

-- A stored run as a compare run (label "run N").
function M.load_run(db, id)
  local runs = db:rows("SELECT * FROM runs WHERE id = ?", id)
  local run = runs[1]
  if not run then return nil, "no run " .. tostring(id) .. " in the history" end
  local axes, columns, info = stored_texts(run.axes), stored_texts(run.columns), decode(run.meta)
  if info == nil or info == require("gpuexp.store.json").null then info = {} end
  if not axes or not columns or type(info) ~= "table" then
    return nil, damaged(id, "its axes, columns or metadata are")
  end
  local loaded = result.new("run " .. id, info, axes, columns)
  loaded.record = run
  for _, row in ipairs(db:rows("SELECT cells FROM rows WHERE run_id = ? ORDER BY position", id)) do
    local cells = stored_texts(row.cells)
    if not cells then return nil, damaged(id, "a row's cells are") end
    loaded:add(cells)
  end
  return loaded
end

-- The baseline runs of a recorded run: the last `count` nightly runs of the same experiment and
-- sweep on the same GPU model and driver, complete, not excluded, recorded before it and not in
-- its night (a re-measure's baseline is that of its night, not the night itself).
function M.baseline_ids(db, run_id, count)
  local run = db:rows("SELECT * FROM runs WHERE id = ?", run_id)[1]
  if not run then return {} end
  local rows = db:rows([[SELECT id FROM runs WHERE experiment = ? AND sweep = ? AND gpu_name IS ? AND
    driver_version IS ? AND kind = 'nightly' AND complete = 1 AND excluded = 0 AND id < ? AND (? IS NULL OR nightly IS NOT ?)
    ORDER BY id DESC LIMIT ?]],
    run.experiment, run.sweep, run.gpu_name, run.driver_version, run_id, run.nightly, run.nightly, count)
  local ids = {}
  for i = #rows, 1, -1 do ids[#ids + 1] = rows[i].id end -- oldest first
  return ids
end

-- The values of one point's metric over the history (for plots): {{id, time, value}...}, oldest first.
function M.series(db, run_id, key, metric, count)
  local run = db:rows("SELECT * FROM runs WHERE id = ?", run_id)[1]
  local out = {}
  if not run then return out end
  local rows = db:rows([[SELECT runs.id AS id, runs.started_utc AS started, runs.columns AS columns, rows.cells AS cells,
    runs.kind AS kind FROM runs JOIN rows ON rows.run_id = runs.id WHERE runs.experiment = ? AND runs.sweep = ? AND
    runs.gpu_name IS ? AND runs.kind IN ('nightly', 'confirm') AND runs.excluded = 0 AND rows.key = ? AND runs.id <= ?
    ORDER BY runs.id DESC LIMIT ?]], run.experiment, run.sweep, run.gpu_name, key, run_id, count or 60)
  for i = #rows, 1, -1 do
    local r = rows[i]
    local columns, cells = stored_texts(r.columns) or {}, stored_texts(r.cells) or {}
    for c, name in ipairs(columns) do
      if name == metric and tonumber(cells[c]) then
        out[#out + 1] = {id = r.id, time = r.started, value = tonumber(cells[c]), kind = r.kind}
      end
    end
  end
  return out
end

-- The ids of the runs a night recorded for an experiment, of one kind (nightly, confirm), in order.
function M.runs_of_night(db, night, experiment, kind)
  local rows = db:rows("SELECT id FROM runs WHERE nightly = ? AND experiment = ? AND kind = ? ORDER BY id", night,
    experiment, kind)
  local ids = {}
  for i, r in ipairs(rows) do ids[i] = r.id end
  return ids
end

-- The GPU and driver a night ran on: {gpu, driver} (empty when it recorded nothing).
function M.night_machine(db, night)
  local newest = db:rows("SELECT gpu_name, driver_version FROM runs WHERE nightly = ? ORDER BY id DESC LIMIT 1", night)[1]
  return newest and {gpu = newest.gpu_name, driver = newest.driver_version} or {}
end

-- A run's rows as the CSV text it was written as, and its samples file's text (nil when it has no
-- samples); or nil and why.
function M.export(db, id)
  local record = db:rows("SELECT columns, axes FROM runs WHERE id = ?", id)[1]
  if not record then return nil, "no run " .. tostring(id) .. " in the history" end
  local columns, axes = stored_texts(record.columns), stored_texts(record.axes)
  if not columns or not axes then return nil, damaged(id, "its axes or columns are") end
  local lines = {csv.line(columns)}
  for _, row in ipairs(db:rows("SELECT cells FROM rows WHERE run_id = ? ORDER BY position", id)) do
    local cells = stored_texts(row.cells)
    if not cells then return nil, damaged(id, "a row's cells are") end
    lines[#lines + 1] = csv.line(cells)
  end
  local stored = db:rows("SELECT key, field, samples FROM samples WHERE run_id = ? ORDER BY rowid", id)
  local entries = {}
  for n, s in ipairs(stored) do entries[n] = {cells = result.split(s.key), field = s.field, values = s.samples} end
  return table.concat(lines, "\n") .. "\n", #entries > 0 and samples.text(axes, entries) or nil
end

-- M.merge(db, path) -> runs added, runs already there; or nil and why. Copies every run of the
-- history at path (another host's) that db does not hold yet, by the runs' identities (uuid), with
-- their rows and samples, in one transaction: merging the same file again adds nothing.
function M.merge(db, path)
  local source, why = M.open(path, true)
  if not source then return nil, why end
  local runs = source:rows("SELECT * FROM runs ORDER BY id")
  local columns = {}
  for _, c in ipairs(db:rows("PRAGMA table_info(runs)")) do
    if c.name ~= "id" then columns[#columns + 1] = c.name end
  end
  local added, present = 0, 0
  local ok, problem = M.transaction(db, function()
    for _, run in ipairs(runs) do
      run.uuid = run.uuid or M.derived_uuid(run) -- a history from before runs had one
      if db:rows("SELECT id FROM runs WHERE uuid = ?", run.uuid)[1] then
        present = present + 1
      else
        local values, marks = {}, {}
        for n, name in ipairs(columns) do
          values[n] = run[name]
          marks[n] = "?"
        end
        local _, id = db:run(string.format("INSERT INTO runs(%s) VALUES (%s)", table.concat(columns, ", "),
          table.concat(marks, ",")), table.unpack(values, 1, #columns))
        for _, row in ipairs(source:rows("SELECT position, key, status, cells FROM rows WHERE run_id = ?", run.id)) do
          db:run("INSERT INTO rows(run_id, position, key, status, cells) VALUES (?,?,?,?,?)", id, row.position, row.key,
            row.status, row.cells)
        end
        for _, s in ipairs(source:rows("SELECT key, field, samples FROM samples WHERE run_id = ?", run.id)) do
          db:run("INSERT INTO samples(run_id, key, field, samples) VALUES (?,?,?,?)", id, s.key, s.field, s.samples)
        end
        for _, a in ipairs(M.acceptances(source, {run.id})) do
          db:run("INSERT INTO acceptances(run_id, key, accepted_utc, note) VALUES (?,?,?,?)", id, a.key, a.accepted_utc,
            a.note)
        end
        added = added + 1
      end
    end
  end)
  source:close()
  if not ok then return nil, problem end
  return added, present
end

-- The nightly runs of a run's series (its experiment, sweep, GPU model and driver), not excluded,
-- up to and with it, oldest first: the nights whose verdicts lead to its own (judge/verdict.lua).
function M.series_ids(db, run_id)
  local run = db:rows("SELECT * FROM runs WHERE id = ?", run_id)[1]
  if not run then return {} end
  local rows = db:rows([[SELECT id FROM runs WHERE experiment = ? AND sweep = ? AND gpu_name IS ? AND
    driver_version IS ? AND kind = 'nightly' AND excluded = 0 AND id <= ? ORDER BY id]], run.experiment, run.sweep,
    run.gpu_name, run.driver_version, run_id)
  local ids = {}
  for i, r in ipairs(rows) do ids[i] = r.id end
  return ids
end

local function has_acceptances(db)
  return db:rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'acceptances'")[1] ~= nil
end

-- The acceptances of these runs: {{run_id, key (nil: every point), accepted_utc, note}...}, in the
-- order they were made (a history of schema 3 or older, read as it is, has none).
function M.acceptances(db, ids)
  local found = {}
  if #ids == 0 or not has_acceptances(db) then return found end
  local marks = string.rep("?,", #ids):sub(1, -2)
  for _, a in ipairs(db:rows("SELECT run_id, key, accepted_utc, note FROM acceptances WHERE run_id IN (" .. marks ..
    ") ORDER BY id", table.unpack(ids))) do
    found[#found + 1] = a
  end
  return found
end

-- Records that the level of these points (keys; nil: every point) at the run is intended. A point
-- accepted already at the run (by itself, or by an acceptance of every point) is not accepted
-- twice. Returns the number of acceptances made, or nil and why.
function M.accept(db, run_id, keys, note)
  return M.transaction(db, function()
    local made = 0
    local every = db:rows("SELECT 1 AS yes FROM acceptances WHERE run_id = ? AND key IS NULL", run_id)[1]
    for _, key in ipairs(keys or {false}) do
      local there = every or (key and db:rows("SELECT 1 AS yes FROM acceptances WHERE run_id = ? AND key = ?", run_id,
        key)[1])
      if not there then
        db:run("INSERT INTO acceptances(run_id, key, accepted_utc, note) VALUES (?,?,?,?)", run_id, key or nil,
          os.date("!%Y-%m-%dT%H:%M:%SZ"), note)
        made = made + 1
      end
    end
    return made
  end)
end

-- Takes back the acceptances of the run (of these points; keys nil: all of them). Returns how many.
function M.unaccept(db, run_id, keys)
  local removed = 0
  local ok, why = M.transaction(db, function()
    if not keys then
      removed = db:run("DELETE FROM acceptances WHERE run_id = ?", run_id)
    else
      for _, key in ipairs(keys) do removed = removed + db:run("DELETE FROM acceptances WHERE run_id = ? AND key = ?",
        run_id, key) end
    end
  end)
  if not ok then return nil, why end
  return removed
end

-- Records the options a nightly judged these runs with.
function M.set_judge(db, ids, options)
  local text = json_text(options)
  for _, id in ipairs(ids) do db:run("UPDATE runs SET judge = ? WHERE id = ?", text, id) end
end

-- The nightly series of the history: one per experiment, sweep, GPU model and driver, each with
-- its last `limit` nightly runs that are not excluded (ids, oldest first), newest series first.
function M.nightly_series(db, limit)
  local groups = db:rows([[SELECT experiment, sweep, gpu_name, driver_version, max(id) AS newest FROM runs
    WHERE kind = 'nightly' AND excluded = 0 GROUP BY experiment, sweep, gpu_name, driver_version ORDER BY newest DESC]])
  for _, g in ipairs(groups) do
    local rows = db:rows([[SELECT id FROM runs WHERE experiment = ? AND sweep = ? AND gpu_name IS ? AND
      driver_version IS ? AND kind = 'nightly' AND excluded = 0 ORDER BY id DESC LIMIT ?]], g.experiment, g.sweep,
      g.gpu_name, g.driver_version, limit)
    g.ids = {}
    for n = #rows, 1, -1 do g.ids[#g.ids + 1] = rows[n].id end
  end
  return groups
end

return M
