-- Empty names and empty files (issue 34, WEAK): '' names no file, so every option that takes a
-- path refuses it (it never means "the default": `--history ''` recorded into the default history,
-- `nightly ''` ran every shipped experiment), and a 0-byte CSV is named as empty by every reader
-- of runs (compare, history record, merge, plot), not as a file "with no column 'x'".
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local catalog = require("gpuexp.catalog")
local args = require("gpuexp.engine.args")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local work, write, read, run = ws.dir, ws.write, ws.read, ws.run
-- the default history, where a '' taken for "the default" would record
local home = "GPUEXP_HISTORY= XDG_DATA_HOME=" .. work .. "/data HOME=" .. work .. " GPUEXP_LOCK_DIR=" .. work

write("k.lua", 'gpuexp.sweep{name = "k", axes = {{"x", {1, 2}}}, run = function(p) return {median_ms = p.x} end}')
write("base.csv", "x,median_ms\n1,1.0\n2,2.0\n")

-- ---- every option of type path, in every command, refuses '' (a usage error, exit 2) ----
local checked = 0
local function refuses(line, flag)
  local code, _, stderr = run(line, home)
  T.eq(code, 2, line .. ": " .. stderr)
  T.ok(stderr:find(flag .. " takes a path, got '' (an empty name names no file)", 1, true), line .. " says why: " .. stderr)
  checked = checked + 1
end
for _, command in ipairs(catalog.commands) do
  local lines = command.options_title and command.options or {{options = command.options}}
  for _, line in ipairs(lines) do
    for _, option in ipairs(line.options or {}) do
      if option.type == "path" then
        for _, flag in ipairs((args.flags(option))) do
          local words = {command.name == "run" and "" or command.name, line.subcommand or "", flag, "''"}
          if command.name == "run" or command.name == "tune" or command.name == "ab" then words[#words + 1] = "k.lua" end
          refuses(table.concat(words, " "), flag)
        end
      end
    end
  end
end
refuses("history --history '' list", "--history") -- the command's own entry beside its subcommands
T.ok(checked >= 18, "the path options of run, compare, plot, history, nightly, bisect, tune and ab: " .. checked)
T.eq(read("data/gpuexp/history.sqlite"), nil, "nothing recorded in the default history")

-- ---- nightly '': no suite, nothing run ----
local code, _, stderr = run("nightly '' --arch sm_90 --quiet --no-confirm --out night", home)
T.eq(code, 2, "nightly '': " .. stderr)
T.ok(stderr:find("the suite is an empty name", 1, true), stderr)
T.eq(io.popen("ls -A " .. work .. "/night 2>/dev/null"):read("a"), "", "no experiment ran")
T.eq(read("data/gpuexp/history.sqlite"), nil, "nothing recorded")

-- ---- a 0-byte (or blank) CSV: named as empty, exit 2 (6 for the history) ----
write("empty.csv", "")
write("blank.csv", "\n\n")
T.eq(run("--arch sm_90 --quiet --shard 0/2 -o part.csv k.lua"), 0, "a share to merge")
T.eq(run("--arch sm_90 --quiet --shard 1/2 -o part.csv k.lua"), 0, "the other share")
write("part.shard-1-of-2.csv", "")
for _, case in ipairs({
  {"compare --axes x base.csv empty.csv", 2, "empty.csv is empty (0 bytes: no header, no rows)"},
  {"compare --axes x empty.csv base.csv", 2, "empty.csv is empty (0 bytes"},
  {"compare --axes x base.csv blank.csv", 2, "blank.csv is empty (2 bytes"},
  {"history --history h.sqlite record empty.csv", 6, "empty.csv is empty (0 bytes"},
  {"merge m.csv part.shard-0-of-2.csv part.shard-1-of-2.csv", 2, "part.shard-1-of-2.csv is empty (0 bytes"},
  {"plot empty.csv --x x --y median_ms -o e.svg", 2, "empty.csv is empty (0 bytes"},
}) do
  code, _, stderr = run(case[1])
  T.eq(code, case[2], case[1] .. ": " .. stderr)
  T.ok(stderr:find(case[3], 1, true), case[1] .. " says it is empty: " .. stderr)
end
T.eq(read("m.csv"), nil, "no merge written")
T.done()
