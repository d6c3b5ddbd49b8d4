-- The samples file, X.samples.csv beside a sweep's X.csv: every sample a point measured, one line
-- per point and field (the point's axis cells, the field's name, its values space-separated). This
-- module owns the format: its path, its columns, appending it as points finish (the ledger), writing
-- it whole (a history export) and reading it back (the result model, a resumed run's ledger).
local csv = require("gpuexp.store.csv")

local M = {}

-- The samples file beside a CSV.
function M.path_for(csv_path) return (csv_path:gsub("%.csv$", "")) .. ".samples.csv" end

-- The header: the axes' names, then "field" and "values". Built here only.
function M.columns(axis_names)
  local columns = {}
  for i, name in ipairs(axis_names) do columns[i] = name end
  columns[#columns + 1] = "field"
  columns[#columns + 1] = "values"
  return columns
end

M.FORMAT = "%.9g" -- a number as the file holds it

-- Numbers as the file holds them: "%.9g" each (a float's time to the nanosecond of a second and
-- beyond), space-separated.
function M.values_text(values)
  local texts = {}
  for i, value in ipairs(values) do texts[i] = string.format(M.FORMAT, value) end
  return table.concat(texts, " ")
end

-- The numbers as they will read back from the file (gpuexp.tune decides on these, so that a resumed
-- tune decides as the first did); a value that is not a number stays as it is.
function M.as_stored(values)
  local stored = {}
  for i, value in ipairs(values) do
    stored[i] = type(value) == "number" and tonumber(string.format(M.FORMAT, value)) or value
  end
  return stored
end

-- One line (no newline) of a point's field: axis cells (texts, in axis order), field name, values text.
local function line(axis_cells, field, values_text)
  local cells = {}
  for i, cell in ipairs(axis_cells) do cells[i] = cell end
  cells[#cells + 1] = field
  cells[#cells + 1] = values_text
  return csv.line(cells)
end

-- M.text(axis_names, entries) -> the whole file's text; entries: {cells = axis cells, field =,
-- values = values text}, in the order they are to be written.
function M.text(axis_names, entries)
  local lines = {csv.line(M.columns(axis_names))}
  for _, entry in ipairs(entries) do lines[#lines + 1] = line(entry.cells, entry.field, entry.values) end
  return table.concat(lines, "\n") .. "\n"
end

-- ---- appending as points finish ----

local Appender = {}
Appender.__index = Appender

-- M.appender(path, axis_names): appends a point's samples as it finishes. The file is opened on the
-- first point that has samples (a sweep with none leaves none), in append mode; its header is
-- written when it is new or empty, and a last line cut by a kill is dropped. Every append is
-- flushed, and a failed one is cut back off the file and raised as a write error (exit code 7), so
-- the file never holds half a line.
function M.appender(path, axis_names)
  return setmetatable({path = path, axis_names = axis_names}, Appender)
end

function Appender:append_text(text)
  local file = self.file
  self.file = nil -- closed if the append fails
  self.bytes = csv.append_whole(file, self.path, self.bytes, text)
  self.file = file
end

-- The file's size and the length of its whole lines (a last line that a kill cut has no newline);
-- nil when there is no file.
local function whole_length(path)
  local file = io.open(path, "rb")
  if not file then return nil end
  local size = file:seek("end")
  local position = size
  while position > 0 do
    local chunk_size = math.min(4096, position)
    file:seek("set", position - chunk_size)
    local last = file:read(chunk_size):match(".*()\n")
    if last then
      file:close()
      return size, position - chunk_size + last
    end
    position = position - chunk_size
  end
  file:close()
  return size, 0
end

-- A last line that a kill cut (no newline) is cut off the file, and said; nothing when there is
-- no file or its last line is whole.
local function drop_cut_line(path)
  local size, whole = whole_length(path)
  if size and whole < size then
    local cut, why = gpuexp._truncate(path, whole)
    if not cut then csv.write_failed(path, "cut back", why) end
    io.stderr:write(string.format("gpuexp: %s: dropped %d bytes of a line cut off by the interruption\n", path,
      size - whole))
  end
end

-- axis_cells: the point's cells (texts, in axis order); arrays: field -> list of numbers, written
-- in field name order. Returns the entries written ({cells = axis_cells, field =, values = values
-- text}, in file order): what the ledger keeps for the history.
function Appender:write(axis_cells, arrays)
  if not self.file then
    drop_cut_line(self.path) -- a resumed run's file: as the ledger drops a cut row
    local file, why = gpuexp._open_output(self.path, true)
    if not file then gpuexp.error("write", why) end
    self.file, self.bytes = file, file:seek("end")
    -- a new file, or one a kill left empty, gets the header; a resumed run's is appended to
    if self.bytes == 0 then self:append_text(csv.line(M.columns(self.axis_names)) .. "\n") end
  end
  local names = {}
  for name in pairs(arrays) do names[#names + 1] = name end
  table.sort(names)
  local lines, entries = {}, {}
  for i, name in ipairs(names) do
    entries[i] = {cells = axis_cells, field = name, values = M.values_text(arrays[name])}
    lines[i] = line(axis_cells, name, entries[i].values)
  end
  self:append_text(table.concat(lines, "\n") .. "\n")
  return entries
end

-- Closes the file (checked: a close that fails is a write error); again is a no-op.
function Appender:close()
  if self.file then
    local file = self.file
    self.file = nil
    csv.close(file, self.path)
  end
end

-- ---- reading ----

-- M.read(path, axis_names) -> entries, in file order: {cells = axis cells in axis_names' order,
-- field =, values = values text, where = "path:line"}; nil when there is no file (a run that kept no
-- samples); nil and "path:line: problem" when the file is damaged (an unclosed quote, a ragged row,
-- a header without the columns of an axis, field or values). Columns are found by name.
function M.read(path, axis_names)
  local file = io.open(path, "r")
  if not file then return nil end
  file:close()
  local ok, columns, records, lines = pcall(csv.read_cells, path)
  if not ok then return nil, type(columns) == "table" and columns.message or tostring(columns) end
  local at = {}
  for c, name in ipairs(columns) do at[name] = at[name] or c end
  for _, name in ipairs(M.columns(axis_names)) do
    if not at[name] then
      return nil, string.format("%s:1: no column '%s' (a samples file's header is %s)", path, name,
        table.concat(M.columns(axis_names), ","))
    end
  end
  local entries = {}
  for r, cells in ipairs(records) do
    local axis_cells = {}
    for i, name in ipairs(axis_names) do axis_cells[i] = cells[at[name]] end
    entries[r] = {cells = axis_cells, field = cells[at.field], values = cells[at.values],
      where = string.format("%s:%d", path, lines[r])}
  end
  return entries
end

-- M.take_back(path, axis_names) -> the entries of a resumed run's samples file (as M.read gives
-- them), its last line cut by a kill dropped first; nil when there is none; nil and why when it is
-- damaged elsewhere.
function M.take_back(path, axis_names)
  drop_cut_line(path)
  return M.read(path, axis_names)
end

return M
