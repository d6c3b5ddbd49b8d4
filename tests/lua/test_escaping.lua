-- Nothing from data is executed or rendered as markup (issue 25, BAD 3 and 9, item 4): one list
-- of hostile names goes through every escaper (terminal, CSV, Markdown, HTML, XML/SVG, JUnit,
-- JSON, gnuplot), then through the outputs a user sees: compare's table, Markdown, JUnit and
-- JSON, `gpuexp plot --by` (gnuplot), a nightly's report files and regression plot, and the site.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local cjson = require("cjson")
local text = require("gpuexp.store.text")
local csv = require("gpuexp.store.csv")
local json = require("gpuexp.store.json")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run
local pwned = work .. "/PWNED"

local HOSTILE = {
  "a\nsystem(\"touch " .. pwned .. "\")",
  "b'\nsystem(\"touch " .. pwned .. "\")\n'",
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  "q'single\"double",
  "`touch " .. pwned .. "` $(touch " .. pwned .. ")",
  "p|i|pe||",
  "ctrl\1\27[31mred\127\194\155",
  string.rep("x", 300),
  "bad\255\254utf8",
  "[link](javascript:alert(1)) ![i](x)",
  "**bold** _em_ ~~gone~~ & &amp;",
  "cr\rover", -- a carriage return alone: the line's start written over
  "bidi\226\128\174txt.exe\226\128\173 \216\156\226\129\167i\226\129\169", -- right-to-left override, ALM, isolates
  "line\226\128\168sep\226\128\169par", -- U+2028 and U+2029: new lines to a browser or an editor
}

-- no format character that reorders or breaks a line where it is shown (bidi controls, U+2028/2029)
local function no_format_characters(s)
  return not (s:find("\226\128[\142\143\168-\174]") or s:find("\226\129[\166-\169]") or s:find("\216\156"))
end

local function no_controls(s, allowed) return not s:gsub(allowed or "", ""):find("[%z\1-\31\127]") end
local function assert_no_markup(s, what)
  T.ok(not s:find("<script>alert", 1, true) and not s:find("<img src=x", 1, true) and not s:find("h<script", 1, true),
    what .. ": no raw tag from a name")
end

-- ---- each escaper on the same names ----
for i, name in ipairs(HOSTILE) do
  local what = "name " .. i
  local t = text.terminal(name)
  T.ok(utf8.len(t) and no_controls(t) and not t:find("\194[\128-\159]"), what .. " terminal: " .. t)
  local h = text.html(name)
  T.ok(utf8.len(h) and not h:find("[<>\"']") and no_controls(h, "[\t\n]"), what .. " html: " .. h)
  local x = text.xml(name)
  T.ok(utf8.len(x) and not x:find("[<>\"']") and no_controls(x), what .. " xml: " .. x)
  local m = text.markdown(name)
  T.ok(utf8.len(m) and no_controls(m) and not m:find("[<>]"), what .. " markdown: " .. m)
  T.ok(not m:find("[^\\][|%[`*~!]") and not m:find("^[|%[`*~!]"), what .. " markdown: every inline mark escaped: " .. m)
  local g = text.gnuplot(name)
  T.ok(utf8.len(g) and no_controls(g) and g:match("^'.*'$"), what .. " gnuplot: " .. g)
  for format, shown in pairs({terminal = t, html = h, xml = x, markdown = m, gnuplot = g, message = text.message(name)}) do
    T.ok(no_format_characters(shown), what .. " " .. format .. ": no bidi control or line separator: " .. t)
  end
  T.ok(not text.message(name):find("\r", 1, true), what .. " message: no carriage return")
  T.ok(not g:sub(2, -2):gsub("''", ""):find("'"), what .. " gnuplot: no quote ends the string early: " .. g)
  if not name:find("%z") then -- a shell word (no argument holds a NUL): the shell reads back the name
    local pipe = io.popen("printf '%s' " .. text.shell(name))
    T.eq(pipe:read("a"), name, what .. " shell: read back as written: " .. text.shell(name))
    pipe:close()
  end
  local records = csv.parse(csv.line({name, "1"}) .. "\n")
  T.eq(records[1][1], name, what .. " csv: read back as written")
  T.eq(cjson.decode(json.encode({name}))[1], json.valid_utf8(name), what .. " json: read back (valid UTF-8)")
