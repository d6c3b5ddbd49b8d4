-- Kernels found by the names a programmer writes, in the project's own files (tests/gpu/own/
-- names_kernels.cuh and names_main.cu: many template instantiations with host code, enum template
-- arguments, an fp16 kernel taking a struct by value), under NVRTC, compiler = "nvcc", and a cubin
-- and a fat binary built for two architecture lists, all without a GPU.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
if not gpuexp.plan then -- the lookups are the same with a GPU; the binaries' offline reading needs a plan
  local binary = assert(arg[1], "the gpuexp binary is the first argument")
  os.exit(os.execute(string.format("'%s' --quiet --no-plan --arch sm_90 '%s'", binary, gpuexp.script)) and 0 or 1)
end
local own = gpuexp.script_dir .. "/../gpu/own/"
local toolkit = gpuexp.toolkit()
if not toolkit.include or not toolkit.nvcc then
  io.stderr:write("SKIP: no CUDA toolkit with nvcc here\n")
  os.exit(77)
end

-- the forms a programmer writes, and the symbol each must find
local reduce_int_256 = "_ZN3own6reduceIiLj256ELb1EEEvPKT_PS1_j"
local reduce_int_256_false = "_ZN3own6reduceIiLj256ELb0EEEvPKT_PS1_j"
local multi_warp = "_ZN3own10multi_warpIfLm256ELy128EEEvPT_"
local prefix_scaled = "_ZN3own10prefix_sumILi4ELNS_13ScanAlgorithmE1ELNS_4ModeE3EEEvPKiPi"
local forms = {
  {"own::reduce<int, 256, true>", reduce_int_256},          -- as the source writes it
  {"own::reduce<int,256,true>", reduce_int_256},            -- no spaces
  {"own::reduce < int , 256u , 1 >", reduce_int_256},       -- suffix, 1 for true, spaces anywhere
  {"reduce<int, 256ul, true>", reduce_int_256},             -- without the namespace
  {"own::reduce<int, 256, false>", reduce_int_256_false},  -- false as the source writes it
  {"own::reduce<int,0x100,0>", reduce_int_256_false},       -- 0 for false
  {"own::reduce<int, 256, true>(const int*, int*, unsigned)", reduce_int_256}, -- with its parameter list, const before
  {"own::reduce<int, 256, true>(int const *, int *, unsigned int)", reduce_int_256}, -- const after
  {"own::multi_warp<float, 256, 128>", multi_warp},         -- the demangler writes 256ul, 128ull
  {"multi_warp<float, 0x100, 128ULL>", multi_warp},
  {"own::prefix_sum<4, (own::ScanAlgorithm)1, (own::Mode)3>", prefix_scaled}, -- enum casts, as a binary records them
  {"own::scale_half", "_ZN3own10scale_halfENS_10HalfParamsEPK6__halfPS1_P13__nv_bfloat16"},
}
local function check_forms(program, label)
  for _, form in ipairs(forms) do
    T.eq(program:kernel(form[1]).symbol, form[2], label .. ": '" .. form[1] .. "'")
  end
end

-- NVRTC, with the enumerator forms given as names (NVRTC lowers them exactly)
local names = {"own::reduce<int, 256, true>", "own::reduce<int, 256, false>", "own::prefix_sum<4, own::SCAN_WARP_SCANS, own::Mode::Scaled>",
  "own::prefix_sum<4, own::SCAN_RAKING, own::Mode::Plain>", "own::multi_warp<float, 256, 128>", "own::scale_half"}
local nvrtc = gpuexp.compile{file = own .. "names_kernels.cuh", arch = "sm_90", names = names}
check_forms(nvrtc, "nvrtc")
T.eq(nvrtc:kernel("own::prefix_sum<4, own::SCAN_WARP_SCANS, own::Mode::Scaled>").symbol, prefix_scaled, "nvrtc: enumerators")
T.eq(nvrtc:kernel("own::prefix_sum<4,own::SCAN_WARP_SCANS,own::Mode::Scaled>").symbol, prefix_scaled,
  "nvrtc: a name expression written without its spaces")

-- nvcc, the file with host code: the same names, lowered by nvcc itself
local nvcc = gpuexp.compile{file = own .. "names_main.cu", arch = "sm_90", compiler = "nvcc", names = names}
check_forms(nvcc, "nvcc")
T.eq(nvcc:kernel("own::prefix_sum<4, own::SCAN_WARP_SCANS, own::Mode::Scaled>").symbol, prefix_scaled, "nvcc: enumerators")
T.eq(nvcc:kernel("own::prefix_sum<4, own::SCAN_RAKING, own::Mode::Plain>").symbol,
  "_ZN3own10prefix_sumILi4ELNS_13ScanAlgorithmE0ELNS_4ModeE0EEEvPKiPi", "nvcc: the other enumerators")
