-- The history: every recorded run of a sweep in one SQLite file (the run's facts, every row with
-- every column, the per-sample times), written in one transaction per run so a killed run leaves
-- the file as it was. `gpuexp history` lists, shows, exports, excludes and prunes; nightly draws
-- its baselines from here.
local csv = require("gpuexp.csv")
local meta = require("gpuexp.meta")
local result = require("gpuexp.result")

local M = {}

M.SCHEMA_VERSION = 2 -- 2 added runs.source
M.EXIT_HISTORY = 6

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
  gpu_name TEXT,
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
  source TEXT                     -- hash of the CSV and metadata recorded: the same files are one run
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
CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs(experiment, sweep, gpu_name, driver_version, id);
]]


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

-- M.open(path [, readonly]) -> db, or nil and why (the folder is made; the schema created or
-- checked). readonly: for reading only (list, show, export), which works on a history this user
-- cannot write (another user's, a read-only disk).
function M.open(path, readonly)
  if readonly then
    local file = io.open(path, "rb")
    if not file then return nil, path .. ": no history there (nothing was recorded yet)" end
    file:close()
  else
    local dir = path:match("^(.*)/[^/]*$")
    if dir and dir ~= "" then
      local ok, problem = pcall(gpuexp.mkdir, dir)
      if not ok then return nil, "cannot make the history's folder: " .. message_of(problem) end
    end
  end
  local ok, db = pcall(gpuexp._db.open, path, readonly)
  if not ok then return nil, message_of(db) end
  local done, problem = pcall(function()
    if not readonly then db:exec(SCHEMA) end
    local versions = db:rows("SELECT version FROM gpuexp_schema")
    if #versions == 0 and not readonly then
      db:run("INSERT INTO gpuexp_schema(version) VALUES (?)", M.SCHEMA_VERSION)
    elseif versions[1] and versions[1].version == 1 and not readonly then -- schema 1: add runs.source
      db:exec("BEGIN IMMEDIATE; ALTER TABLE runs ADD COLUMN source TEXT; UPDATE gpuexp_schema SET version = 2; COMMIT")
    elseif versions[1] and versions[1].version == 1 and readonly then -- read as it is
    elseif #versions == 0 or versions[1].version ~= M.SCHEMA_VERSION then
      local found = versions[1] and versions[1].version
      error({message = string.format("%s holds history schema %s, and this gpuexp reads schema %d: %s", path,
        tostring(found or "none"), M.SCHEMA_VERSION, (found or 0) > M.SCHEMA_VERSION and
        "it was written by a newer gpuexp; use that one, or give another --history" or "it is not a gpuexp history")}, 0)
    end
  end)
  if not done then db:close() return nil, message_of(problem) end
  return db
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
local function git_state(script)
  local dir = script and script:match("^(.*)/[^/]*$") or "."
  local quoted = "'" .. dir:gsub("'", "'\\''") .. "'"
  local pipe = io.popen("git -C " .. quoted .. " rev-parse HEAD 2>/dev/null")
  local commit = pipe and pipe:read("l")
  if pipe then pipe:close() end
  if not commit or not commit:match("^%x+$") then return nil end
  pipe = io.popen("git -C " .. quoted .. " status --porcelain --untracked-files=no 2>/dev/null")
  local changes = pipe and pipe:read("a") or ""
  if pipe then pipe:close() end
  return commit, changes ~= ""
end

local function json_text(value) return require("gpuexp.json").encode(value) end

-- M.record(db, csv_path, extra) -> run id, or nil and why. extra: kind ("run", "nightly",
-- "confirm"), nightly, suite, experiment. One transaction: all of the run or none of it.
function M.record(db, csv_path, extra)
  extra = extra or {}
  local run, problem = result.read(csv_path) -- strict: the file and line of any problem
  if not run then return nil, problem end
  local info = run.info
  if type(info.sweep) ~= "table" then return nil, csv_path .. ": no readable " .. meta.path_for(csv_path) end
  local axes, columns = run.axes, run.columns
  local index_of = run.column_index
  local samples = {}
  local samples_path = (csv_path:gsub("%.csv$", "")) .. ".samples.csv"
  local sample_file = io.open(samples_path, "r")
  if sample_file then
    sample_file:close()
    local read, sample_columns, sample_records = pcall(csv.read_cells, samples_path)
    if not read then return nil, message_of(sample_columns) end
    local field_at, values_at = #sample_columns - 1, #sample_columns
    for _, cells in ipairs(sample_records) do
      local parts = {}
      for i = 1, #axes do parts[i] = cells[i] end
      samples[#samples + 1] = {key = result.key(parts), field = cells[field_at], values = cells[values_at]}
    end
  end
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
  local first_part = info.parts and info.parts[1] or {}
  -- the same files recorded again (history record twice): their run, not a second one
  local source = gpuexp.hash((meta.read_all(csv_path) or "") .. "\0" .. (meta.read_all(meta.path_for(csv_path)) or ""))
  local already = db:rows("SELECT id FROM runs WHERE source = ? AND kind = ? AND nightly IS ?", source,
    extra.kind or "run", extra.nightly)[1]
  if already then return already.id, nil, true end
  local experiment = extra.experiment or (info.script or csv_path):match("([^/]+)%.lua$") or info.sweep.name
  return M.transaction(db, function()
    local _, run_id = db:run([[INSERT INTO runs(recorded_utc, started_utc, finished_utc, kind, nightly, suite,
      experiment, sweep, script, script_hash, kernel_hashes, arguments, git_commit, git_dirty, gpuexp_version, host,
      gpu_name, gpu_uuid, driver_version, cuda_driver, sm_clock_max_khz, throttled_rows, complete, rows_ok,
      rows_failed, axes, columns, meta, source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)]],
      os.date("!%Y-%m-%dT%H:%M:%SZ"), first_part.started_utc or info.time_utc, info.sweep.finished_utc,
      extra.kind or "run", extra.nightly, extra.suite, experiment, info.sweep.name, info.script, info.script_hash,
      json_text(info.kernels or {}), json_text(info.arguments or {}), commit, dirty == nil and nil or (dirty and 1 or 0),
      info.gpuexp_version, info.host, gpu.name, gpu.uuid, info.driver_version,
      info.versions and info.versions.driver_cuda, gpu.sm_clock_max_khz, throttled,
      info.sweep.complete and 1 or 0, #records - failed, failed, json_text(axes), json_text(columns), json_text(info),
      source)
    for position, cells in ipairs(records) do
      local full = {}
      for c = 1, #columns do full[c] = cells[c] or "" end
      db:run("INSERT OR REPLACE INTO rows(run_id, position, key, status, cells) VALUES (?,?,?,?,?)", run_id, position,
        run:key_of(cells), status_at and cells[status_at] or nil, json_text(full))
    end
    for _, s in ipairs(samples) do
      db:run("INSERT OR REPLACE INTO samples(run_id, key, field, samples) VALUES (?,?,?,?)", run_id, s.key, s.field,
        s.values)
    end
    return run_id
  end)
end

-- M.record_outputs(path, csv_paths) -> list of run ids, or nil and why: opens the history,
-- records each CSV (a sweep of this run), closes it.
-- A run started by gpuexp nightly says so through the environment (GPUEXP_NIGHTLY_ID, _KIND,
-- _SUITE, _EXPERIMENT); any other run is of kind "run".
function M.record_outputs(path, csv_paths)
  if path == "" then path = M.default_path() end -- --record
  local nightly = os.getenv("GPUEXP_NIGHTLY_ID")
  local extra = {kind = nightly and (os.getenv("GPUEXP_NIGHTLY_KIND") or "nightly") or "run", nightly = nightly,
    suite = nightly and os.getenv("GPUEXP_NIGHTLY_SUITE"), experiment = nightly and os.getenv("GPUEXP_NIGHTLY_EXPERIMENT")}
  local db, why = M.open(path)
  if not db then return nil, why end
  local ids = {}
  for _, csv_path in ipairs(csv_paths) do
    local id, problem = M.record(db, csv_path, extra)
    if not id then db:close() return nil, problem end
    ids[#ids + 1] = id
  end
  db:close()
  return ids
end

local function decode(text)
  return (require("gpuexp.json").decode(text or "null"))
end

-- A stored run as a compare run (label "run N").
function M.load_run(db, id)
  local runs = db:rows("SELECT * FROM runs WHERE id = ?", id)
  local run = runs[1]
  if not run then return nil, "no run " .. tostring(id) .. " in the history" end
  local axes, columns = decode(run.axes) or {}, decode(run.columns) or {}
  local info = decode(run.meta) or {}
  local loaded = result.new("run " .. id, info, axes, columns)
  loaded.record = run
  for _, row in ipairs(db:rows("SELECT cells FROM rows WHERE run_id = ? ORDER BY position", id)) do
    loaded:add(decode(row.cells) or {})
  end
  return loaded
end

-- The baseline runs of a recorded run: the last `count` nightly runs of the same experiment and
-- sweep on the same GPU model and driver, complete, not excluded, recorded before it.
function M.baseline_ids(db, run_id, count)
  local run = db:rows("SELECT * FROM runs WHERE id = ?", run_id)[1]
  if not run then return {} end
  local rows = db:rows([[SELECT id FROM runs WHERE experiment = ? AND sweep = ? AND gpu_name IS ? AND
    driver_version IS ? AND kind = 'nightly' AND complete = 1 AND excluded = 0 AND id < ? ORDER BY id DESC LIMIT ?]],
    run.experiment, run.sweep, run.gpu_name, run.driver_version, run_id, count)
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
    local columns, cells = decode(r.columns) or {}, decode(r.cells) or {}
    for c, name in ipairs(columns) do
      if name == metric and tonumber(cells[c]) then
        out[#out + 1] = {id = r.id, time = r.started, value = tonumber(cells[c]), kind = r.kind}
      end
    end
  end
  return out
end

-- ---- gpuexp history ----

local help = [[
usage: gpuexp history [--history PATH] COMMAND
  list [--experiment NAME] [--limit N]   the recorded runs, newest first
  show RUN                               one run: its facts and rows
  export RUN [-o FILE.csv]               the run's rows as CSV, as written (plus FILE.samples.csv)
  record FILE.csv... [--kind nightly]    add runs written earlier (their .meta.json beside them)
  exclude RUN... | include RUN...        keep a run out of nightly baselines (a known bad night), or back
  prune --keep N                         keep the newest N runs of each experiment, sweep and GPU
  prune --run RUN...                     delete these runs

The history file: --history PATH, else $GPUEXP_HISTORY, else $XDG_DATA_HOME/gpuexp/history.sqlite
(~/.local/share/gpuexp/history.sqlite). `gpuexp --history PATH SCRIPT.lua` (or --record, for the
default file) records a run; `gpuexp nightly` records every night.
exit codes: 0 ok, 2 usage or unknown run, 6 the history cannot be read or written]]

local function fail(code, message)
  io.stderr:write("gpuexp history: " .. message .. "\n")
  return code
end

local function ids_from(args, first)
  local ids = {}
  for i = first, #args do
    local id = tonumber(args[i])
    if not id or math.type(id) ~= "integer" then return nil, "a run is a number (gpuexp history list), got '" .. args[i] .. "'" end
    ids[#ids + 1] = id
  end
  if #ids == 0 then return nil, "which run? (gpuexp history list)" end
  return ids
end

local function list(db, args)
  local experiment, limit = nil, 30
  local i = 1
  while i <= #args do
    if args[i] == "--experiment" then experiment = args[i + 1]; i = i + 2
    elseif args[i] == "--limit" then limit = math.tointeger(tonumber(args[i + 1])); i = i + 2
    else return fail(2, "list: unknown argument '" .. args[i] .. "'") end
  end
  if not limit or limit < 1 then return fail(2, "--limit takes a whole number of runs >= 1") end
  local rows = db:rows([[SELECT id, started_utc, kind, experiment, sweep, gpu_name, driver_version, rows_ok, rows_failed,
    complete, excluded, git_commit FROM runs WHERE (? IS NULL OR experiment = ?) ORDER BY id DESC LIMIT ?]],
    experiment, experiment, limit)
  local shown = {}
  for i, r in ipairs(rows) do
    shown[i] = {run = r.id, started_utc = r.started_utc, kind = r.kind .. (r.excluded == 1 and " (excluded)" or ""),
      experiment = r.experiment, sweep = r.sweep, gpu = r.gpu_name or "(plan)", driver = r.driver_version or "",
      rows = string.format("%d ok%s", r.rows_ok, r.rows_failed > 0 and (", " .. r.rows_failed .. " failed") or ""),
      complete = r.complete == 1 and "yes" or "no", commit = r.git_commit and r.git_commit:sub(1, 10) or ""}
  end
  if #shown == 0 then print("(no runs recorded)") return 0 end
  csv.print_table(shown, {"run", "started_utc", "kind", "experiment", "sweep", "gpu", "driver", "rows", "complete", "commit"})
  return 0
end

local function show(db, args)
  local ids, why = ids_from(args, 1)
  if not ids then return fail(2, why) end
  for _, id in ipairs(ids) do
    local run, problem = M.load_run(db, id)
    if not run then return fail(2, problem) end
    local r = run.record
    print(string.format("run %d: %s / %s (%s), %s", id, r.experiment, r.sweep, r.kind, r.started_utc or "?"))
    for _, field in ipairs({"script", "script_hash", "git_commit", "gpuexp_version", "host", "gpu_name", "gpu_uuid",
      "driver_version", "cuda_driver", "sm_clock_max_khz", "throttled_rows", "rows_ok", "rows_failed", "nightly"}) do
      if r[field] ~= nil then print(string.format("  %-16s %s", field, tostring(r[field]))) end
    end
    local rows = {}
    for n, key in ipairs(run.order) do rows[n] = run:row(key) end
    csv.print_table(rows, run.columns)
  end
  return 0
end

local function export(db, args)
  local id, output = nil, nil
  local i = 1
  while i <= #args do
    if args[i] == "-o" or args[i] == "--output" then output = args[i + 1]; i = i + 2
    else id = tonumber(args[i]); i = i + 1 end
  end
  if not id then return fail(2, "export: which run? (gpuexp history list)") end
  local record = db:rows("SELECT columns FROM runs WHERE id = ?", id)[1]
  if not record then return fail(2, "no run " .. id .. " in the history") end
  local file = io.stdout
  if output then
    local message
    file, message = io.open(output, "w")
    if not file then return fail(2, "cannot write " .. output .. ": " .. tostring(message)) end
  end
  local columns = decode(record.columns) or {}
  file:write(csv.line(columns), "\n")
  for _, row in ipairs(db:rows("SELECT cells FROM rows WHERE run_id = ? ORDER BY position", id)) do
    file:write(csv.line(decode(row.cells) or {}), "\n")
  end
  if output then
    file:close()
    local samples = db:rows("SELECT key, field, samples FROM samples WHERE run_id = ? ORDER BY rowid", id)
    if #samples > 0 then
      local sample_file = assert(io.open((output:gsub("%.csv$", "")) .. ".samples.csv", "w"))
      local axes = decode(db:rows("SELECT axes FROM runs WHERE id = ?", id)[1].axes) or {}
      local header = {}
      for n, axis in ipairs(axes) do header[n] = axis end
      header[#header + 1], header[#header + 2] = "field", "values"
      sample_file:write(csv.line(header), "\n")
      for _, s in ipairs(samples) do
        local cells = result.split(s.key)
        cells[#cells + 1], cells[#cells + 2] = s.field, s.samples
        sample_file:write(csv.line(cells), "\n")
      end
      sample_file:close()
    end
  end
  return 0
end

local function record_files(db, args)
  local kind, paths = "run", {}
  local i = 1
  while i <= #args do
    if args[i] == "--kind" then kind = args[i + 1]; i = i + 2 else paths[#paths + 1] = args[i]; i = i + 1 end
  end
  if kind ~= "run" and kind ~= "nightly" then return fail(2, "--kind is run or nightly") end
  if #paths == 0 then return fail(2, "record: which CSV files?") end
  for _, path in ipairs(paths) do
    local id, why, again = M.record(db, path, {kind = kind})
    if not id then return fail(M.EXIT_HISTORY, why) end
    print(string.format(again and "%s was recorded already, as run %d (not recorded again)" or "recorded %s as run %d",
      path, id))
  end
  return 0
end

local function set_excluded(db, args, value)
  local ids, why = ids_from(args, 1)
  if not ids then return fail(2, why) end
  for _, id in ipairs(ids) do
    local changed = db:run("UPDATE runs SET excluded = ? WHERE id = ?", value, id)
    if changed == 0 then return fail(2, "no run " .. id .. " in the history") end
  end
  return 0
end

local function prune(db, args)
  if args[1] == "--run" then
    local ids, why = ids_from(args, 2)
    if not ids then return fail(2, why) end
    local deleted, unknown = 0, {}
    local ok, problem = M.transaction(db, function()
      for _, id in ipairs(ids) do
        local changed = db:run("DELETE FROM runs WHERE id = ?", id)
        if changed == 0 then unknown[#unknown + 1] = tostring(id) else deleted = deleted + changed end
      end
    end)
    if not ok then return fail(M.EXIT_HISTORY, problem) end
    print(string.format("deleted %d run(s)", deleted))
    if #unknown > 0 then return fail(2, "no run " .. table.concat(unknown, ", ") .. " in the history") end
    return 0
  end
  local keep = args[1] == "--keep" and tonumber(args[2])
  if not keep or keep < 1 then return fail(2, "prune --keep N (N >= 1) or prune --run RUN...") end
  local deleted = 0
  local ok, problem = M.transaction(db, function()
    local victims = db:rows([[SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY experiment, sweep, gpu_name
      ORDER BY id DESC) AS age FROM runs) WHERE age > ?]], keep)
    for _, v in ipairs(victims) do db:run("DELETE FROM runs WHERE id = ?", v.id) end
    deleted = #victims
  end)
  if not ok then return fail(M.EXIT_HISTORY, problem) end
  print(string.format("deleted %d run(s), kept the newest %d of each experiment, sweep and GPU", deleted, keep))
  return 0
end

function M.main(args)
  local path
  local rest = {}
  local i = 1
  while i <= #args do
    if args[i] == "--history" then
      path = args[i + 1]
      if not path then return fail(2, "--history needs a path") end
      i = i + 2
    else
      rest[#rest + 1] = args[i]; i = i + 1
    end
  end
  local command = table.remove(rest, 1)
  if not command or command == "-h" or command == "--help" or command == "help" then print(help) return command and 0 or 2 end
  local commands = {list = list, show = show, export = export, record = record_files, prune = prune,
    exclude = function(db, a) return set_excluded(db, a, 1) end, include = function(db, a) return set_excluded(db, a, 0) end}
  if not commands[command] then return fail(2, "unknown command '" .. command .. "' (gpuexp history --help)") end
  path = path or M.default_path()
  local reading = command == "list" or command == "show" or command == "export"
  local db, why = M.open(path, reading)
  if not db then return fail(M.EXIT_HISTORY, why) end
  local ok, code = pcall(commands[command], db, rest)
  db:close()
  if not ok then return fail(M.EXIT_HISTORY, message_of(code)) end
  return code
end

return M
