-- The bookkeeping of a run's sweeps, wherever the points run: which points are left, who runs
-- each, the CSV (one line per finished point, flushed; rewritten in point order when the sweep is
-- complete), the samples file, the metadata with one part per invocation, resume and shards.
-- The supervisor drives it from worker messages; an --inline run calls it directly.
local csv = require("gpuexp.store.csv")
local meta = require("gpuexp.store.meta")
local result = require("gpuexp.store.result")
local samples = require("gpuexp.store.samples")

local M = {}
local Ledger = {}
Ledger.__index = Ledger


-- options: resume, allow_changed, shard = {index, count} (0-based), only (clauses of axis values),
-- point_timeout_s, host,
-- devices (list of ordinals), started_utc
function M.new(options)
  return setmetatable({options = options, sweeps = {}, by_out = {}, restarts = {}, totals = {done = 0, ok = 0, error = 0,
    crashed = 0, timeout = 0, points = 0}}, Ledger)
end

local function now_utc() return os.date("!%Y-%m-%dT%H:%M:%SZ") end

local function shard_path(path, shard)
  if not shard then return path end
  local suffix = string.format(".shard-%d-of-%d", shard.index, shard.count)
  if path:match("%.csv$") then return (path:gsub("%.csv$", suffix .. ".csv")) end
  return path .. suffix
end
M.shard_path = shard_path

-- The CSV rows of a file written by an earlier part of this run: the header's cells, the complete
-- rows (cells) and their lines' text, the byte length of the complete part and the bytes dropped. A last row cut by a
-- kill (no newline, or an unclosed quote) and damaged rows (another number of cells than the
-- header, a NUL byte: a power loss) are dropped and their points run again. nil and why when the
-- file is malformed elsewhere.
local function read_existing(path)
  local text = meta.read_all(path)
  if not text then return nil end
  local complete = text:match("^(.*\n)") or "" -- up to the last newline: after it, a cut row
  local records, lines, ends = csv.parse(complete, path)
  if not records then
    local opened = tonumber(tostring(lines):match(":(%d+): a quoted cell is never closed$"))
    if not opened then return nil, "cannot resume: " .. lines end
    -- a row cut inside a quoted cell that holds a newline: drop it from its first line on
    local position = 0
    for _ = 1, opened - 1 do position = complete:find("\n", position + 1, true) end
    complete = complete:sub(1, position)
    records, lines, ends = csv.parse(complete, path)
    if not records then return nil, "cannot resume: " .. lines end
  end
  local good_bytes = #complete
  local dropped = #text - good_bytes
  if #records == 0 then return {columns = nil, rows = {}, good_bytes = 0, dropped_bytes = dropped} end
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
  return {columns = columns, rows = rows, texts = texts, good_bytes = good_bytes, dropped_bytes = dropped}
end

local function cells_text(points)
  local lines = {}
  for i, cells in ipairs(points) do lines[i] = result.key(cells) end
  return lines
end

local function key_of(cells_by_name, axes)
  local parts = {}
  for i, axis in ipairs(axes) do parts[i] = cells_by_name[axis.name] or "" end
  return result.key(parts)
end

