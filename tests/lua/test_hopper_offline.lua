-- Hopper launches without a GPU (an offline plan for sm_90): launch attributes checked against the
-- architecture and the occupancy model (clusters that do not divide the grid or are too large, a
-- kernel's own __cluster_dims__, a cooperative grid larger than what can be resident, programmatic
-- launches before 9.0), cluster occupancy, TMA descriptors against cuTensorMapEncodeTiled's
-- documented constraints and the kernel's parameter (by value and inside a layout), module globals
-- sized from the binary, and nvcc name expressions whose instantiation is in the cubin that loads.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = arg[1]
local root = gpuexp.script_dir .. "/../../"
local own = gpuexp.script_dir .. "/../gpu/own/"
-- run the real checks in a plan of its own: this file is run without --arch by ctest, so it
-- re-runs itself as a plan for sm_90 and for sm_80
if not gpuexp.plan then
  local function plan(arch, which)
    local command = string.format("'%s' --quiet --arch %s '%s' '%s' %s 2>&1", binary, arch, gpuexp.script_dir ..
      "/test_hopper_offline.lua", binary, which)
    local pipe = assert(io.popen(command))
    local output = pipe:read("a")
    local ok, _, code = pipe:close()
    if not ok then error(string.format("the %s plan failed (exit %s):\n%s", arch, tostring(code), output)) end
    return output
  end
  local output = plan("sm_90", "hopper")
  T.ok(output:find("hopper checks done", 1, true), "the sm_90 plan ran every check:\n" .. output)
  output = plan("sm_80", "ampere")
  T.ok(output:find("ampere checks done", 1, true), "the sm_80 plan ran every check:\n" .. output)
  print("ok test_hopper_offline")
  return
end

local which = arg[2]
local dev = gpuexp.device()
local program = gpuexp.compile{file = root .. "kernels/hopper.cu"}
local out = dev:alloc("i32", 1024)

if which == "ampere" then -- no clusters, TMA or programmatic launches before 9.0
  local neighbors = program.arch == "sm_80" and program:kernel("cluster_neighbors")
  T.raises(function() neighbors:launch{grid = 4, block = 32, args = {out, out, out}, cluster = {2}} end,
    "thread block clusters need compute capability 9.0 (Hopper) or newer, and sm_80 (offline plan) is 8.0", "cluster on 8.0")
  local producer = program:kernel("pdl_producer")
  T.raises(function() producer:launch{grid = 1, block = 32, programmatic = true,
    args = {dev:alloc("f32", 4), gpuexp.i32(4), dev:alloc("u64", 1), gpuexp.i32(1)}} end,
    "programmatic dependent launch needs compute capability 9.0", "programmatic on 8.0")
  T.raises(function() gpuexp.tensor_map{buffer = dev:alloc("f32", 1024), dims = {32, 32}, box = {32, 32}} end,
    "TMA descriptors need compute capability 9.0 (Hopper) or newer, and this plan is for sm_80", "TMA on 8.0")
  print("ampere checks done")
  return
end

-- ---- clusters ----
local neighbors = program:kernel("cluster_neighbors")
neighbors:launch{grid = 8, block = 32, args = {out, out, out}, cluster = {4}}
T.raises(function() neighbors:launch{grid = 6, block = 32, args = {out, out, out}, cluster = {4}} end,
  "grid 6x1x1 is not a whole number of clusters of 4x1x1 (grid.x = 6 is not a multiple of 4)", "cluster not dividing the grid")
T.raises(function() neighbors:launch{grid = {2, 3}, block = 32, args = {out, out, out}, cluster = {2, 2}} end,
  "(grid.y = 3 is not a multiple of 2)", "the dimension that does not divide is named")
neighbors:launch{grid = 16, block = 32, args = {out, out, out}, cluster = {16}} -- non-portable: H100 allows 16
T.raises(function() neighbors:launch{grid = 32, block = 32, args = {out, out, out}, cluster = {32}} end,
  "a cluster of 32x1x1 = 32 blocks: sm_90 (offline plan) allows at most 16 (8 portably", "cluster over the limit")
T.raises(function() neighbors:launch{grid = 4, block = 32, args = {out, out, out}, cluster = {0}} end,
  "cluster[1] must be an integer from 1", "a zero cluster")
