-- The short-work comparison (bench/run_short_sequence.sh) recomputed from its raw output: the C
-- peer's c.txt, gpuexp's gpuexp.json, ncu's ncu.csv and the trace (trace.json.gz), through
-- bench/short_sequence.lua's own `compare`, in a temporary copy with the trace unpacked. Prints the
-- comparison, then NAME: VALUE lines for the docs.
--   RECORD=bench/remeasure/short_sequence/ncu.csv gx bench/recompute/short_sequence.lua
local R = dofile(gpuexp.script_dir .. "/records.lua")
local function quote(text) return "'" .. tostring(text):gsub("'", "'\\''") .. "'" end
local from = R.records[1]:match("^(.*)/[^/]*$") or "."
local work = os.tmpname()
os.remove(work)
assert(os.execute("mkdir -p " .. quote(work) .. " && cp " .. quote(from .. "/c.txt") .. " " .. quote(from .. "/gpuexp.json") ..
  " " .. quote(from .. "/ncu.csv") .. " " .. quote(work) .. " && gzip -dc " .. quote(from .. "/trace.json.gz") .. " > " ..
  quote(work .. "/trace.json")), "cannot copy the record from " .. from)
local pipe = io.popen(quote(gpuexp.executable) .. " --quiet --no-plan " .. quote(gpuexp.script_dir .. "/../short_sequence.lua") ..
  " compare " .. quote(work) .. " 2>&1")
local text = pipe:read("a")
local ok = pipe:close()
os.execute("rm -rf " .. quote(work))
io.write(text)
if not ok then os.exit(1) end
local function us(ms) return string.format("%.1f", tonumber(ms) * 1000) end
local gpu = text:match("GPU: NVIDIA (%S+)")
local seq, seq_ncu, seq_pct = text:match("sequence:measure{} %(mode %a+%)%s+([%d.]+) ms  vs ncu %+ trace gaps%s+([%d.]+) ms%s+([+-][%d.]+)%%")
local one, one_ncu, one_pct = text:match("kernel:measure{} %(mode %a+%)%s+([%d.]+) ms  vs ncu %+ trace gap%s+([%d.]+) ms%s+([+-][%d.]+)%%")
local single_ncu = text:match("single kernel: ncu ([%d.]+) ms")
assert(seq and one and single_ncu, "the comparison has not its lines")
print("gpu: " .. gpu)
print("sequence us: " .. us(seq))
print("single us: " .. us(one))
print("single ncu us: " .. us(single_ncu))
print(string.format("sequence about: %.0f", tonumber(seq) * 1000))
print(string.format("single about: %.0f", tonumber(one) * 1000))
print(string.format("sentence: the sequence %s µs against ncu's kernels plus the trace's gaps %s µs (%+.1f%%), the " ..
  "single kernel %s µs against %s µs (%+.1f%%)", us(seq), us(seq_ncu), tonumber(seq_pct), us(one), us(one_ncu), tonumber(one_pct)))
