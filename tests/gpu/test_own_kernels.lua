-- A team's own kernels (tests/gpu/own: templates in a namespace using cooperative groups and
-- CUB, host code beside them), four ways: NVRTC with the toolkit's headers found by itself, nvcc
-- through gpuexp.compile, and the team's own nvcc builds loaded with gpuexp.load (cubin, fat
-- binary, host object, executable). Each runs by its C++ name, verifies against the host, and
-- the builds time alike. Then structs, streams, events, async copies and sequences.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local own = gpuexp.script_dir .. "/own/"

-- ---- NVRTC: no include options, no edits: CG and CUB headers come from the toolkit ----
local nvrtc = gpuexp.compile{file = own .. "reduce_kernels.cuh", options = {"-O3", "--use_fast_math", "-lineinfo"},
  names = {"own::sum_squares_cub<256>", "own::sum_squares_cg<float>"}}
T.ok(nvrtc.notes:find("-O3", 1, true), "the dropped -O3 is noted: " .. nvrtc.notes)
T.eq(nvrtc.compiler, "nvrtc", "compiler")

local n = 64 * 1024 * 1024 -- 256 MB: several times the L2
local x = dev:alloc("f32", n):random{seed = 5, min = -1, max = 1}
local sample = x:to_table(1, 4096)
-- the reference in double precision over the whole buffer, read back in chunks
local reference = 0
local chunk = 1 << 22
for first = 1, n, chunk do
  for _, v in ipairs(x:to_table(first, math.min(chunk, n - first + 1))) do reference = reference + v * v end
