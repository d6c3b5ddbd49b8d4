-- gpuexp merge OUT.csv PART.csv...: joins the shards of one sweep (--shard I/N, e.g. a Slurm job
-- array) into one CSV in point order (and their samples files into OUT.samples.csv), after
-- checking that they come from the same script, points and GPU model; reports missing and
-- duplicated points and exits 1 when the result is incomplete.
-- Memory grows with the rows, not with rows times parts: each part's metadata describes only its
-- own share of the points.
local csv = require("gpuexp.store.csv")
local text = require("gpuexp.store.text")
local meta = require("gpuexp.store.meta")
local result = require("gpuexp.store.result")
local samples = require("gpuexp.store.samples")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

local function fail(message)
  io.stderr:write("gpuexp merge: " .. text.message(message) .. "\n")
  return EXIT.USAGE
end

-- A part's points: global index -> cells, from its share (or, from older gpuexp, every point);
-- nil for a whole sweep's run, whose CSV rows are its points in order.
local function share_of(info)
  local sweep, points = info.sweep, {}
  if sweep.point_cells then
    for i, cells in ipairs(sweep.point_cells) do points[i] = cells end
    return points
  end
  if not sweep.share_cells and not sweep.shard then return nil end
  for k, cells in ipairs(sweep.share_cells or {}) do
    local index = sweep.share_indices and sweep.share_indices[k]
      or (sweep.shard and sweep.shard.index + 1 + (k - 1) * sweep.shard.count) or k
    points[index] = cells
  end
  return points
end

-- The command line: OUT.csv, the parts and --allow-mixed; or nil and the exit code (misuse).
local function parse(fields)
  local allow_mixed, paths = fields.allow_mixed or false, fields.positional
  if #paths < 2 then return nil, fail("needs OUT.csv and at least one PART.csv (see gpuexp merge --help)") end
  local out = table.remove(paths, 1)
  -- OUT.meta.json goes beside it: OUT names a CSV file, never a device or a kernel
  if not out:match("[^/]%.csv$") then
    return nil, fail(out .. " does not end in .csv (gpuexp merge OUT.csv PART.csv...)")
  end
  for _, path in ipairs(paths) do
    if path == out then return nil, fail(out .. " is both the output and a part") end
  end
  return {out = out, paths = paths, allow_mixed = allow_mixed}
end

