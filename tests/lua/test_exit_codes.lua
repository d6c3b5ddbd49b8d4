-- No wrong exit code from a failure (issue 24, part 4): the printers take point names of 100+
-- characters, a threshold of 1e308 and columns of 100+ characters (Lua's string.format caps a
-- width at 99); a bug inside a command exits 70, never 0 or 1 (1 means "a regression") nor 7; and
-- --rule mannwhitney falls back to the default rule when too few samples a side can never reach
-- p < 0.05, decides by the p-value otherwise, and names (file, line) the samples it leaves out.
-- covers: lua/gpuexp/engine/exits.lua, lua/gpuexp/commands/runner.lua, lua/gpuexp/judge/printers.lua
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local json = require("cjson")
local compare = require("gpuexp.judge.compare")

-- 1. five ordinary axes whose values make a point name of 211 characters; two identical runs
local long = string.rep("x", 30)
local axes = {"alpha", "beta", "gamma", "delta", "epsilon"}
local function run_file(name, value, extra_columns, samples)
  local header = table.concat(axes, ",") .. ",median_ms,noise_pct,samples" .. (extra_columns or "")
  local cells = {}
  for i, a in ipairs(axes) do cells[i] = long .. a end
  ws.write(name .. ".csv", header .. "\n" .. table.concat(cells, ",") .. "," .. value .. ",0.5,100" ..
    (extra_columns and ",1" or "") .. "\n")
  local axis_json = {}
  for i, a in ipairs(axes) do axis_json[i] = string.format('{"name": "%s", "values": ["%s"]}', a, long .. a) end
  ws.write(name .. ".meta.json", '{"sweep": {"name": "s", "axes": [' .. table.concat(axis_json, ", ") .. ']}}\n')
  if samples then
    ws.write(name .. ".samples.csv", table.concat(axes, ",") .. ",field,values\n" .. table.concat(cells, ",") ..
      ",samples_ms," .. samples .. "\n")
  end
