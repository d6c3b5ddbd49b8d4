-- Names from data on a terminal (issue 34, BAD 3): a point, sweep and experiment name holding a
-- terminal escape (ESC ] 0;PWNED BEL retitles the window, ESC [2J clears it), BS, a C1 control, a
-- carriage return, a right-to-left override and a line separator, through every printer that
-- writes names: run progress and failures, the nightly's summary and REGRESSION STATES, history
-- list/show/accept, compare, merge, tune, ab, bisect's run mode. What reaches stdout and stderr is
-- the one terminal escaper's text (store/text.lua): the name shown with \x1b, \r, \u202e, ..., and
-- no raw control, C1 or format character anywhere. Also: two long points the nightly's table cuts
-- stay two names.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local text = require("gpuexp.store.text")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, run = ws.dir, ws.write, ws.run

local NAME = "n\27]0;PWNED\7\27[2J\8\194\155\r\226\128\174\226\128\168x"
local SHOWN = text.terminal(NAME)
T.eq(SHOWN, "n\\x1b]0;PWNED\\x07\\x1b[2J\\x08\\u009b\\r\\u202e\\u2028x", "the escaper's text")
T.eq(text.message(NAME), "n\\x1b]0;PWNED\\x07\\x1b[2J\\x08\\u009b\\x0d\\u202e\\u2028x", "as a message")

-- what a terminal would get: no control but new lines (and tabs), no C1, no format character
local function clean(output, what, allowed)
  local raw = output:gsub(allowed or "[\n\t]", "")
  local at = raw:find("[%z\1-\31\127]") or raw:find("\194[\128-\159]") or raw:find("\226\128[\142\143\168-\174]")
    or raw:find("\226\129[\166-\169]") or raw:find("\216\156")
  T.ok(not at, what .. ": a raw control at byte " .. tostring(at) .. ": " .. text.terminal(output))
end
local function shows(output, what)
  clean(output, what)
  T.ok(output:find(SHOWN, 1, true), what .. " shows the name escaped: " .. text.terminal(output))
end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- ---- a run: the progress line (its own \r at the start), failed points said on stderr ----
write("names.lua", string.format([[
local name = %q
gpuexp.sweep{name = name, axes = {{"p", {name, "plain"}}}, run = function(p)
  if p.p == name then error("failed at " .. p.p) end
  return {median_ms = 1}
end}
]], NAME))
local code, stdout, stderr = run("--arch sm_90 -o names.csv names.lua")
T.eq(code, 5, "a point failed: " .. stderr)
clean(stdout, "a run's stdout")
clean(stderr, "a run's progress and failures", "[\n\t]") -- no \r from the name: the progress line's own lead with one
T.ok(stderr:find(SHOWN, 1, true), "the failure names the point escaped: " .. text.terminal(stderr))

-- ---- compare and merge of CSVs whose points hold the name ----
write("base.csv", "p,median_ms\n\"" .. NAME .. "\",1.0\nplain,1.0\n")
write("new.csv", "p,median_ms\n\"" .. NAME .. "\",2.0\nplain,1.0\n")
for _, format in ipairs({"", "--markdown"}) do
  code, stdout, stderr = run("compare --axes p " .. format .. " base.csv new.csv")
  T.eq(code, 1, "compare " .. format .. ": " .. stderr)
  clean(stdout .. stderr, "compare " .. format)
end
code, stdout, stderr = run("compare --axes p base.csv new.csv")
shows(stdout, "compare's table")

-- ---- nights whose experiment, sweep and point carry the name: summary, REGRESSION STATES ----
gpuexp.mkdir(work .. "/suite")
local experiment = "e" .. NAME:gsub("/", "")
write("suite/" .. experiment .. ".lua", string.format([[
local name = %q
gpuexp.sweep{name = name, axes = {{"p", {name, "plain"}}}, columns = {"median_ms", "noise_pct", "samples"},
  run = function(p) return {median_ms = p.p == name and tonumber(os.getenv("SLOW") or "1") or 1, noise_pct = 0.5,
    samples = 1000} end}
]], NAME))
local function night(n, slow)
  return run(string.format("nightly suite --arch sm_90 --quiet --history h.sqlite --out night%d --no-confirm " ..
    "--no-counters", n), "GPUEXP_LOCK_DIR=" .. work .. (slow and (" SLOW=" .. slow) or ""))
end
for n = 1, 3 do T.eq(night(n), 0, "clean night " .. n) end
code, stdout, stderr = night(4, 2)
T.eq(code, 1, "a regression: " .. stderr)
shows(stdout, "the regressed night's summary")
code, stdout, stderr = night(5, 2)
T.eq(code, 1, "still open: " .. stderr)
T.ok(stdout:find("REGRESSION STATES:", 1, true), "the states listed: " .. stdout)
shows(stdout, "REGRESSION STATES")
clean(stderr, "the nightly's stderr")

