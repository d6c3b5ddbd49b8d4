-- gpuexp ab VARIANTS SCRIPT.lua: two variants of one measurement (two commits in temporary
-- worktrees with an optional build, two binaries, two kernel sources, two compile option or define
-- sets) timed in one process, interleaved, by the script's gpuexp.ab{variant = ...}; the paired
-- verdict printed as compare prints its verdicts (table, Markdown, JSON, JUnit), with compare's
-- exit codes. The run gets the variants and options in a request file named by GPUEXP_AB, and
-- writes its result beside it.
local catalog = require("gpuexp.catalog")
local csv = require("gpuexp.store.csv")
local json = require("gpuexp.store.json")
local printers = require("gpuexp.judge.printers")
local ab = require("gpuexp.api.ab")
local worktree = require("gpuexp.commands.worktree")
local parse_args = require("gpuexp.engine.args")

local EXIT = catalog.EXIT
local M = {}

local function say(message) io.stderr:write("gpuexp ab: " .. message .. "\n") end

local function absolute(path)
  local real = gpuexp._realpath(path)
  if not real then error({usage = path .. ": no such file"}) end
  return real
end

-- ab's own value type: --a-define NAME=VALUE -> {NAME, VALUE}.
M.TYPES = {define = function(_, text, flag)
  local key, value = text:match("^([%w_]+)=(.*)$")
  if key then return {key, value} end
  return nil, flag .. " takes NAME=VALUE, got '" .. text .. "'"
end}

