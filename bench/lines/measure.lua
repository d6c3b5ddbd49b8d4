-- The measurement of issue 38's line-level explainer: for each case of cases.lua (a kernel of
-- 50-500 lines and one line injected or changed), the base and new builds timed, the injection
-- sized to a 1-10% slowdown with its launch arguments (inj_mask, inj_reps: no compile a size),
-- both builds line-profiled, the profiles written, and the lines ranked (gpuexp.line_diff): where
-- the injected line came, with PC samples and with the SASS counts alone. One sweep point a case,
-- supervised: a case that crashes or hangs is a row, the next case runs in a fresh worker.
--
-- Every profile is taken in a fresh process of its own (a child: this script again, --inline,
-- with `child`): PC sampling and SASS metrics never share a process (on the H100, PC sampling after
-- SASS metrics gave no samples and SASS metrics after PC sampling failed:
-- bench/h100/lines_try1/probe.txt), and the worker that times the builds never profiles, so no
-- profile depends on what ran before it. The PC profiles come first; the SASS counts follow while
-- the time left allows them for every remaining case (LINES_SASS=0: never).
--
--   gpuexp --out OUT/lines.csv --point-timeout 150 bench/lines/measure.lua OUT [COUNT [SEED]]
--   gpuexp --arch sm_90 bench/lines/measure.lua OUT [COUNT [SEED]] --check     (offline: compile, line tables)
--   gpuexp --inline measure.lua OUT COUNT SEED child CASE BUILD pc|sass ITERS MASK REPS FILE   (one profile)
--
-- LINES_SERIALIZED=1 samples PCs in CUPTI's kernel-serialized mode (else continuous);
-- LINES_DEADLINE=EPOCH_SECONDS: cases starting after it are skipped (the GPU script's budget).
-- OUT/profiles/<case>.{base,new}.lines.json hold the PC profiles, <case>.{base,new}.sass.lines.json
-- the SASS counts, <case>.<build>.<collector>.log what each child said; recompute.lua makes the table.
local here = gpuexp.script_dir
local cases = dofile(here .. "/cases.lua")
local line_profile = require("gpuexp.store.line_profile")
local judge = require("gpuexp.judge.lines")

local out_dir = assert(arg[1], "usage: measure.lua OUT [COUNT [SEED]] [--check]")
local count = tonumber(arg[2]) or 33
local seed = tonumber(arg[3]) or cases.SEED
local check_only = false
for _, a in ipairs(arg) do if a == "--check" then check_only = true end end
local serialized = os.getenv("LINES_SERIALIZED") == "1"
local deadline = tonumber(os.getenv("LINES_DEADLINE") or "")
local with_sass = os.getenv("LINES_SASS") ~= "0"
local CHILD_TIMEOUT_S = 60
local list = cases.cases(seed, count)
local SOURCE_NAME = "case_kernel.cu"

local function compile(source)
  return gpuexp.compile{source = source, name = SOURCE_NAME, options = {"-lineinfo"}}:kernel("case_kernel")
end

-- The rank of the case's line among a diff's rows (nil: not among them).
local function rank_of(diff, case) return judge.rank_of(diff, SOURCE_NAME, case.line) end

local function top_where(diff)
  local row = diff.rows[1]
  if not row then return "" end
  return judge.where(row)
end


-- ---- offline: each case compiled, its line found in the new build's line table ----
if check_only then
  local failures = 0
  print(string.format("%-22s %-8s %5s %6s %5s %8s  %s", "case", "family", "lines", "line", "sass", "compile", "injected"))
  for _, case in ipairs(list) do
    local started = gpuexp.clock()
    local base, new = compile(case.base), compile(case.new)
    local seconds = gpuexp.clock() - started
    local table_new = assert(gpuexp.line_table(new, "new"))
    local on_line = 0
    for _, r in ipairs(table_new.instructions) do if r.line == case.line then on_line = on_line + 1 end end
    local _, lines = case.new:gsub("\n", "")
    print(string.format("%-22s %-8s %5d %6d %5d %7.2fs  %s", case.id, case.family, lines, case.line, on_line, seconds,
      case.line_text:sub(1, 70)))
    if on_line == 0 or lines < 50 or lines > 500 then failures = failures + 1 end
    assert(gpuexp.line_table(base, "base"))
  end
  print(failures == 0 and "every case builds, has 50-500 lines and code on its line" or (failures .. " case(s) FAILED"))
  os.exit(failures == 0 and 0 or 1)
end

-- ---- the dry mode (an offline plan): invented profiles of the real kernels (synthetic.lua) ----
local function run_case_dry(p)
  local case = list[p.case]
  local synthetic = dofile(here .. "/synthetic.lua")
  local rng = cases.generator(seed * 7 + p.case)
  local target = rng.uniform(2, 8)
  local base, new = gpuexp.line_table(compile(case.base), "base"), gpuexp.line_table(compile(case.new), "new")
  local body_first = case.first
  local loop_base = {body_first, body_first + case.statements - 1}
  local loop_new = {body_first, body_first + case.statements - (case.kind == "added" and 0 or 1)}
  -- the cost of the new build's injected line that slows the kernel by the target
  local function executions(profile, loop)
    local total, on = 0, 0
    for _, r in ipairs(profile.instructions) do
      local e = (r.line and r.line >= loop[1] and r.line <= loop[2]) and case.iters or 1
      total = total + e
      if r.line == case.line then on = on + e end
    end
    return total, on
  end
  local base_total = executions(base, loop_base)
  local new_total, on_line = executions(new, loop_new)
  local cost = math.max(1, (base_total * (1 + target / 100) - new_total + on_line) / math.max(on_line, 1))
  local per_cost = 2e5 / (base_total * 132 * 64)
  synthetic.fill(base, rng, case.iters, loop_base, nil, per_cost)
  synthetic.fill(new, rng, case.iters, loop_new, {line = case.line, cost = cost}, per_cost)
  gpuexp.mkdir(out_dir .. "/profiles")
  for name, profile in pairs({base = base, new = new}) do
    line_profile.write(string.format("%s/profiles/%s.%s%s", out_dir, case.id, name, line_profile.SUFFIX), profile)
  end
  local diff = gpuexp.line_diff(base, new, {measured_pct = target})
  local _, lines = case.new:gsub("\n", "")
  return {id = case.id, cause = case.cause, family = case.family, statements = case.statements, kind = case.kind,
    line = case.line, kernel_lines = lines, iters = case.iters, target_pct = target, change_pct = target,
    basis = diff.basis, rank = rank_of(diff, case), top = top_where(diff), profile_s = 0, skipped = "synthetic (dry mode)"}
end

-- ---- on the GPU ----
local dev, x, y
local BLOCK = cases.BLOCK

-- the device and the launch's buffers, alike in the worker and in every child
local function setup()
  dev = gpuexp.device()
  x = dev:alloc("f32", cases.N):random{seed = 38, min = -1, max = 1}
  y = dev:alloc("f32", cases.N):fill(0)
end

local function args(iters, mask, reps)
  return {y, x, gpuexp.i32(cases.N), gpuexp.i32(iters), gpuexp.i32(mask), gpuexp.i32(reps)}
end

-- ---- a child: one build's profile by one collector, in a process of its own ----
if arg[4] == "child" then
  local case = assert(list[tonumber(arg[5])], "child: no case " .. tostring(arg[5]))
  local build, collector, path = arg[6], arg[7], arg[11]
  assert((build == "base" or build == "new") and (collector == "pc" or collector == "sass") and path,
    "usage: measure.lua OUT COUNT SEED child CASE base|new pc|sass ITERS MASK REPS FILE")
  if gpuexp.plan then
    io.stderr:write("no line profile: a child profiles on a GPU (this is an offline plan)\n")
    os.exit(3)
  end
  setup()
  local kernel = compile(build == "base" and case.base or case.new)
  local profile, why = kernel:line_profile{grid = dev.sm_count * 8, block = BLOCK,
    args = args(tonumber(arg[8]), tonumber(arg[9]), tonumber(arg[10])), label = build, time = false,
    pc_sampling = collector == "pc", sass = collector == "sass", serialized = serialized}
  if not profile then
    io.stderr:write("no line profile: ", tostring(why), "\n")
    os.exit(3)
  end
  line_profile.write(path, profile)
  local stage = profile[collector]
  print(string.format("%s %s %s: %d instructions, %s, %.2f s%s", case.id, build, collector, #profile.instructions,
    stage.done and "done" or "not done", stage.seconds or 0, stage.error and (": " .. stage.error) or ""))
  os.exit(0)
end

-- A profile from a child process (measure.lua again, --inline): the profile, or nil and why; and
-- the child's wall time.
local function profile_in_child(index, case, build, collector, iters, mask, reps)
  local stem = string.format("%s/profiles/%s.%s", out_dir, case.id, build)
  local path = stem .. (collector == "sass" and ".sass" or "") .. line_profile.SUFFIX
  local log = stem .. "." .. collector .. ".log"
  local argv = {gpuexp.executable, "--quiet", "--inline", here .. "/measure.lua", out_dir, tostring(count), tostring(seed),
    "child", tostring(index), build, collector, tostring(iters), tostring(mask), tostring(reps), path}
  local started = gpuexp.clock()
  local code, stop, timed_out = gpuexp._process.run(argv, {output = log, timeout_s = CHILD_TIMEOUT_S})
  local seconds = gpuexp.clock() - started
  if stop ~= 0 then error("interrupted", 0) end
  if timed_out or code ~= 0 then
    local said = ((require("gpuexp.store.meta").read_all(log) or ""):match("([^\n]+)\n?$")) or ""
    return nil, string.format("the %s %s child %s (%s)", build, collector,
      timed_out and string.format("passed %d s", CHILD_TIMEOUT_S) or ("exited " .. code), said), seconds
  end
  local profile, why = line_profile.read(path)
  return profile, why, seconds
end

local function time_ms(kernel, launch, reps)
  return kernel:time{grid = launch.grid, block = launch.block, args = launch.args, reps = reps or 20, warmup = 3}.median_ms
end

local function median(values)
  local sorted = {table.unpack(values)}
  table.sort(sorted)
  local n = #sorted
  return n % 2 == 1 and sorted[(n + 1) // 2] or (sorted[n // 2] + sorted[n // 2 + 1]) / 2
end

-- base and new timed in turns, `rounds` each: their medians
local function interleaved(base, new, launch, rounds)
  local b, n = {}, {}
  for r = 1, rounds do
    b[r] = time_ms(base, launch)
    n[r] = time_ms(new, launch)
  end
  return median(b), median(n)
end

-- this worker's cases so far: what the PC part and the SASS part took (the SASS counts are
-- taken while every remaining case could still take them before the deadline)
local spent = {cases = 0, pc = 0, sass_cases = 0, sass = 0}
local function sass_fits(index)
  if not with_sass then return false, "LINES_SASS=0" end
  if not deadline or spent.cases == 0 or spent.sass_cases == 0 then return true end
  local per_case, per_sass = spent.pc / spent.cases, spent.sass / spent.sass_cases
  if os.time() + per_sass + (#list - index) * (per_case + per_sass) <= deadline then return true end
  return false, "not taken: the remaining cases' PC profiles come first within the time budget"
end

local function run_case(p)
  local case = list[p.case]
  local row = {id = case.id, cause = case.cause, family = case.family, statements = case.statements, kind = case.kind,
    line = case.line}
  local _, lines = case.new:gsub("\n", "")
  row.kernel_lines = lines
  if deadline and os.time() > deadline then
    row.skipped = "the GPU script's time budget was spent"
    return row
  end
  local started = gpuexp.clock()
  local base, new = compile(case.base), compile(case.new)
  row.compile_s = gpuexp.clock() - started
  local grid = dev.sm_count * 8
  -- iterations for 0.3-1.5 ms of the base
  local iters = case.iters
  local launch = {grid = grid, block = BLOCK, args = args(iters, 0, 1)}
  local base_ms = time_ms(base, launch)
  for _ = 1, 6 do
    if base_ms < 0.3 and iters < 8192 then iters = iters * 2
    elseif base_ms > 1.5 and iters > 64 then iters = iters // 2
    else break end
    launch.args = args(iters, 0, 1)
    base_ms = time_ms(base, launch)
  end
  row.iters = iters
  -- the size: the weakest strength past the target, or the one before it when that is closer
  local calibrate_started = gpuexp.clock()
  local rng = cases.generator(seed * 7 + p.case)
  local target = rng.uniform(2, 8)
  row.target_pct = target
  base_ms = median({base_ms, time_ms(base, launch), time_ms(base, launch)})
  local chosen, chosen_change, previous, previous_change
  for _, strength in ipairs(cases.STRENGTHS) do
    if case.kind == "changed" and strength[2] > 1 then break end
    launch.args = args(iters, strength[1], strength[2])
    local change = (time_ms(new, launch) / base_ms - 1) * 100
    if change >= target then
      chosen, chosen_change = strength, change
      if previous and math.abs(previous_change - target) < math.abs(change - target) then
        chosen, chosen_change = previous, previous_change
      end
      break
    end
    previous, previous_change = strength, change
    chosen, chosen_change = strength, change -- the strongest tried, when none reaches the target
  end
  row.mask, row.reps = chosen[1], chosen[2]
  launch.args = args(iters, chosen[1], chosen[2])
  row.calibrate_s = gpuexp.clock() - calibrate_started
  row.base_ms, row.new_ms = interleaved(base, new, launch, 5)
  row.change_pct = (row.new_ms / row.base_ms - 1) * 100
  -- the PC profiles, each in a child process: the pair's cost is what a night pays for a regression
  local profiles, seconds = {}, {}
  for _, build in ipairs({"base", "new"}) do
    local profile, why, took = profile_in_child(p.case, case, build, "pc", iters, chosen[1], chosen[2])
    seconds[build] = took
    if not profile then
      row.profile_error, row.case_s = why, gpuexp.clock() - started
      print(string.format("%s: %+.2f%%, no line profile: %s", case.id, row.change_pct, why))
      return row
    end
    profile.time_ms = build == "base" and row.base_ms or row.new_ms
    profiles[build] = profile
  end
  row.profile_s = seconds.base + seconds.new
  local base_profile, new_profile = profiles.base, profiles.new
  for name, profile in pairs(profiles) do
    profile.case = {id = case.id, cause = case.cause, line = case.line, kind = case.kind, mask = chosen[1], reps = chosen[2],
      iters = iters, seed = seed, change_pct = row.change_pct}
    line_profile.write(string.format("%s/profiles/%s.%s%s", out_dir, case.id, name, line_profile.SUFFIX), profile)
  end
  row.pc_s = (base_profile.pc.seconds or 0) + (new_profile.pc.seconds or 0)
  row.pc_samples_base, row.pc_samples_new = base_profile.pc.samples, new_profile.pc.samples
  row.pc_launches = new_profile.pc.launches
  row.pc_error = base_profile.pc.error or new_profile.pc.error
  row.line_info = base_profile.line_info and new_profile.line_info
  local diff = gpuexp.line_diff(base_profile, new_profile, {measured_pct = row.change_pct})
  row.basis = diff.basis
  row.rank = rank_of(diff, case)
  row.top = top_where(diff)
  row.top_share = diff.rows[1] and diff.rows[1].share
  row.accounted = diff.accounted
  row.sampled_pct = diff.total_pct
  spent.cases, spent.pc = spent.cases + 1, spent.pc + (gpuexp.clock() - started)
  -- the SASS counts alone, each build in a child process of its own
  local fits, why_not = sass_fits(p.case)
  if fits then
    local sass_started, counted = gpuexp.clock(), {}
    for _, build in ipairs({"base", "new"}) do
      local profile, why = profile_in_child(p.case, case, build, "sass", iters, chosen[1], chosen[2])
      if not profile then row.sass_error = why break end
      if profile.sass.error then row.sass_error = profile.sass.error end
      counted[build] = profile
    end
    row.sass_s = gpuexp.clock() - sass_started
    spent.sass_cases, spent.sass = spent.sass_cases + 1, spent.sass + row.sass_s
    if counted.base and counted.new then
      local by_counts = gpuexp.line_diff(counted.base, counted.new, {measured_pct = row.change_pct})
      row.rank_counts = rank_of(by_counts, case)
      row.top_counts = top_where(by_counts)
    end
  else
    row.sass_error = why_not
  end
  row.case_s = gpuexp.clock() - started
  print(string.format("%s: %+.2f%% (target %.1f%%, mask %d, reps %d), line %d ranked %s (%s), counts alone %s; " ..
    "profiles %.1f s, SASS %.1f s%s", case.id, row.change_pct, target, chosen[1], chosen[2], case.line, tostring(row.rank),
    diff.basis, tostring(row.rank_counts), row.profile_s, row.sass_s or 0,
    (row.pc_error or row.sass_error) and ("; " .. (row.pc_error or row.sass_error)) or ""))
  return row
end

local indices = {}
for i = 1, #list do indices[i] = i end
gpuexp.mkdir(out_dir .. "/profiles")
local rows = gpuexp.sweep{
  name = "lines",
  axes = {{"case", indices}},
  columns = {"id", "cause", "family", "statements", "kernel_lines", "kind", "line", "iters", "target_pct", "mask", "reps",
    "base_ms", "new_ms", "change_pct", "basis", "rank", "top", "top_share", "accounted", "sampled_pct", "rank_counts",
    "top_counts", "compile_s", "calibrate_s", "profile_s", "sass_s", "pc_s", "pc_samples_base", "pc_samples_new",
    "pc_launches", "line_info", "sass_error", "pc_error", "profile_error", "skipped", "case_s"},
  setup = function()
    if not gpuexp.plan then setup() end
  end,
  run = gpuexp.plan and run_case_dry or run_case,
}
-- the table of this run (recompute.lua makes it again from the files)
local done, top1, top3, top1_counts, top3_counts = 0, 0, 0, 0, 0
for _, row in ipairs(rows or {}) do
  if type(row.rank) == "number" or row.basis then
    done = done + 1
    if row.rank == 1 then top1 = top1 + 1 end
    if type(row.rank) == "number" and row.rank <= 3 then top3 = top3 + 1 end
    if row.rank_counts == 1 then top1_counts = top1_counts + 1 end
    if type(row.rank_counts) == "number" and row.rank_counts <= 3 then top3_counts = top3_counts + 1 end
  end
end
if done > 0 then
  print(string.format("lines: %d cases: top-1 %d (%.0f%%), top-3 %d (%.0f%%); SASS counts alone: top-1 %d, top-3 %d", done,
    top1, 100 * top1 / done, top3, 100 * top3 / done, top1_counts, top3_counts))
end