end
T.eq(text.markdown("median_ms"), "median_ms", "an underscore inside a word is left as it reads")
T.eq(text.markdown("<b>"), "&lt;b&gt;", "HTML in Markdown: entities")
T.eq(text.gnuplot("it's\nnext"), "'it''s next'", "gnuplot: quote doubled, new line a space")
T.eq(text.terminal("a\nb\27c"), "a\\nb\\x1bc", "terminal: controls shown")
T.eq(text.terminal("a\rb"), "a\\rb", "terminal: a carriage return shown")
T.eq(text.html("a\rb"), "ab", "html: a carriage return dropped")
T.eq(text.markdown("a\rb"), "a b", "markdown: a carriage return a space")
T.eq(text.terminal("x\226\128\174y"), "x\\u202ey", "terminal: a bidi override shown as its code point")
T.eq(text.html("x\226\128\168y"), "x\\u2028y", "html: a line separator shown as its code point")

-- ---- compare: table, Markdown, JUnit, JSON of CSVs whose points are the names ----
local base, new = {csv.line({"p", "median_ms"})}, {csv.line({"p", "median_ms"})}
for i, name in ipairs(HOSTILE) do
  base[#base + 1] = csv.line({name, "1.0"})
  new[#new + 1] = csv.line({name, i % 2 == 0 and "1.5" or "1.0"})
end
write("base.csv", table.concat(base, "\n") .. "\n")
write("new.csv", table.concat(new, "\n") .. "\n")
local code, stdout, stderr = run("compare --axes p base.csv new.csv")
T.eq(code, 1, "compare of hostile names: " .. stderr)
T.ok(no_controls(stdout, "\n"), "the terminal table holds no control character")
local _, lines = stdout:gsub("\n", "")
T.eq(lines, #HOSTILE + 2, "one line per point, a header and the summary: " .. stdout .. stderr)
T.eq(run("compare --axes p --markdown -o r.md base.csv new.csv"), 1, "--markdown")
local md = read("r.md")
assert_no_markup(md, "compare --markdown")
local _, md_lines = md:gsub("\n", "")
T.eq(md_lines, #HOSTILE + 4, "one table row per point (no name broke a row)")
for line in md:gmatch("[^\n]+") do
  if line:sub(1, 1) == "|" then
    local _, borders = line:gsub("[^\\]|", "")
    T.eq(borders, 8, "every row has its 8 cell borders, no more: " .. line)
  end
end
T.eq(run("compare --axes p --junit -o r.xml base.csv new.csv"), 1, "--junit")
local xml = read("r.xml")
assert_no_markup(xml, "compare --junit")
T.ok(utf8.len(xml) and no_controls(xml, "\n"), "the XML is UTF-8 without control characters")
T.eq(run("compare --axes p --json -o r.json base.csv new.csv"), 1, "--json")
local decoded = cjson.decode(read("r.json"))
local seen = {}
for _, point in ipairs(decoded.points) do seen[point.cells and point.cells[1] or point.point] = true end
for _, name in ipairs(HOSTILE) do T.ok(seen[json.valid_utf8(name)], "JSON keeps the name " .. text.terminal(name)) end

-- an error message naming a point: no control character reaches the terminal
write("twice.csv", csv.line({"p", "median_ms"}) .. "\n" .. csv.line({HOSTILE[8], "1"}) .. "\n" ..
  csv.line({HOSTILE[8], "2"}) .. "\n")
code, _, stderr = run("compare --axes p twice.csv twice.csv")
T.ok(code == 2 and stderr:find("a second row for the point", 1, true), "a point twice: " .. stderr)
T.ok(no_controls(stderr, "\n") and stderr:find("\\x1b", 1, true), "the message shows the escape as \\x1b: " .. stderr)

write("raises.lua", 'gpuexp.error("usage", "bad point " .. "a\\27[2Jb")')
code, _, stderr = run("--arch sm_90 --quiet raises.lua")
T.ok(code ~= 0 and stderr:find("bad point a\\x1b[2Jb", 1, true) and no_controls(stderr, "[\n\t]"),
  "a script's error shows the escape as \\x1b: " .. stderr)

-- ---- gpuexp plot --by: the names reach gnuplot as titles, never as commands ----
if os.execute("command -v gnuplot > /dev/null") then
  local rows = {csv.line({"x", "y", "g"})}
  for i, name in ipairs(HOSTILE) do
    rows[#rows + 1] = csv.line({"1", tostring(i), name})
    rows[#rows + 1] = csv.line({"2", tostring(i + 1), name})
  end
  write("plot.csv", table.concat(rows, "\n") .. "\n")
  for _, out in ipairs({"p.png", "p.svg"}) do
    code, _, stderr = run("plot plot.csv --x x --y y --by g -o " .. out)
    T.eq(code, 0, "plot --by hostile names to " .. out .. ": " .. stderr)
    T.ok(read("PWNED") == nil, "nothing in the data was run by gnuplot (" .. out .. ")")
  end
  assert_no_markup(read("p.svg"), "the SVG")
  -- a column name from the command line: a title too
  code = run("plot plot.csv --x x --y y --by g --title \"$(printf 't\\nsystem(\\\"touch " .. pwned .. "\\\")')\" -o t.png")
  T.eq(code, 0, "a title with a new line")
  T.ok(read("PWNED") == nil, "nothing in the title was run by gnuplot")
else
  io.stderr:write("note: no gnuplot here; the gnuplot escaper was tested alone\n")
end

-- ---- a nightly whose points are the names: report files, the regression plot, the site ----
gpuexp.mkdir(work .. "/suite")
local values = {}
for i, name in ipairs(HOSTILE) do values[i] = string.format("%q", name):gsub("\\\n", "\\n") end
write("suite/hostile.lua", [[
local names = {]] .. table.concat(values, ", ") .. [[}
local slow = tonumber(os.getenv("SLOW") or "1")
gpuexp.sweep{name = "h<script>", axes = {{"name", names}}, columns = {"median_ms", "noise_pct", "samples"},
  run = function(p) return {median_ms = (p.name:find("script") and slow or 1) * 1.0, noise_pct = 0.5, samples = 1000} end}
]])
for n = 1, 4 do
  code, stdout, stderr = run(string.format("nightly suite --arch sm_90 --quiet --history h.sqlite --out night%d " ..
    "--no-confirm --no-counters", n), "GPUEXP_LOCK_DIR=" .. work .. (n == 4 and " SLOW=2" or ""))
  T.eq(code, n == 4 and 1 or 0, "night " .. n .. ": " .. stderr)
end
T.ok(no_controls(stdout, "\n"), "the nightly's terminal summary holds no control character")
for _, file in ipairs({"report.md", "report.html", "report.xml"}) do
  local body = read("night4/" .. file)
  T.ok(body, file .. " written")
  assert_no_markup(body, file)
end
T.ok(read("night4/plots/01.png") or not os.execute("command -v gnuplot > /dev/null"), "the regression's plot drawn")
T.ok(read("PWNED") == nil, "nothing in a point's name was run by the regression plot")
code, _, stderr = run("history --history h.sqlite site site")
T.eq(code, 0, "the site: " .. stderr)
local listing = io.popen("ls " .. work .. "/site"):read("a")
for page in listing:gmatch("[^\n]+") do assert_no_markup(read("site/" .. page), "site/" .. page) end
-- the browser's view: the names are text, no element made from them
local dom = ws.browser_dom("night4/report.html")
if dom then T.ok(not dom:find("<img src=\"x\"", 1, true) and not dom:find("<script>alert", 1, true), "DOM of the report") end
T.done()
