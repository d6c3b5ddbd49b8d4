-- A CUB enum as a template argument (tests/gpu/own/names_cub.cuh): its mangled name carries
-- CCCL's inline ABI namespace, which changes with the architectures a build targets
-- (cub::CUB_300001_SM_900 for sm_90, ..._SM_800_900 for sm_80 + sm_90). One script's names find the
-- kernel under NVRTC and compiler = "nvcc" (enumerators, scoped or not) and in a cubin and a fat
-- binary built for two architecture lists ((Enum)value, the inline namespace left out).
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
if not gpuexp.plan then -- the binaries' offline reading needs a plan
  local binary = assert(arg[1], "the gpuexp binary is the first argument")
  os.exit(os.execute(string.format("'%s' --quiet --no-plan --arch sm_90 '%s'", binary, gpuexp.script)) and 0 or 1)
end
local own = gpuexp.script_dir .. "/../gpu/own/"
local toolkit = gpuexp.toolkit()
if not toolkit.include or not toolkit.nvcc or (toolkit.cccl or "") == "" then
  io.stderr:write("SKIP: no CUDA toolkit with nvcc and CUB here\n")
  os.exit(77)
end

local function symbol(abi, value)
  return string.format("_ZN3own16block_prefix_sumILi128ELN3cub%d%s18BlockScanAlgorithmE%dEEEvPKiPi", #abi, abi, value)
end
local function abi_of(program)
  return program:kernels()[1]:match("cub::(CUB_%d+_SM_[%d_]+)::")
end

-- NVRTC and nvcc have the source: enumerators, plain or scoped, and (Enum)value without the ABI namespace
local raking, warp_scans = "own::block_prefix_sum<128, cub::BLOCK_SCAN_RAKING>",
  "own::block_prefix_sum<128, cub::BlockScanAlgorithm::BLOCK_SCAN_WARP_SCANS>"
local programs = {
  nvrtc = gpuexp.compile{file = own .. "names_cub.cuh", arch = "sm_90", names = {raking, warp_scans}},
  nvcc = gpuexp.compile{file = own .. "names_cub.cu", arch = "sm_90", compiler = "nvcc"},
}
for label, program in pairs(programs) do
  local abi = abi_of(program)
  T.ok(abi and abi:match("_SM_900$"), label .. ": the build's inline namespace is sm_90's: " .. tostring(abi))
  T.eq(program:kernel(raking).symbol, symbol(abi, 0), label .. ": an unscoped enumerator")
  T.eq(program:kernel(warp_scans).symbol, symbol(abi, 2), label .. ": a scoped enumerator")
  T.eq(program:kernel("own::block_prefix_sum<128,cub::BLOCK_SCAN_WARP_SCANS>").symbol, symbol(abi, 2), label .. ": no spaces")
  T.eq(program:kernel("block_prefix_sum<128u, (cub::BlockScanAlgorithm)0>").symbol, symbol(abi, 0),
    label .. ": (Enum)value without the inline namespace")
end

-- binaries: a cubin for sm_90 and a fat binary for sm_80 + sm_90 have different inline namespaces;
-- the same names find both
local dir = T.temporary_directory()
local function nvcc_build(args, out)
  local pipe = io.popen(string.format("'%s' %s '%snames_cub.cu' -o '%s/%s' 2>&1", toolkit.nvcc, args, own, dir, out))
  local log = pipe:read("a")
  T.ok(pipe:close(), "nvcc " .. args .. ": " .. log)
  return dir .. "/" .. out
end
local binaries = {
  cubin = gpuexp.load{file = nvcc_build("-cubin -arch=sm_90", "cub.cubin")},
  fatbin = gpuexp.load{file = nvcc_build("-fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90",
    "cub.fatbin")},
}
local abis = {}
for label, binary in pairs(binaries) do
  local abi = abi_of(binary)
  abis[label] = abi
  T.eq(#binary:kernels(), 2, label .. ": two instantiations")
  T.eq(binary:kernel("own::block_prefix_sum<128, (cub::BlockScanAlgorithm)0>").symbol, symbol(abi, 0), label .. ": (Enum)0")
  T.eq(binary:kernel("block_prefix_sum<128,(cub::BlockScanAlgorithm)2>").symbol, symbol(abi, 2), label .. ": (Enum)2, no spaces")
  T.eq(binary:kernel(string.format("own::block_prefix_sum<128, (cub::%s::BlockScanAlgorithm)2>", abi)).symbol, symbol(abi, 2),
    label .. ": as the demangler writes it")
  -- a binary records values, not enumerator names: the error says how to write the name
  local err = T.raises(function() binary:kernel(raking) end, "whose enum arguments are recorded as values", label)
  T.ok(err.message:find("nearest: own::block_prefix_sum<128, (cub::" .. abi, 1, true), label .. ": " .. err.message)
end
T.ok(abis.cubin:match("_SM_900$") and abis.fatbin:match("_SM_800_900$"),
  "the two builds' inline namespaces differ: " .. tostring(abis.cubin) .. ", " .. tostring(abis.fatbin))
T.done()
