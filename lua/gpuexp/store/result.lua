-- One result model: a run of a sweep as its axes, its columns and its rows by point key, whether
-- it was read from a CSV (strictly: the file and line of any problem), loaded from the history or
-- built by the ledger of a running sweep. The point key is made here and nowhere else. Rows are
-- kept as the cells' text and converted when read, so a large run costs its text, not twice that.
local csv = require("gpuexp.store.csv")
local meta = require("gpuexp.store.meta")
local samples = require("gpuexp.store.samples")

local M = {}

M.SEPARATOR = "\31"

-- The key of a point from its axis cells (texts, in axis order).
function M.key(axis_cells) return table.concat(axis_cells, M.SEPARATOR) end

-- The axis cells of a key.
function M.split(key)
  local cells = {}
  for cell in (key .. M.SEPARATOR):gmatch("(.-)" .. M.SEPARATOR) do cells[#cells + 1] = cell end
  return cells
end

local Result = {}
Result.__index = Result

-- M.new(label, info, axes, columns) -> an empty result: axes are names, columns the CSV's.
function M.new(label, info, axes, columns)
  local result = setmetatable({label = label, info = info or {}, axes = axes, columns = columns or {}, order = {},
    records = {}, lines = {}, column_index = {}, axis_columns = {}}, Result)
  for c, name in ipairs(result.columns) do result.column_index[name] = c end
  for i, axis in ipairs(axes) do result.axis_columns[i] = result.column_index[axis] end
  return result
end

-- The key of a record (its cells, in column order).
function Result:key_of(cells)
  local axis_cells = {}
  for i, c in ipairs(self.axis_columns) do axis_cells[i] = cells[c] or "" end
  return M.key(axis_cells)
end

-- "file:line" of a point's row (read from a CSV), else the result's label.
function Result:where(key)
  local line = self.lines[key]
  return line and (self.label .. ":" .. line) or self.label
end

-- Adds a record; true, or false and why when its point has a row already (one row a point).
-- line: its line in the file read (for messages).
function Result:add(cells, line)
  local key = self:key_of(cells)
  if self.records[key] then
    return false, string.format("%s: a second row for the point %s (a run has one row a point; was it written " ..
      "twice, or are the axes wrong?)", line and (self.label .. ":" .. line) or self.label, self:describe(key))
  end
  self.order[#self.order + 1] = key
  self.records[key] = cells
  if line then self.lines[key] = line end
  return true
end

function Result:has(key) return self.records[key] ~= nil end

-- A row as values (numbers, booleans, strings; empty cells are nil), or nil when the point has none.
function Result:row(key)
  local cells = self.records[key]
  if not cells then return nil end
  local row = {}
  for c, name in ipairs(self.columns) do row[name] = csv.convert(cells[c]) end
  return row
end

-- The run's samples (store/samples.lua): entries {key, field, values = text, where} in the order
-- they were written (a point measured again has two; the last counts), {} when the run kept none;
-- nil and "path:line: problem" when its samples file is damaged. A result read from a CSV reads
-- the samples file beside it on first use; the ledger's result carries them from memory.
function Result:sample_entries()
  if self.load_samples then
    local load = self.load_samples
    self.load_samples = nil
    self.samples_problem = load()
  end
  if self.samples_problem then return nil, self.samples_problem end
  return self.sample_list or {}
end

-- A point's samples of a field (samples_ms), as numbers, or nil when the run kept none (or its
-- samples file is damaged: gpuexp compare then judges without its significance test).
-- A sample that is not a finite number (nan, inf, 1e999, text) is left out and named: the second
-- result names them: "FILE:LINE: 'nan', 'inf'" (nil when there are none).
function Result:samples(key, field)
  self:sample_entries()
  local text = self.sample_texts and self.sample_texts[key] and self.sample_texts[key][field]
  if not text then return nil end
  local values, dropped = {}, nil
  for word in text:gmatch("%S+") do
    local value = tonumber(word)
    if value and value == value and value > -math.huge and value < math.huge then
      values[#values + 1] = value
    else
      dropped = dropped or {}
      dropped[#dropped + 1] = "'" .. (#word > 20 and (word:sub(1, 17) .. "...") or word) .. "'"
    end
  end
  if dropped then
    local where = self.sample_where and self.sample_where[key] and self.sample_where[key][field] or self.label
    dropped = where .. ": " .. table.concat(dropped, ", ")
  end
  return #values > 0 and values or nil, dropped
end

-- Adds a point's samples text (space-separated numbers) for a field; where: the file and line it
-- was read from, for the messages about samples that are not numbers.
function Result:add_samples(key, field, text, where)
  self.sample_list = self.sample_list or {}
  self.sample_list[#self.sample_list + 1] = {key = key, field = field, values = text, where = where}
  self.sample_texts = self.sample_texts or {}
  self.sample_texts[key] = self.sample_texts[key] or {}
  self.sample_texts[key][field] = text
  if where then
    self.sample_where = self.sample_where or {}
    self.sample_where[key] = self.sample_where[key] or {}
    self.sample_where[key][field] = where
  end
end

-- One column's value of a point's row.
function Result:value(key, column)
  local cells, c = self.records[key], self.column_index[column]
  return cells and c and csv.convert(cells[c]) or nil
end

function Result:axis_cells(key) return M.split(key) end

-- "a=1 b=x" for messages and reports.
function Result:describe(key)
  local cells, parts = M.split(key), {}
  for i, axis in ipairs(self.axes) do parts[i] = axis .. "=" .. tostring(cells[i]) end
  return table.concat(parts, " ")
end

-- The first cell of a metric that is not a number (nor empty), named by file and line, or nil.
function Result:check_numbers(column)
  if not self.column_index[column] then return nil end
  for _, key in ipairs(self.order) do
    local value = self:value(key, column)
    if value ~= nil and type(value) ~= "number" then
      return string.format("%s: %s is '%s', not a number", self:where(key), column, tostring(value))
    end
  end
  return nil
end

-- The axis names a run's metadata gives, or nil and why (nil alone: it gives none).
function M.axes_of(info, path)
  local where = meta.path_for(path)
  if type(info) ~= "table" or info.sweep == nil then return nil end
  local sweep = info.sweep
  if type(sweep) ~= "table" then return nil, where .. ": its 'sweep' is not an object" end
  local axes = sweep.axes
  if axes == nil then return nil end
  if type(axes) ~= "table" or (#axes == 0 and next(axes) ~= nil) then
    return nil, where .. ": its sweep.axes is not a list of {name = ..., values = ...}"
  end
  if #axes == 0 then return nil, where .. ": its sweep.axes is empty (a sweep has at least one axis)" end
  local names, seen = {}, {}
  for i, axis in ipairs(axes) do
    if type(axis) ~= "table" or type(axis.name) ~= "string" or axis.name == "" then
      return nil, string.format("%s: its sweep.axes[%d] is not {name = ..., values = ...}", where, i)
    end
    if seen[axis.name] then
      return nil, string.format("%s: its sweep.axes names '%s' twice (axes %d and %d)", where, axis.name, seen[axis.name],
        i)
    end
    seen[axis.name], names[i] = i, axis.name
  end
  return names
end

-- What tells the same files recorded twice (the history's runs.source): a hash of the CSV's text
-- and its metadata's, as they are on disk; the ledger gives it from the texts it wrote.
function M.source(csv_text, meta_text)
  return gpuexp.hash((csv_text or "") .. "\0" .. (meta_text or ""))
end

-- M.read(path [, axes]) -> result, or nil and why. The axes come from the .meta.json beside the CSV
-- unless given; every problem names the file (and line).
function M.read(path, axes)
  local ok, columns, records, lines, text = pcall(csv.read_cells, path, true)
  if not ok then return nil, type(columns) == "table" and columns.message or tostring(columns) end
  local info, unreadable, meta_text = meta.read_json(meta.path_for(path))
  if not axes then
    local why
    axes, why = M.axes_of(info, path)
    if not axes then
      return nil, why or string.format("%s: %s: give them with --axes, or finish an interrupted run with gpuexp " ..
        "--resume, which writes it", path, info and (meta.path_for(path) .. " names no axes (no sweep.axes)") or
        ("no readable " .. meta.path_for(path) .. " beside it to say which columns are axes (" .. tostring(unreadable) ..
        ")"))
    end
  end
  local result = M.new(path, info, axes, columns)
  for i, axis in ipairs(axes) do
    if not result.axis_columns[i] then return nil, string.format("%s has no column '%s' (an axis)", path, axis) end
  end
  for r, cells in ipairs(records) do
    local added, why = result:add(cells, lines[r])
    if not added then return nil, why end
  end
  result.source = M.source(text, meta_text)
  -- the samples file beside it (store/samples.lua), read when first asked: its problem, or nil
  result.load_samples = function()
    local entries, problem = samples.read(samples.path_for(path), axes)
    for _, entry in ipairs(entries or {}) do
      result:add_samples(M.key(entry.cells), entry.field, entry.values, entry.where)
    end
    return problem
  end
  return result
end

return M