-- ---- the history's printers ----
code, stdout, stderr = run("history --history h.sqlite list")
T.eq(code, 0, "list: " .. stderr)
clean(stdout .. stderr, "history list")
T.ok(stdout:find(text.cut(SHOWN, 48), 1, true) or stdout:find(SHOWN, 1, true), "list names the sweep: " .. stdout)
code, stdout, stderr = run("history --history h.sqlite show 5")
T.eq(code, 0, "show: " .. stderr)
shows(stdout, "history show")
code, stdout, stderr = run("history --history h.sqlite accept 5")
T.eq(code, 0, "accept: " .. stderr)
shows(stdout, "history accept")
code, stdout, stderr = run("bisect --history h.sqlite --run 5")
clean(stdout .. stderr, "bisect --run")

-- ---- merge: the points missing from its parts are listed ----
T.eq(run("--arch sm_90 --quiet --shard 0/2 -o part.csv names.lua"), 5, "share 0")
code, stdout, stderr = run("merge m.csv part.shard-0-of-2.csv")
clean(stdout .. stderr, "merge")

-- ---- tune's tie set and ab's verdict, with the name as the tune's, the axis value's, the A/B's ----
write("tune.lua", string.format([[
local name = %q
gpuexp.tune{name = name, axes = {{"v", {name, "plain"}}}, strategy = "brute",
  run = function(p)
    local s = {}
    for i = 1, 20 do s[i] = (p.v == name and 1 or 2) + 0.001 * i end
    return {median_ms = gpuexp.stats(s).median, samples_ms = s}
  end}
]], NAME))
code, stdout, stderr = run("--no-plan tune.lua")
T.eq(code, 0, "a tune: " .. stderr)
shows(stdout, "tune's tie set")
clean(stderr, "tune's stderr")
if os.execute("git --version > /dev/null 2>&1") then
  write("ab.lua", string.format([[
gpuexp.ab{name = %q, budget_s = 2, variant = function(v)
  local scale = tonumber(v.defines and v.defines.SLOW or "1")
  return function(reps) local t = {} for i = 1, reps do t[i] = 0.1 * scale * (1 + 0.001 * (i %% 7)) end return t end
end}
]], NAME))
  gpuexp.mkdir(work .. "/tmp")
  code, stdout, stderr = run("ab --no-plan --b-define SLOW=1.05 ab.lua", "TMPDIR=" .. work .. "/tmp")
  T.eq(code, 1, "ab: " .. stderr)
  shows(stdout, "ab's verdict")
  clean(stderr, "ab's stderr")
end

-- ---- the progress line on a terminal (a pseudo-terminal from script(1), where it is there) ----
if os.execute("command -v script > /dev/null") then
  write("slow.lua", string.format([[
gpuexp.sweep{name = %q, axes = {{"i", {1, 2, 3}}}, run = function() os.execute("sleep 0.3") return {v = 1} end}
]], NAME))
  os.execute(string.format("cd %s && script -qec %s /dev/null > tty.txt 2>&1", work,
    q(binary .. " --arch sm_90 --inline -o slow.csv slow.lua")))
  local tty = ws.read("tty.txt") or ""
  T.ok(tty:find(SHOWN .. ": 3/3 points", 1, true), "the progress line names the sweep escaped: " .. text.terminal(tty))
  clean(tty, "the progress line", "[\n\t\r]") -- a terminal's \r\n, and the line's own \r
  T.ok(not tty:find("\27", 1, true), "no escape reached the terminal")
else
  io.stderr:write("note: no script(1) here: the progress line (shown on a terminal only) is not tested\n")
end

-- ---- the nightly's table: two long points cut to one width stay two names ----
local long = string.rep("a", 60)
write("long_base.csv", string.format("p,median_ms\n%s1,1.0\n%s2,1.0\n", long, long))
write("long_new.csv", string.format("p,median_ms\n%s1,2.0\n%s2,2.0\n", long, long))
gpuexp.mkdir(work .. "/longs")
write("longs/l.lua", string.format([[
gpuexp.sweep{name = "l", axes = {{"p", {%q, %q}}}, columns = {"median_ms", "noise_pct", "samples"},
  run = function() return {median_ms = tonumber(os.getenv("SLOW") or "1"), noise_pct = 0.5, samples = 1000} end}
]], long .. "1", long .. "2"))
for n = 1, 4 do
  code, stdout = run(string.format("nightly longs --arch sm_90 --quiet --history l.sqlite --out long%d --no-confirm " ..
    "--no-counters", n), "GPUEXP_LOCK_DIR=" .. work .. (n == 4 and " SLOW=2" or ""))
end
T.eq(code, 1, "the long points regressed")
local cut = {}
for line in stdout:gmatch("[^\n]+") do
  local point = line:find("median_ms", 1, true) and line:match("^%s*l%s+(p=%S+)")
  if point then cut[#cut + 1] = point end
end
T.eq(#cut, 2, "two rows: " .. stdout)
T.ok(cut[1] ~= cut[2], "cut to two names: " .. tostring(cut[1]) .. " " .. tostring(cut[2]))
T.ok(#cut[1] <= 48 and cut[1]:find("...", 1, true), "cut to the table's width: " .. cut[1])
T.done()
