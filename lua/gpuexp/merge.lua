-- gpuexp merge OUT.csv PART.csv...: joins the shards of one sweep (--shard I/N, e.g. a Slurm job
-- array) into one CSV in point order, after checking that they come from the same script and
-- points; reports missing and duplicated points and exits 1 when the result is incomplete.
local csv = require("gpuexp.csv")
local meta = require("gpuexp.meta")

local M = {}

local help = [[
usage: gpuexp merge OUT.csv PART.csv...
Joins the CSVs written by `gpuexp --shard I/N` (one per share of the points) into OUT.csv in
point order, with OUT.meta.json listing every part. The parts must come from the same script
(hash) and the same points (their .meta.json files say so). Missing and duplicated points are
listed. Exit codes: 0 complete, 1 incomplete or duplicated points, 2 usage or parts that do not
belong together.]]

local function fail(message)
  io.stderr:write("gpuexp merge: " .. message .. "\n")
  return 2
end

function M.main(args)
  if args[1] == "--help" or args[1] == "-h" then print(help) return 0 end
  if #args < 2 then return fail("needs OUT.csv and at least one PART.csv (see gpuexp merge --help)") end
  local out = args[1]
  local parts, reference = {}, nil
  for i = 2, #args do
    local path = args[i]
    local info = meta.read_json(meta.path_for(path))
    if not info or not info.sweep or not info.sweep.point_cells then
      return fail(path .. ": no readable " .. meta.path_for(path) .. " beside it (written by gpuexp with the CSV)")
    end
    local ok, rows, columns = pcall(csv.read, path)
    if not ok then return fail(type(rows) == "table" and rows.message or tostring(rows)) end
    if not reference then
      reference = info
    else
      if info.script_hash ~= reference.script_hash then
        return fail(string.format("%s comes from another script (hash %s, %s has %s)", path,
          tostring(info.script_hash):sub(1, 8), args[2], tostring(reference.script_hash):sub(1, 8)))
      end
      if info.sweep.name ~= reference.sweep.name or #info.sweep.point_cells ~= #reference.sweep.point_cells then
        return fail(string.format("%s is sweep '%s' with %d points, %s is '%s' with %d", path, info.sweep.name,
          #info.sweep.point_cells, args[2], reference.sweep.name, #reference.sweep.point_cells))
      end
    end
    parts[#parts + 1] = {path = path, info = info, rows = rows, columns = columns}
  end

  local axes = reference.sweep.axes
  local index_of, keys = {}, {}
  for i, cells in ipairs(reference.sweep.point_cells) do
    keys[i] = table.concat(cells, "\31")
    index_of[keys[i]] = i
  end
  -- columns: the axes, the other columns in the order first seen, status and error last
  local columns, seen = {}, {status = true, error = true}
  for _, axis in ipairs(axes) do columns[#columns + 1] = axis.name; seen[axis.name] = true end
  for _, part in ipairs(parts) do
    for _, name in ipairs(part.columns) do
      if not seen[name] then columns[#columns + 1] = name; seen[name] = true end
    end
  end
  columns[#columns + 1] = "status"
  columns[#columns + 1] = "error"

  local by_index, duplicates, unknown = {}, {}, {}
  local texts = {}
  for _, part in ipairs(parts) do
    -- the cells as written: read the raw lines again so values are not reformatted
    local text = assert(meta.read_all(part.path))
    local lines = {}
    for line in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
    local header = csv.parse_line(lines[1] or "")
    for l = 2, #lines do
      local cells = csv.parse_line(lines[l])
      if #cells == #header then
        local row = {}
        for c, name in ipairs(header) do row[name] = cells[c] end
        local parts_of_key = {}
        for a, axis in ipairs(axes) do parts_of_key[a] = row[axis.name] or "" end
        local index = index_of[table.concat(parts_of_key, "\31")]
        if not index then
          unknown[#unknown + 1] = part.path .. ": " .. table.concat(parts_of_key, ",")
        elseif by_index[index] then
          duplicates[#duplicates + 1] = csv.line(reference.sweep.point_cells[index]) .. " (in " ..
            texts[index] .. " and " .. part.path .. ")"
        else
          by_index[index] = row
          texts[index] = part.path
        end
      end
    end
  end
  local missing = {}
  local output = {csv.line(columns)}
  local counts = {ok = 0, error = 0, crashed = 0, timeout = 0}
  for i = 1, #keys do
    local row = by_index[i]
    if row then
      local cells = {}
      for c, name in ipairs(columns) do cells[c] = row[name] or "" end
      output[#output + 1] = csv.line(cells)
      local status = row.status
      counts[counts[status] and status or "ok"] = counts[counts[status] and status or "ok"] + 1
    else
      missing[#missing + 1] = csv.line(reference.sweep.point_cells[i])
    end
  end
  local dir = out:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then gpuexp.mkdir(dir) end
  local file, message = io.open(out, "wb")
  if not file then return fail("cannot write " .. out .. ": " .. tostring(message)) end
  file:write(table.concat(output, "\n"), "\n")
  file:close()

  local info = reference
  info.parts, info.gpus, info.merged_from = {}, {}, {}
  local gpu_seen = {}
  for _, part in ipairs(parts) do
    info.merged_from[#info.merged_from + 1] = part.path
    for _, p in ipairs(part.info.parts or {}) do
      p.shard = part.info.sweep.shard
      info.parts[#info.parts + 1] = p
    end
    for _, gpu in ipairs(part.info.gpus or {}) do
      if not gpu_seen[gpu.uuid or ""] then gpu_seen[gpu.uuid or ""] = true; info.gpus[#info.gpus + 1] = gpu end
    end
  end
  info.sweep.shard, info.sweep.points_in_share = nil, nil
  info.sweep.output, info.sweep.columns = out, columns
  info.sweep.complete = #missing == 0 and #duplicates == 0
  info.sweep.rows_ok, info.sweep.rows_error = counts.ok, counts.error
  info.sweep.rows_crashed, info.sweep.rows_timeout = counts.crashed, counts.timeout
  meta.write(meta.path_for(out), info)

  print(string.format("merged %d part(s) into %s: %d of %d points", #parts, out, #keys - #missing, #keys))
  local function list(title, items)
    if #items == 0 then return end
    io.stderr:write(string.format("gpuexp merge: %d %s:\n", #items, title))
    for i = 1, math.min(#items, 20) do io.stderr:write("  " .. items[i] .. "\n") end
    if #items > 20 then io.stderr:write(string.format("  ... and %d more\n", #items - 20)) end
  end
  list("missing point(s)", missing)
  list("duplicated point(s) (the first row kept)", duplicates)
  list("row(s) for points the sweep does not have (left out)", unknown)
  return (#missing > 0 or #duplicates > 0 or #unknown > 0) and 1 or 0
end

return M
