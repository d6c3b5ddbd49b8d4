-- A nightly regression explained to its source line, on a GPU (issue 38): a scratch git repository
-- whose experiment times one kernel of 129 lines (eight values carried through a loop of 112 lines
-- of three FMAs each, compiled with -lineinfo); two nights at its first commit make the baseline; a
-- second commit adds ONE line to the loop, a division (about 14 instructions on the ~345 of an
-- iteration, and the slow path out of line, never run: sm_90's line table has 17 on the line and
-- at most 3 more on any other): a slowdown of about 6%, its line first by PC samples and by SASS
-- counts alike. Then the nights that confirm it, each from a copy of the baseline history (so each
-- confirms the regression anew):
--   with line profiles: exit 1, and the Markdown, HTML and JSON reports and the history site name
--     the division's file:line as the top line, with its source text; the stage's seconds are said
--     and within --lines-timeout;
--   with the stage off (--lines-timeout 0): exit 1, what the night takes without it;
--   with CUPTI refused (GX_LIBCUPTI naming a missing file): exit 1 still, the same regression, and
--     the reports say why there is no line.
-- Counters are off in every night (--no-counters: the explanation here is the lines'; the counters
-- have tests/gpu/test_explain_night). Prints what it measured (the lead's GPU runs keep the log).
-- About a minute on an H100. tests/lua/test_lines_stage.lua runs this test's checks on reports and a
-- site made offline (given a table as its first argument, this file returns its checks and runs nothing).
-- usage: gpuexp test_nightly_lines.lua GPUEXP
-- covers: lua/gpuexp/commands/lines.lua, lua/gpuexp/api/lines.lua, lua/gpuexp/judge/report.lua, lua/gpuexp/judge/site.lua
local first = ...
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local json = require("gpuexp.store.json")
local text = require("gpuexp.store.text")

local checks = {}

local function read_report(dir, name)
  return assert(T.read(dir .. "/" .. name), "the night wrote no " .. name .. " in " .. dir)
end

-- The night's only regression in report.json (its row of the model), checked to be the point's.
local function regression_of(dir, point)
  local model = json.decode(read_report(dir, "report.json"))
  T.eq(#model.regressions, 1, dir .. ": one regression in report.json")
  local row = model.regressions[1]
  T.eq(row.point, point, dir .. ": the regression's point")
  T.eq(row.verdict, "slower", dir .. ": its verdict")
  return row, model
end
checks.regression_of = regression_of

-- A night whose regression was explained to the line: expect = {point, experiment, where, text
-- (the line's source, as in the file), kind, base_commit, new_commit, timeout (--lines-timeout)}.
-- Returns the regression's row of report.json.
function checks.lines_night(dir, expect)
  local row = regression_of(dir, expect.point)
  local lines = row.lines
  T.ok(type(lines) == "table", dir .. ": the regression has its lines in report.json: " .. tostring(row.explanation))
  local top = lines.lines and lines.lines[1]
  T.ok(top, dir .. ": a ranked line: " .. tostring(lines.accounting))
  T.eq(top.where, expect.where, dir .. ": the top line (report.json; " .. tostring(top.text) .. ")")
  T.eq(top.kind, expect.kind, dir .. ": the top line's kind")
  T.eq(top.text, expect.text:match("^%s*(.-)%s*$"), dir .. ": the top line's source text")
  T.eq(lines.base_commit, expect.base_commit, dir .. ": against the last good night's commit")
  T.eq(lines.new_commit, expect.new_commit, dir .. ": this night's commit")
  -- the stage's time: said, in seconds, and within its bound
  T.ok(type(lines.seconds) == "number" and lines.seconds > 0 and lines.seconds <= expect.timeout,
    string.format("%s: the line stage's seconds (%s) within --lines-timeout %g", dir, tostring(lines.seconds), expect.timeout))
  local said_seconds, said_where = row.explanation:match("line profiles %(" .. expect.base_commit:sub(1, 10) .. "%.%." ..
    expect.new_commit:sub(1, 10) .. ", (%d+) s%): line ([^ ]+) %(")
  T.eq(said_where, expect.where, dir .. ": the explanation names the line: " .. row.explanation)
  T.ok(math.abs(tonumber(said_seconds) - lines.seconds) <= 1, dir .. ": the explanation says the stage's seconds: " ..
    row.explanation)
  T.ok(row.explanation:find(top.text, 1, true), dir .. ": the explanation quotes the line: " .. row.explanation)
  -- Markdown: the explanation in the regressions' table, then the lines' table, the line first
  local md = read_report(dir, "report.md")
  T.ok(md:find(text.markdown(row.explanation), 1, true), dir .. ": report.md holds the explanation")
  local heading = string.format("### Lines: %s %s\n", text.markdown(expect.experiment), text.markdown(expect.point))
  local at = md:find(heading, 1, true)
  T.ok(at, dir .. ": report.md has the lines' section " .. heading .. md)
  local first_row = md:sub(at):match("\n(| 1 | [^\n]*)")
  T.ok(first_row, dir .. ": report.md's lines table has a first row:\n" .. md:sub(at))
  T.ok(first_row:find("| 1 | " .. text.markdown(expect.where) .. " | " .. expect.kind .. " |", 1, true),
    dir .. ": report.md's top line: " .. first_row)
  T.ok(first_row:find("| " .. text.markdown(top.text) .. " |", 1, true), dir .. ": report.md's top line's source: " .. first_row)
  -- HTML: the explanation and the lines' table, the line first with its source
  local html = read_report(dir, "report.html")
  T.ok(html:find("<b>What changed:</b> " .. text.html(row.explanation), 1, true), dir .. ": report.html holds the explanation")
  local html_row = html:match("<tr><td class='n'>1</td>(.-)</tr>")
  T.ok(html_row, dir .. ": report.html's lines table has a first row")
  T.ok(html_row:find("<td>" .. text.html(expect.where) .. "</td><td>" .. expect.kind .. "</td>", 1, true),
    dir .. ": report.html's top line: " .. html_row)
  T.ok(html_row:find("<code>" .. text.html(top.text) .. "</code>", 1, true), dir .. ": report.html's top line's source: " .. html_row)
  return row
end

-- A night whose regression has no line, and says why: expect = {point, why = {plain texts the
-- explanation holds}}. Returns the regression's row of report.json.
function checks.no_lines_night(dir, expect)
  local row = regression_of(dir, expect.point)
  T.eq(row.lines, nil, dir .. ": no lines in report.json")
  local explanation = row.explanation or ""
  for _, why in ipairs(expect.why) do
    T.ok(explanation:find(why, 1, true), dir .. ": the explanation says '" .. why .. "': " .. explanation)
  end
  T.ok(read_report(dir, "report.md"):find(text.markdown(explanation), 1, true), dir .. ": report.md says why")
  T.ok(not read_report(dir, "report.md"):find("### Lines:", 1, true), dir .. ": report.md has no lines' section")
  T.ok(read_report(dir, "report.html"):find("<b>What changed:</b> " .. text.html(explanation), 1, true),
    dir .. ": report.html says why")
  return row
end

-- The history site's pages (gpuexp history site DIR): one of them names the line, with its text.
function checks.site_names(site_dir, expect)
  local pages = {}
  local listing = io.popen("ls " .. T.quote(site_dir))
  for name in listing:lines() do if name:match("%.html$") then pages[#pages + 1] = name end end
  listing:close()
  local said = text.html("line profiles: line " .. expect.where .. " (")
  for _, name in ipairs(pages) do
    local page = read_report(site_dir, name)
    local at = page:find(said, 1, true)
    if at then
      T.ok(page:find(text.html(expect.text:match("^%s*(.-)%s*$")), at, true), site_dir .. "/" .. name .. ": the line's text")
      return name
    end
  end
  error("no page of the site names " .. expect.where .. " (pages: " .. table.concat(pages, ", ") .. ")")
end

if type(first) == "table" then return checks end -- (the checks alone: tests/lua/test_lines_stage.lua)

T.require_gpu()
if not os.execute("git --version >/dev/null 2>&1") then
  io.stderr:write("skipped: no git here\n")
  os.exit(77)
end
local binary = assert(first, "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local started_test = gpuexp.clock()

-- ---- the kernel: eight values through a loop of FMAs, one statement a line ----
local REGISTERS, STATEMENTS, INJECT_AFTER = 8, 112, 60
local source = {
  "// tests/gpu/test_nightly_lines.lua: eight values carried through a loop of FMAs (compute-bound)",
  "extern \"C\" __global__ void nl_kernel(float *out, const float *in, int n, int iters)",
  "{",
  "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
  "    if (i >= n) return;",
  "    float r0 = in[i];",
}
for r = 1, REGISTERS - 1 do source[#source + 1] = string.format("    float r%d = r0 * %.3ff + %.3ff;", r, 1 - r * 0.01, r * 0.1) end
source[#source + 1] = "    for (int k = 0; k < iters; ++k) {"
local injected_at
for s = 0, STATEMENTS - 1 do
  local r = s % REGISTERS
  -- three dependent FMAs a line (no reassociation without fast math): ~340 instructions an iteration
  source[#source + 1] = string.format("        r%d = ((r%d * %.4ff + %.4ff) * 0.9980f + 0.0020f) * 0.9970f + 0.0030f;", r, r,
    0.999 - 0.0001 * (s % 7), 0.001 + 0.0001 * (s % 5))
  if s == INJECT_AFTER then injected_at = #source end
end
source[#source + 1] = "    }"
local sum = {}
for r = 0, REGISTERS - 1 do sum[#sum + 1] = "r" .. r end
source[#source + 1] = "    out[i] = " .. table.concat(sum, " + ") .. ";"
source[#source + 1] = "}"
local BASE = table.concat(source, "\n") .. "\n"
-- the commit's one line: a division of one of the values (by 1.000 to 1.007: no slow path, no
-- denormal), after the loop's statement INJECT_AFTER
local DIVISION = "        r3 = r3 / (1.0f + 0.001f * (float)(k & 7));"
table.insert(source, injected_at + 1, DIVISION)
local NEW = table.concat(source, "\n") .. "\n"
local DIVISION_LINE = injected_at + 1
T.eq(select(2, NEW:gsub("\n", "")), #source, "the new kernel's lines")
print(string.format("kernel: %d lines (new: %d), the loop %d statements; the division added at nightly_lines.cu:%d",
  select(2, BASE:gsub("\n", "")), #source, STATEMENTS, DIVISION_LINE))

gpuexp.mkdir(ws.dir .. "/repo")
gpuexp.mkdir(ws.dir .. "/tmp") -- the line stage's worktrees and folders: here, never in /tmp
ws.write("repo/nightly_lines.cu", BASE)
ws.write("repo/exp.lua", [[
-- one point: the kernel over 2^18 threads, 192 iterations of the loop (about 0.6 ms on an H100)
local dev = gpuexp.device()
local k = gpuexp.compile{file = "nightly_lines.cu", options = {"-lineinfo"}}:kernel("nl_kernel")
local n = 1 << 18
local x = dev:alloc("f32", n):random{seed = 3, min = 0.5, max = 1.5}
local y = dev:alloc("f32", n)
gpuexp.sweep{name = "exp", axes = {{"iters", {192}}}, run = function(p)
  local t = k:measure{grid = n // 256, block = 256, args = {y, x, gpuexp.i32(n), gpuexp.i32(p.iters)}, min_time_ms = 100,
    max_noise_pct = 0.5, timeout_s = 2}
  return {median_ms = t.median_ms, noise_pct = t.noise_pct, samples = t.samples, samples_ms = t.samples_ms}
end}
]])
local function git(...)
  local argv = {"git", "-C", ws.dir .. "/repo", "-c", "user.email=t@t", "-c", "user.name=t", ...}
  T.eq(gpuexp._process.run(argv, {output = "/dev/null"}), 0, "git " .. table.concat({...}, " "))
end
local function head()
  local pipe = io.popen("git -C " .. T.quote(ws.dir .. "/repo") .. " rev-parse HEAD")
  local commit = pipe:read("l")
  pipe:close()
  return commit
end
git("init", "-q")
git("add", "-A")
git("commit", "-q", "-m", "the kernel")
local good = head()

local POINT, TIMEOUT = "iters=192", 90
local NO_CUPTI = ws.dir .. "/no-such-libcupti.so" -- GX_LIBCUPTI: the only library tried, and missing
local function night(n, history, extra, environment)
  local started = gpuexp.clock()
  local code, stdout, stderr = ws.run(string.format("nightly repo --no-counters --history %s --out night%d %s", history,
    n, extra or ""), string.format("GPUEXP_LOCK_DIR=%s TMPDIR=%s/tmp %s", T.quote(ws.dir), T.quote(ws.dir),
    environment or ""))
  local seconds = gpuexp.clock() - started
  print(string.format("night %d (%s%s): exit %d in %.1f s", n, history, extra and (" " .. extra) or "", code, seconds))
  return code, stdout, stderr, seconds, ws.dir .. "/night" .. n
end
local function copy_history(from, to)
  for _, suffix in ipairs({"", "-wal"}) do -- (SQLite rebuilds the -shm index of a history no one has open)
    local data = T.read(ws.dir .. "/" .. from .. suffix)
    if data then T.write(ws.dir .. "/" .. to .. suffix, data) end
  end
end

-- ---- the baseline: two nights at the first commit ----
local code, stdout, stderr = night(1, "h.sqlite")
T.eq(code, 0, "the first night: " .. stdout .. stderr)
code, stdout, stderr = night(2, "h.sqlite")
T.eq(code, 0, "the second night, clean: " .. stdout .. stderr)
T.ok(not read_report(ws.dir .. "/night2", "report.md"):find("line profiles", 1, true), "a clean night profiles no line")
copy_history("h.sqlite", "h-off.sqlite")
copy_history("h.sqlite", "h-refused.sqlite")

-- ---- the regression: the division committed ----
ws.write("repo/nightly_lines.cu", NEW)
git("commit", "-q", "-a", "-m", "a division in the loop")
local bad = head()

local expect = {point = POINT, experiment = "exp", where = "nightly_lines.cu:" .. DIVISION_LINE, text = DIVISION,
  kind = "added", base_commit = good, new_commit = bad, timeout = TIMEOUT}
local code_lines, stdout_lines, stderr_lines, seconds_lines, dir_lines = night(3, "h.sqlite", "--lines-timeout " .. TIMEOUT)
T.eq(code_lines, 1, "the regression's night: exit 1:\n" .. stdout_lines .. stderr_lines)
T.ok(stderr_lines:find(string.format("line profiles of 1 regression(s) of exp (at most %d s)", TIMEOUT), 1, true),
  "the night says it profiles lines, and its bound: " .. stderr_lines)
-- what it measured, printed before it is checked
local row = regression_of(dir_lines, POINT)
print(string.format("regression %s: %s -> %s ms (%s); explained: %s", row.point, row.before, row.after, row.change,
  tostring(row.explanation)))
if row.lines then
  local function pct(v) return v and string.format("%+.2f%%", v) or "?" end
  print(string.format("line stage: %s s (--lines-timeout %d); basis %s: the kernel moved %s (measured %s); %s",
    tostring(row.lines.seconds), TIMEOUT, tostring(row.lines.basis), pct(row.lines.total_pct), pct(row.lines.measured_pct),
    tostring(row.lines.accounting)))
  for _, c in ipairs(row.lines.lines or {}) do
    print(string.format("  %s. %s %s share %s time %s samples %s reason %s marks %s: %s", c.rank, c.where, c.kind, c.share,
      c.time, c.samples, c.reason, c.marks, c.text))
  end
end
checks.lines_night(dir_lines, expect)
-- the history site names it too
code, stdout, stderr = ws.run("history --history h.sqlite site site")
T.eq(code, 0, "history site: " .. stderr)
print("the site's page that names the line: " .. checks.site_names(ws.dir .. "/site", expect))

-- ---- the same night without the stage: its verdict, and what the stage added ----
local code_off, stdout_off, stderr_off, seconds_off, dir_off = night(4, "h-off.sqlite", "--lines-timeout 0")
T.eq(code_off, code_lines, "without the line stage, the same exit code:\n" .. stdout_off .. stderr_off)
local row_off = regression_of(dir_off, POINT)
T.eq(row_off.lines, nil, "--lines-timeout 0: no lines")
T.ok(not (row_off.explanation or ""):find("line profiles", 1, true), "--lines-timeout 0: nothing said: " ..
  tostring(row_off.explanation))
print(string.format("the night with line profiles took %.1f s, without %.1f s: the stage added %.1f s (it said %.1f s)",
  seconds_lines, seconds_off, seconds_lines - seconds_off, row.lines.seconds))
T.ok(seconds_lines - seconds_off <= TIMEOUT + 15, "the stage's time is bounded by --lines-timeout")

-- ---- CUPTI refused: no line, said why, the verdict unchanged ----
local code_refused, stdout_refused, stderr_refused, _, dir_refused = night(5, "h-refused.sqlite",
  "--lines-timeout " .. TIMEOUT, "GX_LIBCUPTI=" .. T.quote(NO_CUPTI))
T.eq(code_refused, code_lines, "CUPTI refused: the same exit code:\n" .. stdout_refused .. stderr_refused)
local row_refused = checks.no_lines_night(dir_refused, {point = POINT, why = {"line profiles: not taken: ",
  "its run wrote no line profile (no line profile of nl_kernel: ", "CUPTI", NO_CUPTI}})
T.eq(row_refused.verdict, row.verdict, "CUPTI refused: the same verdict")
print("CUPTI refused: " .. row_refused.explanation)

-- nothing left: no worktree, no folder of the stage, no process
local pipe = io.popen("git -C " .. T.quote(ws.dir .. "/repo") .. " worktree list | wc -l")
T.eq(tonumber(pipe:read("l")), 1, "no worktree left")
pipe:close()
pipe = io.popen("ls -A " .. T.quote(ws.dir .. "/tmp"))
local left = pipe:read("a")
pipe:close()
T.ok(not left:find("gpuexp-lines.", 1, true), "the line stage's folders removed: " .. left)
if left ~= "" then print("note: left in TMPDIR by the nights: " .. left:gsub("\n", " ")) end
T.eq(#T.processes_in(ws.dir, "gpuexp", 2), 0, "no process left")
print(string.format("test_nightly_lines: %.1f s", gpuexp.clock() - started_test))
T.done()