end
run_file("base", "1.0")
run_file("same", "1.0")
local code, stdout, stderr = ws.run("compare base.csv same.csv")
T.eq(code, 0, "identical runs with a 211-character point name: exit 0 (" .. stderr .. ")")
T.ok(stdout:find(long .. "alpha", 1, true) and stdout:find("1 same", 1, true), "the table is printed: " .. stdout)
-- the widest cell sets the column: the metric starts at the same place on the header and the row
local lines = {}
for line in stdout:gmatch("[^\n]+") do lines[#lines + 1] = line end
T.eq(lines[1]:find("metric", 1, true), lines[2]:find("median_ms", 1, true), "the header is padded to the point's width")
local name_length = #axes - 1
for _, a in ipairs(axes) do name_length = name_length + #a + 1 + #long + #a end
T.eq(lines[1]:find("metric", 1, true), name_length + 3, "after the " .. name_length .. "-character point and two spaces")
code, _, stderr = ws.run("compare -o table.txt base.csv same.csv")
T.eq(code, 0, "-o with a long name: exit 0, not 7 (" .. stderr .. ")")
T.ok(ws.read("table.txt"):find(long .. "epsilon", 1, true), "-o wrote the table")
code, stdout, stderr = ws.run("compare --threshold 1e308 base.csv same.csv")
T.eq(code, 0, "--threshold 1e308: exit 0 (" .. stderr .. ")")
T.ok(stdout:find("%s1" .. string.rep("0", 15) .. "%d+%.00%%"), "the threshold is printed whole: " .. stdout)
for _, format in ipairs({"--markdown", "--json", "--junit"}) do
  code, _, stderr = ws.run("compare " .. format .. " --threshold 1e308 base.csv same.csv")
  T.eq(code, 0, format .. " with a long name and 1e308: exit 0 (" .. stderr .. ")")
end

-- 2. history show of a run with a 120-character column name, and a zero byte nowhere needed
local column = "ctr_" .. string.rep("c", 116)
run_file("wide", "1.0", "," .. column)
local history = ws.dir .. "/history.sqlite"
code, stdout, stderr = ws.run("history --history " .. history .. " record wide.csv")
T.eq(code, 0, "recorded (" .. stderr .. ")")
code, stdout, stderr = ws.run("history --history " .. history .. " show 1")
T.eq(code, 0, "history show of a 120-character column: exit 0 (" .. stderr .. ")")
T.ok(stdout:find(column, 1, true), "the column is shown")

-- 3. a bug inside a command (here a printer made to fail, through a copy of the Lua library):
-- exit 70, said as an internal error; never 1 (a regression) nor 7 (a full disk)
local source = gpuexp.script_dir .. "/../../lua"
os.execute(string.format("cp -r '%s' '%s/lib'", source, ws.dir))
local printers_path = ws.dir .. "/lib/gpuexp/judge/printers.lua"
local file = assert(io.open(printers_path))
local text = file:read("a")
file:close()
text = text:gsub("function M%.format_table%(result, file%)\n", "function M.format_table(result, file)\n" ..
  "  local broken = nil; broken.field = 1\n", 1)
file = assert(io.open(printers_path, "w"))
file:write(text)
file:close()
local broken = "GPUEXP_LUA_DIR=" .. ws.dir .. "/lib"
code, _, stderr = ws.run("compare base.csv same.csv", broken)
T.eq(code, 70, "a bug in the printer: exit 70 (" .. stderr .. ")")
T.ok(stderr:find("internal error in gpuexp.commands.compare (exit 70", 1, true), "said as one: " .. stderr)
code, _, stderr = ws.run("compare -o out.txt base.csv same.csv", broken)
T.eq(code, 70, "a bug in the printer with -o: exit 70, not 7 (" .. stderr .. ")")
T.eq(ws.read("out.txt"), nil, "no half-written output")
code = ws.run("compare --json base.csv same.csv", broken)
T.eq(code, 0, "the other printers still work")
code, stdout = ws.run("help compare")
T.ok(stdout:find("70%s+internal error"), "compare --help documents exit 70: " .. stdout)

-- 4. --rule mannwhitney with few samples: the smallest p of the exact test is 2 / C(n+m, n)
T.near(compare.smallest_p(3, 3), 0.1, 1e-12, "3 a side: 2/20")
T.near(compare.smallest_p(4, 4), 2 / 70, 1e-12, "4 a side: 2/70")
T.near(compare.smallest_p(1, 1), 1, 1e-12, "1 a side: 1")
T.near(compare.smallest_p(2, 8), 2 / 45, 1e-12, "2 and 8: 2/45")
local function judged(base, new)
  local c, out, err = ws.run(string.format("compare --json --rule mannwhitney %s.csv %s.csv", base, new))
  T.ok(c == 0 or c == 1, "compare --rule mannwhitney: " .. err)
  return json.decode(out).points[1], c
end
-- one sample a side, +50%: the test can never say "different"; the default rule calls it slower
run_file("one_base", "1.0", nil, "1.0")
run_file("one_new", "1.5", nil, "1.5")
local e, exit = judged("one_base", "one_new")
T.eq(e.verdict, "slower", "+50% with one sample a side: slower by the default rule (" .. e.basis .. ")")
T.eq(exit, 1, "and exit 1")
T.ok(e.basis:find("1 and 1 samples a side cannot reach p < 0.05", 1, true) and e.basis:find("decided by gpuexp's rule", 1, true),
  "the basis says so: " .. e.basis)
-- three a side: still unreachable (2/20 = 0.1)
run_file("three_base", "1.0", nil, "0.99 1.0 1.01")
run_file("three_new", "1.5", nil, "1.49 1.5 1.51")
e = judged("three_base", "three_new")
T.eq(e.verdict, "slower", "+50% with three a side: slower by the default rule")
T.ok(e.basis:find("3 and 3 samples a side cannot reach", 1, true), "3 a side falls back: " .. e.basis)
-- eight a side, fully separated: the p-value decides (slower)
run_file("eight_base", "1.0", nil, "0.96 0.97 0.98 0.99 1.0 1.01 1.02 1.03")
run_file("eight_new", "1.5", nil, "1.46 1.47 1.48 1.49 1.5 1.51 1.52 1.53")
e = judged("eight_base", "eight_new")
T.eq(e.verdict, "slower", "separated samples: slower by mannwhitney (" .. e.basis .. ")")
T.ok(e.basis:find("^mannwhitney: p < 0.05"), "decided by the test: " .. e.basis)
-- eight a side, +10% in the medians but the samples overlap (p about 0.5): same, whatever the change
run_file("wide_base", "1.0", nil, "0.6 0.8 0.9 1.0 1.0 1.1 1.2 1.4")
run_file("wide_new", "1.1", nil, "0.7 0.8 1.0 1.1 1.1 1.2 1.3 1.3")
e = judged("wide_base", "wide_new")
T.ok(e.p_value > 0.2, "overlapping samples: p " .. e.p_value)
T.eq(e.verdict, "same", "a +10% change the samples do not support: same under mannwhitney (" .. e.basis .. ")")
-- NaN, inf and text among the samples: named by file and line, and left out
run_file("odd_base", "1.0", nil, "0.96 0.97 0.98 0.99 1.0 1.01 1.02 1.03")
run_file("odd_new", "1.5", nil, "1.46 nan 1.47 inf 1.48 1.49 abc 1.5 1.51 1.52 -inf 1.53 1e999")
e = judged("odd_base", "odd_new")
T.eq(e.verdict, "slower", "odd samples left out: the rest decide (" .. e.basis .. ")")
T.ok(e.basis:find("samples left out (not finite numbers): odd_new.samples.csv:2: 'nan', 'inf', 'abc', '-inf', '1e999'",
  1, true), "names the file, the line and each sample left out: " .. e.basis)
T.ok(e.basis:find("1 and 1", 1, true) == nil and e.basis:find("^mannwhitney: p < 0.05"), "8 samples a side remain")
T.done()