-- What changed between the metadata of the run being resumed and this one.
local function changes(previous, current)
  local found = {}
  if previous.script_hash ~= current.script_hash then
    found[#found + 1] = string.format("the script changed (hash %s -> %s)", tostring(previous.script_hash):sub(1, 8),
      tostring(current.script_hash):sub(1, 8))
  end
  local old_kernels, new_kernels = previous.kernels or {}, current.kernels or {}
  local names = {}
  for name in pairs(old_kernels) do names[name] = true end
  for name in pairs(new_kernels) do names[name] = true end
  local sorted = {}
  for name in pairs(names) do sorted[#sorted + 1] = name end
  table.sort(sorted)
  for _, name in ipairs(sorted) do
    if old_kernels[name] ~= new_kernels[name] then
      found[#found + 1] = string.format("kernel %s %s", name, not old_kernels[name] and "is new"
        or not new_kernels[name] and "is gone" or "changed")
    end
  end
  local old_axes = previous.sweep and previous.sweep.axes or {}
  for i, axis in ipairs(current.sweep.axes) do
    local old = old_axes[i]
    local function values(a)
      local texts = {}
      for j, v in ipairs(a.values) do texts[j] = csv.format_value(v) end
      return table.concat(texts, ",")
    end
    if not old or old.name ~= axis.name then
      found[#found + 1] = string.format("axis %d is now '%s' (was '%s')", i, axis.name, old and old.name or "none")
    elseif values(old) ~= values(axis) then
      found[#found + 1] = string.format("axis %s changed (%s -> %s)", axis.name, values(old), values(axis))
    end
  end
  if #old_axes > #current.sweep.axes then found[#found + 1] = "axes were removed" end
  return found
end

-- msg: name, out, axes ({name, values} list), points (list of cell lists), columns (explicit or
-- nil), info (metadata of the worker: gpu, script hash, kernels), timeout_s. Returns the sweep
-- state, or nil and the reason the run cannot go on.
function Ledger:register(msg)
  local out = shard_path(msg.out, self.options.shard)
  local existing = self.by_out[out]
  if existing then -- the same sweep, registered by another worker
    if existing.name ~= msg.name then
      return nil, string.format("sweep '%s' writes to %s, which sweep '%s' of this run writes too: give each sweep its " ..
        "own out", msg.name, out, existing.name)
    end
    if #existing.points ~= #msg.points then
      return nil, string.format("sweep '%s': this worker enumerated %d points, the first one %d (the script must " ..
        "enumerate the same points in every worker)", msg.name, #msg.points, #existing.points)
    end
    existing:add_gpu(msg.info.gpu)
    return existing
  end
  local sweep = setmetatable({ledger = self, name = msg.name, out = out, axes = msg.axes, points = msg.points,
    explicit = msg.columns ~= nil, timeout_s = msg.timeout_s, expect_failures = msg.expect_failures, info = msg.info,
    cells = {}, index_of = {},
    in_flight = {}, queue = {}, waiting = {}, pending = {}, recorded = 0, in_order = true, last_written = 0,
    counts = {ok = 0, error = 0, crashed = 0, timeout = 0}},
    {__index = M.Sweep})
  for i, point in ipairs(msg.points) do sweep.index_of[result.key(point)] = i end
  if msg.columns then
    sweep.columns = {}
    for _, axis in ipairs(msg.axes) do sweep.columns[#sweep.columns + 1] = axis.name end
    for _, column in ipairs(msg.columns) do
      local duplicate = false
      for _, existing_column in ipairs(sweep.columns) do duplicate = duplicate or existing_column == column end
      if not duplicate then sweep.columns[#sweep.columns + 1] = column end
    end
    if self.options.device_column then sweep.columns[#sweep.columns + 1] = "device" end
    sweep.columns[#sweep.columns + 1] = "status"
    sweep.columns[#sweep.columns + 1] = "error"
  end
  -- this run's share of the points (--shard), and of those the ones --only names
  local shard, only = self.options.shard, self.options.only
  local axis_at = {}
  for a, axis in ipairs(msg.axes) do axis_at[axis.name] = a end
  for _, clause in ipairs(only or {}) do
    for name in pairs(clause) do
      if not axis_at[name] then
        local names = {}
        for _, axis in ipairs(msg.axes) do names[#names + 1] = axis.name end
        return nil, string.format("--only names the axis '%s', which sweep '%s' does not have (its axes: %s); " ..
          "nothing was run or written", name, msg.name, table.concat(names, ", ")), "option"
      end
    end
  end
  local function wanted(cells)
    if not only then return true end
    for _, clause in ipairs(only) do
      local match = true
      for name, value in pairs(clause) do match = match and axis_at[name] ~= nil and cells[axis_at[name]] == value end
      if match then return true end
    end
    return false
  end
  if only then -- like a misspelled axis: a value no point has is refused before anything is written
    local any = false
    for i = 1, #msg.points do any = any or wanted(msg.points[i]) end
    if not any then
      local takes = {}
      for a, axis in ipairs(msg.axes) do
        local values, seen = {}, {}
        for _, cells in ipairs(msg.points) do
          if not seen[cells[a]] then seen[cells[a]] = true; values[#values + 1] = cells[a] end
        end
        takes[#takes + 1] = axis.name .. " = " .. table.concat(values, "|")
      end
      return nil, string.format("--only matches no point of sweep '%s' (its points: %s); nothing was run or written",
        msg.name, table.concat(takes, ", ")), "option"
    end
  end
  sweep.mine, sweep.is_mine = {}, {}
  for i = 1, #msg.points do
    if (not shard or (i - 1) % shard.count == shard.index) and wanted(msg.points[i]) then
      sweep.mine[#sweep.mine + 1] = i
      sweep.is_mine[i] = true
    end
  end
  -- one writer per output: a second run on it waits its turn (exit 75)
  -- the folder of the default output (results/) is made; one the user named must exist
  local dir = out:match("^(.*)/[^/]*$")
  if msg.make_folder and dir and dir ~= "" then
    local made, problem = pcall(gpuexp.mkdir, dir)
    if not made then return nil, type(problem) == "table" and problem.message or tostring(problem) end
  end
  if dir and dir ~= "" and not gpuexp._is_directory(dir) then
    return nil, string.format("cannot write %s: the folder %s does not exist (it is not created)", out, dir), "write"
  end
  local locked, note, kind = gpuexp._process.lock(out .. ".lock")
  if not locked and kind == "busy" then
    return nil, string.format("%s: another run is writing it (%s); try later", out, note), kind
  elseif not locked then -- a read-only folder, a name too long: not another run's doing
    return nil, string.format("cannot write %s: %s", out, note), "write"
  end
  if note then io.stderr:write("gpuexp: " .. note .. "\n") end
  sweep.lock_path = out .. ".lock"
  sweep.meta_path = meta.path_for(out)
  sweep.samples_path = samples.path_for(out)
  local info = sweep.info
  -- a shard's (or --only's) points only: N shards together describe the sweep once, not N times;
  -- a whole sweep's points are its CSV's rows, in point order
  local share_cells, share_indices = nil, nil
  if shard or only then
    share_cells, share_indices = {}, {}
    for k, index in ipairs(sweep.mine) do
      share_cells[k] = msg.points[index]
      share_indices[k] = index
    end
  end
  info.sweep = {name = msg.name, points = #msg.points, axes = msg.axes, output = out, mode = msg.mode,
    offline_arch = msg.offline_arch, share_cells = share_cells, share_indices = only and share_indices or nil,
    timeout_s = msg.timeout_s or self.options.point_timeout_s,
    shard = shard and {index = shard.index, count = shard.count} or nil, points_in_share = #sweep.mine,
    only = only, points_hash = gpuexp.hash(table.concat(cells_text(msg.points), "\n"))}
  info.gpus = {}
  sweep:add_gpu(info.gpu)
  info.parts = {}

  local resumed, why_not = nil, nil
  if self.options.resume then resumed, why_not = read_existing(out) end
  if why_not then return nil, why_not end
  if resumed and resumed.columns then
    local previous, unreadable = meta.read_json(sweep.meta_path)
    if not previous and not self.options.allow_changed then
      return nil, string.format("cannot resume %s: %s, so the script, kernels and axes cannot be checked against " ..
        "the rows there (--allow-changed resumes anyway)", out, unreadable), "option"
    end
    if previous and not self.options.allow_changed then
      local found = changes(previous, info)
      if #found > 0 then
        return nil, string.format("cannot resume %s: %s (--allow-changed resumes anyway)", out, table.concat(found, "; ")),
          "option"
      end
    end
    if previous and type(previous.parts) == "table" then
      for _, part in ipairs(previous.parts) do
        if not part.finished_utc then part.ended = part.ended or "killed (no end was recorded)" end
        info.parts[#info.parts + 1] = part
      end
    end
    sweep.columns = resumed.columns
    sweep.texts = {} -- index -> the resumed row's line, for a rewrite
    local by_name = {}
    for r, cells in ipairs(resumed.rows) do
      for c, name in ipairs(resumed.columns) do by_name[name] = cells[c] end
      local index = sweep.index_of[key_of(by_name, msg.axes)]
      if not index then
        return nil, string.format("cannot resume %s: it has a row for a point this sweep does not have (%s); " ..
          "the axes changed", out, table.concat(cells, ",", 1, math.min(#cells, #msg.axes)))
      end
      if sweep.cells[index] then
        return nil, string.format("cannot resume %s: the point %s has two rows", out,
          table.concat(cells, ",", 1, #msg.axes))
      end
      local row = {}
      for c, name in ipairs(resumed.columns) do row[name] = cells[c] end
      sweep.cells[index] = row
      sweep.texts[index] = resumed.texts[r]
      sweep:count(row.status)
      -- rows still in point order (a run killed at a point resumes after it) need no rewrite
      if index < sweep.last_written then sweep.in_order = false end
      sweep.last_written = index
    end
    sweep.resumed_rows = #resumed.rows
    sweep.dropped_bytes = resumed.dropped_bytes
    -- keep the complete lines, drop a cut one, append from there
    sweep.recorded = 0
    for _, index in ipairs(sweep.mine) do if sweep.cells[index] then sweep.recorded = sweep.recorded + 1 end end
    if resumed.dropped_bytes > 0 then
      -- the complete rows go through a temporary file and a rename: never a moment without them
      sweep:rewrite()
      io.stderr:write(string.format("gpuexp: %s: dropped %d bytes of a row cut off by the interruption; " ..
        "its point runs again\n", out, resumed.dropped_bytes))
    else
      sweep:open_for_append(resumed.good_bytes)
    end
  else
    local file, message = gpuexp._open_output(out)
    if not file then return nil, message, "write" end
    sweep.file, sweep.good_bytes = file, 0
    if sweep.columns then sweep:write_header() end
    os.remove(sweep.samples_path)
  end
  info.parts[#info.parts + 1] = {started_utc = self.options.started_utc or now_utc(), host = self.options.host,
    devices = self.options.devices, command = self.options.command, resumed = resumed and true or nil}
  sweep.part = info.parts[#info.parts]
  for _, index in ipairs(sweep.mine) do
    if not sweep.cells[index] then sweep.queue[#sweep.queue + 1] = index end
  end
  sweep.queue_position = 1
  self.sweeps[#self.sweeps + 1] = sweep
  self.by_out[out] = sweep
  self.totals.points = self.totals.points + #sweep.mine
  self.totals.done = self.totals.done + (#sweep.mine - #sweep.queue)
  local ok, message = pcall(meta.write, sweep.meta_path, info)
  if not ok then return nil, type(message) == "table" and message.message or tostring(message), "write" end
  return sweep
end

M.Sweep = {}
local Sweep = M.Sweep

function Sweep:add_gpu(gpu)
  if not gpu then return end
  for _, known in ipairs(self.info.gpus) do if known.uuid == gpu.uuid then return end end
  self.info.gpus[#self.info.gpus + 1] = gpu
end

function Sweep:count(status)
  local key = (status == "ok" or status == "crashed" or status == "timeout") and status or
    (status == "error" and "error" or "ok")
  self.counts[key] = self.counts[key] + 1
end

-- Appends text to the CSV and flushes it. On a failure (a full disk, an I/O error) the file is cut
-- back to its last whole row and a write error is raised: every row on disk is whole, and
-- --resume after space is freed runs the rest.
function Sweep:append(text)
  local ok, why = self.file:write(text)
  if ok then ok, why = self.file:flush() end
  if not ok then
    self.file:close()
    self.file = nil
    gpuexp._truncate(self.out, self.good_bytes)
    csv.write_failed(self.out, "write", why)
  end
  self.good_bytes = self.good_bytes + #text
end

function Sweep:open_for_append(good_bytes)
  local file, why = gpuexp._open_output(self.out, true)
  if not file then gpuexp.error("write", why) end
  self.file, self.good_bytes = file, good_bytes
end

function Sweep:write_header()
  self:append(csv.line(self.columns) .. "\n")
end

function Sweep:line(row)
  local cells = {}
  for c, name in ipairs(self.columns) do cells[c] = row[name] or "" end
  return csv.line(cells)
end

-- Rewrites the whole file (new columns, or point order at the end) through a temporary file and
-- a rename: a kill or a full disk leaves the old file whole.
function Sweep:rewrite()
  local lines = {csv.line(self.columns)}
  local texts = self.texts or {} -- a resumed row's line as it was read
  for _, index in ipairs(self.mine) do
    if self.cells[index] then lines[#lines + 1] = texts[index] or self:line(self.cells[index]) end
  end
  local text = table.concat(lines, "\n") .. "\n"
  if self.file then self.file:close(); self.file = nil end
  csv.write_file(self.out, text)
  self:open_for_append(#text)
end

-- The next point for a worker: its index, or nil and whether the sweep is complete (else the
-- worker waits for the points others are running).
function Sweep:next_point(worker)
  local returned = self.returned and table.remove(self.returned)
  if returned then
    self.in_flight[returned] = worker or true
    return returned
  end
  while self.queue_position <= #self.queue do
    local index = self.queue[self.queue_position]
    self.queue_position = self.queue_position + 1
    if not self.cells[index] and not self.in_flight[index] then
      self.in_flight[index] = worker or true
      return index
    end
  end
  return nil, next(self.in_flight) == nil
end

-- A point handed to a worker that never started it (the worker ended first): the next one to ask
-- gets it.
function Sweep:give_back(index)
  self.in_flight[index] = nil
  self.returned = self.returned or {}
  self.returned[#self.returned + 1] = index
end

-- A finished point. row: column name -> cell text (the worker formatted the values); arrays:
-- field -> list of numbers (per-sample times), written to the samples file.
function Sweep:finish_point(index, row, arrays)
  self.in_flight[index] = nil
  if self.cells[index] then return end -- already recorded (a worker that died after reporting)
  local point = self.points[index]
  for i, axis in ipairs(self.axes) do row[axis.name] = point[i] end
  local status = row.status or "ok"
  row.status = status
  if not self.columns then
    if status == "ok" then
      -- no columns given: the axes, then this first good row's other fields in name order
      self.columns = {}
      local is_axis, rest = {}, {}
      for _, axis in ipairs(self.axes) do self.columns[#self.columns + 1] = axis.name; is_axis[axis.name] = true end
      for name in pairs(row) do
        if not is_axis[name] and name ~= "status" and name ~= "error" then rest[#rest + 1] = name end
      end
      table.sort(rest)
      for _, name in ipairs(rest) do self.columns[#self.columns + 1] = name end
      self.columns[#self.columns + 1] = "status"
      self.columns[#self.columns + 1] = "error"
      self.cells[index] = row
      local lines = {csv.line(self.columns)}
      for _, held in ipairs(self.pending) do lines[#lines + 1] = self:line(self.cells[held]) end
      lines[#lines + 1] = self:line(row)
      self:append(table.concat(lines, "\n") .. "\n")
      self.pending = {}
    else
      self.cells[index] = row
      self.pending[#self.pending + 1] = index
    end
  else
    -- a field no column has: the CSV grows a column (before status and error), never drops it
    local known, added = {}, {}
    for _, name in ipairs(self.columns) do known[name] = true end
    local names = {}
    for name in pairs(row) do if not known[name] then names[#names + 1] = name end end
    table.sort(names)
    for _, name in ipairs(names) do
      table.insert(self.columns, #self.columns - 1, name)
      added[#added + 1] = name
    end
    self.cells[index] = row
    if #added > 0 then
      io.stderr:write(string.format("\ngpuexp: sweep '%s': point %d has field(s) %s that earlier rows did not; " ..
        "added as column(s) of %s (empty in earlier rows)\n", self.name, index, table.concat(added, ", "), self.out))
      self.texts = nil -- the resumed rows' lines lack the new columns
      self:rewrite()
    else
      self:append(self:line(row) .. "\n")
    end
  end
  if self.is_mine[index] then self.recorded = self.recorded + 1 end
  if index < self.last_written then self.in_order = false end
  self.last_written = index
  if arrays and next(arrays) then self:write_samples(index, arrays) end
  self:count(status)
  local totals = self.ledger.totals
  totals.done = totals.done + 1
  local key = (status == "crashed" or status == "timeout" or status == "error") and status or "ok"
  -- a sweep that expects failed points (a tune's rounds) counts their errors apart: they are
  -- results (a configuration that cannot launch); a crash or a timeout still fails the run
  if key == "error" and self.expect_failures then
    totals.expected = (totals.expected or 0) + 1
    return
  end
  totals[key] = totals[key] + 1
  if key ~= "ok" and not totals.first_failure then
    local label = {}
    for i, axis in ipairs(self.axes) do label[i] = axis.name .. "=" .. point[i] end
    totals.first_failure = {sweep = self.name, point = table.concat(label, ","), status = status, error = row.error,
      out = self.out}
  end
end

-- The per-sample values of a point, appended to X.samples.csv (store/samples.lua).
function Sweep:write_samples(index, arrays)
  if not self.samples then
    local names = {}
    for a, axis in ipairs(self.axes) do names[a] = axis.name end
    self.samples = samples.appender(self.samples_path, names)
  end
  self.samples:write(self.points[index], arrays)
end

-- Every point of this share has a row (counted as they come: no scan of the points).
function Sweep:complete()
  return self.recorded == #self.mine
end

-- The rows of this share, in point order, as cell texts.
function Sweep:rows()
  local rows = {}
  for _, index in ipairs(self.mine) do rows[#rows + 1] = {index = index, cells = self.cells[index]} end
  return rows
end

-- The sweep's rows as a result (store/result.lua), in point order, from memory: what the history
-- records without reading the CSV again.
function Sweep:result()
  local names = {}
  for a, axis in ipairs(self.axes) do names[a] = axis.name end
  local run = result.new(self.out, self.info, names, self.columns)
  local columns = self.columns or {}
  for _, index in ipairs(self.mine) do
    local row = self.cells[index]
    if row then
      local cells = {}
      for c, name in ipairs(columns) do cells[c] = row[name] or "" end
      run:add(cells)
    end
  end
  return run
end

-- Writes what is known now; at the end of the sweep the file is put in point order.
function Sweep:close(ended)
  if self.closed then return end
  local complete = self:complete()
  self.closed = true -- once, even when a write below fails
  if self.file and not self.columns then
    self.columns = {}
    for _, axis in ipairs(self.axes) do self.columns[#self.columns + 1] = axis.name end
    self.columns[#self.columns + 1] = "status"
    self.columns[#self.columns + 1] = "error"
    local lines = {csv.line(self.columns)}
    for _, held in ipairs(self.pending) do lines[#lines + 1] = self:line(self.cells[held]) end
    self.pending = {}
    self:append(table.concat(lines, "\n") .. "\n")
  end
  if self.file and complete and not self.in_order then self:rewrite() end
  if self.samples then self.samples:close() end
  if self.file then csv.close(self.file, self.out); self.file = nil end
  gpuexp._process.unlock(self.lock_path)
  local info = self.info
  self.part.finished_utc = now_utc()
  if #self.ledger.restarts > 0 then self.part.restarts = self.ledger.restarts end
  self.part.ended = ended or (complete and "complete" or "incomplete")
  info.sweep.complete = complete
  info.sweep.rows_ok = self.counts.ok
  info.sweep.rows_error = self.counts.error
  info.sweep.rows_crashed = self.counts.crashed
  info.sweep.rows_timeout = self.counts.timeout
  info.sweep.columns = self.columns
  info.sweep.finished_utc = complete and now_utc() or nil
  meta.write(self.meta_path, info)
end

-- Ends every sweep still open (the run is over or interrupted).
function Ledger:close(ended)
  for _, sweep in ipairs(self.sweeps) do sweep:close(ended) end
end

function Ledger:sweep(out) return self.by_out[out] end

-- The failed points said on stderr, and the run's exit code (engine/failures.lua).
function Ledger:report_failures() return require("gpuexp.engine.failures").report(self) end

return M
