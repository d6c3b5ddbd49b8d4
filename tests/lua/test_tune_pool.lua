-- gpuexp.tune's compile pool (api/compile_pool.lua), with a fake compiler of known delay and no GPU:
-- the script replaces gpuexp.compile with one that sleeps 0.3 s and "caches" its result in a marker
-- file, and its run (0.05 s, the "GPU") calls it too; brute force in rounds of 4, each heard of by
-- the pool before the one measuring ends. Helpers compile ahead in parallel: at least three compiles
-- overlap in time, nearly none is left to the measuring process (the round being measured is
-- compiled before the next), and the tune's wall time is well under the serial sum. A pool that serialises (one helper at a time, or the measuring
-- process waiting for each compile before the next starts) fails the overlap.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)

ws.write("pool.lua", [[
local dir = gpuexp.script_dir
gpuexp.compile = function(spec) -- the fake compiler: 0.3 s, then its marker is the cache entry
  local marker = dir .. "/cache_" .. spec.name
  local f = io.open(marker)
  if f then f:close(); return {} end
  local started = gpuexp.clock()
  gpuexp.sleep(0.3)
  local out = io.open(marker, "w"); out:close()
  local log = io.open(dir .. "/compiles.txt", "a")
  log:write(string.format("%s %.4f %.4f %s\n", spec.name, started, gpuexp.clock(),
    gpuexp._worker and gpuexp._worker.slot >= 100000 and "helper" or "measuring"))
  log:close()
  return {}
end
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
]])

local code, out, err = ws.run("--quiet --no-plan pool.lua 4")
T.eq(code, 0, "the tune with a pool runs: " .. err)
T.ok(out:find("BEST 2 3", 1, true), "and finds the best: " .. out)
T.ok(out:find("compiled ahead:", 1, true), "its printed result says what the pool did: " .. out)
local wall = tonumber(out:match("WALL (%S+)"))
local missed = tonumber(out:match("MISSED (%d+)"))

-- the compile log: every configuration compiled once; how many at once, and where
local intervals, helpers, measuring = {}, 0, 0
for name, a, b, where in (ws.read("compiles.txt") or ""):gmatch("(%S+) (%S+) (%S+) (%S+)\n") do
  intervals[#intervals + 1] = {tonumber(a), tonumber(b)}
  if where == "helper" then helpers = helpers + 1 else measuring = measuring + 1 end
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

-- no pool (compile_workers = 0): every compile in the measuring process, one after the other
os.remove(ws.dir .. "/compiles.txt")
for a = 1, 4 do for b = 1, 4 do os.remove(string.format("%s/cache_k%d_%d.cu", ws.dir, a, b)) end end
code, out, err = ws.run("--quiet --no-plan --out serial.csv pool.lua 0")
T.eq(code, 1, "without a pool, r.compile is nil: the script's print fails (" .. err .. ")")
local serial = 0
for _ in (ws.read("compiles.txt") or ""):gmatch("measuring\n") do serial = serial + 1 end
T.eq(serial, 16, "without a pool the measuring process compiles all 16")
T.done()
