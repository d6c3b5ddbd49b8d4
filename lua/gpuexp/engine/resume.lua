-- Resuming a sweep's output (gpuexp --resume), for the ledger (engine/ledger.lua): the rows a CSV
-- cut by a kill holds (a cut or damaged row dropped: its point runs again), the metadata of the
-- run being resumed checked against this one's, and the rows and samples taken back into the sweep
-- (engine/ledger_sweep.lua), which appends after them.
local csv = require("gpuexp.store.csv")
local meta = require("gpuexp.store.meta")
local result = require("gpuexp.store.result")
local samples = require("gpuexp.store.samples")

local M = {}

-- The complete part of a CSV's text: up to its last newline, and before a row cut inside a quoted
-- cell that holds a newline. Returns it with its records, lines and ends (csv.parse), or nil and
-- why when the file is malformed elsewhere.
local function complete_part(text, path)
  local complete = text:match("^(.*\n)") or "" -- up to the last newline: after it, a cut row
  local records, lines, ends = csv.parse(complete, path)
  if records then return complete, records, ends end
  local opened = tonumber(tostring(lines):match(":(%d+): a quoted cell is never closed$"))
  if not opened then return nil, "cannot resume: " .. lines end
  -- a row cut inside a quoted cell that holds a newline: drop it from its first line on
  local position = 0
  for _ = 1, opened - 1 do position = complete:find("\n", position + 1, true) end
  complete = complete:sub(1, position)
  records, lines, ends = csv.parse(complete, path)
  if not records then return nil, "cannot resume: " .. lines end
  return complete, records, ends
end

