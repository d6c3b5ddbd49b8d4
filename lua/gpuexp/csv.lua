-- CSV writing (one flushed row at a time), reading, and a plain-text table for the terminal.
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

local Writer = {}
Writer.__index = Writer

-- M.open(path): a writer whose header() and row() each write one line and flush it,
-- so an interrupted run keeps every row it finished.
function M.open(path)
  local dir = path:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then gpuexp.mkdir(dir) end
  local file, message = io.open(path, "w")
  if not file then
    gpuexp.error("system", "cannot write " .. path .. ": " .. tostring(message), 2)
  end
  return setmetatable({file = file, path = path}, Writer)
end

function Writer:header(columns)
  self.columns = columns
  local cells = {}
  for i, name in ipairs(columns) do cells[i] = quote(name) end
  self.file:write(table.concat(cells, ","), "\n")
  self.file:flush()
end

function Writer:row(row)
  local cells = {}
  for i, name in ipairs(self.columns) do cells[i] = quote(format_value(row[name])) end
  self.file:write(table.concat(cells, ","), "\n")
  self.file:flush()
end

function Writer:close()
  if self.file then self.file:close() end
  self.file = nil
end

-- The records of CSV text: lists of cell strings (quoted cells may hold commas, quotes, newlines).
local function parse_records(text)
  local records, record, field, i, n = {}, {}, {}, 1, #text
  local in_quotes = false
  while i <= n do
    local c = text:sub(i, i)
    if in_quotes then
      if c == '"' then
        if text:sub(i + 1, i + 1) == '"' then field[#field + 1] = '"'; i = i + 1 else in_quotes = false end
      else
        field[#field + 1] = c
      end
    elseif c == '"' then
      in_quotes = true
    elseif c == "," then
      record[#record + 1] = table.concat(field); field = {}
    elseif c == "\n" or c == "\r" then
      if c == "\r" and text:sub(i + 1, i + 1) == "\n" then i = i + 1 end
      record[#record + 1] = table.concat(field); field = {}
      records[#records + 1] = record; record = {}
    else
      field[#field + 1] = c
    end
    i = i + 1
  end
  if #field > 0 or #record > 0 then
    record[#record + 1] = table.concat(field)
    records[#records + 1] = record
  end
  return records
end

-- M.parse_line(text) -> the cells of one CSV line (without its newline).
function M.parse_line(text) return parse_records(text)[1] or {""} end

-- M.line(cells) -> one CSV line (no newline), each cell quoted where it must be.
function M.line(cells)
  local quoted = {}
  for i, cell in ipairs(cells) do quoted[i] = quote(cell) end
  return table.concat(quoted, ",")
end

-- A cell read back: numbers as numbers, true/false as booleans, an empty cell as nil.
local function convert(value)
  if value == nil or value == "" then return nil end
  if value == "true" then return true elseif value == "false" then return false end
  return tonumber(value) or value
end
M.convert = convert

-- M.read_cells(path) -> columns, records (lists of the cells' text, as written).
function M.read_cells(path)
  local file, message = io.open(path, "r")
  if not file then gpuexp.error("system", "cannot read " .. path .. ": " .. tostring(message), 2) end
  local text = file:read("a")
  file:close()
  local records = parse_records(text)
  return table.remove(records, 1) or {}, records
end

-- M.read(path) -> rows (tables keyed by column), columns. Numbers stay strings unless convertible.
function M.read(path)
  local columns, records = M.read_cells(path)
  local rows = {}
  for r, values in ipairs(records) do
    local row = {}
    for c, name in ipairs(columns) do
      local value = values[c]
      row[name] = tonumber(value) or value
    end
    rows[r] = row
  end
  return rows, columns
end

-- M.print_table(rows, columns [, file]): aligned columns for a terminal.
function M.print_table(rows, columns, file)
  file = file or io.stdout
  local widths, cells = {}, {}
  for c, name in ipairs(columns) do widths[c] = #name end
  for r, row in ipairs(rows) do
    cells[r] = {}
    for c, name in ipairs(columns) do
      local value = row[name]
      local text = type(value) == "number" and math.type(value) == "float" and string.format("%.4g", value)
        or format_value(value)
      if #text > 48 then text = text:sub(1, 45) .. "..." end
      cells[r][c] = text
      if #text > widths[c] then widths[c] = #text end
    end
  end
  local function line(values)
    local parts = {}
    for c, text in ipairs(values) do parts[c] = string.format("%" .. widths[c] .. "s", text) end
    file:write(table.concat(parts, "  "), "\n")
  end
  line(columns)
  for _, row in ipairs(cells) do line(row) end
end

return M
