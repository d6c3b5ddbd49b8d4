-- A kernel that spins for ever, stopped by a signal (issue 25, BAD 4): --inline, `gpuexp profile`
-- and a supervised run each end within a few seconds of SIGINT or SIGTERM (the in-process grace is
-- 1 s: the process ends and the driver ends the kernel with its context), with exit 128 + N and
-- the rows of the points before it kept; the points after it never run.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
T.require_gpu()
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read = ws.dir, ws.write, ws.read

local quote = T.quote

write("spin.lua", [[
local program = gpuexp.compile{file = "]] .. gpuexp.script_dir .. [[/../fixtures/spin.cu"}
local spin, quick = program:kernel("spin"), program:kernel("quick")
local flag
gpuexp.sweep{name = "spin", axes = {{"n", {1, 2, 3}}},
  setup = function() flag = gpuexp.device():alloc("i32", 2); flag:fill(0) end,
  run = function(p)
    if p.n == 1 then return quick:time{grid = 1, block = 1, args = {flag}} end
    io.open(gpuexp.script_dir .. "/spinning", "w"):close()
    return spin:time{grid = 1, block = 1, args = {flag}} -- never returns
  end}
]])

-- runs gpuexp in the background, signals it once the kernel spins; exit code and seconds after it
local function interrupt(arguments, signal)
  os.remove(work .. "/spinning")
  os.remove(work .. "/code")
  os.execute(string.format("cd %s && { %s %s > stdout 2> stderr & pid=$!; i=0; " ..
    "while [ ! -e spinning ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; sleep 1; " ..
    "start=$(date +%%s%%N); kill -%s $pid; wait $pid; code=$?; " ..
    "echo \"$code $(( ($(date +%%s%%N) - start) / 1000000 ))\" > code; }", quote(work), binary, arguments, signal))
  local code, milliseconds = (read("code") or ""):match("^(%d+) (%d+)")
  return tonumber(code), milliseconds and tonumber(milliseconds) / 1000, read("stderr") or ""
end

local function rows(path)
  local count = -1
  for _ in (read(path) or ""):gmatch("\n") do count = count + 1 end
  return count
end

local code, seconds, stderr = interrupt("--quiet --inline -o inline.csv spin.lua", "INT")
T.eq(code, 130, "--inline, a spinning kernel, SIGINT: " .. stderr)
T.ok(seconds < 5, string.format("ended %.2f s after the signal", seconds))
T.ok(stderr:find("did not return within the grace time", 1, true), "the watchdog said why: " .. stderr)
T.eq(rows("inline.csv"), 1, "point 1's row is kept; 3 never ran")

code, seconds, stderr = interrupt("profile --quiet -o profile.csv spin.lua", "TERM")
T.eq(code, 143, "gpuexp profile, a spinning kernel, SIGTERM: " .. stderr)
T.ok(seconds < 5, string.format("ended %.2f s after the signal", seconds))

code, seconds, stderr = interrupt("--quiet --point-timeout 600 -o supervised.csv spin.lua", "INT")
T.eq(code, 130, "a supervised run, a spinning kernel, SIGINT: " .. stderr)
T.ok(seconds < 8, string.format("ended %.2f s after the signal", seconds))
T.eq(rows("supervised.csv"), 1, "point 1's row is kept")

T.done()
