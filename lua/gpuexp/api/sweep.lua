-- Sweeps: named axes whose cartesian product is known before anything runs, a filter, a run
-- function per point; each row written and flushed as soon as it exists.
local csv = require("gpuexp.store.csv")
local counters = require("gpuexp.api.counters")
local launches = require("gpuexp.api.kernel")
local measure = require("gpuexp.api.measure")
local meta = require("gpuexp.store.meta")
local samples = require("gpuexp.store.samples")
local option_keys = require("gpuexp.api.option_keys")
local worker_client = require("gpuexp.engine.client")
local inline = require("gpuexp.engine.inline")
local exits = require("gpuexp.engine.exits")

local EXIT = require("gpuexp.catalog").EXIT
local M = {}

local known_options = {
  name = true, axes = true, where = true, setup = true, run = true, columns = true,
  out = true, device = true, meta = true, quiet = true, timeout_s = true,
  -- points that raise an error are results (gpuexp.tune's configurations that cannot launch): rows as
  -- usual, but they do not make the run exit 5 (a crash or a timeout still does)
  expect_failures = true,
  -- the points themselves, in order, instead of the axes' product (gpuexp.tune's rounds: a batch of a
  -- space too large to walk); each is a table of axis values, checked against the axes
  points = true,
}

-- The columns gpuexp adds to every row: no axis may take their names.
local RESERVED = {status = "ok, error, crashed or timeout", error = "a failed point's message",
  device = "the GPU that measured the row, under --devices"}

