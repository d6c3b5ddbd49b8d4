-- The referee of the comparison with Kernel Tuner (issue 37, item 5): every winner reported on
-- Kernel Tuner's convolution, by gpuexp (OUTDIR/conv/racing.json, model.json, and any other
-- OUTDIR/conv/*.json a run added) and by Kernel Tuner (OUTDIR/kernel_tuner/*.json, from
-- bench/tune/kernel_tuner_convolution.py), re-measured in one run by one method: the study's full
-- measurement (bench/tune/study.lua's policy), five rounds over all winners in turn, each winner's
-- time the median of its rounds' medians; its regret against brute force's best measured the same
-- way. Prints Markdown and writes OUTDIR/comparison.md.
--   gpuexp --quiet bench/tune/referee.lua OUTDIR
local json = require("gpuexp.store.json")
local OUTDIR = assert(arg[1], "usage: gpuexp bench/tune/referee.lua OUTDIR")
local space = dofile(gpuexp.script_dir .. "/convolution.lua").new()
dofile(gpuexp.script_dir .. "/policy.lua") -- the study's full measurement
local ROUNDS = 5

local function read(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local value = json.decode(f:read("a"))
  f:close()
  return value
end
local function list(folder)
  local names, pipe = {}, io.popen("ls '" .. folder:gsub("'", "'\\''") .. "' 2>/dev/null")
  for name in pipe:lines() do if name:match("%.json$") then names[#names + 1] = name end end
  pipe:close()
  table.sort(names)
  return names
end
local function whole(point)
  local p = {}
  for k, v in pairs(point) do p[k] = math.tointeger(v) or v end
  return p
end
local function key(p)
  local cells = {}
  for i, axis in ipairs(space.axes) do cells[i] = axis[1] .. "=" .. tostring(p[axis[1]]) end
  return table.concat(cells, " ")
end

local brute = assert(read(OUTDIR .. "/conv/brute.json"), "no brute-force record: run bench/tune/run.sh first")
local entries = {{tool = "gpuexp", strategy = "brute", seed = "-", wall_s = brute.wall_s, gpu_s = brute.gpu_s,
  best = whole(brute.best)}}
for _, name in ipairs(list(OUTDIR .. "/conv")) do
  local r = name ~= "brute.json" and read(OUTDIR .. "/conv/" .. name)
  if r and r.best then
    entries[#entries + 1] = {tool = "gpuexp", strategy = r.strategy, seed = r.seed, wall_s = r.wall_s, gpu_s = r.gpu_s,
      best = whole(r.best), bound = r.regret and r.regret.bound}
  end
end
for _, name in ipairs(list(OUTDIR .. "/kernel_tuner")) do
  local r = read(OUTDIR .. "/kernel_tuner/" .. name)
  if r and r.best then
    entries[#entries + 1] = {tool = "Kernel Tuner " .. tostring(r.version), strategy = r.strategy, seed = r.seed,
      wall_s = r.wall_s, gpu_s = r.gpu_s, best = whole(r.best)}
  end
end

-- every distinct winner, measured in ROUNDS rounds, in turn
local winners, order = {}, {}
for _, e in ipairs(entries) do
  local k = key(e.best)
  if not winners[k] then winners[k] = {point = e.best, medians = {}}; order[#order + 1] = k end
end
space.setup()
for _ = 1, ROUNDS do
  for _, k in ipairs(order) do
    local ok, row = pcall(space.run, winners[k].point)
    if ok and row.median_ms then table.insert(winners[k].medians, row.median_ms) else winners[k].failed = true end
  end
end
for _, k in ipairs(order) do
  local w = winners[k]
  w.ms = #w.medians > 0 and gpuexp.stats(w.medians).median or nil
end
local reference = winners[key(entries[1].best)].ms

local lines = {}
local function say(text) print(text); lines[#lines + 1] = text end
say(string.format("# Kernel Tuner's convolution: every reported winner re-measured (%d rounds, one run, %s)", ROUNDS,
  gpuexp.device().facts.name))
say("")
say("| tool | strategy | seed | wall s | GPU s | winner | referee ms | regret vs brute force's best | its regret bound |")
say("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |")
for _, e in ipairs(entries) do
  local w = winners[key(e.best)]
  say(string.format("| %s | %s | %s | %.1f | %.2f | %s | %s | %s | %s |", e.tool, e.strategy, tostring(e.seed),
    e.wall_s or 0, e.gpu_s or 0, key(e.best), w.ms and string.format("%.4f", w.ms) or "failed",
    w.ms and reference and string.format("%+.2f%%", 100 * (w.ms / reference - 1)) or "",
    type(e.bound) == "number" and string.format("+%.2f%%", 100 * e.bound) or tostring(e.bound or "")))
end
local file = io.open(OUTDIR .. "/comparison.md", "w")
if file then file:write(table.concat(lines, "\n"), "\n"); file:close() end
