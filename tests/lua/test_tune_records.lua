-- The tuning study's published tables are their records' (issue 37): docs/howto/tune.md states the
-- tables that bench/tune/replay.lua makes of bench/h100/tune37v2's records (tune_tables.md) and those
-- bench/tune/kt_table.lua makes of bench/h100/kt's (kt_table.md). Checked here: the doc holds both
-- files' text; kt_table.lua rebuilds kt_table.md byte for byte from the records; replay.lua rebuilds
-- the transpose's section of tune_tables.md (the whole replay takes over a minute; the transpose's a
-- few seconds: the same code on the smallest space).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws = T.workspace(binary)
local root = gpuexp.script_dir .. "/../.."
local function sh(command) T.ok(os.execute(command), command) end
local function section(text, heading) -- from "### heading" to the next "### " or the end
  local from = assert(text:find("### " .. heading, 1, true), "no section " .. heading)
  local to = text:find("\n### ", from + 1, true)
  return text:sub(from, to or #text)
end

local doc = assert(T.read(root .. "/docs/howto/tune.md"))
local tables = assert(T.read(root .. "/bench/h100/tune37v2/tune_tables.md"))
local kt = assert(T.read(root .. "/bench/h100/kt/kt_table.md"))
-- the doc's headings are one level down (####)
local function in_doc(text, what)
  T.ok(doc:find(text:gsub("\n### ", "\n#### "):gsub("^### ", "#### "):gsub("%s+$", ""), 1, true), what .. " is in docs/howto/tune.md")
end
in_doc(tables, "bench/h100/tune37v2/tune_tables.md")
in_doc(kt, "bench/h100/kt/kt_table.md")

-- kt_table.lua on the comparison's records, with brute force's of the first study
sh(string.format("tar -xzf %s -C %s && tar -xzf %s -C %s tune37/conv/brute.json tune37/matmul/brute.json",
  T.quote(root .. "/bench/h100/kt/kt_records.tar.gz"), T.quote(ws.dir), T.quote(root .. "/bench/h100/tune37/tune37_records.tar.gz"),
  T.quote(ws.dir)))
local code, _, err = ws.run(string.format("--quiet --inline %s/bench/tune/kt_table.lua kt tune37", root))
T.eq(code, 0, "kt_table.lua: " .. err)
T.eq(ws.read("kt/kt_table.md"), kt, "kt_table.lua rebuilds bench/h100/kt/kt_table.md")

-- replay.lua on the transpose's records
gpuexp.mkdir(ws.dir .. "/v2")
sh(string.format("tar -xzf %s -C %s tune37/transpose", T.quote(root .. "/bench/h100/tune37v2/tune37_records.tar.gz"),
  T.quote(ws.dir .. "/v2")))
code, _, err = ws.run(string.format("--quiet --inline %s/bench/tune/replay.lua v2/tune37 transpose", root))
T.eq(code, 0, "replay.lua: " .. err)
local replayed = ws.read("v2/tune37/tune_tables.md")
T.eq(section(replayed, "transpose"), section(tables, "transpose"), "replay.lua rebuilds the transpose's tables")
T.done()
