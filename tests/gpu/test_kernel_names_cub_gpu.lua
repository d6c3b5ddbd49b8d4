-- The CUB block scan of tests/gpu/own/names_cub.cuh, found by the names a programmer writes, runs
-- the right code on the GPU through NVRTC, compiler = "nvcc", a cubin (sm_90) and a fat binary
-- (sm_80 + sm_90): each an exclusive prefix sum, checked against the host's, the same in all four.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local own = gpuexp.script_dir .. "/own/"
local toolkit = gpuexp.toolkit()
if not toolkit.nvcc then
  io.stderr:write("SKIP: no nvcc\n")
  os.exit(77)
end
local dir = T.temporary_directory()
local function nvcc_build(args, out)
  local pipe = io.popen(string.format("'%s' %s '%snames_cub.cu' -o '%s/%s' 2>&1", toolkit.nvcc, args, own, dir, out))
  local log = pipe:read("a")
  T.ok(pipe:close(), "nvcc " .. args .. ": " .. log)
  return dir .. "/" .. out
end
local raking = "own::block_prefix_sum<128, cub::BLOCK_SCAN_RAKING>"
local programs = {
  nvrtc = {gpuexp.compile{file = own .. "names_cub.cuh", names = {raking}}, raking},
  nvcc = {gpuexp.compile{file = own .. "names_cub.cu", compiler = "nvcc"}, raking},
  cubin = {gpuexp.load{file = nvcc_build("-cubin -arch=sm_90", "cub.cubin")}, "block_prefix_sum<128, (cub::BlockScanAlgorithm)0>"},
  fatbin = {gpuexp.load{file = nvcc_build("-fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90",
    "cub.fatbin")}, "own::block_prefix_sum<128,(cub::BlockScanAlgorithm)0>"},
}
local input = dev:alloc("i32", 128):random{seed = 3, min = -100, max = 100}
local values = input:to_table()
local expected, sum = {}, 0
for i = 1, 128 do expected[i] = sum; sum = sum + values[i] end
for label, entry in pairs(programs) do
  local out = dev:alloc("i32", 128):fill(-1)
  entry[1]:kernel(entry[2]):launch{grid = 1, block = 128, args = {input, out}}
  local got = out:to_table()
  for i = 1, 128 do T.eq(got[i], expected[i], label .. ": " .. entry[2] .. " at " .. i) end
  print(label, "exclusive sum checked", got[128])
end
T.done()