T.eq(#nvcc:kernels(), 12, "nvcc: the host code's 12 instantiations")
T.raises(function() gpuexp.compile{file = own .. "names_main.cu", arch = "sm_90", compiler = "nvcc", names = {"own::nothing<3>"}} end,
  "nvcc could not resolve the names given to compile{names=...}", "nvcc: a name that names nothing")

-- without names: a name with enumerators is lowered by the compiler on first use (the program's
-- own compile with the name added), for both compilers
local plain = gpuexp.compile{file = own .. "names_main.cu", arch = "sm_90", compiler = "nvcc"}
T.eq(plain:kernel("own::prefix_sum<4, own::SCAN_WARP_SCANS, own::Mode::Scaled>").symbol, prefix_scaled,
  "nvcc without names: enumerators lowered on demand")
T.eq(plain:kernel("own::prefix_sum<4,own::SCAN_RAKING,own::Mode::Plain>").symbol,
  "_ZN3own10prefix_sumILi4ELNS_13ScanAlgorithmE0ELNS_4ModeE0EEEvPKiPi", "nvcc without names: the other enumerators")
local header_only = gpuexp.compile{file = own .. "names_kernels.cuh", arch = "sm_90",
  names = {"own::prefix_sum<4, own::SCAN_WARP_SCANS, own::Mode::Scaled>"}}
T.eq(header_only:kernel("own::prefix_sum<4, (own::ScanAlgorithm)1, (own::Mode)3>").symbol, prefix_scaled, "nvrtc: enum casts")
-- an instantiation the program does not have: the compile that lowered the name instantiated it
local raking = header_only:kernel("own::prefix_sum<4, own::SCAN_RAKING, own::Mode::Plain>")
T.eq(raking.symbol, "_ZN3own10prefix_sumILi4ELNS_13ScanAlgorithmE0ELNS_4ModeE0EEEvPKiPi", "nvrtc: instantiated on demand")
T.eq(#raking:resources().params, 2, "its parameters from the new compile's PTX")
T.eq(header_only:kernel("own::reduce<float, 64, false>").name, "own::reduce<float, 64u, false>", "nvrtc: any instantiation")
local bad = T.raises(function() header_only:kernel("own::reduce<float, 64, false, 3>") end, "no kernel 'own::reduce<float, 64, false, 3>'",
  "a name the compiler cannot lower")
T.ok(bad.message:find("nearest: own::scale_half, own::prefix_sum<4, (own::ScanAlgorithm)1, (own::Mode)3>", 1, true), "with the nearest names: " .. bad.message)

-- a cubin (sm_90) and a fat binary (sm_80 and sm_90) from the project's build, read without a driver
local dir = T.temporary_directory()
local function nvcc_build(args, out)
  local command = string.format("'%s' %s '%snames_main.cu' -o '%s/%s' 2>&1", toolkit.nvcc, args, own, dir, out)
  local pipe = io.popen(command)
  local log = pipe:read("a")
  T.ok(pipe:close(), "nvcc " .. args .. ": " .. log)
  return dir .. "/" .. out
end
local cubin = gpuexp.load{file = nvcc_build("-cubin -arch=sm_90", "names.cubin")}
local fatbin = gpuexp.load{file = nvcc_build("-fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90",
  "names.fatbin")}
for label, binary in pairs{cubin = cubin, fatbin = fatbin} do
  check_forms(binary, label)
  T.eq(#binary:kernels(), 12, label .. ": each kernel once (the fat binary has two ELFs)")
  -- a binary records enum values, not enumerator names: the error says so and how to write it
  local err = T.raises(function() binary:kernel("own::prefix_sum<4, own::SCAN_WARP_SCANS, own::Mode::Scaled>") end,
    "whose enum arguments are recorded as values, not enumerator names", label .. ": enumerators in a binary")
  T.ok(err.message:find("nearest: own::prefix_sum<4, (own::ScanAlgorithm)1, (own::Mode)3>", 1, true), label .. ": " .. err.message)
  -- a miss names the nearest kernels first
  err = T.raises(function() binary:kernel("own::reduce<int, 384, true>") end, "no kernel 'own::reduce<int, 384, true>'", label)
  T.ok(err.message:find("nearest: own::reduce<int, 256u, true>, own::reduce<int, 128u, true>", 1, true), label .. ": " .. err.message)
  err = T.raises(function() binary:kernel("own::reduce") end, "names several kernels", label .. ": ambiguous")
  -- parameters from the ELF, checked in the plan as the driver would: HalfParams is 16 bytes
  local scale = binary:kernel("own::scale_half")
  T.raises(function() scale:launch{grid = 1, block = 32, args = {gpuexp.struct{{"f32", 1}}, 0, 0, 0}} end,
    "is 4 bytes, but the kernel's parameter is 16 bytes", label .. ": a wrong struct")
end

-- kernels{details = true}: name, template arguments and parameter types
local details
for _, k in ipairs(nvcc:kernels{details = true}) do
  if k.symbol == multi_warp then details = k end
end
T.eq(details.name, "own::multi_warp<float, 256ul, 128ull>", "details: name")
T.eq(details.base, "own::multi_warp", "details: base")
T.eq(table.concat(details.template_args, "|"), "float|256ul|128ull", "details: template arguments")
T.eq(table.concat(details.params, "|"), "float*", "details: parameter types")
T.eq(#nvcc:kernels{details = false}, 12, "details = false: the plain list")
T.raises(function() nvcc:kernels{detail = true} end, "unknown option 'detail'", "kernels: a misspelt option")
T.done()
