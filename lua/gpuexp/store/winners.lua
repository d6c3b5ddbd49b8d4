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
  drift TEXT,
  regret TEXT
);
CREATE INDEX IF NOT EXISTS tune_winners_by_name ON tune_winners(name, recorded_utc);
]]

M.KEY_FIELDS = {"source_hash", "arch", "gpu", "driver", "cuda"}

local function open(path, readonly)
  if path == "" then path = history.default_path() end
  local db, why = history.open(path, readonly)
  if not db then return nil, why end
  if not readonly then
    local ok, problem = pcall(function()
      db:exec(SCHEMA)
      local has_regret = false -- a table made before the regret bound: the column added
      for _, column in ipairs(db:rows("PRAGMA table_info(tune_winners)")) do
        if column.name == "regret" then has_regret = true end
      end
      if not has_regret then db:exec("ALTER TABLE tune_winners ADD COLUMN regret TEXT") end
    end)
    if not ok then db:close() return nil, type(problem) == "table" and problem.message or tostring(problem) end
  end
  return db
end

local function decoded_json(text, what)
  if type(text) ~= "string" then return nil, what .. " is " .. (text == nil and "missing" or "not text") end
  local ok, value = pcall(json.decode, text)
  if not ok or value == nil then return nil, what .. " is not JSON" end
  return value
end

-- A stored record with its JSON fields decoded and checked, or nil and what is damaged.
local function decode(record)
  local problem
  record.best, problem = decoded_json(record.best, "best")
  if problem or type(record.best) ~= "table" then return nil, problem or "best is not a configuration" end
  record.ties, problem = decoded_json(record.ties, "ties")
  if problem or type(record.ties) ~= "table" then return nil, problem or "ties is not a list" end
  for i, t in ipairs(record.ties) do
    if type(t) ~= "table" or type(t.point) ~= "table" then return nil, string.format("ties[%d] has no configuration", i) end
  end
  if record.drift ~= nil then
    record.drift, problem = decoded_json(record.drift, "drift")
    if problem or type(record.drift) ~= "table" then return nil, problem or "drift is not a list" end
  end
  if record.regret ~= nil then
    record.regret, problem = decoded_json(record.regret, "regret")
    if problem or type(record.regret) ~= "table" then return nil, problem or "regret is not an object" end
  end
  for _, field in ipairs(M.KEY_FIELDS) do
    if type(record[field]) ~= "string" then return nil, field .. " is " .. (record[field] == nil and "missing" or "not text") end
  end
  return record
end

-- M.latest(path, name) -> the newest stored record of each key for this tune name, newest first
-- (nil and why when the history cannot be read; an empty list when there is none), and the damaged
-- records skipped ("PATH: tune_winners record ID: what is damaged"...).
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
  local seen, list, damaged = {}, {}, {}
  for _, record in ipairs(rows) do
    local good, problem = decode(record)
    if not good then
      damaged[#damaged + 1] = string.format("%s: tune_winners record %s: %s", path, tostring(record.id), problem)
    else
      local key = {}
      for i, field in ipairs(M.KEY_FIELDS) do key[i] = record[field] end
      key = table.concat(key, "\31")
      if not seen[key] then seen[key] = true; list[#list + 1] = good end
    end
  end
  return list, nil, damaged
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
-- (a point), ties ({point, value, ratio}...), evaluations, cost_s, drift (list or nil), regret (the
-- bound: {bound, selection, exploration, confidence, ...}; an unbounded part is stored as null).
function M.store(path, record)
  local db, why = open(path)
  if not db then return nil, why end
  local id
  local ok, problem = history.transaction(db, function()
    local bound
    if record.regret then -- JSON has no infinity: an unbounded part is null
      bound = {}
      for k, v in pairs(record.regret) do bound[k] = v ~= math.huge and v or nil end
    end
    db:run("INSERT INTO tune_winners(name, source_hash, arch, gpu, driver, cuda, recorded_utc, strategy, objective, " ..
      "best, ties, evaluations, cost_s, drift, regret) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", record.name,
      record.source_hash, record.arch, record.gpu, record.driver, record.cuda, os.date("!%Y-%m-%dT%H:%M:%SZ"),
      record.strategy, record.objective, json.encode(record.best), json.encode(record.ties), record.evaluations,
      record.cost_s, record.drift and #record.drift > 0 and json.encode(record.drift) or nil,
      bound and json.encode(bound) or nil)
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
    local good = decode(record)
    for _, d in ipairs(good and good.drift or {}) do
      lines[#lines + 1] = string.format("- tuning drift in `%s`: stored winner %s is %+.1f%% from the best %s%s (%s)",
        record.name, json.encode(d.point), (d.ratio - 1) * 100, json.encode(record.best),
        d.changed and #d.changed > 0 and "; changed " .. table.concat(d.changed, ", ") or "", d.recorded_utc or "")
    end
  end
  return lines
end

return M
