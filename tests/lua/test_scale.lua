-- The run engine's cost is linear in the points (issue 18): a supervised sweep, an inline one,
-- --resume, compare and merge cost the same per point or row at 5k and at 20k (a cost that grows
-- with the square of the points, as a scan per row did, costs 4x per point at 20k; the test allows
-- 2x). Costs are CPU seconds (a busy machine stretches wall time, not the work done), the least
-- of three runs of each;
-- bench/scale.sh measures the same up to 100k points, with memory.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local run, write, read = ws.run, ws.write, ws.read

write("points.lua", [[
local n = tonumber(os.getenv("N"))
local values = {}
for i = 1, n do values[i] = i end
gpuexp.sweep{name = "points", axes = {{"i", values}},
  run = function(p) return {median_ms = 1 + (p.i % 7) * 0.01, noise_pct = 0.5, samples = 100} end}
]])

-- The CPU time (user + system, seconds) a run of the command and its children took, from the
-- shell's `times`: the work done, which another build beside the test does not lengthen as it does
-- wall time (waits for a core). The least of three runs; every run must succeed.
local function cpu_seconds(arguments, environment)
  local shell = io.popen(string.format("cd %s && %s %s %s > stdout 2> stderr; echo \"code $?\"; times", ws.dir,
    environment or "", binary, arguments))
  local text = shell:read("a")
  shell:close()
  local code = tonumber(text:match("code (%d+)"))
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = line end
  local um, us, sm, ss = lines[#lines]:match("(%d+)m([%d.]+)s%s+(%d+)m([%d.]+)s")
  assert(um, "times printed: " .. text)
  return code, um * 60 + us + sm * 60 + ss
end

local function best(arguments, environment, before)
  local fastest = math.huge
  for _ = 1, 3 do
    if before then before() end
    local code, took = cpu_seconds(arguments, environment)
    T.eq(code, 0, arguments .. ": " .. (read("stderr") or ""))
    fastest = math.min(fastest, took)
  end
  return fastest
end

local per_point = {}
for _, n in ipairs({5000, 20000}) do
  local env = "N=" .. n
  local out = string.format("p%d.csv", n)
  local cost = {}
  cost.supervised = best("--arch sm_90 --quiet -o " .. out .. " points.lua", env,
    function() os.remove(ws.dir .. "/" .. out) end)
  cost.inline = best("--arch sm_90 --quiet --inline -o " .. out .. " points.lua", env,
    function() os.remove(ws.dir .. "/" .. out) end)
  -- one point missing in the middle of the CSV: --resume runs it alone
  local whole = read(out)
  local cut = whole:gsub("\n" .. (n // 2) .. ",[^\n]*", "", 1)
  T.ok(#cut < #whole, "a row was cut out")
  cost.resume = best("--arch sm_90 --quiet --resume -o " .. out .. " points.lua", env, function() write(out, cut) end)
  T.eq(read(out), whole, "--resume put back exactly the missing row, in point order")
  cost.compare = best(string.format("compare %s %s", out, out), nil)
  for s = 0, 1 do T.eq(run(string.format("--arch sm_90 --quiet --inline --shard %d/2 -o %s points.lua", s, out), env), 0) end
  local stem = out:gsub("%.csv$", "")
  cost.merge = best(string.format("merge m%d.csv %s.shard-0-of-2.csv %s.shard-1-of-2.csv", n, stem, stem), nil)
  T.eq(read(string.format("m%d.csv", n)), whole, "the merged shards are the whole run")
  -- resuming one point costs less than running every point, even inline (at 5k the new worker
  -- process is a large part of either)
  if n == 20000 then
    T.ok(cost.resume < cost.inline, string.format("%d points: resuming one point took %.3f s, running all inline %.3f s",
      n, cost.resume, cost.inline))
  end
  for what, seconds in pairs(cost) do cost[what] = seconds / n * 1e6 end
  per_point[n] = cost
end
for what, small in pairs(per_point[5000]) do
  local large = per_point[20000][what]
  io.stderr:write(string.format("%-10s %7.1f us (CPU) a point at 5k, %7.1f at 20k\n", what, small, large))
  -- linear: about the same (caches make a large run's rows a little dearer); quadratic: 4x
  T.ok(large <= 2 * small, string.format("%s: %.1f us a point at 20k, %.1f at 5k (linear: about the same)", what,
    large, small))
end
T.done()
