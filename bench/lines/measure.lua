-- The measurement of issue 38's line-level explainer: for each case of cases.lua (a kernel of
-- 50-500 lines and one line injected or changed), the base and new builds timed, the injection
-- sized to a slowdown drawn from 2-8% with its launch arguments (inj_mask, inj_wmask, inj_reps: no
-- compile a size; the weakest strength past the target, found by bisection over cases.STRENGTHS),
-- then the change measured again, base and new in turns; outside 1-10%, the strength is scaled by
-- what that measurement says and measured again (SIZING_TRIES in all), and a case still outside is
-- a row with in_range = false (recompute.lua leaves it out of the rates and says how many). Both
-- builds are line-profiled, the profiles written, and the lines ranked (gpuexp.line_diff): where the
-- injected line came by default (the SASS counts, with the PC samples' reasons), and by the PC
-- samples alone. One sweep point a case, supervised: a case that crashes or hangs is a row, the
-- next case runs in a fresh worker.
--
-- Every profile is taken in a fresh process of its own (a child: this script again, --inline,
-- with `child`): PC sampling and SASS metrics never share a process (on the H100, PC sampling after
-- SASS metrics gave no samples and SASS metrics after PC sampling failed:
-- bench/h100/lines_try1/probe.txt), and the worker that times the builds never profiles, so no
-- profile depends on what ran before it. Each build's PC samples and SASS counts are merged into one
-- profile (store/line_profile.lua's merge), as gpuexp lines reads a --lines folder.
--
--   gpuexp --out OUT/lines.csv --point-timeout 150 bench/lines/measure.lua OUT [COUNT [SEED]]
--   gpuexp --arch sm_90 bench/lines/measure.lua OUT [COUNT [SEED]] --check     (offline: compile, line tables)
--   gpuexp --inline measure.lua OUT COUNT SEED child CASE BUILD pc|sass ITERS MASK WMASK REPS FILE   (one profile)
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
local count = tonumber(arg[2]) or cases.COUNT
local seed = tonumber(arg[3]) or cases.SEED
local check_only = false
for _, a in ipairs(arg) do if a == "--check" then check_only = true end end
local serialized = os.getenv("LINES_SERIALIZED") == "1"
local deadline = tonumber(os.getenv("LINES_DEADLINE") or "")
local CHILD_TIMEOUT_S = 60
local RANGE = {1, 10}    -- the slowdowns (%) a case is sized into: issue 38's
local SIZING_TRIES = 4   -- measurements of a chosen strength (base and new in turns) at most
local list = cases.cases(seed, count)

-- How far a change (%) is from RANGE: 0 inside.
local function outside(change)
  if change < RANGE[1] then return RANGE[1] - change end
  if change > RANGE[2] then return change - RANGE[2] end
  return 0
end
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
  return {id = case.id, seed = seed, cause = case.cause, family = case.family, statements = case.statements,
    kind = case.kind, line = case.line, kernel_lines = lines, iters = case.iters, target_pct = target, change_pct = target,
    in_range = outside(target) == 0,
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

local function args(iters, strength)
  return {y, x, gpuexp.i32(cases.N), gpuexp.i32(iters), gpuexp.i32(strength[1]), gpuexp.i32(strength[2]),
    gpuexp.i32(strength[3])}
end
local NONE = {0, 0, 1} -- args of a launch of the base (which ignores them)

-- ---- a child: one build's profile by one collector, in a process of its own ----
if arg[4] == "child" then
  local case = assert(list[tonumber(arg[5])], "child: no case " .. tostring(arg[5]))
  local build, collector, path = arg[6], arg[7], arg[12]
  assert((build == "base" or build == "new") and (collector == "pc" or collector == "sass") and path,
    "usage: measure.lua OUT COUNT SEED child CASE base|new pc|sass ITERS MASK WMASK REPS FILE")
  if gpuexp.plan then
    io.stderr:write("no line profile: a child profiles on a GPU (this is an offline plan)\n")
    os.exit(3)
  end
  setup()
  local kernel = compile(build == "base" and case.base or case.new)
  local profile, why = kernel:line_profile{grid = dev.sm_count * 8, block = BLOCK,
    args = args(tonumber(arg[8]), {tonumber(arg[9]), tonumber(arg[10]), tonumber(arg[11])}), label = build, time = false,
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
local function profile_in_child(index, case, build, collector, iters, strength)
  local stem = string.format("%s/profiles/%s.%s", out_dir, case.id, build)
  local path = collector == "sass" and line_profile.sass_path(stem .. line_profile.SUFFIX) or stem .. line_profile.SUFFIX
  local log = stem .. "." .. collector .. ".log"
  local argv = {gpuexp.executable, "--quiet", "--inline", here .. "/measure.lua", out_dir, tostring(count), tostring(seed),
    "child", tostring(index), build, collector, tostring(iters), tostring(strength[1]), tostring(strength[2]),
    tostring(strength[3]), path}
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

-- The index in list[from..to] of the strength whose fraction is nearest `want` (by ratio), or nil.
local function nearest(list, want, from, to)
  local best, distance
  for i = from, to do
    local d = math.abs(math.log(list[i][4] / want))
    if not distance or d < distance then best, distance = i, d end
  end
  return best
end

local function run_case(p)
  local case = list[p.case]
  local row = {id = case.id, seed = seed, cause = case.cause, family = case.family, statements = case.statements,
    kind = case.kind, line = case.line}
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
  local launch = {grid = grid, block = BLOCK, args = args(iters, NONE)}
  local base_ms = time_ms(base, launch)
  for _ = 1, 6 do
    if base_ms < 0.3 and iters < 8192 then iters = iters * 2
    elseif base_ms > 1.5 and iters > 64 then iters = iters // 2
    else break end
    launch.args = args(iters, NONE)
    base_ms = time_ms(base, launch)
  end
  row.iters = iters
  -- the size: by bisection, the weakest strength past the target (or the one before it, when
  -- closer), each strength timed once against the base's median
  local calibrate_started = gpuexp.clock()
  local rng = cases.generator(seed * 7 + p.case)
  local target = rng.uniform(2, 8)
  row.target_pct = target
  base_ms = median({base_ms, time_ms(base, launch), time_ms(base, launch)})
  local strengths = cases.strengths(case)
  local quick = {}
  local function quick_change(i)
    if not quick[i] then
      launch.args = args(iters, strengths[i])
      quick[i] = (time_ms(new, launch) / base_ms - 1) * 100
    end
    return quick[i]
  end
  local low, high = 1, #strengths
  while low < high do
    local middle = (low + high) // 2
    if quick_change(middle) >= target then high = middle else low = middle + 1 end
  end
  local chosen = low
  if chosen > 1 and math.abs(quick_change(chosen - 1) - target) < math.abs(quick_change(chosen) - target) then
    chosen = chosen - 1
  end
  -- measured again, base and new in turns; outside the range, the strength scaled by what this
  -- measurement says (a change the line's presence made, not its executions, stays outside)
  local best, tried = nil, {}
  for _ = 1, SIZING_TRIES do
    tried[chosen] = true
    launch.args = args(iters, strengths[chosen])
    local b, n = interleaved(base, new, launch, 5)
    local change = (n / b - 1) * 100
    if not best or outside(change) < best.outside then
      best = {index = chosen, base_ms = b, new_ms = n, change = change, outside = outside(change)}
    end
    if best.outside == 0 then break end
    local fraction, next_index = strengths[chosen][4], nil
    if change > RANGE[2] then next_index = nearest(strengths, fraction * target / change, 1, chosen - 1)
    else next_index = nearest(strengths, change > 0.25 and fraction * target / change or fraction * 4, chosen + 1, #strengths) end
    if not next_index or tried[next_index] then break end
    chosen = next_index
  end
  local strength = strengths[best.index]
  row.mask, row.wmask, row.reps, row.fraction = strength[1], strength[2], strength[3], strength[4]
  row.sizing_tries = 0
  for _ in pairs(tried) do row.sizing_tries = row.sizing_tries + 1 end
  row.base_ms, row.new_ms, row.change_pct = best.base_ms, best.new_ms, best.change
  row.in_range = best.outside == 0
  row.calibrate_s = gpuexp.clock() - calibrate_started
  -- both builds' profiles, each in a child process: PC samples, then SASS counts (what a night
  -- pays for a regression: the four)
  local profiles, seconds = {pc = {}, sass = {}}, {pc = 0, sass = 0}
  for _, collector in ipairs({"pc", "sass"}) do
    for _, build in ipairs({"base", "new"}) do
      local profile, why, took = profile_in_child(p.case, case, build, collector, iters, strength)
      seconds[collector] = seconds[collector] + took
      if not profile then
        row[collector .. "_error"] = why
        break
      end
      if profile[collector].error then row[collector .. "_error"] = profile[collector].error end
      profile.time_ms = build == "base" and row.base_ms or row.new_ms
      profile.case = {id = case.id, cause = case.cause, line = case.line, kind = case.kind, mask = strength[1],
        wmask = strength[2], reps = strength[3], iters = iters, seed = seed, change_pct = row.change_pct}
      profiles[collector][build] = profile
      line_profile.write(collector == "sass" and line_profile.sass_path(string.format("%s/profiles/%s.%s%s", out_dir,
        case.id, build, line_profile.SUFFIX)) or string.format("%s/profiles/%s.%s%s", out_dir, case.id, build,
        line_profile.SUFFIX), profile)
    end
  end
  row.profile_s, row.sass_s = seconds.pc, seconds.sass
  local pc, sass = profiles.pc, profiles.sass
  if pc.base and pc.new then
    row.pc_s = (pc.base.pc.seconds or 0) + (pc.new.pc.seconds or 0)
    row.pc_samples_base, row.pc_samples_new, row.pc_launches = pc.base.pc.samples, pc.new.pc.samples, pc.new.pc.launches
  end
  -- each build's one profile, as gpuexp lines reads a --lines folder (the counts merged into the samples)
  local both = {}
  for _, build in ipairs({"base", "new"}) do
    both[build] = pc[build] and sass[build] and line_profile.merge(pc[build], sass[build]) or pc[build] or sass[build]
  end
  if not (both.base and both.new) then
    row.profile_error, row.case_s = row.pc_error or row.sass_error, gpuexp.clock() - started
    print(string.format("%s: %+.2f%%, no line profiles: %s", case.id, row.change_pct, tostring(row.profile_error)))
    return row
  end
  row.line_info = both.base.line_info and both.new.line_info
  local diff = gpuexp.line_diff(both.base, both.new, {measured_pct = row.change_pct})
  row.basis, row.rank, row.top = diff.basis, rank_of(diff, case), top_where(diff)
  row.top_share, row.accounted, row.sampled_pct = diff.rows[1] and diff.rows[1].share, diff.accounted, diff.samples_pct
  row.reason = diff.rows[1] and diff.rows[1].reason
  for _, alone in ipairs({{"counts", sass}, {"samples", pc}}) do
    local b, n = alone[2].base, alone[2].new
    if b and n then
      local by = gpuexp.line_diff(judge.only(b, alone[1]), judge.only(n, alone[1]), {measured_pct = row.change_pct})
      row["rank_" .. alone[1]], row["top_" .. alone[1]] = rank_of(by, case), top_where(by)
    end
  end
  row.case_s = gpuexp.clock() - started
  print(string.format("%s: %+.2f%%%s (target %.1f%%, mask %d/%d, reps %d, %d sizing), line %d ranked %s (%s), " ..
    "counts alone %s, samples alone %s; PC %.1f s, SASS %.1f s%s", case.id, row.change_pct, row.in_range and "" or
    " OUT OF RANGE", target, strength[1], strength[2], strength[3], row.sizing_tries, case.line, tostring(row.rank),
    diff.basis, tostring(row.rank_counts), tostring(row.rank_samples), row.profile_s, row.sass_s,
    (row.pc_error or row.sass_error) and ("; " .. (row.pc_error or row.sass_error)) or ""))
  return row
end

local indices = {}
for i = 1, #list do indices[i] = i end
gpuexp.mkdir(out_dir .. "/profiles")
local rows = gpuexp.sweep{
  name = "lines",
  axes = {{"case", indices}},
  columns = {"id", "seed", "cause", "family", "statements", "kernel_lines", "kind", "line", "iters", "target_pct", "mask",
    "wmask", "reps", "fraction", "sizing_tries", "base_ms", "new_ms", "change_pct", "in_range", "basis", "rank", "top",
    "top_share", "reason", "accounted", "sampled_pct", "rank_counts", "top_counts", "rank_samples", "top_samples",
    "compile_s", "calibrate_s", "profile_s", "sass_s", "pc_s", "pc_samples_base", "pc_samples_new", "pc_launches",
    "line_info", "sass_error", "pc_error", "profile_error", "skipped", "case_s"},
  setup = function()
    if not gpuexp.plan then setup() end
  end,
  run = gpuexp.plan and run_case_dry or run_case,
}
-- the run's rates (recompute.lua makes the table from the files): the cases in range
local done, top1, top3, c1, s1, out = 0, 0, 0, 0, 0, 0
for _, row in ipairs(rows or {}) do
  if row.basis and row.in_range == false then out = out + 1
  elseif row.basis then
    done = done + 1
    if row.rank == 1 then top1 = top1 + 1 end
    if type(row.rank) == "number" and row.rank <= 3 then top3 = top3 + 1 end
    if row.rank_counts == 1 then c1 = c1 + 1 end
    if row.rank_samples == 1 then s1 = s1 + 1 end
  end
end
if done > 0 then
  print(string.format("lines (seed %d): %d cases in %g-%g%% (%d out of range): top-1 %d (%.0f%%), top-3 %d (%.0f%%); " ..
    "top-1 by SASS counts alone %d, by PC samples alone %d", seed, done, RANGE[1], RANGE[2], out, top1, 100 * top1 / done,
    top3, 100 * top3 / done, c1, s1))
end
