-- Tuning winners in the history: each finished gpuexp.tune stores its tie set keyed by the tune's
-- name, the kernel's source hash, the architecture, the GPU model, the driver and the CUDA version;
-- a later tune starts from them, and reports drift when a stored winner measured again has left the
-- tie set (after a source, option, driver or toolkit change). The one owner of the tune_winners
-- table (its own table in the history file: the runs schema is untouched).
local history = require("gpuexp.store.history")
local json = require("gpuexp.store.json")

local M = {}

local SCHEMA = [[
CREATE TABLE IF NOT EXISTS tune_winners(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  arch TEXT NOT NULL,
  gpu TEXT NOT NULL,
  driver TEXT NOT NULL,
  cuda TEXT NOT NULL,
  recorded_utc TEXT NOT NULL,
  strategy TEXT,
  objective TEXT,
  best TEXT NOT NULL,
  ties TEXT NOT NULL,
  evaluations REAL,
  cost_s REAL,
  drift TEXT
);
CREATE INDEX IF NOT EXISTS tune_winners_by_name ON tune_winners(name, recorded_utc);
]]

M.KEY_FIELDS = {"source_hash", "arch", "gpu", "driver", "cuda"}

local function open(path, readonly)
  if path == "" then path = history.default_path() end
  local db, why = history.open(path, readonly)
  if not db then return nil, why end
  if not readonly then
    local ok, problem = pcall(db.exec, db, SCHEMA)
    if not ok then db:close() return nil, type(problem) == "table" and problem.message or tostring(problem) end
  end
  return db
end

local function decode(record)
  record.best = json.decode(record.best)
  record.ties = json.decode(record.ties)
  record.drift = record.drift and json.decode(record.drift) or nil
  return record
end

-- M.latest(path, name) -> the newest stored record of each key for this tune name, newest first
-- (nil and why when the history cannot be read; an empty list when there is none).
function M.latest(path, name)
  local db, why = open(path, true)
  if not db then return {} end -- no history yet: nothing stored
  local ok, rows = pcall(db.rows, db, "SELECT * FROM tune_winners WHERE name = ? ORDER BY recorded_utc DESC, id DESC",
    name)
  db:close()
  if not ok then
    local text = type(rows) == "table" and rows.message or tostring(rows)
    if text:find("no such table", 1, true) then return {} end
    return nil, text
  end
  local seen, list = {}, {}
  for _, record in ipairs(rows) do
    local key = {}
    for i, field in ipairs(M.KEY_FIELDS) do key[i] = record[field] end
    key = table.concat(key, "\31")
    if not seen[key] then seen[key] = true; list[#list + 1] = decode(record) end
  end
  return list
end

-- M.differences(record, key) -> list of "field: stored -> now" for the key fields that differ.
function M.differences(record, key)
  local list = {}
  for _, field in ipairs(M.KEY_FIELDS) do
    if tostring(record[field]) ~= tostring(key[field]) then
      list[#list + 1] = string.format("%s: %s -> %s", field, tostring(record[field]), tostring(key[field]))
    end
  end
  return list
end

-- M.store(path, record) -> id, or nil and why. record: the key fields, strategy, objective, best
-- (a point), ties ({point, value, ratio}...), evaluations, cost_s, drift (list or nil).
function M.store(path, record)
  local db, why = open(path)
  if not db then return nil, why end
  local id
  local ok, problem = history.transaction(db, function()
    db:run("INSERT INTO tune_winners(name, source_hash, arch, gpu, driver, cuda, recorded_utc, strategy, objective, " ..
      "best, ties, evaluations, cost_s, drift) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", record.name,
      record.source_hash, record.arch, record.gpu, record.driver, record.cuda, os.date("!%Y-%m-%dT%H:%M:%SZ"),
      record.strategy, record.objective, json.encode(record.best), json.encode(record.ties), record.evaluations,
      record.cost_s, record.drift and #record.drift > 0 and json.encode(record.drift) or nil)
    id = db:rows("SELECT last_insert_rowid() AS id")[1].id
  end)
  db:close()
  if not ok then return nil, problem end
  return id
end

-- M.drift_lines(path [, since_utc]) -> lines of Markdown, one per tune whose stored winner left the
-- tie set (recorded at or after since_utc): the nightly's hook for its report. Empty when none.
function M.drift_lines(path, since_utc)
  local db = open(path, true)
  if not db then return {} end
  local ok, rows = pcall(db.rows, db, "SELECT * FROM tune_winners WHERE drift IS NOT NULL AND recorded_utc >= ? " ..
    "ORDER BY recorded_utc, id", since_utc or "")
  db:close()
  if not ok then return {} end
  local lines = {}
  for _, record in ipairs(rows) do
    for _, d in ipairs(decode(record).drift or {}) do
      lines[#lines + 1] = string.format("- tuning drift in `%s`: stored winner %s is %+.1f%% from the best %s%s (%s)",
        record.name, json.encode(d.point), (d.ratio - 1) * 100, json.encode(record.best),
        d.changed and #d.changed > 0 and "; changed " .. table.concat(d.changed, ", ") or "", d.recorded_utc or "")
    end
  end
  return lines
end

return M
