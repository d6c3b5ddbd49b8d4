-- The bash completion (packaging/gpuexp.bash-completion) as bash runs it, with the binary under
-- test first on PATH: compare's --metric offers the columns of the CSV files on the line (it used
-- to offer CUPTI's metric names, which no CSV has), metrics --check the CUPTI names and presets.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local root = gpuexp.script_dir:gsub("/tests/lua$", "")
if not root:match("^/") then root = os.getenv("PWD") .. "/" .. root end
if not os.execute("command -v bash >/dev/null 2>&1") then
  io.stderr:write("SKIP: no bash here\n")
  os.exit(77)
end
local ws = T.workspace(binary)
ws.write("base.csv", "block_size,variant,occupancy_pct,median_ms,status,error\n128,a,100,,ok,\n")
ws.write("new.csv", "block_size,variant,occupancy_pct,median_ms,status,error\n128,a,100,,ok,\n")

-- COMPREPLY for these words, the cursor on word number cword (default the last one)
local function complete(words, cword)
  ws.write("complete.sh", string.format(". '%s/packaging/gpuexp.bash-completion'\nCOMP_WORDS=(%s); COMP_CWORD=%d; " ..
    "_gpuexp\nprintf '%%s\\n' \"${COMPREPLY[@]}\" | sort -u | tr '\\n' ' '\n", root, words,
    cword or select(2, words:gsub("%S+", "")) - 1))
  local pipe = io.popen(string.format("cd '%s' && PATH='%s':\"$PATH\" bash complete.sh 2>&1", ws.dir,
    binary:match("^(.*)/[^/]*$")))
  local stdout = pipe:read("a")
  pipe:close()
  return (stdout:gsub("%s+$", ""))
end

T.eq(complete("gpuexp compare base.csv new.csv --metric occ"), "occupancy_pct", "a column of the CSVs, by its prefix")
T.eq(complete("gpuexp compare --metric ''"), "", "no CSV on the line: nothing offered (never CUPTI's names)")
T.eq(complete("gpuexp compare --metric '' base.csv", 3), "block_size median_ms occupancy_pct variant",
  "every column but status and error, a CSV after the cursor too")
T.eq(complete("gpuexp nightly --metric sm__warps"), "", "nightly's --metric is a column too, not a CUPTI name")
T.ok(complete("gpuexp metrics --chip GH100 --check bank_con"):find("bank_conflicts", 1, true),
  "metrics --check offers the presets")
T.done()
