-- Line profiles from scripts (issue 38): kernel:line_profile{launch...} runs a launch under CUPTI's
-- PC sampling (or, asked, its SASS metrics: never both in one process, gx_lines.h) and gives its
-- profile (store/line_profile.lua), gpuexp.line_table
-- reads a cubin's lines without a GPU, gpuexp.line_diff ranks the lines of two profiles
-- (judge/lines.lua), and a run with --lines DIR writes the profile of every launch it times into
-- DIR (compiling its kernels with line information), so two builds' runs can be compared:
-- gpuexp lines BASE_DIR NEW_DIR.
local line_profile = require("gpuexp.store.line_profile")
local judge = require("gpuexp.judge.lines")
local option_keys = require("gpuexp.api.option_keys")

local M = {}

-- kernel:time before init.lua wraps it (its wrapper would profile the profiler's own timing)
local raw_time = gpuexp._kernel_methods.time

local LAUNCH_KEYS = {"grid", "block", "shared", "args"}
local PROFILE_KEYS = {"sass", "pc_sampling", "period", "serialized", "min_samples", "max_launches", "max_seconds",
  "metrics"}
local KNOWN = {label = true, time = true}
for _, key in ipairs(LAUNCH_KEYS) do KNOWN[key] = true end
for _, key in ipairs(PROFILE_KEYS) do KNOWN[key] = true end

-- the files a source line may come from: read for their text, nothing else
local SOURCE_SUFFIXES = {cu = true, cuh = true, h = true, hh = true, hpp = true, hxx = true, c = true, cc = true,
  cpp = true, cxx = true, inl = true, inc = true, ipp = true, tcc = true}

local function basename(path) return (tostring(path):match("([^/]+)$")) end

local function read_source(path)
  local suffix = path:match("%.([%w]+)$")
  if not suffix or not SOURCE_SUFFIXES[suffix:lower()] then return nil end
  local file = io.open(path, "rb")
  if not file then return nil end
  local size = file:seek("end")
  if not size or size > line_profile.MAX_SOURCE_BYTES then file:close() return nil end
  file:seek("set")
  local source = file:read("a")
  file:close()
  return source
end

-- The text of every file the instructions name: the program's own source for its file, else the
-- file on disk (as named, or in the folder the line table gives); a file that cannot be read, or
-- is not a C, C++ or CUDA source or header, is left out (its lines are shown without text).
local function sources_of(raw)
  local wanted = {}
  for _, r in ipairs(raw.instructions) do if r.file then wanted[r.file] = r.directory or "" end end
  local sources = {}
  for file, directory in pairs(wanted) do
    local source
    if raw.source and raw.source_name and (file == raw.source_name or basename(file) == basename(raw.source_name)) then
      source = raw.source
    else
      source = read_source(file) or (directory ~= "" and file:sub(1, 1) ~= "/" and read_source(directory .. "/" .. file))
        or nil
    end
    sources[file] = source
  end
  return sources
end

-- kernel:line_profile{grid, block, shared, args, label, time, sass, pc_sampling, period,
-- serialized, min_samples, max_launches, max_seconds, metrics} -> profile, or nil and why (an
-- offline plan, no CUPTI). time = false: no timing of the launch beside it.
function M.kernel_line_profile(kernel, spec)
  if type(spec) ~= "table" then gpuexp.error("usage", "line_profile: takes a table {grid=, block=, args=, ...}", 2) end
  option_keys.check(spec, KNOWN, "line_profile")
  local request = {}
  for _, key in ipairs(LAUNCH_KEYS) do request[key] = spec[key] end
  for _, key in ipairs(PROFILE_KEYS) do request[key] = spec[key] end
  local raw, why = gpuexp._line_profile(kernel, request)
  if not raw then return nil, why end
  local time_ms
  if spec.time ~= false then
    local launch = {reps = 20, warmup = 3}
    for _, key in ipairs(LAUNCH_KEYS) do launch[key] = spec[key] end
    time_ms = raw_time(kernel, launch).median_ms
  end
  return line_profile.build(raw, {label = spec.label, time_ms = time_ms, sources = sources_of(raw)})
end

-- gpuexp.line_table(kernel [, label]) -> the cubin's line table as a profile (static: SASS
-- instructions per line, no counts), with no GPU; or nil and why (no cubin).
function M.line_table(kernel, label)
  local raw, why = gpuexp._line_table(kernel)
  if not raw then return nil, why end
  return line_profile.build(raw, {label = label, static = true, sources = sources_of(raw)})
