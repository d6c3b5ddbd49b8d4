-- CSV: checked writing (one flushed row at a time, or a whole file through a temporary file and
-- a rename), strict reading (a UTF-8 BOM and CRLF accepted; an unclosed quote or a ragged row is an
-- error naming the file and line), and a plain-text table for the terminal.
local text_formats = require("gpuexp.store.text")
local terminal_text = text_formats.terminal

local M = {}

local function format_value(value)
  local t = type(value)
  if value == nil then
    return ""
  elseif t == "number" then
    if math.type(value) == "integer" then return tostring(value) end
    if value ~= value then return "nan" end
    return string.format("%.10g", value)
  elseif t == "boolean" then
    return value and "true" or "false"
  end
  return tostring(value)
end
M.format_value = format_value

local function quote(text)
  if text:find('[,"\r\n]') or text:match("^%s") or text:match("%s$") then
    return '"' .. text:gsub('"', '""') .. '"'
  end
  return text
end

-- M.line(cells) -> one CSV line (no newline), each cell quoted where it must be.
function M.line(cells)
  local quoted = {}
  for i, cell in ipairs(cells) do quoted[i] = quote(cell) end
  return table.concat(quoted, ",")
end

-- ---- writing: every write, flush and close checked ----

-- Raises a "write" error (exit code 7) naming the file and the system's reason.
local function write_failed(path, what, message)
  gpuexp.error("write", string.format("cannot %s %s: %s", what, path, tostring(message or "unknown error")), 3)
end
M.write_failed = write_failed

-- M.append_whole(file, path, whole_bytes, text) -> the file's new length: appends text to a file
-- opened for appending and flushes it. On a failure (a full disk, an I/O error) the file is closed,
-- cut back to its whole_bytes (its last whole line) and a write error is raised: a file appended
-- this way never holds half a line. The caller forgets the closed file.
function M.append_whole(file, path, whole_bytes, text)
  local ok, why = file:write(text)
  if ok then ok, why = file:flush() end
  if not ok then
    file:close()
    gpuexp._truncate(path, whole_bytes)
    write_failed(path, "write", why)
  end
  return whole_bytes + #text
end

-- Whether an error value is a failed write (a full disk, a folder that cannot be made), as
-- opposed to a bug in what was being printed.
function M.is_write_error(problem) return type(problem) == "table" and problem.kind == "write" end

-- M.write(file, path, ...) writes the strings and flushes, raising a write error on any failure
-- (a full disk shows at the flush): a row is either whole on disk or the run stops.
function M.write(file, path, ...)
  local ok, message = file:write(...)
  if ok then ok, message = file:flush() end
  if not ok then write_failed(path, "write", message) end
end

function M.close(file, path)
  local ok, message = file:close()
  if not ok then write_failed(path, "close", message) end
end

-- M.write_file(path, text [, named]): the whole file, as gx_output.h writes outputs: a unique
-- temporary beside it and a rename (a reader, a kill or a full disk never sees half of it where a
-- good one was), a link of another user on the way refused, no folder created. named: path is the
-- output the user named (-o), where a device or a FIFO is written in place; a name gpuexp makes up
-- (X.meta.json, a report in a folder) must be a file.
function M.write_file(path, text, named)
  local ok, message = gpuexp._write_file(path, text, named)
  if not ok then gpuexp.error("write", message, 2) end
end

