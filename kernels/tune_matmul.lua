-- The tuning space of kernels/tune_matmul.cu and how one configuration is run and checked, for
-- experiments/tune_matmul.lua and bench/tune_study.lua:
--   local space = dofile(gpuexp.resolve("kernels/tune_matmul.lua")).new{n = 1024, options = {...}}
--   gpuexp.tune{axes = space.axes, where = space.where, setup = space.setup, run = space.run,
--     compile = space.compile, ...}
-- 1,392 configurations: block shape (bx x by threads, 32 to 1024), outputs per thread (tm x tn)
-- and the unrolling of the inner loop, with each tile side at most 256 (32 KiB of shared memory).
local M = {}

M.AXES = {{"bx", {4, 8, 16, 32, 64}}, {"by", {1, 2, 4, 8, 16, 32}}, {"tm", {1, 2, 4, 8}}, {"tn", {1, 2, 4, 8}},
  {"unroll", {1, 2, 4, 8}}}
M.KT = 16

function M.where(p)
  local threads = p.bx * p.by
  return threads >= 32 and threads <= 1024 and p.by * p.tm <= 256 and p.bx * p.tn <= 256
end

-- M.new{n = 1024, options = {compile options}} -> {axes, where, setup, run, sources, options}
function M.new(spec)
  spec = spec or {}
  local n = spec.n or 1024
  local options = spec.options or {}
  local state = {}
  -- the kernel beside this file, wherever the script that loaded it lives
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
  local file = here .. "/tune_matmul.cu"
  local space = {axes = M.AXES, where = M.where, sources = {file}, options = options, n = n}

  function space.setup()
    if state.ready then return end
    local dev = gpuexp.device()
    state.a = dev:alloc("f32", n * n):random{seed = 1, min = -1, max = 1}
    state.b = dev:alloc("f32", n * n):random{seed = 2, min = -1, max = 1}
    state.c = dev:alloc("f32", n * n)
    -- the expected value of C at 64 seeded positions, in double on the host, once
    local host_a = gpuexp.host("f32", n * n):copy_from(state.a)
    local host_b = gpuexp.host("f32", n * n):copy_from(state.b)
    state.expected = {}
    local seed = 7
    for e = 1, 64 do
      seed = (seed * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
      local i, j = (seed >> 20) % n, (seed >> 40) % n
      local row = host_a:to_table(i * n + 1, n)
      local sum = 0.0
      for k = 0, n - 1 do sum = sum + row[k + 1] * host_b[k * n + j + 1] end
      state.expected[e] = {index = i * n + j + 1, value = sum}
    end
    host_a:free(); host_b:free()
    state.host_c = gpuexp.host("f32", n * n)
    state.kernels = {}
    state.ready = true
  end

  -- C against the expected values (relative 1e-3: n-term float sums in another order).
  local function verify()
    state.host_c:copy_from(state.c)
    for _, e in ipairs(state.expected) do
      if math.abs(state.host_c[e.index] - e.value) > 1e-3 * (1 + math.abs(e.value)) then return false end
    end
    return true
  end

  -- What a configuration compiles (gpuexp.tune's compile pool builds it ahead into the cache).
  function space.compile(p)
    return {file = file, options = options, defines = {TM = p.tm, TN = p.tn, UNROLL = p.unroll}}
  end

  -- One configuration: compiled (once per tm, tn, unroll), launched and checked, then measured.
  function space.run(p)
    space.setup()
    local key = p.tm .. "x" .. p.tn .. "u" .. p.unroll
    local kernel = state.kernels[key]
    if not kernel then
      local program = gpuexp.compile(space.compile(p))
      kernel = program:kernel("matmul")
      state.kernels[key] = kernel
    end
    local rows, cols = p.by * p.tm, p.bx * p.tn
    local launch = {grid = {n // cols, n // rows}, block = {p.bx, p.by}, shared = M.KT * (rows + cols) * 4,
      args = {state.a, state.b, state.c, gpuexp.i32(n)}}
    if gpuexp.plan then
      kernel:bind(launch) -- the launch is checked
      return {registers = kernel.registers}
    end
    state.c:fill(0)
    kernel:launch(launch)
    local verified = verify()
    local t = kernel:measure(launch)
    return {median_ms = t.median_ms, samples_ms = t.samples_ms, noise_pct = t.noise_pct, samples = t.samples,
      gflops = 2 * n ^ 3 / t.median_ms / 1e6, verified = verified, registers = kernel.registers}
  end
  return space
end

return M
