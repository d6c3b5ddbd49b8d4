-- Sweeps: named axes whose cartesian product is known before anything runs, a filter, a run
-- function per point; each row written and flushed as soon as it exists.
local csv = require("gpuexp.csv")
local meta = require("gpuexp.meta")

local M = {}

local known_options = {
  name = true, axes = true, where = true, setup = true, run = true, columns = true,
  out = true, device = true, meta = true, quiet = true,
}

-- Axes are a list of {name, values} pairs, in order: the last one varies fastest.
local function normalize_axes(axes)
  if type(axes) ~= "table" or #axes == 0 then
    error("sweep: 'axes' must be a list of {name, {values...}} pairs, e.g. {{'block', {128, 256}}}", 3)
  end
  local result, seen = {}, {}
  for i, axis in ipairs(axes) do
    if type(axis) ~= "table" or type(axis[1]) ~= "string" or type(axis[2]) ~= "table" or #axis[2] == 0 then
      error(string.format("sweep: axes[%d] must be {name, {values...}} with at least one value", i), 3)
    end
    if seen[axis[1]] then error("sweep: axis '" .. axis[1] .. "' appears twice", 3) end
    seen[axis[1]] = true
    result[i] = {name = axis[1], values = axis[2]}
  end
  return result
end

-- M.points(axes [, where]) -> list of points (tables axis name -> value), the filter applied.
function M.points(axes, where)
  axes = normalize_axes(axes)
  local points = {}
  local index = {}
  for i = 1, #axes do index[i] = 1 end
  while true do
    local point = {}
    for i, axis in ipairs(axes) do point[axis.name] = axis.values[index[i]] end
    if not where or where(point) then points[#points + 1] = point end
    local i = #axes
    while i >= 1 do
      index[i] = index[i] + 1
      if index[i] <= #axes[i].values then break end
      index[i] = 1
      i = i - 1
    end
    if i == 0 then break end
  end
  return points, axes
end

local function default_out()
  if gpuexp.out then return gpuexp.out end
  local stem = (gpuexp.script or "sweep"):match("([^/]+)$"):gsub("%.lua$", "")
  return "results/" .. stem .. ".csv"
end

local function progress(state, done)
  if not state.show then return end
  local elapsed = gpuexp.clock() - state.started
  local eta = done > 0 and elapsed / done * (state.total - done) or 0
  io.stderr:write(string.format("\r%s: %d/%d points, %.1f s elapsed, ETA %.1f s   ", state.name, done,
    state.total, elapsed, eta))
  if done == state.total then io.stderr:write("\n") end
  io.stderr:flush()
end

local function error_text(err)
  if type(err) == "table" and err.message then return err.message end
  return tostring(err)
end

-- M.run{name=, axes=, where=, setup=, run=, columns=, out=, device=, meta=, quiet=}
-- -> rows (each with status and error), csv path.
function M.run(spec)
  if type(spec) ~= "table" then error("sweep: expected a table of options", 2) end
  for key in pairs(spec) do
    if not known_options[key] then
      local names = {}
      for name in pairs(known_options) do names[#names + 1] = name end
      table.sort(names)
      error("sweep: unknown option '" .. tostring(key) .. "' (known: " .. table.concat(names, ", ") .. ")", 2)
    end
  end
  if type(spec.run) ~= "function" then error("sweep: 'run' must be a function(point) returning a row table", 2) end
  local points, axes = M.points(spec.axes, spec.where)
  local name = spec.name or "sweep"
  local path = spec.out or default_out()
  -- the device recorded in the metadata: given, else the default one when there is a GPU;
  -- device = false for sweeps that use none
  local device = spec.device
  if device == nil and not gpuexp.offline_arch then
    local ok, default = pcall(gpuexp.device)
    device = ok and default or nil
  end

  local info = meta.collect(device or nil)
  info.sweep = {name = name, points = #points, axes = {}, output = path, mode = gpuexp.offline_arch and "plan" or "measured"}
  if gpuexp.offline_arch then info.sweep.offline_arch = gpuexp.offline_arch end
  for i, axis in ipairs(axes) do info.sweep.axes[i] = {name = axis.name, values = axis.values} end
  if spec.meta then info.user = spec.meta end
  local meta_path = meta.path_for(path)

  local writer = csv.open(path)
  meta.write(meta_path, info)
  if spec.setup then spec.setup() end

  local columns
  if spec.columns then
    columns = {}
    for i, axis in ipairs(axes) do columns[i] = axis.name end
    for _, column in ipairs(spec.columns) do
      local duplicate = false
      for _, existing in ipairs(columns) do duplicate = duplicate or existing == column end
      if not duplicate then columns[#columns + 1] = column end
    end
    columns[#columns + 1] = "status"
    columns[#columns + 1] = "error"
    writer:header(columns)
  end

  local rows, pending, warned = {}, {}, {}
  local counts = {ok = 0, error = 0}
  local state = {
    name = name, total = #points, started = gpuexp.clock(),
    show = gpuexp.stderr_is_terminal and not gpuexp.quiet and not spec.quiet,
  }
  local function emit(row)
    if not columns then
      pending[#pending + 1] = row
      return
    end
    for key in pairs(row) do
      local known = false
      for _, column in ipairs(columns) do known = known or column == key end
      if not known and not warned[key] then
        warned[key] = true
        io.stderr:write(string.format("%s: row field '%s' is not a column of %s (list it in columns=)\n", name,
          tostring(key), path))
      end
    end
    writer:row(row)
  end

  for i, point in ipairs(points) do
    local copy = {}
    for k, v in pairs(point) do copy[k] = v end
    local ok, result = pcall(spec.run, copy)
    if ok and type(result) ~= "table" then
      ok, result = false, "run returned " .. type(result) .. ", not a row table"
    end
    local row = {}
    if ok then for k, v in pairs(result) do row[k] = v end end
    for k, v in pairs(point) do row[k] = v end
    row.status = ok and (row.status or "ok") or "error"
    row.error = not ok and error_text(result) or row.error
    counts[ok and "ok" or "error"] = counts[ok and "ok" or "error"] + 1
    if not columns and ok then
      -- no columns given: the axes, then this first row's other fields in name order
      columns = {}
      for j, axis in ipairs(axes) do columns[j] = axis.name end
      local rest = {}
      for key in pairs(row) do
        if not point[key] and key ~= "status" and key ~= "error" then rest[#rest + 1] = key end
      end
      table.sort(rest)
      for _, key in ipairs(rest) do columns[#columns + 1] = key end
      columns[#columns + 1] = "status"
      columns[#columns + 1] = "error"
      writer:header(columns)
      for _, held in ipairs(pending) do writer:row(held) end
      pending = {}
    end
    emit(row)
    rows[i] = row
    progress(state, i)
  end
  if not columns then
    columns = {}
    for j, axis in ipairs(axes) do columns[j] = axis.name end
    columns[#columns + 1] = "status"
    columns[#columns + 1] = "error"
    writer:header(columns)
    for _, held in ipairs(pending) do writer:row(held) end
  end
  writer:close()
  info.sweep.finished_utc = os.date("!%Y-%m-%dT%H:%M:%SZ")
  info.sweep.rows_ok = counts.ok
  info.sweep.rows_error = counts.error
  info.sweep.seconds = gpuexp.clock() - state.started
  info.sweep.columns = columns
  meta.write(meta_path, info)
  return rows, path, columns
end

return M