-- Axes are a list of {name, values} pairs, in order: the last one varies fastest.
local function normalize_axes(axes)
  if type(axes) ~= "table" or #axes == 0 then
    gpuexp.error("usage", "sweep: 'axes' must be a list of {name, {values...}} pairs, e.g. {{'block', {128, 256}}}")
  end
  local result, seen = {}, {}
  for i, axis in ipairs(axes) do
    if type(axis) ~= "table" or type(axis[1]) ~= "string" or type(axis[2]) ~= "table" or #axis[2] == 0 then
      gpuexp.error("usage", string.format("sweep: axes[%d] must be {name, {values...}} with at least one value", i))
    end
    if seen[axis[1]] then gpuexp.error("usage", "sweep: axis '" .. axis[1] .. "' appears twice") end
    if RESERVED[axis[1]] then
      gpuexp.error("usage", string.format("sweep: an axis cannot be named '%s': gpuexp writes a column of that " ..
        "name in every row (%s); rename the axis", axis[1], RESERVED[axis[1]]))
    end
    seen[axis[1]] = true
    -- a NUL byte cannot be written in a CSV cell, a file name or the history's text: refused here,
    -- at the script's line, before anything runs
    if axis[1]:find("%z") then
      gpuexp.error("usage", string.format("sweep: axis %q holds a NUL byte (\\0); a CSV header cannot: rename it",
        axis[1]))
    end
    -- a value twice would be two rows for one point (the CSV's rows are keyed by their cells)
    local texts = {}
    for j, value in ipairs(axis[2]) do
      local text = csv.format_value(value)
      if text:find("%z") then
        gpuexp.error("usage", string.format("sweep: axis '%s' value %d (%q) holds a NUL byte (\\0); a CSV cell " ..
          "cannot: remove it or encode it (e.g. gpuexp.hash)", axis[1], j, text))
      end
      if texts[text] then
        gpuexp.error("usage", string.format("sweep: axis '%s' has the value %s twice (values %d and %d); each value " ..
          "once", axis[1], text, texts[text], j))
      end
      texts[text] = j
    end
    result[i] = {name = axis[1], values = axis[2]}
  end
  return result
end

-- A point as the script sees it: reading an axis it does not have (p.strid) is an error naming
-- the axes, with the likely one, at the script's line, not a nil that fails further on.
local function strict_point(point, axes)
  return setmetatable(point, {__index = function(_, key)
    local names = {}
    for i, axis in ipairs(axes) do names[i] = axis.name end
    gpuexp.error("usage", string.format("the point has no axis '%s'%s; its axes: %s", tostring(key),
      gpuexp._did_you_mean(tostring(key), names), table.concat(names, ", ")))
  end})
end

M.normalize_axes, M.strict_point = normalize_axes, strict_point -- for api/space.lua's lazy spaces

-- M.points(axes [, where]) -> list of points (tables axis name -> value), the filter applied.
function M.points(axes, filter)
  axes = normalize_axes(axes)
  local points = {}
  local index = {}
  for i = 1, #axes do index[i] = 1 end
  while true do
    local point = {}
    for i, axis in ipairs(axes) do point[axis.name] = axis.values[index[i]] end
    if not filter or filter(strict_point(point, axes)) then points[#points + 1] = setmetatable(point, nil) end
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

-- Outputs this script's sweeps have taken: path -> sweep name. A second sweep with no out of its
-- own writes beside the first (X.csv, then X.NAME.csv), so every sweep of a script runs and is
-- written, under --out too (as nightly runs every experiment).
local taken = {}
local function output_for(spec, name)
  local explicit = spec.out ~= nil
  local path = spec.out or default_out()
  if type(path) ~= "string" or path == "" or path:sub(-1) == "/" or gpuexp._is_directory(path) then
    gpuexp.error("usage", "sweep: 'out' must name a CSV file, got '" .. tostring(path) .. "'" ..
      (type(path) == "string" and gpuexp._is_directory(path) and " (a directory)" or ""))
  end
  if taken[path] and not explicit then
    local stem = path:gsub("%.csv$", "")
    path = stem .. "." .. name:gsub("[^%w_.-]", "_") .. ".csv"
  end
  if taken[path] then
    gpuexp.error("usage", string.format("sweep '%s': %s is written by sweep '%s' of this script already; give each " ..
      "sweep its own name or out", name, path, taken[path]))
  end
  -- (a bad --out is a usage error, exit 2; a bad out in the script is the script's, exit 1)
  local from_option = not explicit and gpuexp.out
  local kind = from_option and "option" or "usage"
  -- never over the script itself (gpuexp -o k.lua k.lua, or a script named X.meta.json): the one
  -- check that an output is not the script (--trace, which no sweep writes, is the run command's)
  local script = gpuexp.script and gpuexp._realpath(gpuexp.script)
  for _, written in ipairs({path, meta.path_for(path), samples.path_for(path)}) do
    if script and gpuexp._realpath(written) == script then
      gpuexp.error(kind, written == path and from_option and
        string.format("--out names the script %s itself; give it another file", gpuexp.script) or
        string.format("sweep '%s': its output %s is the script itself; give another --out", name, written))
    end
  end
  -- a CSV and its companions (X.meta.json, X.samples.csv) by name: never a kernel's source
  -- (-o kernels/a.cu) or anything else that is not a .csv
  if not path:match("[^/]%.csv$") then
    gpuexp.error(kind, string.format("sweep '%s': its output %s does not end in .csv (gpuexp writes X.csv, " ..
      "X.meta.json and X.samples.csv: give --out or out a .csv file)", name, path))
  end
  taken[path] = name
  -- results/ is gpuexp's own folder (the default's): made for results/X.csv however it was named;
  -- any other folder the user names must exist
  return path, (not explicit and not gpuexp.out) or path:match("^results/[^/]+$") ~= nil
end

-- A stop signal (Ctrl-C, SIGTERM, SIGHUP) between points, or during one: the run ends here, exit
-- 128 + N; the point it interrupted gets no row (a --resume runs it). Inline, the sweeps are closed
-- as the supervisor closes them ("interrupted by SIGINT" in their metadata).
local function check_stop()
  local number = gpuexp._process.stop_signal()
  if number ~= 0 then
    local name = require("gpuexp.engine.service").signal_name(number)
    inline.close("interrupted by " .. name)
    gpuexp.error("interrupted", string.format("interrupted by %s; the rows written so far are kept (--resume " ..
      "finishes the run)", name))
  end
end

local error_text = exits.message

-- The cells of a row as the CSV will hold them; lists of numbers (per-sample times) apart, other
-- tables as JSON. A value no cell can hold (a function, a NUL byte) is an error naming the field:
-- a value is never dropped.
local function format_row(row)
  local cells, arrays = {}, {}
  for key, value in pairs(row) do
    if type(key) ~= "string" then
      return nil, string.format("the row has a field named by a %s (%s); fields are named by strings", type(key),
        tostring(key))
    end
    local t = type(value)
    if t == "table" and #value > 0 and type(value[1]) == "number" then
      arrays[key] = value
    elseif t == "table" then
      cells[key] = require("gpuexp.store.json").encode(value)
    elseif t == "function" or t == "userdata" or t == "thread" then
      return nil, string.format("field '%s' is a %s, which a CSV cell cannot hold (give a number, a string, a " ..
        "boolean or a table)", key, t)
    else
      cells[key] = csv.format_value(value)
      if cells[key]:find("%z") then
        return nil, string.format("field '%s' holds a NUL byte, which a CSV cell cannot hold", key)
      end
    end
  end
  return cells, arrays
end

local function decode_row(cells)
  local row = {}
  for key, text in pairs(cells) do row[key] = csv.convert(text) end
  return row
end

-- The spec's checks: -> points, axes, name.
local function check_spec(spec)
  if type(spec) ~= "table" then gpuexp.error("usage", "sweep: expected a table of options") end
  option_keys.check(spec, known_options, "sweep", 4)
  if type(spec.run) ~= "function" then gpuexp.error("usage", "sweep: 'run' must be a function(point) returning a row table") end
  if spec.timeout_s ~= nil and (type(spec.timeout_s) ~= "number" or spec.timeout_s < 0) then
    gpuexp.error("usage", "sweep: 'timeout_s' must be a number of seconds >= 0 (0: no limit)")
  end
  local points, axes
  if spec.points then -- given whole (gpuexp.tune's rounds): each value must be one of its axis' values
    axes, points = normalize_axes(spec.axes), {}
    for i, given in ipairs(spec.points) do
      local point = {}
      for _, axis in ipairs(axes) do point[axis.name] = given[axis.name] end
      points[i] = point
    end
  else
    points, axes = M.points(spec.axes, spec.where)
  end
  if #points == 0 then gpuexp.error("usage", "sweep: the filter ('where') left no point to run") end
  local name = spec.name or "sweep"
  if type(name) ~= "string" or name == "" then gpuexp.error("usage", "sweep: 'name' must be a non-empty string") end
  if name:find("%z") then gpuexp.error("usage", string.format("sweep: 'name' %q holds a NUL byte (\\0)", name)) end
  return points, axes, name
end

-- The register message of a sweep (engine/service.lua's protocol): its points as cell texts, its
-- columns, the metadata of this worker.
local function registration_for(spec, name, points, axes)
  local path, default_folder = output_for(spec, name)
  -- the device recorded in the metadata: given, else the default one when there is a GPU;
  -- device = false for sweeps that use none
  local device = spec.device
  if device == nil and not gpuexp.offline_arch then
    local ok, default = pcall(gpuexp.device)
    device = ok and default or nil
  end
  local info = meta.collect(device or nil)
  info.kernels = gpuexp._compiled_sources and gpuexp._compiled_sources() or nil
  if spec.meta then info.user = spec.meta end
  local axes_meta, cells = {}, {}
  for i, axis in ipairs(axes) do axes_meta[i] = {name = axis.name, values = axis.values} end
  for i, point in ipairs(points) do
    local c = {}
    for j, axis in ipairs(axes) do c[j] = csv.format_value(point[axis.name]) end
    cells[i] = c
  end
  local columns = spec.columns
  local options = gpuexp.run_options or {}
  if columns and not gpuexp.plan and (options.counters or options.telemetry or options.diagnose) then
    columns = {table.unpack(columns)} -- the columns --counters, --telemetry and --diagnose add (and why a point has none)
    if options.diagnose then columns[#columns + 1] = "diagnosis"; columns[#columns + 1] = "diagnosis_evidence" end
    if options.telemetry then
      for _, column in ipairs(measure.TELEMETRY_COLUMNS) do columns[#columns + 1] = column end
    end
    if options.counters then
      for _, column in ipairs(counters.COLUMNS) do columns[#columns + 1] = column end
      columns[#columns + 1] = "ctr_note"
    end
  end
  return {name = name, out = path, make_folder = default_folder, axes = axes_meta, points = cells,
    columns = columns, info = info, timeout_s = spec.timeout_s, expect_failures = spec.expect_failures == true,
    mode = gpuexp.offline_arch and "plan" or "measured", offline_arch = gpuexp.offline_arch, quiet = spec.quiet}
end

-- The sweep's setup, once, inside its first point: a failing setup ends the sweep with its
-- message and line (setup_failed); no point is run or written.
local function run_setup(client, spec, id, index, name)
  local ok, problem = true, nil
  if spec.setup then
    client:setup(id, true)
    ok, problem = pcall(spec.setup)
    client:setup(id, false)
  end
  check_stop()
  if ok then return end
  if type(problem) ~= "string" and not (type(problem) == "table" and problem.message) then
    -- error({}) or error(): nothing says where; the setup's own line does
    local info = debug.getinfo(spec.setup, "S")
    problem = {kind = "usage", message = string.format("%s:%d: sweep '%s': its setup raised %s, not a message",
      info.short_src, info.linedefined, name, problem == nil and "nil" or ("a " .. type(problem)))}
  end
  client:setup_failed(id, index, error_text(problem))
  error(problem, 0)
end

-- Runs one point: its row (values as the script gave them, the point's axes, status and error,
-- and the columns --diagnose, --telemetry and --counters add).
local function run_point(client, spec, id, index, point, axes, cells)
  local copy = {}
  for k, v in pairs(point) do copy[k] = v end
  strict_point(copy, axes)
  launches.forget()
  measure.last_telemetry = nil
  counters.forget()
  -- an NVTX range per point, named sweep/point, for a profiler's timeline (ncu --nvtx-include)
  local label = {}
  for j, axis in ipairs(axes) do label[j] = axis.name .. "=" .. cells[j] end
  local name = spec.name or "sweep"
  gpuexp._range_push(name .. "/" .. table.concat(label, " "))
  local ok, result = pcall(spec.run, copy)
  gpuexp._range_pop()
  check_stop()
  if ok and type(result) ~= "table" then
    ok, result = false, "run returned " .. type(result) .. ", not a row table"
  end
  -- gpuexp --counters: the point's last timed launch, collected once (a failure is said in ctr_note)
  local point_counters = nil
  if ok then
    local collected, fields = pcall(counters.take)
    if collected then point_counters = fields else point_counters = {ctr_note = "no counters: " .. error_text(fields)} end
  end
  -- work the point left queued on the GPU is charged to it, not to the next one
  local failure = not gpuexp.offline_arch and gpuexp._synchronize_devices() or nil
  local lost, launch = gpuexp._context_error()
  if lost then
    if client.remote then os.exit(EXIT.GPU, false) end -- the supervisor reads why from the shared page
    client:row(id, index, {status = "crashed", error = lost .. "; " .. launch})
    inline.close(string.format("the CUDA context was lost at point %d", index))
    gpuexp.error("driver", string.format("sweep '%s': point %d crashed and the CUDA context is lost (%s); " ..
      "without --inline a new worker would go on after it", name, index, lost))
  end
  if ok and failure then ok, result = false, failure end
  local row = {}
  if ok then for k, v in pairs(result) do row[k] = v end end
  for k, v in pairs(point) do row[k] = v end
  local diagnosis = launches.last_diagnosis() -- gpuexp diagnose: the point's last timed launch
  if diagnosis and row.diagnosis == nil then
    row.diagnosis, row.diagnosis_evidence = diagnosis.verdict, table.concat(diagnosis.evidence, "; ")
  end
  for column, value in pairs(measure.last_telemetry or {}) do -- --telemetry: the point's last measurement
    if row[column] == nil then row[column] = value end
  end
  for column, value in pairs(point_counters or {}) do
    if row[column] == nil then row[column] = value end
  end
  row.status = ok and (row.status or "ok") or "error"
  row.error = not ok and error_text(result) or row.error
  return row
end

-- A row as the row message carries it: cell texts and per-sample arrays. A row no CSV can hold
-- becomes an error row saying why.
local function row_message(row, point)
  local row_cells, arrays = format_row(row)
  if row_cells then return row, row_cells, arrays end
  row = {status = "error", error = arrays}
  for k, v in pairs(point) do row[k] = v end
  row_cells, arrays = format_row(row)
  return row, row_cells, arrays
end

-- M.run{name=, axes=, where=, setup=, run=, columns=, out=, device=, meta=, quiet=, timeout_s=}
-- -> rows (each with status and error), csv path, columns.
function M.run(spec)
  local points, axes, name = check_spec(spec)
  local message = registration_for(spec, name, points, axes)
  local info = message.info
  local worker = worker_client.new()
  local registration = worker:register(message)
  if registration.error then gpuexp.error(registration.kind or "usage", "sweep '" .. name .. "': " .. registration.error) end
  local id = registration.id
  local own, set_up = {}, false
  local reply = worker:next(id)
  while not reply.done do
    check_stop()
    local index = reply.index
    if not set_up then
      set_up = true
      run_setup(worker, spec, id, index, name)
    end
    worker:prefetch(id)
    local point = points[index]
    local row, row_cells, arrays = row_message(run_point(worker, spec, id, index, point, axes, message.points[index]), point)
    -- CUPTI's version joins the metadata once a point has loaded it (metrics)
    local versions = nil
    if not info.versions.cupti_api then
      versions = gpuexp.versions(true)
      if not versions.cupti_api then versions = nil else info.versions = versions end
    end
    reply = worker:row(id, index, row_cells, arrays, versions)
    own[index] = row
  end
  local rows = {}
  for i, entry in ipairs(reply.rows) do rows[i] = own[entry.index] or decode_row(entry.cells) end
  return rows, message.out, reply.columns
end

return M
