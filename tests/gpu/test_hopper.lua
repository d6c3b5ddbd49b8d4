-- Hopper-native launches on a GPU of compute capability 9.0 or newer, each checked against a host
-- reference or a property that fails when the feature breaks: module globals written and read back
-- (NVRTC, nvcc, a loaded cubin, and inside a sequence), thread block clusters (a launch's cluster,
-- a non-portable 16, a kernel's own __cluster_dims__, distributed shared memory) and their
-- occupancy, a cooperative grid-wide sync, programmatic dependent launch in a sequence (the
-- dependent starts before its producer ends), TMA tile loads from descriptors by value and in a
-- struct, the encodings the offline checks accept taken by the driver, and nvcc name expressions
-- that load.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
if tonumber(dev.compute_capability:match("^(%d+)")) < 9 then
  io.stderr:write("SKIP: " .. dev.name .. " is compute capability " .. dev.compute_capability .. "; these launches need 9.0\n")
  os.exit(77)
end
local root = gpuexp.script_dir .. "/../../"
local own = gpuexp.script_dir .. "/own/"
local program = gpuexp.compile{file = root .. "kernels/hopper.cu"}

local function host_table(type, values)
  local buffer = gpuexp.host(type, #values)
  buffer:copy_from(values)
  return buffer
end

-- ---- module globals ----
local coefficients = program:global("coefficients", "f32")
local c = {0.5, -1.25, 2, 0.125, -0.5, 0.25, 1.5, -0.75}
coefficients:copy_from(c)
local back = coefficients:to_table()
for i = 1, 8 do T.eq(back[i], c[i], "coefficient " .. i .. " read back") end
local calls = program:global("calls")
calls:copy_from({0})
local n = 1 << 16
local x = dev:alloc("f32", n):random{seed = 3, min = -1, max = 1}
local y = dev:alloc("f32", n)
local polynomial = program:kernel("polynomial")
local function expected_polynomial(coefficient)
  local expected = {}
  for i, v in ipairs(x:to_table()) do
    local acc = coefficient[8]
    for k = 7, 1, -1 do acc = acc * v + coefficient[k] end
    expected[i] = acc
  end
  return host_table("f32", expected)
end
for _ = 1, 3 do polynomial:launch{grid = n // 256, block = 256, args = {x, y, gpuexp.i32(n)}} end
T.ok((y:compare(expected_polynomial(c), {rtol = 1e-5, atol = 1e-5})), "the kernel read the constants written from Lua")
T.eq(calls:get(1), 3, "the __device__ counter counted 3 launches")
-- from a device buffer, inside a sequence (enqueued on its stream), then in graph mode
local c2 = {1, 0, 0, 0, 0, 0, 0, 2}
local staged = dev:alloc("f32", 8):copy_from(c2)
local sequence = gpuexp.sequence(function()
  coefficients:copy_from(staged)
  polynomial:launch{grid = n // 256, block = 256, args = {x, y, gpuexp.i32(n)}}
end)
sequence:run()
T.ok((y:compare(expected_polynomial(c2), {rtol = 1e-5, atol = 1e-5})), "a global written inside a sequence")
T.ok(sequence:time{graph = 2, reps = 3}.samples == 3, "the sequence captured with its global copy")
T.raises(function() program:global("coefficent") end, "(did you mean 'coefficients'?)", "did-you-mean on a GPU")

-- ---- clusters ----
local blocks = 64
local rank, neighbor, size = dev:alloc("i32", blocks), dev:alloc("i32", blocks), dev:alloc("i32", blocks)
local neighbors = program:kernel("cluster_neighbors")
for _, cluster in ipairs({2, 4, 8, 16}) do -- 16: the non-portable size (allowed by gpuexp for it)
  rank:fill(-1)
  neighbors:launch{grid = blocks, block = 32, cluster = {cluster}, args = {rank, neighbor, size}}
  local r, nb, s = rank:to_table(), neighbor:to_table(), size:to_table()
  for b = 0, blocks - 1 do
    T.eq(r[b + 1], b % cluster, "cluster " .. cluster .. ": rank of block " .. b)
    T.eq(s[b + 1], cluster, "cluster " .. cluster .. ": size seen by block " .. b)
    T.eq(nb[b + 1], b - b % cluster + (b % cluster + 1) % cluster, "cluster " .. cluster .. ": neighbour's shared memory")
  end
end
local pairs_kernel = program:kernel("cluster_pairs")
size:fill(0)
pairs_kernel:launch{grid = blocks, block = 32, args = {size}}
T.eq(size:to_table()[blocks], 2, "a kernel's own __cluster_dims__(2, 1, 1) without a launch cluster")
T.raises(function() pairs_kernel:launch{grid = 3, block = 32, args = {size}} end,
  "grid 3x1x1 is not a whole number of clusters of 2x1x1 (its __cluster_dims__)", "checked before the driver")
local occupancy = neighbors:occupancy{block = 128, cluster = {4}}
T.eq(occupancy.cluster_size, 4, "cluster size")
T.ok(occupancy.active_clusters >= dev.sm_count // 4 // 2, "clusters of 4 small blocks resident: " .. occupancy.active_clusters)
local pairs_occupancy = pairs_kernel:occupancy{block = 128}
T.ok(pairs_occupancy.cluster_size == 2 and pairs_occupancy.active_clusters > 0, "a kernel's own clusters' occupancy")
T.raises(function() neighbors:launch{grid = 32, block = 32, cluster = {32}, args = {rank, neighbor, size}} end,
  "allows at most 16", "a cluster over the limit")

-- ---- cooperative launch ----
local grid_sum = program:kernel("grid_sum")
local count = 1 << 20
local values = dev:alloc("i32", count):random{seed = 11, min = 0, max = 100}
local host_sum = 0
for _, v in ipairs(values:to_table()) do host_sum = host_sum + v end
local per_sm = grid_sum:occupancy{block = 256}.active_blocks_per_sm
local resident = per_sm * dev.sm_count
local partial, total = dev:alloc("i32", resident), dev:alloc("i32", 1)
grid_sum:launch{grid = resident, block = 256, cooperative = true, args = {values, gpuexp.i32(count), partial, total}}
T.eq(total:get(1), host_sum, "a grid-wide sync over every resident block")
T.raises(function() grid_sum:launch{grid = resident + 1, block = 256, cooperative = true,
  args = {values, gpuexp.i32(count), partial, total}} end,
  string.format("at most %d of them can be resident at once on %s", resident, dev.name), "a grid too large for a sync")

-- ---- programmatic dependent launch: the consumer starts before the producer ends ----
local data, consumed = dev:alloc("f32", 4096), dev:alloc("f32", 4096)
local finished, started = dev:alloc("u64", 1), dev:alloc("u64", 1)
local producer, consumer = program:kernel("pdl_producer"), program:kernel("pdl_consumer")
local function pdl_sequence(programmatic)
  return gpuexp.sequence(function()
    producer:launch{grid = 4, block = 256, args = {data, gpuexp.i32(4096), finished, gpuexp.i32(200)}}
    consumer:launch{grid = 4, block = 256, programmatic = programmatic, args = {data, consumed, gpuexp.i32(4096), started}}
  end)
end
local expected_consumed = {}
for i = 1, 4096 do expected_consumed[i] = 2 * (i - 1) + 1 end
expected_consumed = host_table("f32", expected_consumed)
-- whether the consumer started before the producer ended, after checking what it computed
local function overlap(programmatic)
  data:fill(0)
  consumed:fill(0)
  pdl_sequence(programmatic):run()
  T.ok((consumed:compare(expected_consumed, {rtol = 0, atol = 0})),
    "the consumer read the producer's results (programmatic = " .. tostring(programmatic) .. ")")
  local ended, began = finished:get(1), started:get(1)
  return began < ended, began, ended
end
local overlapped, began, ended = overlap(true)
T.ok(overlapped, string.format("with programmatic = true the consumer started (%d ns) before the producer ended (%d ns)",
  began, ended))
overlapped, began, ended = overlap(false)
T.ok(not overlapped, string.format("without it the consumer started (%d ns) after the producer ended (%d ns)", began, ended))
T.ok(pdl_sequence(true):time{graph = 2, reps = 3}.samples == 3, "a programmatic launch captured in a graph")

-- ---- TMA ----
local width, height = 100, 70
local image = dev:alloc("f32", width * height):random{seed = 5}
local copied = dev:alloc("f32", width * height)
local map = gpuexp.tensor_map{buffer = image, dims = {width, height}, box = {32, 32}}
program:kernel("tma_copy"):launch{grid = {4, 3}, block = 128, args = {map, copied, gpuexp.i32(width), gpuexp.i32(height)}}
T.ok((copied:compare(image, {rtol = 0, atol = 0})), "TMA tiles from a descriptor passed by value")
copied:fill(0)
local Args = gpuexp.layout{{"map", "tensor_map"}, {"width", "i32"}, {"height", "i32"}}
program:kernel("tma_copy_struct"):launch{grid = {4, 3}, block = 128,
  args = {Args{map = map, width = width, height = height}, copied}}
T.ok((copied:compare(image, {rtol = 0, atol = 0})), "TMA tiles from a descriptor inside a struct")
-- every encoding the offline checks accept, the driver takes
local accepted = dofile(gpuexp.script_dir .. "/../fixtures/tensor_maps.lua")
for i, spec in ipairs(accepted(dev:alloc("f16", 1 << 16), dev:alloc("fp8_e4m3", 1 << 16), image, width, height)) do
  local ok, err = pcall(gpuexp.tensor_map, spec)
  T.ok(ok, "encoding " .. i .. " taken by cuTensorMapEncodeTiled: " .. tostring(type(err) == "table" and err.message or err))
end

-- ---- nvcc name expressions that load, and globals of nvcc builds ----
local name = "copy_and_cast_kernel<float, __nv_bfloat16>"
local cast = gpuexp.compile{file = own .. "cast_host.cu", compiler = "nvcc", names = {name}}
local kernel = cast:kernel(name)
T.eq(kernel.symbol, "_Z20copy_and_cast_kernelIf13__nv_bfloat16EvPT_PKT0_mll", "the issue's symbol")
local source = dev:alloc("bf16", 1000):random{seed = 2, min = -4, max = 4}
local cast_out = dev:alloc("f32", 1000)
kernel:launch{grid = 4, block = 256, args = {cast_out, source, gpuexp.u64(1000), gpuexp.i64(0), gpuexp.i64(0)}}
local widened = {}
for i, v in ipairs(source:to_table()) do widened[i] = v end
T.ok((cast_out:compare(host_table("f32", widened), {rtol = 0, atol = 0})), "the instantiation the host code never made runs")
local scale = cast:global("cast_scale", "f32")
scale:copy_from({1, 2, 3, 4})
T.eq(scale:to_table()[4], 4, "an nvcc build's __constant__ round trip")
local dir = T.temporary_directory()
local cubin = dir .. "/cast.cubin"
local pipe = assert(io.popen(string.format("'%s' -cubin -arch=%s -o '%s' '%scast_host.cu' 2>&1", gpuexp.toolkit().nvcc,
  dev.arch, cubin, own)))
local log = pipe:read("a")
T.ok(pipe:close(), "nvcc -cubin: " .. log)
local loaded_scale = gpuexp.load{file = cubin}:global("cast_scale", "f32")
loaded_scale:copy_from({4, 3, 2, 1})
T.eq(loaded_scale:to_table()[1], 4, "a loaded cubin's __constant__ round trip")
print("ok test_hopper")
