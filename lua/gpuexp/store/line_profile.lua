-- The line profile file (X.lines.json): one launch of one kernel, instruction by instruction, as
-- CUPTI's SASS metrics counted it and its PC sampling saw it, each instruction with its source file
-- and line, and the text of those files (so two profiles can be aligned line by line anywhere,
-- later, with no source tree). The one owner of the format: api/lines.lua builds profiles from
-- what the bindings give, judge/lines.lua compares two, commands read and write them through here.
--
-- {format = "gpuexp-line-profile", version = 1, kernel, symbol, arch, label, time_ms,
--  metrics = {"inst_executed", ...}   the SASS metrics, smsp__sass_ left off
--  reasons = {"long_scoreboard", ...}  PC sampling's stall reasons, smsp__pcsamp_warps_issue_stalled_ left off
--  sass = {done, passes, seconds, error}, pc = {done, launches, period, samples, ..., error},
--  line_info (the instructions were mapped to lines), map_error (why not), line_table (the cubin has one),
--  sources = {[file] = text}, instructions = {{function, pc, file, line, counts = {...}, samples = {[reason] = n}}}}
local csv = require("gpuexp.store.csv")
local json = require("gpuexp.store.json")
local meta = require("gpuexp.store.meta")

local M = {}

M.FORMAT = "gpuexp-line-profile"
M.VERSION = 1
M.SUFFIX = ".lines.json"
-- the SASS counts of the same launch, taken in a process of their own (CUPTI's two collectors share
-- none), beside its PC samples: X.sass.lines.json beside X.lines.json
M.SASS_SUFFIX = ".sass" .. M.SUFFIX
M.MAX_SOURCE_BYTES = 4 * 1024 * 1024 -- a source file larger than this is left out (its lines shown without text)

local SASS_PREFIX = "^smsp__sass_"
local STALL_PREFIX = "^smsp__pcsamp_warps_issue_stalled_"

-- A metric's or stall reason's short name, as the profile stores it.
function M.short_metric(name) return (name:gsub(SASS_PREFIX, "")) end
function M.short_reason(name) return (name:gsub(STALL_PREFIX, "")) end

-- A profile from a raw one (gpuexp._line_profile or gpuexp._line_table) and what the caller
-- adds: label, time_ms, sources ({[file] = text}).
function M.build(raw, extra)
  extra = extra or {}
  local metrics, reasons = {}, {}
  for i, name in ipairs(raw.metrics or {}) do metrics[i] = M.short_metric(name) end
  for i, name in ipairs(raw.reasons or {}) do reasons[i] = M.short_reason(name) end
  local profile = {format = M.FORMAT, version = M.VERSION, kernel = raw.kernel, symbol = raw.symbol, arch = raw.arch,
    label = extra.label, time_ms = extra.time_ms, static = extra.static or nil, metrics = metrics, reasons = reasons,
    sass = raw.sass, pc = raw.pc, line_info = (raw.mapped or 0) > 0, map_error = raw.map_error, line_table = raw.line_table,
    sources = extra.sources or {}, instructions = {}}
  for i, r in ipairs(raw.instructions or {}) do
    local samples
    if r.samples then
      samples = {}
      for index, n in pairs(r.samples) do samples[reasons[index] or tostring(index)] = n end
    end
    profile.instructions[i] = {["function"] = r["function"], pc = r.pc, file = r.file, line = r.line,
      counts = r.values, samples = samples}
  end
  return profile
end

