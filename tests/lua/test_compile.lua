-- NVRTC without a GPU: resources from the ptxas report, the cubin cache, errors with the log.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")

local source = [[
extern "C" __global__ void copy(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] * SCALE; }
extern "C" __global__ void staged(float *out, int n) {
  __shared__ float tile[4096];
  tile[threadIdx.x] = threadIdx.x; __syncthreads(); if (threadIdx.x < n) out[threadIdx.x] = tile[threadIdx.x ^ 1]; }
extern "C" __global__ void spills(float *out, int n) {
  float a[256];
  for (int i = 0; i < 256; i++) a[i] = out[i * n];
  out[0] = a[n & 255] + a[(n * 7) & 255]; }
template <typename T> __global__ void scale(T *out, T s) { out[threadIdx.x] *= s; }
]] .. "// unique per run, so the first compile below is a cache miss: " .. gpuexp.hash(os.time() .. gpuexp.clock()) .. "\n"
local options = {source = source, name = "test_kernels.cu", arch = "sm_80", defines = {SCALE = 2},
  names = {"scale<float>", "scale<double>"}, options = {"-maxrregcount=64"}}
local program = gpuexp.compile(options)
T.eq(program.cache_hit, false, "first compile is a miss")
T.eq(program.arch, "sm_80", "arch"); T.eq(program.name, "test_kernels.cu", "name")
T.ok(program.cubin_bytes > 1000, "cubin produced")
T.ok(program.ptx:find(".target sm_80", 1, true), "ptx for the arch")

