-- The readers of raw records that bench/recompute/ scripts share (figure.lua's expressions call
-- them by name): see figure.lua's header for each. dofile'd: returns the table of readers.
local records = {os.getenv("RECORD")}
for k = 2, 9 do records[k] = os.getenv("RECORD" .. k) end

local cache = {}
local function text(path)
  path = path or records[1] or error("no path and no $RECORD")
  if cache[path] then return cache[path] end
  local archive, member = path:match("^(.-%.t[gb]z):(.+)$")
  local handle
  if archive then
    handle = io.popen("tar -xzOf '" .. archive:gsub("'", "'\\''") .. "' '" .. member:gsub("'", "'\\''") .. "'")
  else
    handle = io.open(path, "rb")
  end
  local content = handle and handle:read("a")
  if handle then handle:close() end
  if not content or content == "" then error("cannot read " .. path) end
  cache[path] = content
  return content
end

-- A part of a file, readable by name like a file: from the first line matching `pattern` to the
-- line before the next line that starts with "#" after its first line that does not (the next
-- section of a record of several runs: a section's heading may be several "#" lines).
local sections = 0
local function section(path, pattern)
  local lines_of, inside, body = {}, false, false
  for l in text(path):gmatch("[^\n]*") do
    if body and l:find("^#") then break end -- the section's own heading lines (# ...) come first
    if not inside and l:find(pattern) then inside = true end
    if inside then
      lines_of[#lines_of + 1] = l
      if not l:find("^#") then body = true end
    end
  end
  if not inside then error("no line of " .. (path or records[1]) .. " matches " .. pattern) end
  sections = sections + 1
  local name = "section " .. sections .. " (" .. pattern .. ")"
  cache[name] = table.concat(lines_of, "\n")
  return name
end

local function number_or_text(value)
  return tonumber(value) or value
end

local function split_csv_line(line)
  local cells, pos = {}, 1
  while pos <= #line + 1 do
    if line:sub(pos, pos) == '"' then
      local cell, i = {}, pos + 1
      while true do
        local q = line:find('"', i, true)
        if not q then error("an unclosed quote in a CSV line: " .. line) end
        cell[#cell + 1] = line:sub(i, q - 1)
        if line:sub(q + 1, q + 1) == '"' then
          cell[#cell + 1] = '"'
          i = q + 2
        else
          pos = q + 2
          break
        end
      end
      cells[#cells + 1] = table.concat(cell)
    else
      local comma = line:find(",", pos, true) or #line + 1
      cells[#cells + 1] = line:sub(pos, comma - 1)
      pos = comma + 1
    end
  end
  return cells
end

local function csv(path)
  local rows, header = {}, nil
  for line in text(path):gmatch("[^\r\n]+") do
    local cells = split_csv_line(line)
    if not header then
      header = cells
    else
      local row = {}
      for k, name in ipairs(header) do row[name] = cells[k] end
      rows[#rows + 1] = row
    end
  end
  return rows
end

-- A table as gpuexp prints it: a header line of column names (the first line of the file, or the
-- first whose first word is `first`), then one line per row, each column's cells ending where its
-- name ends (right-aligned; the last column takes the rest of the line). The table ends at a line
-- that does not fit those columns.
local function printed(path, first)
  local header, ends, rows = nil, {}, {}
  for l in text(path):gmatch("[^\r\n]*") do
    if not header then
      if (not first and l:find("%S")) or (first and l:match("^%s*(%S+)") == first) then
        header = {}
        for s, name, e in l:gmatch("()(%S+)()") do header[#header + 1] = name; ends[#ends + 1] = e - 1 end
      end
    else
      if not l:find("%S") then break end
      local row, fits, from = {}, true, 1
      for k, name in ipairs(header) do
        local cell = k < #header and l:sub(from, ends[k]) or l:sub(from)
        if k < #header and l:sub(ends[k] + 1, ends[k] + 1):find("%S") then fits = false end
        row[name] = cell:match("^%s*(.-)%s*$")
        from = ends[k] + 1
      end
      if not fits then break end
      rows[#rows + 1] = row
    end
  end
  if not header then error("no table in " .. (path or records[1])) end
  return rows
end

local function line(path, pattern)
  for l in text(path):gmatch("[^\r\n]+") do
    local captures = {l:match(pattern)}
    if #captures > 0 then
      for k, v in ipairs(captures) do captures[k] = number_or_text(v) end
      return table.unpack(captures)
    end
  end
  error("no line of " .. (path or records[1]) .. " matches " .. pattern)
end

local function lines(path, pattern)
  local list = {}
  for l in text(path):gmatch("[^\r\n]+") do
    local capture = l:match(pattern)
    if capture then list[#list + 1] = number_or_text(capture) end
  end
  if #list == 0 then error("no line of " .. (path or records[1]) .. " matches " .. pattern) end
  return list
end

-- every line's captures, as a list of lists
local function captures(path, pattern)
  local list = {}
  for l in text(path):gmatch("[^\r\n]+") do
    local found = {l:match(pattern)}
    if #found > 0 then
      for k, v in ipairs(found) do found[k] = number_or_text(v) end
      list[#list + 1] = found
    end
  end
  return list
end

local function matches(row, where)
  for k, v in pairs(where) do
    if tostring(row[k]) ~= tostring(v) and tonumber(row[k]) ~= v then return false end
  end
  return true
end

-- a row with its numbers as numbers
local function numeric(r)
  local copy = {}
  for k, v in pairs(r) do copy[k] = number_or_text(v) end
  return copy
end

local function pick(rows, where)
  local list = {}
  for _, r in ipairs(rows) do if matches(r, where) then list[#list + 1] = numeric(r) end end
  return list
end

local function row(rows, where)
  local list = pick(rows, where)
  if #list ~= 1 then
    local keys = {}
    for k, v in pairs(where) do keys[#keys + 1] = k .. "=" .. tostring(v) end
    table.sort(keys)
    error(#list .. " rows where " .. table.concat(keys, ","))
  end
  return list[1]
end

local function col(rows, name)
  local list = {}
  for _, r in ipairs(rows) do list[#list + 1] = tonumber(r[name]) or error("not a number: " .. name .. "=" .. tostring(r[name])) end
  return list
end

-- a list's median, mean, min, max: gpuexp's own statistics (one median for every reader of results)
local function stat(list, name)
  if #list == 0 then error(name .. " of nothing") end
  return gpuexp.stats(list)[name]
end

local function keep(rows, fn)
  local list = {}
  for _, r in ipairs(rows) do if fn(numeric(r)) then list[#list + 1] = numeric(r) end end
  return list
end

local function groups(rows, key)
  local by = {}
  for _, r in ipairs(rows) do
    local k = key(r)
    by[k] = by[k] or {}
    table.insert(by[k], r)
  end
  return by
end

local function list(rows, fn)
  local values = {}
  for _, r in ipairs(rows) do values[#values + 1] = fn(numeric(r)) end
  return values
end

-- lists of lists made one list, in order
local function flat(lists)
  local out = {}
  for _, l in ipairs(lists) do for _, v in ipairs(l) do out[#out + 1] = v end end
  return out
end

local M = {
  flat = flat, unpack = table.unpack,
  list = list, maxof = function(rows, fn) return math.max(table.unpack(list(rows, fn))) end,
  minof = function(rows, fn) return math.min(table.unpack(list(rows, fn))) end,
  keep = keep, count = function(rows, fn) return #keep(rows, fn) end, groups = groups, pairs = pairs,
  captures = captures, section = section, csv = csv, printed = printed, line = line, lines = lines, text = text, row = row, pick = pick, col = col,
  median = function(list) return stat(list, "median") end, mean = function(list) return stat(list, "mean") end,
  min = function(list) return stat(list, "min") end, max = function(list) return stat(list, "max") end,
  sum = function(list) local total = 0 for _, v in ipairs(list) do total = total + v end return total end,
  ratio = function(a, b) return a / b end, pct = function(a, b) return 100 * (a / b - 1) end,
  select = select, abs = math.abs, floor = math.floor, tonumber = tonumber, string = string, table = table, ipairs = ipairs,
  records = records,
}
return M