end
T.ok(#sample == 4096 and reference > 0, "reference computed")
local out = dev:alloc("f32", 1)

local function check_sum(kernel, block, what)
  out:fill(0)
  kernel:launch{grid = dev.sm_count * 4, block = block, args = {out, x, gpuexp.u64(n)}}
  local got = out[1]
  T.ok(math.abs(got - reference) / reference < 1e-4, string.format("%s: %.6g against %.6g", what, got, reference))
end

local builds = {{name = "nvrtc", program = nvrtc}}
check_sum(nvrtc:kernel("own::sum_squares_cub<256>"), 256, "NVRTC CUB sum")
check_sum(nvrtc:kernel("own::sum_squares_cg<float>"), 256, "NVRTC CG sum")

-- ---- nvcc: through gpuexp.compile, and the team's own builds loaded ----
local toolkit = gpuexp.toolkit()
if not toolkit.nvcc then
  io.stderr:write("note: no nvcc here; the nvcc builds are not tested (" .. tostring(toolkit.searched) .. ")\n")
else
  local via_compile = gpuexp.compile{file = own .. "reduce_main.cu", compiler = "nvcc", options = {"-O3", "-std=c++17"}}
  T.eq(via_compile.compiler, "nvcc", "compiled with nvcc")
  builds[#builds + 1] = {name = "compile{compiler=nvcc}", program = via_compile}
  local dir = T.temporary_directory()
  local arch = dev.arch
  local function build(flags, output)
    local command = string.format("%s %s -o %s/%s %s/reduce_main.cu > %s/nvcc.log 2>&1", toolkit.nvcc, flags, dir,
      output, own, dir)
    T.ok(os.execute(command), "nvcc " .. flags .. " (see " .. dir .. "/nvcc.log)")
    return dir .. "/" .. output
  end
  local gencode = string.format("-gencode arch=compute_%s,code=%s", arch:sub(4), arch)
  local files = {
    {"cubin", build("-O3 -cubin -arch=" .. arch, "reduce.cubin")},
    {"fatbin", build("-O3 -fatbin " .. gencode .. " -gencode arch=compute_80,code=compute_80", "reduce.fatbin")},
    {"host binary", build("-O3 -c " .. gencode, "reduce.o")},
    {"host binary", build("-O3 " .. gencode, "reduce_exe")},
  }
  for _, f in ipairs(files) do
    local program = gpuexp.load{file = f[2]}
    T.eq(program.kind, f[1], f[2] .. " detected")
    local names = table.concat(program:kernels(), " ")
    T.ok(names:find("own::sum_squares_cub<256>", 1, true), "C++ names listed: " .. names)
    builds[#builds + 1] = {name = "load " .. f[2]:match("[^/]+$"), program = program}
  end
  -- a binary's parameters come from cuFuncGetParamInfo: sizes, checked before the launch
  local cubin = builds[3].program
  local k = cubin:kernel("own::sum_squares_cub<256>")
  T.eq(table.concat(k:resources().params, ","), "8 bytes,8 bytes,8 bytes", "parameter sizes from the driver")
  T.raises(function() k:launch{grid = 1, block = 256, args = {out, x}} end, "takes 3 arguments", "a wrong count is refused")
  T.raises(function() k:launch{grid = 1, block = 256, args = {out, x, gpuexp.i32(5)}} end,
    "is i32, but the kernel expects 8 bytes", "a wrong size is refused")
  T.raises(function() cubin:kernel("own::sum_squares") end, "no kernel 'own::sum_squares'", "an unknown name")
  T.raises(function() gpuexp.load{file = own .. "reduce_kernels.cuh"} end, "is not a cubin", "text is not a binary")
  T.ok(k:resources().registers > 0, "resources from cuFuncGetAttribute")
  T.ok(k:occupancy{block = 256}.active_blocks_per_sm > 0, "occupancy of a loaded kernel")
  for _, b in ipairs(builds) do
    check_sum(b.program:kernel("own::sum_squares_cub<256>"), 256, b.name .. " CUB sum")
    check_sum(b.program:kernel("sum_squares_cg<float>"), 256, b.name .. " CG sum")
  end
end

-- every build of the same kernel times alike (the same code): within 3% of NVRTC's
local times = {}
for i, b in ipairs(builds) do
  local k = b.program:kernel("own::sum_squares_cub<256>")
  local t = k:measure{grid = dev.sm_count * 4, block = 256, args = {out, x, gpuexp.u64(n)}, mode = "cold"}
  times[i] = t.median_ms
  print(string.format("sum_squares_cub<256> %-28s median %.4f ms, noise %.2f%%", b.name, t.median_ms, t.noise_pct))
end
for i = 2, #times do
  T.ok(math.abs(times[i] / times[1] - 1) < 0.03, string.format("%s times like NVRTC's: %.4f against %.4f ms",
    builds[i].name, times[i], times[1]))
end

-- ---- structs: by value, and an array of them behind a pointer ----
local m = 1000003
local ax = dev:alloc("f32", m):random{seed = 1}
local ay = dev:alloc("f32", m):random{seed = 2}
local hx, hy = ax:to_table(), ay:to_table()
local Axpy = gpuexp.layout{{"alpha", "f32"}, {"n", "i32"}, {"x", "ptr"}, {"y", "ptr"}}
T.eq(Axpy.size, 24, "C's layout: 4 + 4 + 8 + 8")
local axpy = nvrtc:kernel("own::axpy_params")
axpy:launch{grid = (m + 255) // 256, block = 256, args = {Axpy{alpha = 2.5, n = m, x = ax, y = ay}}}
local expected = {}
for i = 1, m do expected[i] = hy[i] + 2.5 * hx[i] end
local host = gpuexp.host("f32", m):copy_from(expected)
T.ok(ay:compare(host, {rtol = 1e-6, atol = 1e-6}), "the struct-by-value axpy verifies")
-- the anonymous form, and a struct of the wrong size refused before the launch
axpy:launch{grid = (m + 255) // 256, block = 256, args = {gpuexp.struct{{"f32", -2.5}, {"i32", m}, {"ptr", ax}, {"ptr", ay}}}}
T.ok(ay:compare(gpuexp.host("f32", m):copy_from(hy), {rtol = 1e-5, atol = 1e-5}), "and back with gpuexp.struct")
T.raises(function() axpy:launch{grid = 1, block = 1, args = {gpuexp.struct{{"f32", 1}, {"i32", 1}, {"ptr", ax}}}} end,
  "is 16 bytes, but the kernel's parameter is 24 bytes", "a struct of the wrong size")

local Particle = gpuexp.layout{{"position", "f32", 3}, {"id", "i32"}, {"mass", "f64"}}
T.eq(Particle.size, 24, "float[3], int, double: 24 bytes")
local particles = {}
for i = 1, 100 do particles[i] = {position = {i, 2 * i, 3 * i}, id = i, mass = i / 4} end
local device_particles = Particle:upload(particles)
nvrtc:kernel("own::push_particles"):launch{grid = 1, block = 128, args = {device_particles, gpuexp.i32(100), gpuexp.f32(0.5)}}
local back = Particle:download(device_particles)
for i = 1, 100 do
  T.near(back[i].position[1], i + 0.5 * i, 1e-4, "particle " .. i .. " moved")
  T.eq(back[i].position[2], 2 * i, "particle " .. i .. " y untouched")
  T.near(back[i].mass, i / 2, 1e-12, "particle " .. i .. " mass doubled")
end

-- ---- streams, events, pinned memory and async copies ----
local least, greatest = gpuexp.stream_priorities()
T.ok(greatest <= least, "priority range")
local s1 = gpuexp.stream{priority = greatest}
local s2 = gpuexp.stream{}
T.eq(s1.priority, greatest, "priority kept")
local count = 1 << 24
local pinned_in = gpuexp.host("f32", count, {pinned = true})
local pinned_out = gpuexp.host("f32", count, {pinned = true})
local staging = dev:alloc("f32", count):random{seed = 9}
pinned_in:copy_from(staging)
local d_in, d_out = dev:alloc("f32", count), dev:alloc("f32", count)
local start, copied, finished = gpuexp.event(), gpuexp.event(), gpuexp.event()
local scale = nvrtc:kernel("own::scale")
start:record(s1)
d_in:copy_from(pinned_in, {stream = s1})
copied:record(s1)
s2:wait(copied) -- the kernel on s2 waits for the copy on s1
scale:launch{grid = dev.sm_count * 4, block = 256, stream = s2, args = {d_out, d_in, gpuexp.f32(3), gpuexp.u64(count)}}
local scaled = gpuexp.event()
scaled:record(s2)
s1:wait(scaled)
pinned_out:copy_from(d_out, {stream = s1})
finished:record(s1)
finished:synchronize()
T.ok(finished:query() and s1:query() and s2:query(), "everything done")
local ms = start:elapsed_ms(finished)
T.ok(ms > 0, "elapsed time between events: " .. ms)
local h2d_gbps = count * 4 / (start:elapsed_ms(copied) * 1e6)
T.ok(h2d_gbps > 5, string.format("a pinned async copy runs at %.1f GB/s", h2d_gbps))
local check = staging:to_table(1, 1000)
local result = pinned_out:to_table(1, 1000)
for i = 1, 1000 do T.near(result[i], 3 * check[i], 1e-6, "scaled element " .. i) end
T.raises(function() scale:launch{grid = 1, block = 1, stream = "s", args = {d_out, d_in, gpuexp.f32(1), gpuexp.u64(1)}} end,
  "'stream' must be a gpuexp.stream{}", "a stream that is not one")

-- ---- sequences: three launches timed as one ----
local q = 32 * 1024 * 1024
local a, b, c = dev:alloc("f32", q):random{seed = 1}, dev:alloc("f32", q):random{seed = 2}, dev:alloc("f32", q)
local add = nvrtc:kernel("own::add")
local grid = dev.sm_count * 8
local launches = {
  {kernel = scale, args = {c, a, gpuexp.f32(2), gpuexp.u64(q)}},
  {kernel = add, args = {c, b, gpuexp.u64(q)}},
  {kernel = add, args = {c, a, gpuexp.u64(q)}},
}
local seq = gpuexp.sequence(function()
  for _, l in ipairs(launches) do l.kernel:launch{grid = grid, block = 256, args = l.args} end
end, {name = "scale_add_add"})
local hot = seq:measure{mode = "hot"}
local graph = seq:measure{mode = "graph"}
T.eq(seq.kernels, 3, "one run launches three kernels")
local sum_ms = 0
for _, l in ipairs(launches) do
  sum_ms = sum_ms + l.kernel:measure{grid = grid, block = 256, args = l.args, mode = "hot"}.median_ms
end
print(string.format("sequence of 3: hot %.4f ms, graph %.4f ms, kernels alone %.4f ms", hot.median_ms, graph.median_ms, sum_ms))
T.ok(hot.median_ms >= 0.97 * sum_ms and hot.median_ms < 1.25 * sum_ms, "the hot sequence is its kernels plus gaps")
T.ok(graph.median_ms <= hot.median_ms * 1.01, "graph mode has no more gaps than hot")
seq:run() -- once more after the kernels alone, which added into c
local ha, hb, hc = a:to_table(1, 1000), b:to_table(1, 1000), c:to_table(1, 1000)
for i = 1, 1000 do T.near(hc[i], 3 * ha[i] + hb[i], 1e-5, "the sequence's result " .. i) end
-- counters per kernel and summed
local values, info = seq:metrics{metrics = {"smsp__inst_executed.sum", "dram__bytes.sum", "gpu__time_duration.sum"}}
if values then
  T.eq(#info.kernels, 3, "one value table per kernel")
  T.eq(info.kernels[2].kernel, "own::add", "kernels named")
  local total = 0
  for _, k in ipairs(info.kernels) do total = total + k["smsp__inst_executed.sum"] end
  T.eq(values["smsp__inst_executed.sum"], total, "counts summed")
  local alone = add:metrics{grid = grid, block = 256, args = launches[2].args, metrics = {"smsp__inst_executed.sum"}}
  T.near(info.kernels[2]["smsp__inst_executed.sum"], alone["smsp__inst_executed.sum"], 0.01 * alone["smsp__inst_executed.sum"],
    "a kernel's count in the sequence is its count alone")
  T.ok(values["dram__bytes.sum"] > 3 * 4 * q, "the three kernels' DRAM bytes")
else
  io.stderr:write("note: no counters here: " .. tostring(info) .. "\n")
end
-- an error inside the function names the script's line, and a multi-stream sequence captures
local broken = gpuexp.sequence(function() add:launch{grid = 1, block = 1, args = {c}} end)
T.raises(function() broken:measure{} end, "test_own_kernels.lua:", "the error names the script's line")
local forked = gpuexp.sequence(function(stream)
  local fork, join = gpuexp.event{timing = false}, gpuexp.event{timing = false}
  fork:record(stream)
  s2:wait(fork)
  scale:launch{grid = grid, block = 256, stream = s2, args = {c, a, gpuexp.f32(1), gpuexp.u64(q)}}
  add:launch{grid = grid, block = 256, args = {b, a, gpuexp.u64(q)}}
  join:record(s2)
  stream:wait(join)
end)
local forked_graph = forked:measure{mode = "graph", graph_launches = 4}
T.eq(forked_graph.mode, "graph", "a forked and joined sequence captures into a graph")
print(string.format("forked sequence: graph %.4f ms", forked_graph.median_ms))
print("ok")
