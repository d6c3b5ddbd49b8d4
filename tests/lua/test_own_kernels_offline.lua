-- A team's own kernels without a GPU: the toolkit's headers found by NVRTC, a project's nvcc
-- options, nvcc for a file with host code, C++ names, PTX loaded in a plan, structs laid out as C
-- lays them out (checked against the compiler's own parameter sizes), and sequences in a plan.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = arg[1]
local own = gpuexp.script_dir .. "/../gpu/own/"

-- ---- the toolkit ----
local toolkit = gpuexp.toolkit()
if not toolkit.include then
  io.stderr:write("SKIP: no CUDA toolkit headers here (" .. tostring(toolkit.searched) .. ")\n")
  os.exit(77)
end
T.eq(toolkit.missing, "", "every common header is in the toolkit")
T.ok(toolkit.cuda_version:match("^%d+%.%d+$"), "the toolkit's CUDA version: " .. tostring(toolkit.cuda_version))

-- CG and CUB with no include option and no edit
local names = {"own::sum_squares_cub<256>", "own::sum_squares_cg<float>"}
local program = gpuexp.compile{file = own .. "reduce_kernels.cuh", arch = "sm_90", names = names}
T.eq(table.concat(program:kernels(), ","), "own::axpy_params,own::push_particles,own::scale,own::add," ..
  "own::sum_squares_cg<float>,own::sum_squares_cub<256>", "kernels by C++ name, in the file's order")
local cub = program:resources("own::sum_squares_cub<256>")
T.eq(cub.name, "own::sum_squares_cub<256>", "the name as C++ writes it")
T.eq(cub.symbol, "_ZN3own15sum_squares_cubILi256EEEvPfPKfm", "the mangled symbol")
T.ok(cub.static_shared_bytes > 0, "CUB's temporary storage is static shared memory")
T.eq(program:resources("sum_squares_cg").name, "own::sum_squares_cg<float>", "a name without namespace or template arguments")

-- the user's include folders come before the toolkit's
local dir = T.temporary_directory()
local shadow = assert(io.open(dir .. "/cooperative_groups.h", "w"))
shadow:write("#define SHADOWED 42\n")
shadow:close()
local shadowed = gpuexp.compile{source = '#include <cooperative_groups.h>\nextern "C" __global__ void k(int *o) { o[0] = SHADOWED; }',
  arch = "sm_90", include = {dir}}
T.ok(shadowed.ptx:find("42", 1, true), "the user's cooperative_groups.h was found first")

-- ---- a project's nvcc options ----
local options = gpuexp.compile{file = own .. "reduce_kernels.cuh", arch = "sm_90", names = names,
  options = {"-O3", "--use_fast_math", "-Xptxas", "-O3,-v", "-lineinfo", "--expt-relaxed-constexpr", "-Xcompiler", "-Wall",
             "-gencode", "arch=compute_80,code=sm_80"}}
T.ok(options.notes:find("-O3: dropped", 1, true), "-O3 noted: " .. options.notes)
T.ok(options.notes:find("arch = sm_90 given", 1, true), "an explicit arch wins over -gencode")
T.ok(options.ptx:find(".loc", 1, true), "-lineinfo took effect")
T.raises(function() gpuexp.compile{source = "__global__ void k() {}", arch = "sm_90", options = {"-rdc=true"}} end,
  "-rdc=true cannot be used with NVRTC", "-rdc=true refused with the way out")
-- NVRTC takes no host code: the error says what to do instead
local host_error = T.raises(function() gpuexp.compile{file = own .. "reduce_main.cu", arch = "sm_90"} end, "hint:",
  "a file with host code")
T.ok(host_error.message:find('compiler = "nvcc"', 1, true), "the hint names compiler = \"nvcc\"")

-- ---- structs as C lays them out, against the compiler's parameter sizes (in the PTX) ----
local function ptx_params(ptx, kernel)
  local list = {}
  for size in ptx:match("%.entry " .. kernel .. "%((.-)%)"):gmatch("%.b8 [%w_]+%[(%d+)%]") do list[#list + 1] = tonumber(size) end
  return list
end
local Axpy = gpuexp.layout{{"alpha", "f32"}, {"n", "i32"}, {"x", "ptr"}, {"y", "ptr"}}
T.eq(Axpy.size, 24, "Axpy size")
T.eq(ptx_params(program.ptx, "_ZN3own11axpy_paramsENS_4AxpyE")[1], 24, "the compiler's Axpy is 24 bytes")
local Particle = gpuexp.layout{{"position", "f32", 3}, {"id", "i32"}, {"mass", "f64"}}
T.eq(Particle.size, 24, "Particle size")
T.eq(Particle.offsets.mass, 16, "Particle.mass offset")
local mixed = gpuexp.compile{arch = "sm_90", source = [[
struct Mixed { char c; double d; short s; float f[3]; };
struct __align__(16) Wide { float x; int y; };
struct Nest { char c; Mixed m; Wide w; };
extern "C" __global__ void takes(Mixed m, Wide w, Nest n, int *o) { o[0] = m.c + w.y + n.c; }
static_assert(sizeof(Mixed) == 32 && alignof(Mixed) == 8, "Mixed");
static_assert(sizeof(Nest) == 64, "Nest");
]]}
local Mixed = gpuexp.layout{{"c", "i8"}, {"d", "f64"}, {"s", "i16"}, {"f", "f32", 3}}
local Wide = gpuexp.layout({{"x", "f32"}, {"y", "i32"}}, {align = 16})
local Nest = gpuexp.layout{{"c", "i8"}, {"m", Mixed}, {"w", Wide}}
local params = ptx_params(mixed.ptx, "takes")
T.eq(params[1], Mixed.size, "Mixed: C's padding after c and s")
T.eq(params[2], Wide.size, "Wide: __align__(16) rounds it to 16")
T.eq(params[3], Nest.size, "Nest: nested structs keep their alignment")
T.eq(Mixed.offsets.d, 8, "d after the padding")
T.eq(Nest.offsets.w, 48, "w at a multiple of 16")
-- values round-trip through the C layout
local rows = {{c = -3, d = 2.5, s = 300, f = {1, 2, 3}}, {c = 7, d = -1e300, s = -2, f = {0.5, 0.25, 0.125}}}
local back = Mixed:unpack(Mixed:pack(rows))
T.eq(back[2].d, -1e300, "a double round-trips")
T.eq(back[1].s, 300, "a short round-trips")
T.eq(back[2].f[3], 0.125, "an array element round-trips")
T.eq(#Mixed:pack(rows), 2 * Mixed.size, "an array of structs is contiguous")
local value = Nest{c = 1, m = rows[1], w = {x = 1, y = 2}}
T.eq(value.size, 64, "a struct value's size")
T.eq(value.align, 16, "a struct value's alignment")
T.eq(gpuexp.struct{{"f32", 1.5}, {"i32", 7}, {"ptr", 0}}.size, 16, "the anonymous form")
T.raises(function() Mixed{c = 1, d = 2, s = 3} end, "struct.f is missing", "a missing field")
T.raises(function() Mixed{c = 1, d = 2, s = 3, f = {1, 2, 3}, g = 4} end, "no field 'g'", "an extra field")
T.raises(function() Mixed{c = 1.5, d = 2, s = 3, f = {1, 2, 3}} end, "i8 takes an integer", "a non-integer")
T.raises(function() Mixed{c = 1000, d = 2, s = 3, f = {1, 2, 3}} end, "struct", "a value out of range")
T.raises(function() gpuexp.layout{{"x", "f128"}} end, "unknown type 'f128'", "an unknown type")
T.raises(function() gpuexp.layout({{"x", "f64"}}, {align = 4}) end, "power of two of at least 8", "a weaker alignment")
T.raises(function() gpuexp.bytes("") end, "1 to 32764 bytes", "empty bytes")

-- ---- plans through the binary: nvcc, PTX, the architecture a project's builds pick ----
local ws = T.workspace(binary)
local ptx_path = ws.write("reduce.ptx", program.ptx)
ws.write("plan.lua", string.format([[
local own = %q
local p = gpuexp.compile{file = own .. "reduce_kernels.cuh", options = {"-arch=sm_80"}}
print("picked", p.arch)
local q = gpuexp.compile{file = own .. "reduce_kernels.cuh", names = {"own::sum_squares_cub<256>"}}
print("names", q:kernel("sum_squares_cub").name, q:kernel("own::sum_squares_cub<256>").symbol)
print("unknown", select(2, pcall(q.kernel, q, "own::sum")).message:match("no kernel 'own::sum' in"))
print("struct", q:kernel("own::axpy_params"):resources().params[1])
local ok0, why0 = pcall(q:kernel("own::axpy_params").launch, q:kernel("own::axpy_params"),
  {grid = 1, block = 1, args = {gpuexp.struct{{"f32", 1}, {"i32", 2}, {"ptr", 0}}}})
print("size", why0.message:match("is 16 bytes, but the kernel's parameter is 24 bytes"))
local loaded = gpuexp.load{file = %q}
print("ptx", loaded.kind, #loaded:kernels(), table.concat(loaded:kernel("own::sum_squares_cub<256>"):resources().params, ","))
local ok, why = pcall(loaded:kernel("own::scale").launch, loaded:kernel("own::scale"), {grid = 1, block = 1, args = {}})
print("checked", why.message:match("takes %%d+ arguments"))
local ok2, why2 = pcall(gpuexp.load, {file = own .. "reduce_main.cu"})
print("text", why2.message:match("is not a cubin"))
local seq = gpuexp.sequence(function() p:kernel("own::scale"):launch{grid = 1, block = 1, args = {}} end)
local ok3, why3 = pcall(seq.measure, seq, {})
print("sequence", why3.message:match("plan%%.lua:%%d+"))
if gpuexp.toolkit().nvcc then
  local n = gpuexp.compile{file = own .. "reduce_main.cu", compiler = "nvcc", options = {"-O3"}}
  print("nvcc", n.compiler, n:resources("own::sum_squares_cub<256>").registers > 0, #n:kernels())
end
]], own, ptx_path))
local code, out, err = ws.run("--arch sm_90 plan.lua")
T.eq(code, 0, "the plan ran: " .. err)
T.ok(out:find("picked\tcompute_80", 1, true), "-arch=sm_80 on sm_90 runs its PTX: " .. out)
T.ok(out:find("names\town::sum_squares_cub<256>\t_ZN3own15sum_squares_cubILi256EEEvPfPKfm", 1, true), "kernels by C++ name")
T.ok(out:find("unknown\tno kernel 'own::sum' in", 1, true), "an unknown name lists the kernels")
T.ok(out:find("struct\tb8[24]", 1, true), "a struct parameter")
T.ok(out:find("size\tis 16 bytes", 1, true), "a struct of the wrong size is refused before the launch")
T.ok(out:find("ptx\tptx\t6\tu64,u64,u64", 1, true), "PTX loaded in a plan, parameters from the PTX: " .. out)
T.ok(out:find("checked\ttakes 4 arguments", 1, true), "a loaded kernel's launch is checked in a plan")
T.ok(out:find("text\tis not a cubin", 1, true), "source is not a binary")
T.ok(out:find("sequence\tplan.lua:", 1, true), "a sequence's bad launch names the script's line")
if gpuexp.toolkit().nvcc then
  T.ok(out:find("nvcc\tnvcc\ttrue\t6", 1, true), "nvcc compiled the file with host code, with the ptxas report: " .. out)
end
ws.write("cubin.lua", 'gpuexp.load{file = "x.cubin"}')
ws.write("x.cubin", "\127ELF\2\1\1" .. string.rep("\0", 9) .. "\1\0\190\0" .. string.rep("\0", 44))
code, out, err = ws.run("--arch sm_90 cubin.lua")
T.ok(code ~= 0 and err:find("cubin.lua:1: load: ", 1, true) and err:find("a cubin in it has no readable symbol table", 1, true),
  "a damaged cubin in a plan: the reason, at the script's line: " .. err)
print("ok")