-- One side's variant from its fields (a_binary, a_source, a_options, a_define for A).
local function variant(fields, prefix)
  local v = {binary = fields[prefix .. "binary"] and absolute(fields[prefix .. "binary"]),
    source = fields[prefix .. "source"] and absolute(fields[prefix .. "source"])}
  if fields[prefix .. "options"] then
    v.options = {}
    for word in fields[prefix .. "options"]:gmatch("%S+") do v.options[#v.options + 1] = word end
  end
  for _, define in ipairs(fields[prefix .. "define"] or {}) do
    v.defines = v.defines or {}
    v.defines[define[1]] = define[2]
  end
  return v
end

-- The command line (the fields commands/runner.lua parsed): the variants, the commits, the run's
-- options, the output; raises {usage =}.
local function parse(fields, given)
  local o = {variants = {A = variant(fields, "a_"), B = variant(fields, "b_")},
    commits = {A = fields.a_commit, B = fields.b_commit}, build = fields.build, format = fields.format or "table",
    output = fields.output, pass = parse_args.passed(given), script = fields.script,
    script_args = fields.script_args,
    options = {mde_pct = fields.mde, budget_s = fields.budget_s, seed = fields.seed, threshold_pct = fields.threshold}}
  if (o.commits.A == nil) ~= (o.commits.B == nil) then error({usage = "give both --a-commit and --b-commit"}) end
  if o.build and not o.commits.A then error({usage = "--build is for --a-commit/--b-commit (it runs in their worktrees)"}) end
  return o
end

-- The verdict as compare prints its own, plus the same samples judged by NVBench's rule and compare's.
local function print_result(o, result)
  local judged = ab.as_comparison({result})
  local function print_to(file)
    if o.format == "markdown" then
      printers.format_markdown(judged, file)
    elseif o.format == "json" then
      printers.format_json(judged, file, {rule = "ab", gpu = result.gpu, mde_target_pct = result.mde_target_pct,
        blocks = result.summary.blocks, gpu_s = result.gpu_s, stopped_by = result.stopped_by, nvbench = result.nvbench,
        compare = result.compare})
    elseif o.format == "junit" then
      printers.format_junit(judged, file, "gpuexp ab")
    else
      printers.format_table(judged, file)
    end
    if o.format == "table" or o.format == "markdown" then
      file:write(string.format("%d blocks of %d launches a side in %.1f s (%.2f s of GPU time), stopped by %s; the " ..
        "same samples pooled: NVBench's rule says %s (%+.2f%%, threshold %.2f%%), compare's says %s (threshold %.2f%%)\n",
        result.summary.blocks, result.reps_per_block or 0, result.wall_s, result.gpu_s, result.stopped_by,
        result.nvbench.verdict, result.nvbench.change_pct, result.nvbench.threshold_pct, result.compare.verdict,
        result.compare.threshold_pct))
    end
  end
  if o.output then
    local written, problem = pcall(csv.write_printed, o.output, print_to, true)
    if not written then say(type(problem) == "table" and problem.message or tostring(problem)); return EXIT.WRITE end
  else
    print_to(io.stdout)
  end
  if result.verdict == "slower" then return EXIT.FAILED end
  return result.verdict == "undecided" and EXIT.INCOMPLETE or EXIT.OK
end

local function measure(o, work)
  -- two commits: each in a worktree of its own (built when asked), v.root the worktree
  if o.commits.A then
    local repo, why = worktree.locate(o.script)
    if not repo then say(why); return EXIT.USAGE end
    o.repo = repo
    for _, side in ipairs({"A", "B"}) do
      local commit = worktree.commit(repo, o.commits[side])
      if not commit then say("unknown commit: " .. o.commits[side]); return EXIT.USAGE end
      local tree = work .. "/tree-" .. side
      local added, problem, interrupted = worktree.add(repo, tree, commit, work, o.build,
        work .. "/build-" .. side .. ".log", worktree.BUILD_TIMEOUT_S)
      if interrupted then return interrupted end
      if not added then
        say(string.format("variant %s (%s): %s (the log: %s/build-%s.log is removed; rerun the build by hand)", side,
          o.commits[side], problem, work, side))
        return EXIT.FAILED
      end
      o.variants[side].root, o.variants[side].commit = tree, commit
    end
  end
  local request_path, result_path = work .. "/request.json", work .. "/result.json"
  csv.write_file(request_path, json.encode({variants = o.variants, options = o.options, result = result_path}))
  local argv = {"/usr/bin/env", "GPUEXP_AB=" .. request_path, gpuexp.executable or "gpuexp", "--inline", "--quiet"}
  for _, a in ipairs(o.pass) do argv[#argv + 1] = a end
  argv[#argv + 1] = "--"
  argv[#argv + 1] = o.script
  for _, a in ipairs(o.script_args) do argv[#argv + 1] = a end
  local code = gpuexp._process.run(argv, nil) -- (nil said: with one argument the binding reads its own scratch as #2)
  if code ~= 0 then
    -- a failure of gpuexp's own statistics in the run is a bug of gpuexp: 70, never 1 ("B is slower")
    local said = io.open(result_path, "r")
    local text = said and said:read("a")
    if said then said:close() end
    local ok, value = pcall(json.decode, text or "")
    if ok and type(value) == "table" and value.internal_error then
      io.stderr:write(string.format("gpuexp: internal error in ab (exit %d; please report it with the text above)\n",
        EXIT.INTERNAL))
      return EXIT.INTERNAL
    end
    return code
  end
  local file = io.open(result_path, "r")
  if not file then
    say(o.script .. " ran but never called gpuexp.ab{...}: there is no verdict (docs/howto/ab.md shows such a script)")
    return EXIT.FAILED
  end
  local text = file:read("a")
  file:close()
  local ok, result = pcall(json.decode, text)
  if not ok or type(result) ~= "table" then say("the run's result is not readable: " .. result_path); return EXIT.FAILED end
  if result.plan then return EXIT.OK end -- an offline plan: the run said what it checked
  result.summary.mde_pct = result.summary.mde_pct or math.huge
  return print_result(o, result)
end

function M.run(fields, given)
  local ok, o = pcall(parse, fields, given)
  if not ok then say(type(o) == "table" and o.usage or tostring(o)); return EXIT.USAGE end
  if not o.script then say("which script? (gpuexp ab --help)"); return EXIT.USAGE end
  gpuexp._process.init()
  local work, problem = worktree.work_folder("ab", nil, say)
  if not work then say(problem); return EXIT.FAILED end
  local measured, code = pcall(measure, o, work)
  worktree.clean(o.repo, work)
  if not measured then error(code, 0) end
  return code
end

return M