local pairs_kernel = program:kernel("cluster_pairs")
pairs_kernel:launch{grid = 4, block = 32, args = {out}}
pairs_kernel:launch{grid = 4, block = 32, args = {out}, cluster = {2, 1, 1}} -- the same as declared
T.raises(function() pairs_kernel:launch{grid = 3, block = 32, args = {out}} end,
  "grid 3x1x1 is not a whole number of clusters of 2x1x1 (its __cluster_dims__)", "__cluster_dims__ checked without cluster")
T.raises(function() pairs_kernel:launch{grid = 4, block = 32, args = {out}, cluster = {4}} end,
  "the kernel declares __cluster_dims__(2, 1, 1)", "a cluster other than the kernel's own")
-- the same checks through bind, time, measure
T.raises(function() neighbors:bind{grid = 6, block = 32, args = {out, out, out}, cluster = {4}} end,
  "not a whole number of clusters", "bind checks the cluster")
T.raises(function() neighbors:measure{grid = 6, block = 32, args = {out, out, out}, cluster = {4}} end,
  "not a whole number of clusters", "measure passes the cluster on")
T.eq(neighbors:time{grid = 8, block = 32, args = {out, out, out}, cluster = {4}}.samples, 0, "time in a plan: no samples")

-- cluster occupancy: what a plan can model
local occupancy = neighbors:occupancy{block = 1024, cluster = {4}}
T.eq(occupancy.cluster_size, 4, "cluster size")
T.eq(occupancy.blocks_per_sm, 2, "the model: 2 blocks of 1024 threads per SM")
T.eq(occupancy.active_clusters_bound, 2 * 132 // 4, "the bound: 2 blocks x 132 SMs in clusters of 4")
T.ok(occupancy.cluster_note:find("cuOccupancyMaxActiveClusters", 1, true), "what needs the GPU is said")
T.eq(pairs_kernel:occupancy{block = 128}.cluster_size, 2, "a kernel's own __cluster_dims__ count")
T.eq(program:kernel("polynomial"):occupancy{block = 128}.cluster_size, nil, "no cluster, no cluster fields")

-- ---- cooperative launch: the grid must be resident at once, as modelled on the largest sm_90 GPU ----
local grid_sum = program:kernel("grid_sum")
local values = dev:alloc("i32", 1 << 20)
local resident = grid_sum:occupancy{block = 256}.blocks_per_sm * 132
grid_sum:launch{grid = resident, block = 256, cooperative = true, args = {values, gpuexp.i32(1 << 20), out, out}}
T.raises(function() grid_sum:launch{grid = resident + 1, block = 256, cooperative = true,
  args = {values, gpuexp.i32(1 << 20), out, out}} end,
  string.format("a grid of %d blocks, but at most %d of them can be resident at once on sm_90 (offline plan)", resident + 1,
    resident), "a cooperative grid larger than co-resident blocks")
T.raises(function() grid_sum:launch{grid = 4, block = 256, cooperative = 1, args = {values, gpuexp.i32(4), out, out}} end,
  "'cooperative' must be true or false, got number", "a flag's type")
T.raises(function() grid_sum:launch{grid = 4, block = 256, coperative = true, args = {values, gpuexp.i32(4), out, out}} end,
  "unknown option 'coperative'", "an unknown launch key")

-- ---- programmatic dependent launch in a sequence ----
local data, consumed, stamps = dev:alloc("f32", 4096), dev:alloc("f32", 4096), dev:alloc("u64", 2)
local producer, consumer = program:kernel("pdl_producer"), program:kernel("pdl_consumer")
local sequence = gpuexp.sequence(function()
  producer:launch{grid = 4, block = 256, args = {data, gpuexp.i32(4096), stamps, gpuexp.i32(10)}}
  consumer:launch{grid = 4, block = 256, programmatic = true, args = {data, consumed, gpuexp.i32(4096), stamps}}
end)
T.eq(sequence:measure{}.kernels, 2, "the sequence's two launches are checked in the plan")

-- ---- TMA descriptors ----
local tma_copy = program:kernel("tma_copy")
local image = dev:alloc("f32", 100 * 70)
local map = gpuexp.tensor_map{buffer = image, dims = {100, 70}, box = {32, 32}}
T.eq(tostring(map), "gpuexp.TensorMap(128 bytes, aligned to 64)", "a descriptor is 128 bytes aligned to 64")
T.eq(map.tensor_maps, 1, "it says it is one")
tma_copy:launch{grid = {4, 3}, block = 128, args = {map, dev:alloc("f32", 7000), gpuexp.i32(100), gpuexp.i32(70)}}
T.raises(function() program:kernel("polynomial"):launch{grid = 1, block = 32, args = {map, out, gpuexp.i32(1)}} end,
  "argument 1 of 'polynomial' is a TMA descriptor (gpuexp.tensor_map), but the kernel's parameter is .u64",
  "a descriptor where a pointer goes is refused")
local Args = gpuexp.layout{{"map", "tensor_map"}, {"width", "i32"}, {"height", "i32"}}
T.eq(Args.size, 192, "a struct with a descriptor: 128 + 8 bytes, padded to 64")
T.eq(Args.align, 64, "aligned as its descriptor")
local args = Args{map = map, width = 100, height = 70}
T.eq(args.tensor_maps, 1, "the struct says it holds a descriptor")
program:kernel("tma_copy_struct"):launch{grid = {4, 3}, block = 128, args = {args, dev:alloc("f32", 7000)}}
T.raises(function() Args{map = gpuexp.bytes(string.rep("\0", 128), {align = 64}), width = 1, height = 1} end,
  "a tensor_map field takes a TMA descriptor from gpuexp.tensor_map", "a tensor_map field takes only descriptors")
-- a descriptor for a parameter aligned to less than 64 bytes
local low = gpuexp.compile{source = [[
struct Eight { unsigned long long a[16]; };
extern "C" __global__ void eight(const __grid_constant__ Eight e, int *out) { out[0] = (int)e.a[0]; }]]}
T.raises(function() low:kernel("eight"):launch{grid = 1, block = 1, args = {map, out}} end,
  "the kernel's parameter is aligned to 8 bytes, not 64", "a descriptor needs a 64-byte aligned parameter")

-- every documented constraint of cuTensorMapEncodeTiled, before the driver sees it
local bytes16 = dev:alloc("f16", 1 << 16)
local refusals = {
  {{dims = {100, 71}, box = {32, 32}, buffer = image}, "the tensor spans 28400 bytes from offset 0, but the buffer has 28000 bytes"},
  {{dims = {30, 70}, box = {32, 32}, buffer = image}, "strides[1] = 120 bytes: a stride is a multiple of 16 bytes"},
  {{dims = {64, 64}, box = {32, 32}, strides = {1 << 40}, buffer = image}, "below 2^40"},
  {{dims = {100, 70}, box = {257, 1}, buffer = image}, "box[1] = 257: a box has 1 to 256 elements per dimension"},
  {{dims = {100, 70}, box = {2, 2}, buffer = image}, "box[1] = 2 f32 elements = 8 bytes: the box's inner dimension must be a multiple of 16 bytes"},
  {{dims = {100, 70}, box = {32, 32}, element_strides = {1, 9}, buffer = image}, "element_strides[2] = 9: each is 1 to 8"},
  {{dims = {100, 70}, box = {32}, buffer = image}, "'box' must have as many entries as 'dims' (2)"},
  {{dims = {1, 2, 3, 4, 5, 6}, box = {1, 1, 1, 1, 1, 1}, buffer = image}, "'dims' must be a list of 1 to 5 integers"},
  {{dims = {100, 70}, box = {32, 32}, offset = 8, buffer = image}, "(offset 8 bytes) must be 16-byte aligned"},
  {{dims = {128, 64}, box = {128, 8}, swizzle = "128B", buffer = bytes16}, "swizzle = \"128B\" takes a box whose inner dimension is at most 128 bytes, and box[1] = 128 f16 elements is 256 bytes"},
  {{dims = {64, 64}, box = {64, 8}, swizzle = "64B", buffer = bytes16}, "swizzle = \"64B\" takes a box whose inner dimension is at most 64 bytes"},
  {{dims = {8, 8}, box = {8, 8}, interleave = "16B", buffer = bytes16}, "interleave = \"16B\" needs a rank of at least 3"},
  {{dims = {16, 8, 8}, box = {16, 8, 8}, interleave = "32B", buffer = bytes16}, "interleave = \"32B\" needs swizzle = \"32B\""},
  {{dims = {64, 64}, box = {64, 8}, type = "i32", oob_fill = "nan", buffer = bytes16}, "oob_fill = \"nan\" is for floating-point elements, and i32 is not one"},
  {{dims = {64, 64}, box = {64, 8}, l2_promotion = "512B", buffer = bytes16}, "l2_promotion = \"512B\" is not one of none, 64B, 128B, 256B"},
  {{dims = {64, 64}, box = {64, 8}, type = "f24", buffer = bytes16}, "unknown element type 'f24'"},
  {{dims = {64, 64}, box = {64, 8}, buffer = bytes16, boxes = 1}, "unknown option 'boxes'"},
}
for i, case in ipairs(refusals) do
  T.raises(function() gpuexp.tensor_map(case[1]) end, case[2], "refusal " .. i)
end
-- what is accepted: f16, bf16 and fp8 (as bytes), swizzle spans, interleave, L2 promotion, NaN fill
local accepted = dofile(gpuexp.script_dir .. "/../fixtures/tensor_maps.lua")
for i, spec in ipairs(accepted(bytes16, dev:alloc("fp8_e4m3", 1 << 16), image, 100, 70)) do
  T.eq(gpuexp.tensor_map(spec).tensor_maps, 1, "accepted " .. i)
end

-- ---- module globals: sizes from the binary, did-you-mean ----
local globals = {}
for _, g in ipairs(program:globals()) do globals[g.name] = g end
T.eq(globals.coefficients.bytes, 32, "__constant__ float coefficients[8]")
T.eq(globals.coefficients.space, "constant", "in constant memory")
T.eq(globals.calls.space, "device", "__device__ unsigned calls")
T.eq(#program:globals(), 2, "the toolkit headers' own variables are not listed")
local coefficients = program:global("coefficients", "f32")
T.eq(coefficients.count, 8, "8 floats")
T.eq(coefficients.name, "coefficients", "a global is a buffer with a name")
coefficients:copy_from({1, 2, 3, 4, 5, 6, 7, 8}) -- checked, nothing copied in a plan
T.eq(program:global("calls").type, "u32", "the type PTX declares")
T.raises(function() program:global("coefficents") end, "(did you mean 'coefficients'?)", "did-you-mean")
T.raises(function() program:global("calls", "f64") end,
  "global 'calls' has 4 bytes, not a whole number of f64 elements", "a type the size does not divide")

-- ---- nvcc: a name expression the host code never instantiates is in the cubin that loads ----
local toolkit = gpuexp.toolkit()
if toolkit.nvcc then
  local name = "copy_and_cast_kernel<float, __nv_bfloat16>"
  local cast = gpuexp.compile{file = own .. "cast_host.cu", compiler = "nvcc", names = {name}}
  local symbol = "_Z20copy_and_cast_kernelIf13__nv_bfloat16EvPT_PKT0_mll"
  T.eq(cast:kernel(name).symbol, symbol, "the issue's symbol")
  local listed = {}
  for _, kernel in ipairs(cast:kernels{details = true}) do listed[kernel.symbol] = true end
  T.ok(listed[symbol], "the instantiation is among the compiled binary's kernels")
  T.eq(cast:global("cast_scale", "f32").count, 4, "a global of an nvcc build, from its cubin")
  T.eq(#cast:globals(), 1, "gpuexp's own name variables are not listed")
  T.raises(function() gpuexp.compile{file = own .. "cast_host.cu", compiler = "nvcc", names = {"cast_scale"}} end,
    "kernel 'cast_scale' (symbol generic(cast_scale)) is not in the cubin compiled from", "a name that is not a kernel")
  -- the globals of a team's own builds, read from the ELF without the driver: cubin and fat binary
  local dir = T.temporary_directory()
  for _, kind in ipairs({"cubin", "fatbin"}) do
    local path = dir .. "/cast." .. kind
    local command = string.format("'%s' -%s -arch=sm_90 -o '%s' '%scast_host.cu' 2>&1", toolkit.nvcc, kind, path, own)
    local pipe = assert(io.popen(command))
    local log = pipe:read("a")
    T.ok(pipe:close(), "nvcc -" .. kind .. ": " .. log)
    local loaded = gpuexp.load{file = path}
    T.eq(loaded:global("cast_scale", "f32").count, 4, "a global of a loaded " .. kind)
    T.raises(function() loaded:global("cast_scal") end, "(did you mean 'cast_scale'?)", "did-you-mean in a " .. kind)
  end
end
print("hopper checks done")