local found, copy = pcall(program.resources, program, "copy")
T.ok(found, "ptxas report has 'copy'; the log was:\n" .. program.log)
-- the same PTX again (another comment): the report must still be there (NVRTC can skip ptxas
-- when the driver's compute cache has the PTX; gpuexp turns that cache off)
local again_ptx = gpuexp.compile{source = source .. "// again", arch = "sm_80", defines = {SCALE = 2},
  names = options.names, options = options.options, cache = false}
T.ok(pcall(again_ptx.resources, again_ptx, "copy"), "ptxas report on a repeated PTX")
T.ok(copy.registers >= 4 and copy.registers <= 32, "copy registers: " .. copy.registers)
T.eq(copy.static_shared_bytes, 0, "copy shared")
local staged = program:resources("staged")
T.eq(staged.static_shared_bytes, 16384, "16 KB of static shared memory")
T.eq(staged.barriers, 1, "one barrier")
local spills = program:resources("spills")
T.ok(spills.stack_frame_bytes >= 1024, "local array on the stack: " .. spills.stack_frame_bytes)
local scale = program:resources("scale<double>")
T.ok(scale.registers > 0, "name expression resolves to its mangled kernel")
local names = program:kernels()
T.eq(#names, 5, "five kernels")

-- a second compile of the same input is a cache hit, with the same report
local again = gpuexp.compile(options)
T.ok(again.cache_hit, "second compile hits the cache")
T.eq(again.cache_key, program.cache_key, "same key")
T.eq(again:resources("staged").static_shared_bytes, 16384, "resources from the cached report")
T.eq(again:resources("scale<float>").registers, program:resources("scale<float>").registers, "names from the cache")
-- anything that changes the code changes the key
local other_define = gpuexp.compile{source = source, arch = "sm_80", defines = {SCALE = 3}, names = options.names}
T.ok(other_define.cache_key ~= program.cache_key and not other_define.cache_hit, "another define recompiles")
local other_arch = gpuexp.compile{source = source, arch = "sm_90", defines = {SCALE = 2}}
T.ok(other_arch.cache_key ~= program.cache_key, "another arch, another key")
T.eq(gpuexp.compile{source = source, arch = "sm_80", defines = {SCALE = 2}, names = options.names,
  options = {"-maxrregcount=64"}, cache = false}.cache_hit, false, "cache = false compiles")

-- an included header is part of the key
local dir = T.temporary_directory()
local write = T.write
write(dir .. "/factor.h", "#define FACTOR 2.0f\n")
write(dir .. "/k.cu", '#include "factor.h"\n// ' .. dir .. '\nextern "C" __global__ void f(float *o) { o[0] *= FACTOR; }\n')
local first = gpuexp.compile{file = dir .. "/k.cu", arch = "sm_80"}
T.ok(gpuexp.compile{file = dir .. "/k.cu", arch = "sm_80"}.cache_hit, "unchanged header: cache hit")
write(dir .. "/factor.h", "#define FACTOR 3.0f\n")
local changed = gpuexp.compile{file = dir .. "/k.cu", arch = "sm_80"}
T.ok(not changed.cache_hit and changed.cache_key ~= first.cache_key, "changed header: recompiled")

-- a virtual architecture: PTX only (the driver compiles it at load), with the kernel's entry
local ptx_only = gpuexp.compile{source = 'extern "C" __global__ void v(float *o) { o[0] = 1; }\n', arch = "compute_80",
  cache = false}
T.eq(ptx_only.arch, "compute_80", "PTX-only arch")
T.ok(ptx_only.ptx:find(".target sm_80", 1, true) and ptx_only.ptx:find(".entry v", 1, true), "its PTX: " .. ptx_only.ptx)

-- errors: the compile log with file and line, kind "compile"
local err = T.raises(function()
  gpuexp.compile{source = 'extern "C" __global__ void k(float *o) {\n  o[0] = undefined_name;\n}\n', name = "broken.cu", arch = "sm_80"}
end, "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION")
T.eq(err.kind, "compile", "error kind")
T.ok(err.message:find('broken.cu(2): error: identifier "undefined_name" is undefined', 1, true), "log with file and line: " .. err.message)
T.ok(err.message:find("^.-test_compile.lua:%d+: "), "script location first")
-- a compile error is kept in the cubin cache: the same source fails again at once, with the same
-- log, and says where it was kept (a tune's compile helpers reach a failing configuration first);
-- cache = false compiles it again
local broken = 'extern "C" __global__ void k(float *o) {\n  o[0] = undefined_name;\n}\n// ' ..
  gpuexp.hash("kept" .. os.time() .. gpuexp.clock()) .. "\n"
local function broken_compile(cache)
  return T.raises(function() gpuexp.compile{source = broken, name = "kept.cu", arch = "sm_80", cache = cache} end,
    "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION")
end
local first_error = broken_compile()
T.ok(not first_error.message:find("kept in the compile cache", 1, true), "the first time compiled: " .. first_error.message)
local kept = broken_compile()
T.eq(kept.kind, "compile", "a kept error's kind")
T.ok(kept.message:find("kept in the compile cache", 1, true) and
  kept.message:find('kept.cu(2): error: identifier "undefined_name" is undefined', 1, true), "kept, with its log: " .. kept.message)
T.ok(kept.message:find("^.-test_compile.lua:%d+: "), "a kept error names the script's line")
T.ok(not broken_compile(false).message:find("kept in the compile cache", 1, true), "cache = false compiles it again")
T.raises(function() gpuexp.compile{source = "x", file = "y"} end, "exactly one of 'source'")
T.raises(function() gpuexp.compile{file = "no/such/kernel.cu", arch = "sm_80"} end, "kernel file 'no/such/kernel.cu' not found")
T.raises(function() gpuexp.compile{source = "", arch = "gfx90a"} end, "arch must look like 'sm_90'")
T.raises(function() gpuexp.compile{source = "", arch = "sm_80", defines = {X = {}}} end, "define 'X' must be")
T.raises(function() gpuexp.compile{source = "", arch = "sm_80", options = {1}} end, "options[1] must be a string")
T.raises(function() gpuexp.compile{source = "", arch = "sm_80", optimize = true} end, "unknown option 'optimize'")
T.raises(function() program:resources("nope") end, "no kernel 'nope'")
-- shipped kernels compile for every architecture NVRTC 13 supports (it dropped sm_70)
for _, arch in ipairs({"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}) do
  local saxpy = gpuexp.compile{file = gpuexp.script_dir .. "/../../kernels/saxpy.cu", arch = arch}
  T.eq(saxpy:resources("sophisticated").static_shared_bytes, 49152, "48 KB on " .. arch)
  T.eq(saxpy:resources("balanced").static_shared_bytes, 16384, "16 KB on " .. arch)
end
T.done()
