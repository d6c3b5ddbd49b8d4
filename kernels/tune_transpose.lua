-- The tuning study's nvcc space: kernels/tune_transpose.cu compiled by nvcc once per configuration
-- (every axis is a define), 160 configurations: tile 16, 32 or 64, 1 to 32 thread rows, 1, 2 or 4
-- columns per thread, a padding column or none, loads through the read-only cache or not; 32 to
-- 1024 threads a block.
--   local space = dofile(gpuexp.resolve("kernels/tune_transpose.lua")).new{n = 4096}
--   gpuexp.tune{axes = space.axes, where = space.where, setup = space.setup, run = space.run,
--     compile = space.compile, condition = "verified", ...}
local M = {}

M.AXES = {{"tile", {16, 32, 64}}, {"rows", {1, 2, 4, 8, 16, 32}}, {"vec", {1, 2, 4}}, {"pad", {0, 1}}, {"ldg", {0, 1}}}

function M.where(p)
  local threads = p.tile // p.vec * p.rows
  return p.rows <= p.tile and threads >= 32 and threads <= 1024
end

function M.new(spec)
  spec = spec or {}
  local n = spec.n or 4096
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
  local file = here .. "/tune_transpose.cu"
  local state = {}
  local space = {axes = M.AXES, where = M.where, sources = {file}, options = {}, n = n}

  function space.setup()
    if state.ready then return end
    local dev = gpuexp.device()
    state.input = dev:alloc("f32", n * n):random{seed = 5}
    state.output = dev:alloc("f32", n * n)
    state.host_in = gpuexp.host("f32", n * n):copy_from(state.input)
    state.host_out = gpuexp.host("f32", n * n)
    state.ready = true
  end

  function space.compile(p)
    return {file = file, compiler = "nvcc", defines = {TILE = p.tile, ROWS = p.rows, VEC = p.vec, PAD = p.pad, LDG = p.ldg}}
  end

  -- out[j][i] == in[i][j] at 64 seeded positions
  local function verify()
    state.host_out:copy_from(state.output)
    local seed = 11
    for _ = 1, 64 do
      seed = (seed * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
      local i, j = (seed >> 20) % n, (seed >> 40) % n
      if state.host_out[j * n + i + 1] ~= state.host_in[i * n + j + 1] then return false end
    end
    return true
  end

  function space.run(p)
    space.setup()
    local kernel = gpuexp.compile(space.compile(p)):kernel("transpose")
    local launch = {grid = {(n + p.tile - 1) // p.tile, (n + p.tile - 1) // p.tile}, block = {p.tile // p.vec, p.rows},
      args = {state.output, state.input, gpuexp.i32(n)}}
    if gpuexp.plan then
      kernel:bind(launch)
      return {registers = kernel.registers}
    end
    state.output:fill(0)
    kernel:launch(launch)
    local verified = verify()
    local t = kernel:measure(launch)
    return {median_ms = t.median_ms, samples_ms = t.samples_ms, noise_pct = t.noise_pct, samples = t.samples,
      gbps = 2 * 4 * n * n / t.median_ms / 1e6, verified = verified, registers = kernel.registers}
  end
  return space
end

return M
