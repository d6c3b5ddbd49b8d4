-- compile{compiler = "nvcc"} without a GPU, the steps of gx_nvcc_compile one by one: a source given
-- as text is written as NAME.cu into a temporary folder of its own; a compute_XY architecture makes
-- PTX only; a failing nvcc is a compile error with its log, how it ended and the command; refused
-- options are refused before nvcc runs; the temporary folder is gone afterwards, whatever happened.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local toolkit = gpuexp.toolkit()
if not toolkit.nvcc then
  io.stderr:write("SKIP: no nvcc here\n")
  os.exit(77)
end
local ws = T.workspace(binary)
gpuexp.mkdir(ws.dir .. "/tmp")
-- a fresh source each run: the compile cache must not answer for nvcc
local unique = "// " .. gpuexp.hash(tostring(gpuexp.clock()) .. tostring({})) .. "\n"

ws.write("steps.lua", [[
local unique = ]] .. string.format("%q", unique) .. [[

local function raised(fn)
  local ok, err = pcall(fn)
  return ok and "no error" or (type(err) == "table" and err.message or tostring(err))
end
-- a broken source named without .cu: nvcc fails; the message holds the log and the command
print("BROKEN " .. raised(function()
  gpuexp.compile{source = unique .. "__global__ void k() { int x = ; }\n", name = "broken", compiler = "nvcc",
    arch = "sm_90"}
end))
-- the same again: its error kept in the cache, nvcc not run
print("KEPT " .. raised(function()
  gpuexp.compile{source = unique .. "__global__ void k() { int x = ; }\n", name = "broken", compiler = "nvcc",
    arch = "sm_90"}
end))
-- PTX only for a virtual architecture
local ptx = gpuexp.compile{source = unique .. "__global__ void k(float *x) { x[0] = 1; }\n", name = "ptx_only.cu",
  compiler = "nvcc", arch = "compute_90"}
print("PTX " .. tostring(ptx.arch) .. " " .. tostring(ptx.ptx:find(".entry", 1, true) ~= nil) .. " " ..
  tostring(ptx.ptx:find(".target sm_90", 1, true) ~= nil))
-- a cubin, and the PTX nvcc kept beside it
local cubin = gpuexp.compile{source = unique .. "__global__ void k(int *x) { x[1] = 2; }\n", name = "cubin.cu",
  compiler = "nvcc", arch = "sm_90"}
print("CUBIN " .. tostring(cubin.arch) .. " " .. tostring(cubin.ptx:find(".entry", 1, true) ~= nil))
-- an option that would keep nvcc from writing the cubin
print("REFUSED " .. raised(function()
  gpuexp.compile{source = unique .. "__global__ void k() {}\n", name = "r.cu", compiler = "nvcc", arch = "sm_90",
    options = {"--dryrun"}}
end))
]])
local code, out, err = ws.run("--quiet --inline --arch sm_90 steps.lua", "TMPDIR=" .. ws.dir .. "/tmp")
T.eq(code, 0, "the script runs: " .. err)
local broken = out:match("BROKEN ([^\n]*\n.-)\nKEPT") or ""
local kept = out:match("KEPT ([^\n]*\n.-)\nPTX") or ""
T.ok(not broken:find("kept in the compile cache", 1, true), "the first time nvcc ran: " .. broken)
T.ok(kept:find("nvcc failed (exit code 1) for broken (arch sm_90):", 1, true) and
  kept:find("kept in the compile cache", 1, true), "the second time, the kept error: " .. kept)
T.ok(broken:find("nvcc failed (exit code 1) for broken (arch sm_90):", 1, true), "how nvcc ended: " .. broken)
T.ok(broken:find("broken.cu", 1, true) and broken:find("error", 1, true), "nvcc's log, of the file as written: " .. broken)
T.ok(broken:find("command: [^\n]*nvcc %-cubin %-arch=sm_90 %-Xptxas=%-v %-%-keep"), "the command: " .. broken)
T.ok(out:find("PTX compute_90 true true", 1, true), "compute_90: the PTX: " .. out)
T.ok(out:find("CUBIN sm_90 true", 1, true), "sm_90: a cubin and its PTX: " .. out)
T.ok(out:find("REFUSED steps.lua:28: nvcc option '--dryrun' is not accepted", 1, true), "a refused option: " .. out)
local listing = io.popen("ls -A '" .. ws.dir .. "/tmp'")
local left = listing:read("a")
listing:close()
T.eq(left, "", "no temporary folder left behind")
T.done()
