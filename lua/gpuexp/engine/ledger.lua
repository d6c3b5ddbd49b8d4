-- The bookkeeping of a run's sweeps, wherever the points run: which sweeps the run writes, each
-- one's share of the points (--shard, --only), its output's folder and lock, a resume or a fresh
-- start, the metadata with one part per invocation, and the run's totals. A sweep's points, CSV
-- (and its column layout) and samples are engine/ledger_sweep.lua's; taking back the rows of a
-- cut output is engine/resume.lua's. The supervisor drives it from worker messages; an --inline
-- run calls it directly.
local meta = require("gpuexp.store.meta")
local result = require("gpuexp.store.result")
local samples = require("gpuexp.store.samples")
local ledger_sweep = require("gpuexp.engine.ledger_sweep")
local resume = require("gpuexp.engine.resume")

local M = {}
local Ledger = {}
Ledger.__index = Ledger
M.Sweep = ledger_sweep.Sweep

-- options: resume, allow_changed, shard = {index, count} (0-based), only (clauses of axis values),
-- point_timeout_s, host, devices (list of ordinals), device_column, command, started_utc, keep
-- (false: the sweeps do not keep the texts and samples they write, which only recording the run in
-- a history needs; kept unless false)
function M.new(options)
  return setmetatable({options = options, sweeps = {}, by_out = {}, restarts = {}, totals = {done = 0, ok = 0, error = 0,
    crashed = 0, timeout = 0, points = 0}}, Ledger)
end

local function shard_path(path, shard)
  if not shard then return path end
  local suffix = string.format(".shard-%d-of-%d", shard.index, shard.count)
  if path:match("%.csv$") then return (path:gsub("%.csv$", suffix .. ".csv")) end
  return path .. suffix
end
M.shard_path = shard_path

local message_of = require("gpuexp.engine.exits").message

-- ---- this run's share of the points ----

-- Whether --only wants a point (its cells): it matches one of the clauses (axis name -> cell text).
local function only_filter(only, axis_at)
  return function(cells)
    if not only then return true end
    for _, clause in ipairs(only) do
      local match = true
      for name, value in pairs(clause) do match = match and axis_at[name] ~= nil and cells[axis_at[name]] == value end
      if match then return true end
    end
    return false
  end
end