-- M.read(path) -> the CSV rows of a file written by an earlier part of this run: {columns (the
-- header's cells), rows (cells), texts (the rows' lines), text (the complete part, as it is on
-- disk), dropped_bytes}; nil when there is no file; nil and why when it is malformed. A last row
-- cut by a kill (no newline, or an unclosed quote) and damaged rows (another number of cells than
-- the header, a NUL byte: a power loss) are dropped and their points run again.
function M.read(path)
  local text = meta.read_all(path)
  if not text then return nil end
  local complete, records, ends = complete_part(text, path)
  if not complete then return nil, records end
  local dropped = #text - #complete
  if #records == 0 then return {columns = nil, rows = {}, text = "", dropped_bytes = dropped} end
  local columns = records[1]
  local rows, texts = {}, {}
  for r = 2, #records do
    local cells = records[r]
    local damaged = #cells ~= #columns
    for _, cell in ipairs(cells) do damaged = damaged or cell:find("%z") ~= nil end
    if damaged then
      dropped = dropped + ends[r] - ends[r - 1] -- a damaged row (a power loss): its point runs again
    else
      rows[#rows + 1] = cells
      texts[#rows] = complete:sub(ends[r - 1] + 1, ends[r]):gsub("\r?\n$", "") -- rewritten as it was
    end
  end
  return {columns = columns, rows = rows, texts = texts, text = complete, dropped_bytes = dropped}
end

-- An axis' values as one text, to compare.
local function values_text(axis)
  local texts = {}
  for j, v in ipairs(axis.values) do texts[j] = csv.format_value(v) end
  return table.concat(texts, ",")
end

-- What changed in the kernels: "kernel X is new", "is gone", "changed", in name order.
local function kernel_changes(old_kernels, new_kernels, found)
  local names, sorted = {}, {}
  for name in pairs(old_kernels) do names[name] = true end
  for name in pairs(new_kernels) do names[name] = true end
  for name in pairs(names) do sorted[#sorted + 1] = name end
  table.sort(sorted)
  for _, name in ipairs(sorted) do
    if old_kernels[name] ~= new_kernels[name] then
      found[#found + 1] = string.format("kernel %s %s", name, not old_kernels[name] and "is new"
        or not new_kernels[name] and "is gone" or "changed")
    end
  end
end

-- What changed between the metadata of the run being resumed and this one.
function M.changes(previous, current)
  local found = {}
  if previous.script_hash ~= current.script_hash then
    found[#found + 1] = string.format("the script changed (hash %s -> %s)", tostring(previous.script_hash):sub(1, 8),
      tostring(current.script_hash):sub(1, 8))
  end
  kernel_changes(previous.kernels or {}, current.kernels or {}, found)
  local old_axes = previous.sweep and previous.sweep.axes or {}
  for i, axis in ipairs(current.sweep.axes) do
    local old = old_axes[i]
    if not old or old.name ~= axis.name then
      found[#found + 1] = string.format("axis %d is now '%s' (was '%s')", i, axis.name, old and old.name or "none")
    elseif values_text(old) ~= values_text(axis) then
      found[#found + 1] = string.format("axis %s changed (%s -> %s)", axis.name, values_text(old), values_text(axis))
    end
  end
  if #old_axes > #current.sweep.axes then found[#found + 1] = "axes were removed" end
  return found
end

-- The metadata of the run being resumed (nil when unreadable and --allow-changed), or nil, why and
-- "option" when this run may not take its rows: unreadable, or the script, kernels or axes changed.
local function previous_metadata(sweep, options)
  local previous, unreadable = meta.read_json(sweep.meta_path)
  if options.allow_changed then return previous end
  if not previous then
    return nil, string.format("cannot resume %s: %s, so the script, kernels and axes cannot be checked against " ..
      "the rows there (--allow-changed resumes anyway)", sweep.out, unreadable), "option"
  end
  local found = M.changes(previous, sweep.info)
  if #found > 0 then
    return nil, string.format("cannot resume %s: %s (--allow-changed resumes anyway)", sweep.out,
      table.concat(found, "; ")), "option"
  end
  return previous
end

-- The rows read back into the sweep, by point; nil and why when a row is for no point of the sweep
-- (the axes changed) or a point has two.
local function take_rows(sweep, resumed)
  sweep.texts = {} -- index -> the resumed row's line, for a rewrite
  local axis_count = #sweep.axis_names
  for r, cells in ipairs(resumed.rows) do
    local row = {}
    for c, name in ipairs(resumed.columns) do row[name] = cells[c] end
    local key = {}
    for a, name in ipairs(sweep.axis_names) do key[a] = row[name] or "" end
    local index = sweep.index_of[result.key(key)]
    if not index then
      return nil, string.format("cannot resume %s: it has a row for a point this sweep does not have (%s); " ..
        "the axes changed", sweep.out, table.concat(cells, ",", 1, math.min(#cells, axis_count)))
    end
    if sweep.cells[index] then
      return nil, string.format("cannot resume %s: the point %s has two rows", sweep.out,
        table.concat(cells, ",", 1, axis_count))
    end
    sweep.cells[index] = row
    sweep.texts[index] = resumed.texts[r]
    sweep:count(row.status)
    if row.status ~= "ok" then sweep:charge(index, row, true) end
    -- rows still in point order (a run killed at a point resumes after it) need no rewrite
    if index < sweep.last_written then sweep.in_order = false end
    sweep.last_written = index
  end
  return true
end

-- M.take_back(sweep, resumed, options): the rows of resumed (M.read) and the samples beside them
-- taken into the sweep, after the metadata is checked; the metadata's earlier parts kept (one
-- that never ended marked killed); the CSV opened to append after its complete rows (rewritten
-- without a cut or damaged one). true, or nil, why and the kind of failure.
function M.take_back(sweep, resumed, options)
  local previous, why, kind = previous_metadata(sweep, options)
  if why then return nil, why, kind end
  if previous and type(previous.parts) == "table" then
    for _, part in ipairs(previous.parts) do
      if not part.finished_utc then part.ended = part.ended or "killed (no end was recorded)" end
      sweep.info.parts[#sweep.info.parts + 1] = part
    end
  end
  sweep.columns = resumed.columns
  local taken, problem = take_rows(sweep, resumed)
  if not taken then return nil, problem end
  sweep.resumed_rows = #resumed.rows
  sweep.dropped_bytes = resumed.dropped_bytes
  sweep.recorded = 0
  for _, index in ipairs(sweep.mine) do if sweep.cells[index] then sweep.recorded = sweep.recorded + 1 end end
  -- the samples of the earlier parts (a damaged file is said when the history records the run)
  local entries
  entries, sweep.samples_problem = samples.take_back(sweep.samples_path, sweep.axis_names)
  for n, entry in ipairs(entries or {}) do sweep.sample_entries[n] = entry end
  if resumed.dropped_bytes > 0 then
    -- the complete rows go through a temporary file and a rename: never a moment without them
    sweep:rewrite()
    io.stderr:write(string.format("gpuexp: %s: dropped %d bytes of a row cut off by the interruption; " ..
      "its point runs again\n", sweep.out, resumed.dropped_bytes))
  else
    sweep:open_for_append(resumed.text) -- keep the complete lines, append from there
  end
  return true
end

return M
