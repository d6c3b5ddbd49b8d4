-- Kernels found by the names a programmer writes run the right code on the GPU: the project's
-- names_main.cu through compiler = "nvcc" (no names given: an enumerator form is lowered on
-- demand), and a fat binary of it (sm_80 + sm_90) loaded by the driver; each result checked.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local own = gpuexp.script_dir .. "/own/"
local toolkit = gpuexp.toolkit()
if not toolkit.nvcc then
  io.stderr:write("SKIP: no nvcc\n")
  os.exit(77)
end
local dir = T.temporary_directory()
local fatbin_path = dir .. "/names.fatbin"
local pipe = io.popen(string.format("'%s' -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 " ..
  "'%snames_main.cu' -o '%s' 2>&1", toolkit.nvcc, own, fatbin_path))
local log = pipe:read("a")
T.ok(pipe:close(), "nvcc -fatbin: " .. log)

local programs = {
  nvcc = gpuexp.compile{file = own .. "names_main.cu", compiler = "nvcc"},
  fatbin = gpuexp.load{file = fatbin_path},
}
local n = 4096
local input = dev:alloc("i32", n):random{seed = 7, min = -50, max = 50}
local values = input:to_table()
for label, program in pairs(programs) do
  -- reduce<int, 256, true>: one sum per block of 256
  local out = dev:alloc("i32", n // 256):fill(0)
  program:kernel("own::reduce<int,256,true>"):launch{grid = n // 256, block = 256, args = {input, out, gpuexp.u32(n)}}
  local sums = out:to_table()
  for block = 1, n // 256 do
    local expected = 0
    for i = (block - 1) * 256 + 1, block * 256 do expected = expected + values[i] end
    T.eq(sums[block], expected, label .. ": reduce<int, 256, true> block " .. block)
  end
  -- prefix_sum<4, WARP_SCANS, Scaled>: out = 3 * (4 * in + 1); by enumerators (nvcc) or enum casts (binary)
  local name = label == "nvcc" and "own::prefix_sum<4, own::SCAN_WARP_SCANS, own::Mode::Scaled>"
    or "prefix_sum<4, (own::ScanAlgorithm)1, (own::Mode)3>"
  local scanned = dev:alloc("i32", 32)
  program:kernel(name):launch{grid = 1, block = 32, args = {input, scanned}}
  local got = scanned:to_table()
  for i = 1, 32 do T.eq(got[i], 3 * (4 * values[i] + 1), label .. ": " .. name .. " at " .. i) end
end
T.done()