-- Why --only is refused for this sweep (like a misspelled axis, a value no point has is refused
-- before anything is written), or nil.
local function only_refusal(only, msg, axis_at, wanted)
  if not only then return nil end
  local names = {}
  for _, axis in ipairs(msg.axes) do names[#names + 1] = axis.name end
  for _, clause in ipairs(only) do
    for name in pairs(clause) do
      if not axis_at[name] then
        return string.format("--only names the axis '%s', which sweep '%s' does not have (its axes: %s); " ..
          "nothing was run or written", name, msg.name, table.concat(names, ", "))
      end
    end
  end
  for i = 1, #msg.points do if wanted(msg.points[i]) then return nil end end
  local takes = {}
  for a, axis in ipairs(msg.axes) do
    local values, seen = {}, {}
    for _, cells in ipairs(msg.points) do
      if not seen[cells[a]] then seen[cells[a]] = true; values[#values + 1] = cells[a] end
    end
    takes[#takes + 1] = axis.name .. " = " .. table.concat(values, "|")
  end
  return string.format("--only matches no point of sweep '%s' (its points: %s); nothing was run or written",
    msg.name, table.concat(takes, ", "))
end

-- The sweep's mine (its share's point indices, in point order) and is_mine: a shard's points
-- (--shard: every count-th), of those the ones --only names. true, or nil, why and "option".
function Ledger:share(sweep, msg)
  local shard, only = self.options.shard, self.options.only
  local axis_at = {}
  for a, name in ipairs(sweep.axis_names) do axis_at[name] = a end
  local wanted = only_filter(only, axis_at)
  local refused = only_refusal(only, msg, axis_at, wanted)
  if refused then return nil, refused, "option" end
  sweep.mine, sweep.is_mine = {}, {}
  for i = 1, #msg.points do
    if (not shard or (i - 1) % shard.count == shard.index) and wanted(msg.points[i]) then
      sweep.mine[#sweep.mine + 1] = i
      sweep.is_mine[i] = true
    end
  end
  return true
end

-- ---- the output ----

-- The output's folder (that of the default output, results/, is made; one the user named must
-- exist) and its lock: one writer per output, a second run on it waits its turn (exit 75). The
-- CSV, its metadata and its samples file are checked first (gx_output.h: no link of another user
-- on the way, no device or FIFO at a companion's name), so a refusal leaves no lock and no file
-- touched. true, or nil, why and the kind of failure ("busy", "write").
local function take_output(sweep, make_folder)
  local out = sweep.out
  local dir = out:match("^(.*)/[^/]*$")
  if make_folder and dir and dir ~= "" then
    local made, problem = gpuexp._output_folder(dir, true)
    if not made then return nil, problem, "write" end
  end
  for _, path in ipairs({out, meta.path_for(out), samples.path_for(out)}) do
    local writable, why = gpuexp._output_check(path, path == out)
    if not writable then return nil, why, "write" end
  end
  local locked, note, kind = gpuexp._process.lock(out .. ".lock")
  if not locked and kind == "busy" then
    return nil, string.format("%s: another run is writing it (%s); try later", out, note), kind
  elseif not locked then -- a read-only folder, a name too long: not another run's doing
    return nil, string.format("cannot write %s: %s", out, note), "write"
  end
  if note then io.stderr:write("gpuexp: " .. note .. "\n") end
  sweep.lock_path = out .. ".lock"
  return true
end

-- The metadata's description of the sweep (info.sweep) and its GPUs; its parts start empty.
local function describe(sweep, msg, options)
  local shard, only, info = options.shard, options.only, sweep.info
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
  local keys = {}
  for i, cells in ipairs(msg.points) do keys[i] = result.key(cells) end
  info.sweep = {name = msg.name, points = #msg.points, axes = msg.axes, output = sweep.out, mode = msg.mode,
    offline_arch = msg.offline_arch, share_cells = share_cells, share_indices = only and share_indices or nil,
    timeout_s = msg.timeout_s or options.point_timeout_s,
    shard = shard and {index = shard.index, count = shard.count} or nil, points_in_share = #sweep.mine,
    only = only, points_hash = gpuexp.hash(table.concat(keys, "\n"))}
  info.gpus = {}
  sweep:add_gpu(info.gpu)
  info.parts = {}
end

-- The output begun: the rows an earlier part of the run wrote taken back (--resume), else a new
-- file. true, or nil, why and the kind of failure.
function Ledger:start(sweep)
  if self.options.resume then
    local resumed, why = resume.read(sweep.out)
    if why then return nil, why end
    sweep.resumed = resumed ~= nil or nil
    if resumed and resumed.columns then return resume.take_back(sweep, resumed, self.options) end
  end
  local started, why = sweep:start_fresh()
  if not started then return nil, why, "write" end
  return true
end

-- The sweep joins the run: this invocation's part of its metadata, its queue (the points of its
-- share without a row), the run's totals; the metadata written. The sweep, or nil, why and "write".
function Ledger:enter(sweep)
  local info, options = sweep.info, self.options
  info.parts[#info.parts + 1] = {started_utc = options.started_utc or ledger_sweep.now_utc(), host = options.host,
    devices = options.devices, command = options.command, resumed = sweep.resumed}
  sweep.part = info.parts[#info.parts]
  for _, index in ipairs(sweep.mine) do
    if not sweep.cells[index] then sweep.queue[#sweep.queue + 1] = index end
  end
  sweep.queue_position = 1
  self.sweeps[#self.sweeps + 1] = sweep
  self.by_out[sweep.out] = sweep
  self.totals.points = self.totals.points + #sweep.mine
  self.totals.done = self.totals.done + (#sweep.mine - #sweep.queue)
  local ok, message = pcall(sweep.write_meta, sweep)
  if not ok then return nil, message_of(message), "write" end
  return sweep
end

-- A sweep another worker registered already: the same one (its GPU added), or why not.
local function join(existing, msg, out)
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

-- msg: name, out, axes ({name, values} list), points (list of cell lists), columns (explicit or
-- nil), info (metadata of the worker: gpu, script hash, kernels), timeout_s, make_folder, mode,
-- offline_arch, expect_failures. Returns the sweep state, or nil, the reason the run cannot go on
-- and its kind ("option", "write", "busy"; nil: another failure).
function Ledger:register(msg)
  local out = shard_path(msg.out, self.options.shard)
  if self.by_out[out] then return join(self.by_out[out], msg, out) end
  local sweep = ledger_sweep.new(self, msg, out)
  if msg.columns then
    local fields = {table.unpack(msg.columns)}
    if self.options.device_column then fields[#fields + 1] = "device" end
    sweep.columns = ledger_sweep.layout(sweep.axis_names, fields)
  end
  local ok, why, kind = self:share(sweep, msg)
  if not ok then return nil, why, kind end
  ok, why, kind = take_output(sweep, msg.make_folder)
  if not ok then return nil, why, kind end
  sweep.meta_path, sweep.samples_path = meta.path_for(out), samples.path_for(out)
  describe(sweep, msg, self.options)
  ok, why, kind = self:start(sweep)
  if not ok then -- a resume refused, a file that cannot be made: the output is left as it was, unlocked
    if sweep.file then sweep.file:close() end
    gpuexp._process.unlock(sweep.lock_path)
    return nil, why, kind
  end
  return self:enter(sweep)
end

-- Ends every sweep still open (the run is over or interrupted).
function Ledger:close(ended)
  for _, sweep in ipairs(self.sweeps) do sweep:close(ended) end
end

function Ledger:sweep(out) return self.by_out[out] end

-- The failed points said on stderr, and the run's exit code (engine/failures.lua).
function Ledger:report_failures() return require("gpuexp.engine.failures").report(self) end

return M
