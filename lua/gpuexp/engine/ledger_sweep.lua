-- One sweep of the ledger (engine/ledger.lua): its points (which are left, who runs each), its CSV
-- (one line per finished point, flushed; rewritten in point order when the sweep is complete), the
-- CSV's column layout (built here and nowhere else), its samples and the end of its metadata.
-- What it writes it also keeps (the CSV's text, the metadata's, the samples), so that its result
-- is the run as the files hold it and the history records it without reading them back.
local csv = require("gpuexp.store.csv")
local meta = require("gpuexp.store.meta")
local result = require("gpuexp.store.result")
local samples = require("gpuexp.store.samples")
local text_formats = require("gpuexp.store.text")

local M = {}
local Sweep = {}
Sweep.__index = Sweep
M.Sweep = Sweep

function M.now_utc() return os.date("!%Y-%m-%dT%H:%M:%SZ") end

-- ---- the column layout ----

-- The CSV's columns, the one rule: the axes, then the fields (in the order given, each once; an
-- axis, status or error among them is not repeated), then status and error.
function M.layout(axis_names, fields)
  local columns, taken = {}, {status = true, error = true}
  local function add(name)
    if not taken[name] then
      taken[name] = true
      columns[#columns + 1] = name
    end
  end
  for _, name in ipairs(axis_names) do add(name) end
  for _, name in ipairs(fields) do add(name) end
  columns[#columns + 1] = "status"
  columns[#columns + 1] = "error"
  return columns
end

-- A row's fields the columns lack, in name order, added before status and error (a column is
-- never dropped); returns the names added.
function M.grow(columns, row)
  local known, added = {}, {}
  for _, name in ipairs(columns) do known[name] = true end
  for name in pairs(row) do if not known[name] then added[#added + 1] = name end end
  table.sort(added)
  for _, name in ipairs(added) do table.insert(columns, #columns - 1, name) end
  return added
end

-- A row's field names in name order (the columns of a sweep that named none, from its first good row).
local function fields_of(row)
  local names = {}
  for name in pairs(row) do names[#names + 1] = name end
  table.sort(names)
  return names
end

-- ---- the sweep ----

-- M.new(ledger, msg, out): a sweep of msg (a registration: name, axes, points, columns, info...)
-- writing to out, with no share, file or columns yet (engine/ledger.lua's register gives them).
function M.new(ledger, msg, out)
  local sweep = setmetatable({ledger = ledger, name = msg.name, out = out, axes = msg.axes, points = msg.points,
    explicit = msg.columns ~= nil, timeout_s = msg.timeout_s, expect_failures = msg.expect_failures, info = msg.info,
    axis_names = {}, cells = {}, index_of = {}, in_flight = {}, queue = {}, pending = {}, recorded = 0,
    in_order = true, last_written = 0, counts = {ok = 0, error = 0, crashed = 0, timeout = 0},
    chunks = {}, sample_entries = {}}, Sweep)
  for a, axis in ipairs(msg.axes) do sweep.axis_names[a] = axis.name end
  for i, point in ipairs(msg.points) do sweep.index_of[result.key(point)] = i end
  return sweep
end

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

-- ---- the CSV file ----

-- A new file (no rows of an earlier part): the header when the columns are known, and no samples
-- file of an earlier run left beside it. true, or nil and why.
function Sweep:start_fresh()
  local file, message = gpuexp._open_output(self.out, false, true)
  if not file then return nil, message end
  self.file, self.good_bytes, self.chunks = file, 0, {}
  if self.columns then self:write_header() end
  os.remove(self.samples_path)
  return true
end

-- Appends text to the CSV and flushes it. On a failure (a full disk, an I/O error) the file is cut
-- back to its last whole row and a write error is raised: every row on disk is whole, and
-- --resume after space is freed runs the rest.
function Sweep:append(text)
  local file = self.file
  self.file = nil -- closed if the append fails
  self.good_bytes = csv.append_whole(file, self.out, self.good_bytes, text)
  self.file = file
  if self.ledger.options.keep ~= false then self.chunks[#self.chunks + 1] = text end
end

-- Opens the CSV to append after text, the whole of what it holds now.
function Sweep:open_for_append(text)
  local file, why = gpuexp._open_output(self.out, true, true)
  if not file then gpuexp.error("write", why) end
  self.file, self.good_bytes, self.chunks = file, #text, {text}
end

function Sweep:write_header()
  self:append(csv.line(self.columns) .. "\n")
end

function Sweep:line(row)
  local cells = {}
  for c, name in ipairs(self.columns) do cells[c] = row[name] or "" end
  return csv.line(cells)
end

-- The CSV's text, as it is on disk (what the sweep wrote).
function Sweep:text() return table.concat(self.chunks) end

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
  csv.write_file(self.out, text, true)
  self:open_for_append(text)
end

-- The columns, known now, as the header, with the rows held until then (in the order they came).
function Sweep:write_held(columns)
  self.columns = columns
  local lines = {csv.line(columns)}
  for _, held in ipairs(self.pending) do lines[#lines + 1] = self:line(self.cells[held]) end
  self.pending = {}
  self:append(table.concat(lines, "\n") .. "\n")
end

-- A finished point's row into the CSV. With no columns given, rows wait for the first good one,
-- whose fields make the columns; after that, a field no column has grows one (the file rewritten).
function Sweep:write_row(index, row)
  self.cells[index] = row
  if not self.columns then
    self.pending[#self.pending + 1] = index
    if row.status == "ok" then self:write_held(M.layout(self.axis_names, fields_of(row))) end
    return
  end
  local added = M.grow(self.columns, row)
  if #added > 0 then
    io.stderr:write(text_formats.format("\ngpuexp: sweep '%s': point %d has field(s) %s that earlier rows did not; " ..
      "added as column(s) of %s (empty in earlier rows)\n", self.name, index, table.concat(added, ", "), self.out))
    self.texts = nil -- the resumed rows' lines lack the new columns
    self:rewrite()
  else
    self:append(self:line(row) .. "\n")
  end
end

-- ---- points ----

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
  for i, name in ipairs(self.axis_names) do row[name] = point[i] end
  row.status = row.status or "ok"
  self:write_row(index, row)
  if self.is_mine[index] then self.recorded = self.recorded + 1 end
  if index < self.last_written then self.in_order = false end
  self.last_written = index
  if arrays and next(arrays) then self:write_samples(index, arrays) end
  self:tally(index, row)
end

-- A finished point in the sweep's counts and the run's totals (its first failure kept for the
-- report).
function Sweep:tally(index, row)
  self:count(row.status)
  self.ledger.totals.done = self.ledger.totals.done + 1
  self:charge(index, row)
end

-- A point's status in the run's totals, its first failure kept for the report: a point of this
-- invocation (tally), or a failed row an earlier part of the run wrote (earlier: a resumed run
-- whose CSV holds crashed rows does not end as a success).
function Sweep:charge(index, row, earlier)
  local status, totals = row.status, self.ledger.totals
  local key = (status == "crashed" or status == "timeout" or status == "error") and status or "ok"
  -- a sweep that expects failed points (a tune's rounds) counts their errors apart: they are
  -- results (a configuration that cannot launch); a crash or a timeout still fails the run
  if key == "error" and self.expect_failures then
    totals.expected = (totals.expected or 0) + 1
    return
  end
  totals[key] = totals[key] + 1
  if key ~= "ok" and not totals.first_failure then
    local label, point = {}, self.points[index]
    for i, name in ipairs(self.axis_names) do label[i] = name .. "=" .. point[i] end
    totals.first_failure = {sweep = self.name, point = table.concat(label, ","), status = status, error = row.error,
      out = self.out, earlier = earlier}
  end
end

-- The per-sample values of a point, appended to X.samples.csv (store/samples.lua) and kept (unless
-- the ledger was told not to keep them: a run that is not recorded).
function Sweep:write_samples(index, arrays)
  if not self.samples then self.samples = samples.appender(self.samples_path, self.axis_names) end
  local written = self.samples:write(self.points[index], arrays)
  if self.ledger.options.keep == false then return end
  for _, entry in ipairs(written) do self.sample_entries[#self.sample_entries + 1] = entry end
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

-- The sweep as a result (store/result.lua) from memory: its rows in point order, its samples (the
-- samples file's, in its order) and, once closed, the source of its files (the hash of the texts
-- written): what the history records without reading the files again.
function Sweep:result()
  local run = result.new(self.out, self.info, self.axis_names, self.columns)
  local columns = self.columns or {}
  for _, index in ipairs(self.mine) do
    local row = self.cells[index]
    if row then
      local cells = {}
      for c, name in ipairs(columns) do cells[c] = row[name] or "" end
      run:add(cells)
    end
  end
  for _, entry in ipairs(self.sample_entries) do
    run:add_samples(result.key(entry.cells), entry.field, entry.values, entry.where)
  end
  run.samples_problem = self.samples_problem
  if self.closed and self.ledger.options.keep ~= false then run.source = result.source(self:text(), self.meta_text) end
  return run
end

-- The metadata written whole (and its text kept).
function Sweep:write_meta()
  self.meta_text = meta.write(self.meta_path, self.info)
end

-- Writes what is known now; at the end of the sweep the file is put in point order.
function Sweep:close(ended)
  if self.closed then return end
  local complete = self:complete()
  self.closed = true -- once, even when a write below fails
  if self.file and not self.columns then self:write_held(M.layout(self.axis_names, {})) end
  if self.file and complete and not self.in_order then self:rewrite() end
  if self.samples then self.samples:close() end
  if self.file then csv.close(self.file, self.out); self.file = nil end
  gpuexp._process.unlock(self.lock_path)
  local info = self.info
  self.part.finished_utc = M.now_utc()
  if #self.ledger.restarts > 0 then self.part.restarts = self.ledger.restarts end
  self.part.ended = ended or (complete and "complete" or "incomplete")
  info.sweep.complete = complete
  info.sweep.rows_ok = self.counts.ok
  info.sweep.rows_error = self.counts.error
  info.sweep.rows_crashed = self.counts.crashed
  info.sweep.rows_timeout = self.counts.timeout
  info.sweep.columns = self.columns
  info.sweep.finished_utc = complete and M.now_utc() or nil
  self:write_meta()
end

return M