local function point_count(info)
  return tonumber(info.sweep.points) or (info.sweep.point_cells and #info.sweep.point_cells) or 0
end

-- Whether a part belongs with the first one: the same script, sweep and points, and (unless
-- --allow-mixed) the same GPU model. nil, or why not.
local function mismatch(merged, path, info, allow_mixed)
  local reference, reference_path = merged.reference, merged.reference_path
  if info.script_hash ~= reference.script_hash then
    return string.format("%s comes from another script (hash %s, %s has %s)", path,
      tostring(info.script_hash):sub(1, 8), reference_path, tostring(reference.script_hash):sub(1, 8))
  end
  local count, points = point_count(info), merged.points
  if info.sweep.name ~= reference.sweep.name or count ~= points
    or (info.sweep.points_hash and reference.sweep.points_hash
      and info.sweep.points_hash ~= reference.sweep.points_hash) then
    return string.format("%s is sweep '%s' with %d points, %s is '%s' with %d%s", path, tostring(info.sweep.name),
      count, reference_path, tostring(reference.sweep.name), points, count == points and " (but other points)" or "")
  end
  local gpu, reference_gpu = info.gpu and info.gpu.name, reference.gpu and reference.gpu.name
  if gpu and reference_gpu and gpu ~= reference_gpu and not allow_mixed then
    return string.format("%s was measured on %s, %s on %s: their timings are not comparable (--allow-mixed " ..
      "merges anyway)", path, gpu, reference_path, reference_gpu)
  end
end

-- The part's samples (its X.samples.csv) of the points whose row was taken from it, by point index;
-- nil, or why the file cannot be read (named by file and line).
local function add_samples(merged, path, index_of)
  local names = {}
  for a, axis in ipairs(merged.reference.sweep.axes) do names[a] = axis.name end
  local entries, damaged = samples.read(samples.path_for(path), names)
  if damaged then return damaged end
  for _, entry in ipairs(entries or {}) do
    local index = index_of[result.key(entry.cells)]
    if index and merged.source[index] == path then
      merged.samples[index] = merged.samples[index] or {}
      table.insert(merged.samples[index], entry)
    end
  end
end

-- Reads one part's rows into merged (by point index), noting unknown and duplicated points; nil,
-- or why the part cannot be merged.
local function add_part(merged, path, info)
  local axes = merged.reference.sweep.axes
  local share = share_of(info)
  local ok, part_columns, records, lines = pcall(csv.read_cells, path, true)
  if not ok then return type(part_columns) == "table" and part_columns.message or tostring(part_columns) end
  for _, name in ipairs(part_columns) do
    if not merged.seen[name] then merged.columns[#merged.columns + 1] = name; merged.seen[name] = true end
  end
  local axis_column = {}
  for a, axis in ipairs(axes) do
    for c, name in ipairs(part_columns) do if name == axis.name then axis_column[a] = c end end
    if not axis_column[a] then return string.format("%s has no column '%s' (an axis)", path, axis.name) end
  end
  local function axis_cells(record)
    local cells = {}
    for a = 1, #axes do cells[a] = record[axis_column[a]] end
    return cells
  end
  if not share then -- a whole sweep: its rows are its points, in order
    share = {}
    for r, record in ipairs(records) do share[r] = axis_cells(record) end
  end
  for index, cells in pairs(share) do merged.cells_of[index] = cells end
  -- the key of every point of the sweep, as the parts' shares describe them
  local index_of = {}
  for index, point_cells in pairs(share) do index_of[result.key(point_cells)] = index end
  for r, record in ipairs(records) do
    local key_cells = axis_cells(record)
    local index = index_of[result.key(key_cells)]
    if not index then
      merged.unknown[#merged.unknown + 1] = string.format("%s:%d: %s", path, lines[r], table.concat(key_cells, ","))
    elseif merged.by_index[index] then
      merged.duplicates[#merged.duplicates + 1] = string.format("%s (in %s and %s:%d)", csv.line(key_cells),
        merged.source[index], path, lines[r])
    else
      local row = {}
      for c, name in ipairs(part_columns) do row[name] = record[c] end
      merged.by_index[index] = row
      merged.source[index] = path
    end
  end
  return add_samples(merged, path, index_of)
end

-- A point no part describes (its share's part is missing) is named by its axis values when the
-- sweep's points are its axes' whole product (no filter), which the metadata's axes give: a
-- function of the point's index, or nil.
local function product_namer(axes, points)
  if type(axes) ~= "table" or #axes == 0 then return nil end
  local count = 1
  for _, axis in ipairs(axes) do count = count * #(axis.values or {}) end
  if count ~= points then return nil end
  return function(i)
    local cells, rest = {}, i - 1
    for a = #axes, 1, -1 do
      local values = axes[a].values
      cells[a] = axes[a].name .. "=" .. csv.format_value(values[rest % #values + 1])
      rest = rest // #values
    end
    return table.concat(cells, ",")
  end
end

-- The merged rows in point order (OUT.csv's text), the points no part has, and the rows by status.
local function merged_rows(merged)
  local columns, axes = merged.columns, merged.reference.sweep.axes
  local product = product_namer(axes, merged.points)
  local missing, output = {}, {csv.line(columns)}
  local counts = {ok = 0, error = 0, crashed = 0, timeout = 0}
  for i = 1, merged.points do
    local row = merged.by_index[i]
    if row then
      local cells = {}
      for c, name in ipairs(columns) do cells[c] = row[name] or "" end
      output[#output + 1] = csv.line(cells)
      local status = counts[row.status] and row.status or "ok"
      counts[status] = counts[status] + 1
    elseif merged.cells_of[i] then
      local named = {}
      for a, axis in ipairs(axes) do named[a] = axis.name .. "=" .. tostring(merged.cells_of[i][a]) end
      missing[#missing + 1] = table.concat(named, ",")
    else
      missing[#missing + 1] = string.format("%s (point %d: its share's part is missing)",
        product and product(i) or "a point", i)
    end
  end
  return table.concat(output, "\n") .. "\n", missing, counts
end

-- OUT.meta.json's content: the first part's, with every part's runs and GPUs (gathered before the
-- reference, one of the parts, is rewritten) and the whole sweep's points, status counts and completeness.
local function merged_info(merged, out, missing, counts)
  local parts, gpus, merged_from, gpu_seen = {}, {}, {}, {}
  for _, part in ipairs(merged.infos) do
    merged_from[#merged_from + 1] = part.path
    for _, p in ipairs(part.info.parts or {}) do
      p.shard = part.info.sweep.shard
      p.gpu = part.info.gpu and part.info.gpu.name
      parts[#parts + 1] = p
    end
    for _, gpu in ipairs(part.info.gpus or {part.info.gpu}) do
      local id = gpu.uuid or gpu.name or ""
      if not gpu_seen[id] then gpu_seen[id] = true; gpus[#gpus + 1] = gpu end
    end
  end
  local info, points = merged.reference, merged.points
  info.parts, info.gpus, info.merged_from = parts, gpus, merged_from
  local all_cells = {}
  for i = 1, points do all_cells[i] = merged.cells_of[i] end
  info.sweep.shard, info.sweep.points_in_share, info.sweep.share_indices, info.sweep.point_cells = nil, nil, nil, nil
  info.sweep.share_cells = #all_cells == points and all_cells or nil
  info.sweep.output, info.sweep.columns = out, merged.columns
  info.sweep.complete = #missing == 0 and #merged.duplicates == 0
  info.sweep.rows_ok, info.sweep.rows_error = counts.ok, counts.error
  info.sweep.rows_crashed, info.sweep.rows_timeout = counts.crashed, counts.timeout
  return info
end

-- Writes a file through write(path, value); EXIT.WRITE and the message on failure, else nil.
local function written(write, path, value, named)
  local ok, problem = pcall(write, path, value, named)
  if ok then return nil end
  io.stderr:write("gpuexp merge: " .. text.message(type(problem) == "table" and problem.message or problem) .. "\n")
  return EXIT.WRITE
end

-- OUT.samples.csv, the parts' samples in point order; none (an earlier merge's removed) when no
-- part kept samples. EXIT.WRITE on failure, else nil.
local function write_samples(merged, out)
  local entries = {}
  for i = 1, merged.points do
    for _, entry in ipairs(merged.samples[i] or {}) do entries[#entries + 1] = entry end
  end
  local path = samples.path_for(out)
  if #entries == 0 then
    os.remove(path)
    return nil
  end
  local names = {}
  for a, axis in ipairs(merged.reference.sweep.axes) do names[a] = axis.name end
  return written(csv.write_file, path, samples.text(names, entries))
end

local function list(title, items)
  if #items == 0 then return end
  io.stderr:write(string.format("gpuexp merge: %d %s:\n", #items, title))
  for i = 1, math.min(#items, 20) do io.stderr:write("  " .. text.terminal(items[i]) .. "\n") end
  if #items > 20 then io.stderr:write(string.format("  ... and %d more\n", #items - 20)) end
end

function M.run(fields)
  local command, code = parse(fields)
  if not command then return code end
  local merged = {columns = {}, seen = {status = true, error = true}, points = 0, cells_of = {}, by_index = {},
    source = {}, duplicates = {}, unknown = {}, infos = {}, samples = {}}
  for _, path in ipairs(command.paths) do
    local info, why = meta.read_json(meta.path_for(path))
    if not info or type(info.sweep) ~= "table" or type(info.sweep.axes) ~= "table" then
      return fail(string.format("%s: no readable %s beside it (written by gpuexp with the CSV)%s", path,
        meta.path_for(path), why and (": " .. why) or ""))
    end
    if not merged.reference then
      merged.reference, merged.reference_path, merged.points = info, path, point_count(info)
      for _, axis in ipairs(info.sweep.axes) do
        merged.columns[#merged.columns + 1] = axis.name
        merged.seen[axis.name] = true
      end
    else
      local problem = mismatch(merged, path, info, command.allow_mixed)
      if problem then return fail(problem) end
    end
    merged.infos[#merged.infos + 1] = {path = path, info = info}
    local problem = add_part(merged, path, info)
    if problem then return fail(problem) end
  end
  merged.columns[#merged.columns + 1] = "status"
  merged.columns[#merged.columns + 1] = "error"

  local out = command.out
  local text_of_rows, missing, counts = merged_rows(merged)
  local failed = written(csv.write_file, out, text_of_rows, true) or write_samples(merged, out)
    or written(meta.write, meta.path_for(out), merged_info(merged, out, missing, counts))
  if failed then return failed end

  local points = merged.points
  print(text.format("merged %d part(s) into %s: %d of %d points", #merged.infos, out, points - #missing, points))
  list("missing point(s)", missing)
  list("duplicated point(s) (the first row kept)", merged.duplicates)
  list("row(s) for points the sweep does not have (left out)", merged.unknown)
  return (#missing > 0 or #merged.duplicates > 0 or #merged.unknown > 0) and EXIT.FAILED or EXIT.OK
end

return M