-- M.write_printed(path, print [, named]): print(file) writes into memory (file:write, as io's),
-- then the text goes to path as M.write_file writes it: whole, or a write error and path untouched.
function M.write_printed(path, print, named)
  local parts = {}
  print({write = function(self, ...) for _, text in ipairs({...}) do parts[#parts + 1] = text end return self end})
  M.write_file(path, table.concat(parts), named)
end

local Writer = {}
Writer.__index = Writer

-- M.open(path): a writer whose header() and row() each write one line and flush it, so an
-- interrupted run keeps every row it finished; every write is checked.
function M.open(path)
  local file, message = gpuexp._open_output(path, false, true) -- a script's own name for it
  if not file then gpuexp.error("write", message, 2) end
  return setmetatable({file = file, path = path}, Writer)
end

function Writer:header(columns)
  self.columns = columns
  M.write(self.file, self.path, M.line(columns), "\n")
end

function Writer:row(row)
  local cells = {}
  for i, name in ipairs(self.columns) do cells[i] = format_value(row[name]) end
  M.write(self.file, self.path, M.line(cells), "\n")
end

function Writer:close()
  if self.file then M.close(self.file, self.path) end
  self.file = nil
end

-- ---- reading ----

-- M.parse(text [, name]) -> records (lists of cell texts), lines (the line each record starts on),
-- ends (the byte each record ends on, its newline included); or nil and "name:line: problem". A
-- leading UTF-8 BOM is skipped; LF, CRLF and CR end records; quoted cells may hold commas, quotes
-- ("") and newlines; blank lines are skipped.
function M.parse(text, name)
  name = name or "CSV"
  local records, lines, ends = {}, {}, {}
  local n, i, line = #text, 1, 1
  if text:sub(1, 3) == "\239\187\191" then i = 4 end
  local record, record_line = {}, line
  while i <= n do
    local field
    if text:byte(i) == 34 then -- a quoted cell
      local opened, parts, j = line, {}, i + 1
      while true do
        local q = text:find('"', j, true)
        if not q then return nil, string.format("%s:%d: a quoted cell is never closed", name, opened) end
        parts[#parts + 1] = text:sub(j, q - 1)
        if text:byte(q + 1) == 34 then
          parts[#parts + 1] = '"'
          j = q + 2
        else
          j = q + 1
          break
        end
      end
      field = table.concat(parts)
      for _ in field:gmatch("\n") do line = line + 1 end
      i = j
      local after = text:byte(i)
      if after and after ~= 44 and after ~= 10 and after ~= 13 then
        return nil, string.format("%s:%d: text after a closing quote", name, line)
      end
    else
      local stop = text:find("[,\r\n]", i) or n + 1
      field = text:sub(i, stop - 1)
      i = stop
    end
    record[#record + 1] = field
    local c = text:byte(i)
    if c == 44 then
      i = i + 1
      if i > n then record[#record + 1] = "" end -- a comma ends the file: one more empty cell
    else -- a newline, or the end of the text: the record ends
      if c == 13 and text:byte(i + 1) == 10 then i = i + 1 end
      i = i + 1
      if not (#record == 1 and record[1] == "") then -- a blank line
        records[#records + 1] = record
        lines[#lines + 1] = record_line
        ends[#ends + 1] = math.min(i - 1, n)
      end
      line = line + 1
      record, record_line = {}, line
    end
  end
  if #record > 0 and not (#record == 1 and record[1] == "") then
    records[#records + 1] = record
    lines[#lines + 1] = record_line
    ends[#ends + 1] = n
  end
  return records, lines, ends
end

-- The whole file, or a usage error naming it (missing, unreadable, a folder).
local function read_text(path)
  local file, message = io.open(path, "rb")
  if not file then gpuexp.error("usage", "cannot read " .. path .. ": " .. tostring(message), 3) end
  local text, why = file:read("a")
  file:close()
  if not text then gpuexp.error("usage", "cannot read " .. path .. ": " .. tostring(why), 3) end
  return text
end

-- M.read_cells(path [, needs_header]) -> columns, records (lists of the cells' text, as written),
-- lines (each record's line in the file), the file's text. Raises a usage error naming the file and
-- line when it is malformed: an unclosed quote, or a row with another number of cells than the
-- header; with needs_header (a run's CSV to judge, merge or plot), also when it holds no header.
function M.read_cells(path, needs_header)
  local text = read_text(path)
  local records, lines = M.parse(text, path)
  if not records then gpuexp.error("usage", lines, 2) end
  if needs_header and not records[1] then
    gpuexp.error("usage", string.format("%s is empty (%d bytes: no header, no rows): a run stopped before its first " ..
      "line, or a file cut to nothing; nothing to read", path, #text), 2)
  end
  local columns = table.remove(records, 1) or {}
  table.remove(lines, 1)
  for r, record in ipairs(records) do
    if #record ~= #columns then
      gpuexp.error("usage", string.format("%s:%d: %d cell%s where the header has %d", path, lines[r], #record,
        #record == 1 and "" or "s", #columns), 2)
    end
  end
  return columns, records, lines, text
end

-- A cell read back: numbers as numbers, true/false as booleans, an empty cell as nil.
-- A cell as a number, or nil: Lua's numerals and the spellings format_value (and C's printf) write
-- for values that are not finite ("nan", "-nan", "inf", "-inf"), which tonumber does not read.
local special = {nan = 0 / 0, ["-nan"] = 0 / 0, inf = math.huge, ["-inf"] = -math.huge, infinity = math.huge,
  ["-infinity"] = -math.huge}
local function number(value)
  return tonumber(value) or special[value:lower()]
end
M.number = number

local function convert(value)
  if value == nil or value == "" then return nil end
  if value == "true" then return true elseif value == "false" then return false end
  return number(value) or value
end
M.convert = convert

-- M.read(path [, needs_header]) -> rows (tables keyed by column), columns. Numbers stay strings
-- unless convertible.
function M.read(path, needs_header)
  local columns, records = M.read_cells(path, needs_header)
  local rows = {}
  for r, values in ipairs(records) do
    local row = {}
    for c, name in ipairs(columns) do
      local value = values[c]
      row[name] = value and number(value) or value
    end
    rows[r] = row
  end
  return rows, columns
end

-- M.pad(text, width [, left]): text padded with spaces to width columns (on the right when left);
-- string.format's widths stop at 99 (store/text.lua's, which counts UTF-8 characters).
M.pad = text_formats.pad

-- M.print_table(rows, columns [, file]): aligned columns for a terminal.
function M.print_table(rows, columns, file)
  file = file or io.stdout
  local widths, cells = {}, {}
  for c, name in ipairs(columns) do widths[c] = text_formats.width(terminal_text(name)) end
  for r, row in ipairs(rows) do
    cells[r] = {}
    for c, name in ipairs(columns) do
      local value = row[name]
      local text = type(value) == "number" and math.type(value) == "float" and string.format("%.4g", value)
        or format_value(value)
      text = text_formats.cut(terminal_text(text), 48) -- a name from data never moves the cursor or forges a line
      cells[r][c] = text
      widths[c] = math.max(widths[c], text_formats.width(text))
    end
  end
  local function line(values)
    local parts = {}
    for c, text in ipairs(values) do parts[c] = text_formats.pad(text, widths[c]) end
    file:write(table.concat(parts, "  "), "\n")
  end
  local header = {}
  for c, name in ipairs(columns) do header[c] = terminal_text(name) end
  line(header)
  for _, row in ipairs(cells) do line(row) end
end

return M
