-- gpuexp.tune's compile pool (api/compile_pool.lua), with a fake compiler of known delay and no GPU:
-- the script replaces gpuexp.compile with one that sleeps 0.3 s and "caches" its result in a marker
-- file, and its run (0.05 s, the "GPU") calls it too; brute force in rounds of 4, each heard of by
-- the pool before the one measuring ends. Helpers compile ahead in parallel: at least three compiles
-- overlap in time, nearly none is left to the measuring process (the round being measured is
-- compiled before the next), and the tune's wall time is well under the serial sum. A pool that serialises (one helper at a time, or the measuring
-- process waiting for each compile before the next starts) fails the overlap.
-- Then the measuring process's own time: the wall-time breakdown (result.timing) adds up to the wall
-- time; a helper keeps two jobs in its channel, so that it starts its next compile when it ends one,
-- not when the measuring process, busy with a long configuration, reads its reply (one helper, a
-- 0.05 s compiler, 0.2 s configurations: most compiles start as the one before ends); a helper runs
-- at a lower priority than the measuring process (nice 10); and on a 2,000-configuration racing
-- tune with no compile and instant configurations, the bookkeeping (the sweeps' rows, the search,
-- the pool, the setup) costs under BOOKKEEPING_MS per configuration run.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

-- the fake compiler (loadfile(...)(delay, log file)): it sleeps, then its marker is the cache entry;
-- each compile logged as: name, start, end, which process, its niceness
ws.write("fake_compiler.lua", [[
local delay, log_name = ...
local dir = gpuexp.script_dir
gpuexp.compile = function(spec)
  local marker = dir .. "/cache_" .. spec.name
  local f = io.open(marker)
  if f then f:close(); return {} end
  local started = gpuexp.clock()
  gpuexp.sleep(delay)
  local out = io.open(marker, "w"); out:close()
  local log = io.open(dir .. "/" .. log_name, "a")
  local stat = io.open("/proc/self/stat"):read("a")
  local fields = {}
  for field in stat:match("%) (.*)"):gmatch("%S+") do fields[#fields + 1] = field end
  log:write(string.format("%s %.4f %.4f %s %s\n", spec.name, started, gpuexp.clock(),
    gpuexp._worker and gpuexp._worker.slot >= 100000 and "helper" or "measuring", fields[17]))
  log:close()
  return {}
end
]])

ws.write("pool.lua", [[
loadfile(gpuexp.script_dir .. "/fake_compiler.lua")(0.3, "compiles.txt")
local function spec(p) return {source = "// fake", name = string.format("k%d_%d.cu", p.a, p.b)} end
local r = gpuexp.tune{
  name = "pool", axes = {{"a", {1, 2, 3, 4}}, {"b", {1, 2, 3, 4}}}, strategy = "brute", quiet = true, batch = 4,
  compile = spec, compile_workers = tonumber(arg[1]) or 4,
  run = function(p)
    gpuexp.compile(spec(p))
    gpuexp.sleep(0.05)
    local s = {}
    for i = 1, 5 do s[i] = 1 + 0.1 * ((p.a - 2) ^ 2 + (p.b - 3) ^ 2) + i * 1e-4 end
    return {median_ms = gpuexp.stats(s).median, samples_ms = s}
  end,
}
print(string.format("BEST %d %d WALL %.3f JOBS %d MISSED %d WAIT %.3f", r.best.a, r.best.b, r.wall_s, r.compile.jobs,
  r.compile.missed, r.compile.wait_s))
local parts = 0
for _, key in ipairs(require("gpuexp.api.tune").TIMING) do
  assert(r.timing[key] >= -1e-9 or key == "run_s", key .. " is negative")
  parts = parts + r.timing[key]
end
print(string.format("TIMING %.4f %.4f RUNS %d GPU %.4f RUN %.4f WAITED %.4f", r.timing.wall_s, parts, r.timing.runs,
  r.timing.gpu_s, r.timing.run_s, r.timing.wait_s))
]])

local code, out, err = ws.run("--quiet --no-plan pool.lua 4")
T.eq(code, 0, "the tune with a pool runs: " .. err)
T.ok(out:find("BEST 2 3", 1, true), "and finds the best: " .. out)
T.ok(out:find("compiled ahead:", 1, true), "its printed result says what the pool did: " .. out)
local wall = tonumber(out:match("WALL (%S+)"))
local missed = tonumber(out:match("MISSED (%d+)"))

-- the compile log: every configuration compiled once; how many at once, and where
local intervals, helpers, measuring = {}, 0, 0
local helper_nice = {}
for name, a, b, where, nice in (ws.read("compiles.txt") or ""):gmatch("(%S+) (%S+) (%S+) (%S+) (%S+)\n") do
  intervals[#intervals + 1] = {tonumber(a), tonumber(b)}
  if where == "helper" then helpers = helpers + 1; helper_nice[#helper_nice + 1] = tonumber(nice) else measuring = measuring + 1 end
end
local own_nice = tonumber(io.open("/proc/self/stat"):read("a"):match("%) (.*)"):match("^" .. string.rep("%S+ ", 16) .. "(%S+)"))
for _, nice in ipairs(helper_nice) do
  T.ok(nice >= math.min(19, own_nice + 10), string.format("a helper compiles at nice %d, 10 below the measuring " ..
    "process's %d", nice, own_nice))
end
T.eq(#intervals, 16, "each of the 16 configurations compiled once")
local most = 0
for _, i in ipairs(intervals) do
  local at = 0
  for _, j in ipairs(intervals) do if j[1] <= i[1] + 1e-3 and j[2] > i[1] + 1e-3 then at = at + 1 end end
  most = math.max(most, at)
end
T.ok(most >= 3, "at least three compiles ran at once (the pool overlaps): " .. most)
T.ok(helpers == 16 and measuring == 0 and missed == 0, string.format("the helpers compiled all 16 (%d), the measuring " ..
  "process none (%d; %d missed): each round was compiled before the next", helpers, measuring, missed))
-- serial: 16 x (0.3 + 0.05) = 5.6 s; four helpers: about 16 x 0.3 / 4 = 1.2 s plus their start
T.ok(wall and wall < 3.5, "the tune's wall time is well under the serial 5.6 s: " .. tostring(wall))
-- the breakdown: its parts add up to the wall time; 16 configurations of 5 x 1.x ms samples timed;
-- the run callbacks sleep 0.05 s each (0.8 s), which their own host time holds less the samples'
-- (the fake's samples are not timed by anything: 0.8 - 0.104 s)
local timed_wall, parts, runs, gpu, run_s = out:match("TIMING (%S+) (%S+) RUNS (%d+) GPU (%S+) RUN (%S+)")
T.ok(timed_wall and math.abs(tonumber(timed_wall) - tonumber(parts)) < 1e-6, "the parts add up to the wall time: " .. out)
T.eq(tonumber(runs), 16, "16 configurations run")
T.ok(math.abs(tonumber(gpu) - 0.104024) < 1e-4, "the GPU-timed part is the 16 x 5 samples' sum, 104.024 ms: " .. gpu)
T.ok(tonumber(run_s) >= 0.69 and tonumber(run_s) < 2.5, "the run callbacks' own host time holds their sleeps: " .. run_s)
T.ok(out:find("wall time ", 1, true) and out:find("the helpers busy", 1, true), "the printed result says where the wall " ..
  "time went: " .. out)

-- no pool (compile_workers = 0): every compile in the measuring process, one after the other
os.remove(ws.dir .. "/compiles.txt")
for a = 1, 4 do for b = 1, 4 do os.remove(string.format("%s/cache_k%d_%d.cu", ws.dir, a, b)) end end
code, out, err = ws.run("--quiet --no-plan --out serial.csv pool.lua 0")
T.eq(code, 1, "without a pool, r.compile is nil: the script's print fails (" .. err .. ")")
local serial = 0
for _ in (ws.read("compiles.txt") or ""):gmatch("measuring %S+\n") do serial = serial + 1 end
T.eq(serial, 16, "without a pool the measuring process compiles all 16")

-- one helper, a 0.05 s compiler and 0.2 s configurations, six in one round: with two jobs in its
-- channel the helper starts a compile as the one before ends (3 of the 5 gaps near 0); with one,
-- only the first follows at once (the measuring process was waiting), the others wait for it to
-- finish a configuration and read the reply (0.15 s)
ws.write("depth.lua", [[
loadfile(gpuexp.script_dir .. "/fake_compiler.lua")(0.05, "depth.txt")
local function spec(p) return {source = "// fake", name = string.format("d%d.cu", p.a)} end
gpuexp.tune{name = "depth", axes = {{"a", {1, 2, 3, 4, 5, 6}}}, strategy = "brute", quiet = true, batch = 6,
  compile = spec, compile_workers = 1,
  run = function(p)
    gpuexp.compile(spec(p))
    gpuexp.sleep(0.2)
    return {median_ms = p.a, samples_ms = {p.a, p.a}}
  end}
]])
code, out, err = ws.run("--quiet --no-plan --out depth.csv depth.lua")
T.eq(code, 0, "the one-helper tune runs: " .. err)
local spans = {}
for a, b in (ws.read("depth.txt") or ""):gmatch("%S+ (%S+) (%S+) helper %S+\n") do spans[#spans + 1] = {tonumber(a), tonumber(b)} end
T.eq(#spans, 6, "the helper compiled the six")
table.sort(spans, function(x, y) return x[1] < y[1] end)
local at_once, gaps = 0, {}
for i = 2, #spans do
  local gap = spans[i][1] - spans[i - 1][2]
  gaps[#gaps + 1] = string.format("%.3f", gap)
  if gap < 0.03 then at_once = at_once + 1 end
end
T.ok(at_once >= 3, "the helper starts most compiles as the one before ends (its next job is in its channel); gaps: " ..
  table.concat(gaps, " "))

-- the bookkeeping: 2,000 configurations (racing, about 3,000 runs), nothing compiled, each run
-- instant; the sweeps' rows, the search, the pool and the setup per configuration run
local BOOKKEEPING_MS = 1.5
ws.write("book.lua", [[
local values = {}
for i = 1, 20 do values[i] = i end
local r = gpuexp.tune{name = "book", axes = {{"a", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, {"b", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
  {"c", values}}, strategy = "racing", seed = 1, max_evals = 200, quiet = true,
  run = function(p)
    local s = {}
    for i = 1, 5 do s[i] = 1e-4 * (1 + 0.03 * ((p.a - 5) ^ 2 + (p.b - 3) ^ 2) + 0.001 * p.c + 1e-4 * i) end
    return {median_ms = s[3], samples_ms = s}
  end}
local t = r.timing
print(string.format("BOOK %d %.4f %.4f %.4f %.4f %.4f", t.runs, t.wall_s, t.sweep_s, t.search_s, t.pool_s, t.setup_s))
]])
code, out, err = ws.run("--quiet --no-plan --out book.csv book.lua")
T.eq(code, 0, "the 2,000-configuration tune runs: " .. err)
local book_runs, book_wall, sweep_s, search_s, pool_s, setup_s = out:match("BOOK (%d+) (%S+) (%S+) (%S+) (%S+) (%S+)")
book_runs = tonumber(book_runs)
T.ok(book_runs and book_runs >= 2000, "every configuration ran at the first level: " .. out)
local per_run_ms = 1000 * (sweep_s + search_s + pool_s + setup_s) / book_runs
T.ok(per_run_ms < BOOKKEEPING_MS, string.format("the bookkeeping costs %.3f ms per configuration run (sweeps %.2f s, " ..
  "search %.2f s, of %.2f s of wall time for %d runs), under %g ms", per_run_ms, sweep_s, search_s, book_wall, book_runs,
  BOOKKEEPING_MS))
T.done()