end

-- gpuexp.line_diff(base, new [, {measured_pct, top}]) -> the ranked lines (judge/lines.lua), with
-- its summary (what reports hold) and text.
function M.line_diff(base, new, options)
  options = options or {}
  option_keys.check(options, {measured_pct = true, top = true}, "line_diff")
  for name, profile in pairs({base = base, new = new}) do
    if type(profile) ~= "table" or profile.format ~= line_profile.FORMAT then
      gpuexp.error("usage", "line_diff: " .. name .. " is not a line profile (kernel:line_profile or gpuexp.read_line_profile)", 2)
    end
  end
  local result = judge.diff(base, new, {measured_pct = options.measured_pct})
  result.summary = judge.summary(result, options.top)
  local parts = {}
  judge.text(result.summary, {write = function(self, ...) for _, s in ipairs({...}) do parts[#parts + 1] = s end return self end})
  result.text = table.concat(parts)
  return result
end

-- ---- gpuexp --lines DIR ----

-- The launch's shape, for the profile's file name: the same point in two runs, the same name.
local function shape_of(kernel, spec)
  local parts = {kernel.name}
  for _, key in ipairs({"grid", "block", "shared"}) do
    local v = spec[key]
    parts[#parts + 1] = key .. "=" .. (type(v) == "table" and table.concat(v, "x") or tostring(v))
  end
  for i, a in ipairs(spec.args or {}) do
    local kind = type(a)
    if kind == "number" or kind == "boolean" or kind == "string" then parts[#parts + 1] = i .. "=" .. tostring(a)
    elseif kind == "userdata" or kind == "table" then
      -- a typed scalar by its value, a buffer by its element type and count (never its address)
      local ok_value, value = pcall(function() return a.value end)
      local ok_type, element = pcall(function() return a.type end)
      if ok_value and value ~= nil then
        parts[#parts + 1] = string.format("%d=%s:%s", i, ok_type and tostring(element) or "?", tostring(value))
      else
        local ok, count = pcall(function() return a.count end)
        parts[#parts + 1] = string.format("%d=%s[%s]", i, ok_type and tostring(element) or "?", ok and tostring(count) or "?")
      end
    end
  end
  return table.concat(parts, " ")
end

local written = {} -- the files this process wrote: a launch timed again is profiled once
local busy = false

-- After a timed launch of a run with --lines DIR: the launch's profile, written into DIR (once a
-- launch shape), its time the one just measured. A failure is said and the run goes on.
function M.after_timed(kernel, spec, result)
  local folder = gpuexp.run_options and gpuexp.run_options.lines
  if not folder or busy or not spec or gpuexp.plan then return end
  local counts = gpuexp.run_options.lines_only == "sass"
  local name = line_profile.file_name(kernel.name, shape_of(kernel, spec))
  local path = folder .. "/" .. name
  if counts then path = line_profile.sass_path(path) end
  if written[path] then return end
  written[path] = true
  busy = true
  local ok, profile, why = pcall(function()
    local launch = {time = false, label = gpuexp.run_options.lines_label, sass = counts, pc_sampling = not counts}
    for _, key in ipairs(LAUNCH_KEYS) do launch[key] = spec[key] end
    return M.kernel_line_profile(kernel, launch)
  end)
  busy = false
  if ok and profile then
    profile.time_ms = type(result) == "table" and (result.median_ms or result.min_ms) or nil
    profile.shape = shape_of(kernel, spec)
    local made, problem = pcall(gpuexp.mkdir, folder)
    if made then made, problem = pcall(line_profile.write, path, profile) end
    if not made then
      io.stderr:write("gpuexp --lines: ", tostring(type(problem) == "table" and problem.message or problem), "\n")
    end
  else
    io.stderr:write(string.format("gpuexp --lines: no line profile of %s: %s\n", kernel.name,
      tostring(ok and why or (type(profile) == "table" and profile.message or profile))))
  end
end

-- The command line of a --lines run's second pass (M.count_pass): the script again, in this
-- process's child, --inline, its SASS counts into the same folder (--lines-only sass) and its rows
-- into `out`; of the options as typed (worker_argv: binary, options, --, script, arguments) only
-- those that pick what runs are kept (--only, --shard, --device, --point-timeout): nothing else
-- of the run (its CSV, history, trace, counters) is written again.
local PASSED = {["--only"] = true, ["--shard"] = true, ["-d"] = true, ["--device"] = true, ["--point-timeout"] = true}
function M.count_argv(worker_argv, folder, out)
  local argv = {worker_argv[1], "--quiet", "--inline", "--lines", folder, "--lines-only", "sass", "--out", out}
  local i = 2
  while i <= #worker_argv and worker_argv[i] ~= "--" do
    local word = worker_argv[i]
    local name = word:match("^(%-%-?[%w%-]+)=")
    if name and PASSED[name] then argv[#argv + 1] = word
    elseif PASSED[word] then
      argv[#argv + 1], argv[#argv + 2] = word, worker_argv[i + 1]
      i = i + 1
    end
    i = i + 1
  end
  for j = i, #worker_argv do argv[#argv + 1] = worker_argv[j] end
  return argv
end

-- After a run with --lines DIR (its launches' PC samples written): the SASS counts of the same
-- launches, by the script run again in a process of its own (CUPTI's two collectors share none,
-- gx_lines.h), beside them (X.sass.lines.json; gpuexp lines merges the two). A failure is said;
-- the run's exit code stays, unless the second run was interrupted. run: engine/run.lua's.
function M.count_pass(run, code)
  local o = run.options
  if not o.lines or o.lines_only or run.plan or run.worker or not (code == 0 or code == 1 or code == 5) then return code end
  -- a folder of its own (mktemp -d: never a name another user could have taken first)
  local made, _, _, folder = gpuexp._process.run({"mktemp", "-d", (os.getenv("TMPDIR") or "/tmp") .. "/gpuexp-lines.XXXXXX"},
    {capture = true})
  local work = made == 0 and folder and folder:gsub("%s+$", "") or ""
  if work == "" then
    io.stderr:write("gpuexp --lines: no SASS counts: cannot make a temporary folder (mktemp -d failed); the PC samples are kept\n")
    return code
  end
  local log = work .. "/counts.log"
  local result, stop = gpuexp._process.run(M.count_argv(run.worker_argv, o.lines, work .. "/counts.csv"), {output = log})
  if stop ~= 0 then code = 128 + stop
  elseif result ~= 0 and result ~= 5 then
    local said = ((require("gpuexp.store.meta").read_all(log) or ""):match("([^\n]+)\n?$")) or ""
    io.stderr:write(string.format("gpuexp --lines: the SASS counts' run exited %d (%s); the PC samples are kept\n", result, said))
  end
  gpuexp._process.run({"rm", "-rf", "--", work})
  return code
end

-- gpuexp.compile under --lines: sources compiled with line information (-lineinfo), which does
-- not change the code, only adds the line table.
function M.compile_with_lines(compile)
  return function(spec)
    if type(spec) == "table" and (spec.source or spec.file) then
      local has = false
      local copy = {}
      for k, v in pairs(spec) do copy[k] = v end
      local options = {}
      for i, o in ipairs(type(spec.options) == "table" and spec.options or {}) do
        options[i] = o
        if o == "-lineinfo" or o == "--generate-line-info" or o == "-G" or o == "--device-debug" then has = true end
      end
      if not has and (spec.options == nil or type(spec.options) == "table") then
        options[#options + 1] = "-lineinfo"
        copy.options = options
        return compile(copy)
      end
    end
    return compile(spec)
  end
end

return M
