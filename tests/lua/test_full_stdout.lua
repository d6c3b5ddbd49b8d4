-- Reports to the standard output on a full disk (issue 34, BAD 6): every command's standard output
-- is checked as it exits (src/core/gx_output.c, registered once in main), so a report lost to
-- /dev/full or a closed stream is exit 7 with a message, never 0 ("clean") or 1 ("a regression").
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, run = ws.dir, ws.write, ws.run

-- the command with its standard output on /dev/full -> exit code, stderr
local function full(arguments, environment)
  local _, _, code = os.execute(string.format("cd %s && %s %s %s > /dev/full 2> stderr", work, environment or "",
    binary, arguments))
  return code, ws.read("stderr") or ""
end
local function lost(arguments, what, environment)
  local code, stderr = full(arguments, environment)
  T.eq(code, 7, what .. " on a full disk: " .. stderr)
  T.ok(stderr:find("gpuexp: cannot write the standard output: ", 1, true), what .. " says so: " .. stderr)
end

write("base.csv", "p,median_ms\na,1.0\nb,2.0\n")
write("same.csv", "p,median_ms\na,1.0\nb,2.0\n")
write("slow.csv", "p,median_ms\na,1.5\nb,2.0\n")
write("k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1, 2}}}, run = function(p) return {median_ms = p.x} end}')
T.eq(run("--arch sm_90 --quiet -o r.csv k.lua"), 0, "a run to record")
T.eq(run("history --history h.sqlite record r.csv"), 0, "recorded")

-- compare in every format: clean (was 0) and a regression (was 1)
for _, format in ipairs({"", "--markdown", "--json", "--junit"}) do
  T.eq(run("compare --axes p " .. format .. " base.csv same.csv"), 0, "compare " .. format .. " to a file works")
  lost("compare --axes p " .. format .. " base.csv same.csv", "compare " .. format .. " (clean)")
  lost("compare --axes p " .. format .. " base.csv slow.csv", "compare " .. format .. " (a regression)")
end
local code, stderr = full("compare --axes p -o /dev/stdout base.csv slow.csv")
T.ok(code == 7 and stderr:find("cannot write /dev/stdout: No space left on device", 1, true), "-o /dev/stdout: " .. stderr)
-- history list and show, help in each form, the version, a C command
lost("history --history h.sqlite list", "history list")
lost("history --history h.sqlite show 1", "history show")
lost("help", "help")
lost("help compare", "help compare")
lost("compare --help", "compare --help")
lost("--help", "--help")
lost("--version", "--version")
lost("occupancy --arch sm_90 --block 256 --registers 32", "occupancy")
-- the nightly's summary: a clean night and a regression
gpuexp.mkdir(work .. "/suite")
write("suite/k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1, 2}}}, run = function(p) ' ..
  'return {median_ms = p.x * tonumber(os.getenv("SLOW") or "1")} end}')
for n = 1, 3 do
  T.eq(run(string.format("nightly suite --arch sm_90 --quiet --history n.sqlite --out night%d --no-confirm", n),
    "GPUEXP_LOCK_DIR=" .. work), 0, "night " .. n)
end
local lock = "GPUEXP_LOCK_DIR=" .. work
lost("nightly suite --arch sm_90 --quiet --history n.sqlite --out night4 --no-confirm", "a clean night's summary", lock)
lost("nightly suite --arch sm_90 --quiet --history n.sqlite --out night5 --no-confirm", "a regressed night's summary",
  lock .. " SLOW=1.5")
-- a script's own printing, supervised and inline
write("print.lua", 'print("a line of the script")\n' .. ws.read("k.lua"))
lost("--arch sm_90 --quiet -o p.csv print.lua", "a script's print")
lost("--arch sm_90 --quiet --inline -o p.csv print.lua", "a script's print, --inline")
-- ab (a synthetic timer: no GPU), the same and a regression
if os.execute("git --version > /dev/null 2>&1") then
  write("ab.lua", [[
gpuexp.ab{name = "toy", budget_s = 5, variant = function(v)
  local scale = tonumber(v.defines and v.defines.SLOW or "1")
  return function(reps) local t = {} for i = 1, reps do t[i] = 0.1 * scale * (1 + 0.001 * (i % 7)) end return t end
end}
]])
  gpuexp.mkdir(work .. "/tmp")
  lost("ab --no-plan ab.lua", "ab (same)", "TMPDIR=" .. work .. "/tmp")
  lost("ab --no-plan --b-define SLOW=1.05 ab.lua", "ab (slower)", "TMPDIR=" .. work .. "/tmp")
end
-- a closed standard output that was written to: the same; one never written: no complaint
_, _, code = os.execute(string.format("cd %s && %s compare --axes p base.csv same.csv >&- 2> stderr", work, binary))
T.eq(code, 7, "a closed standard output written to: " .. (ws.read("stderr") or ""))
_, _, code = os.execute(string.format("cd %s && %s compare --axes p -o r.txt base.csv same.csv >&- 2> stderr", work, binary))
T.eq(code, 0, "nothing printed to a closed standard output: " .. (ws.read("stderr") or ""))
-- and the help says what 7 means for every command
local _, help = run("help info")
T.ok(help:find("7    the standard output could not be written", 1, true), "help info lists 7: " .. help)
T.done()