-- The profile's JSON text (one line a field list; instructions one a line, so a diff of two is read).
function M.encode(profile)
  local head = {}
  for k, v in pairs(profile) do if k ~= "instructions" then head[k] = v end end
  local parts = {json.encode(head):sub(1, -2), ',"instructions":[\n'}
  for i, instruction in ipairs(profile.instructions) do
    parts[#parts + 1] = json.encode(instruction) .. (i < #profile.instructions and ",\n" or "\n")
  end
  parts[#parts + 1] = "]}\n"
  return table.concat(parts)
end

function M.write(path, profile) csv.write_file(path, M.encode(profile)) end

local function fail(path, why) return nil, string.format("%s: %s", path, why) end

-- A profile checked field by field: the profile, or nil and why (naming the file and what is
-- wrong: a file cut by a kill, another format, a damaged instruction).
function M.decode(text, path)
  path = path or "line profile"
  local value, why = json.decode(text)
  if value == nil then return fail(path, "not JSON (" .. tostring(why) .. ")") end
  if type(value) ~= "table" or value.format ~= M.FORMAT then
    return fail(path, "not a gpuexp line profile (no \"format\": \"" .. M.FORMAT .. "\")")
  end
  if value.version ~= M.VERSION then
    return fail(path, string.format("line profile version %s; this gpuexp reads version %d", tostring(value.version), M.VERSION))
  end
  if type(value.kernel) ~= "string" or type(value.instructions) ~= "table" then
    return fail(path, "no kernel name or no instructions")
  end
  for _, key in ipairs({"metrics", "reasons"}) do
    if type(value[key]) ~= "table" then return fail(path, "'" .. key .. "' is not a list") end
    for i, name in ipairs(value[key]) do
      if type(name) ~= "string" then return fail(path, string.format("%s[%d] is not a name", key, i)) end
    end
  end
  value.sources = type(value.sources) == "table" and value.sources or {}
  for file, source in pairs(value.sources) do
    if type(file) ~= "string" or type(source) ~= "string" then return fail(path, "a source that is not text") end
  end
  for i, r in ipairs(value.instructions) do
    -- JSON numbers come back as floats: a whole one is the integer it was written as
    if type(r) == "table" then
      r.pc = type(r.pc) == "number" and math.tointeger(r.pc) or r.pc
      r.line = type(r.line) == "number" and math.tointeger(r.line) or r.line
    end
    local bad = type(r) ~= "table" and "is not an object"
      or math.type(r.pc) ~= "integer" and "has no integer pc"
      or r.line ~= nil and r.line ~= json.null and math.type(r.line) ~= "integer" and "has a line that is no integer"
      or r.counts ~= nil and type(r.counts) ~= "table" and "has counts that are no list"
      or r.samples ~= nil and type(r.samples) ~= "table" and "has samples that are no object"
    if bad then return fail(path, string.format("instruction %d %s", i, bad)) end
    if r.line == json.null then r.line = nil end
    if r.file == json.null then r.file = nil end
    for k, n in pairs(r.counts or {}) do
      if type(n) ~= "number" then return fail(path, string.format("instruction %d: count %s is not a number", i, tostring(k))) end
    end
    for k, n in pairs(r.samples or {}) do
      if type(n) ~= "number" then return fail(path, string.format("instruction %d: samples of %s not a number", i, tostring(k))) end
    end
  end
  return value
end

function M.read(path)
  local text = meta.read_all(path)
  if not text then return nil, path .. " does not exist or cannot be read" end
  if text == "" then return nil, path .. " is empty" end
  return M.decode(text, path)
end

-- The path of the SASS counts beside a profile's path (X.lines.json -> X.sass.lines.json).
function M.sass_path(path) return path:sub(1, #path - #M.SUFFIX) .. M.SASS_SUFFIX end
-- The other way: the launch's profile path of a SASS counts' path (X.sass.lines.json ->
-- X.lines.json); any other path as it is.
function M.launch_path(path)
  if path:sub(-#M.SASS_SUFFIX) ~= M.SASS_SUFFIX then return path end
  return path:sub(1, #path - #M.SASS_SUFFIX) .. M.SUFFIX
end

-- One profile of a launch from two of it, each by one collector (in two processes): the PC samples
-- of `sampled` and the SASS counts of `counted`, instruction by instruction (matched by function
-- and offset: the same cubin), each stage as its profile says. Nil and why when they are not of one
-- kernel and one build (another kernel, an instruction on another line).
function M.merge(sampled, counted)
  if sampled.kernel ~= counted.kernel or (sampled.symbol and counted.symbol and sampled.symbol ~= counted.symbol) then
    return nil, string.format("the PC samples are of %s, the SASS counts of %s", tostring(sampled.kernel), tostring(counted.kernel))
  end
  local merged = {}
  for k, v in pairs(sampled) do merged[k] = v end
  merged.metrics, merged.sass = counted.metrics, counted.sass
  merged.line_info = sampled.line_info or counted.line_info
  merged.map_error = merged.line_info and nil or (sampled.map_error or counted.map_error)
  merged.time_ms = sampled.time_ms or counted.time_ms
  merged.sources = {}
  for _, p in ipairs({counted, sampled}) do for file, text in pairs(p.sources or {}) do merged.sources[file] = text end end
  merged.instructions = {}
  local index = {}
  for i, r in ipairs(sampled.instructions) do
    local copy = {["function"] = r["function"], pc = r.pc, file = r.file, line = r.line, samples = r.samples}
    merged.instructions[i] = copy
    index[tostring(r["function"]) .. "+" .. r.pc] = copy
  end
  for _, r in ipairs(counted.instructions) do
    local at = index[tostring(r["function"]) .. "+" .. r.pc]
    if at then
      if at.line and r.line and at.line ~= r.line then
        return nil, string.format("%s+0x%x is on line %d in the PC samples, %d in the SASS counts: two builds",
          tostring(r["function"]), r.pc, at.line, r.line)
      end
      at.counts, at.file, at.line = r.counts, at.file or r.file, at.line or r.line
    else
      merged.instructions[#merged.instructions + 1] = {["function"] = r["function"], pc = r.pc, file = r.file,
        line = r.line, counts = r.counts}
    end
  end
  return merged
end

-- The profile at path with the SASS counts beside it (sass_path) merged in when they are there;
-- a path to the counts alone reads them alone. Nil and why, as read.
function M.read_with_counts(path)
  local profile, why = M.read(path)
  if not profile or M.launch_path(path) ~= path then return profile, why end
  local counts_path = M.sass_path(path)
  local file = io.open(counts_path, "rb")
  if not file then return profile end
  file:close()
  local counted, problem = M.read(counts_path)
  if not counted then return nil, problem end
  local merged, mismatch = M.merge(profile, counted)
  if not merged then return nil, path .. " and " .. counts_path .. ": " .. mismatch end
  return merged
end

-- The file name a run's profile of a launch gets in a --lines folder: the kernel and a hash of the
-- launch's shape (grid, block, shared, the scalar arguments and the buffers' sizes), so the same
-- point of two runs (a base and a new build) has the same name.
function M.file_name(kernel_name, shape)
  local safe = tostring(kernel_name):gsub("[^%w_%-%.]", "_"):sub(1, 80)
  return string.format("%s-%s%s", safe, gpuexp.hash(shape):sub(1, 10), M.SUFFIX)
end

return M
