-- Kernel Tuner's convolution example (examples/cuda/convolution.cu of KernelTuner/kernel_tuner, the
-- version with padding and the read-only cache as defines: third-party source, kept out of git: put
-- it in .kt/convolution.cu at the repository root, or name it with GPUEXP_KT_CONVOLUTION) as a
-- tuning space for gpuexp.tune: a 4096 x 4096 image, a 7 x 7 filter, 702 configurations (block 16 to
-- 128 x 1 to 32 threads, 32 to 1024 in all; 1, 2 or 4 outputs per thread each way; padding, only
-- where the block is not a multiple of 32; the read-only cache or not), NVRTC once per configuration.
-- Those whose static shared memory passes 48 KiB fail to compile: rows, not the end of the tune.
--   local space = dofile("bench/tune/convolution.lua").new()
-- The filter is in constant memory (d_filter) as Kernel Tuner passes it (cmem_args), through
-- program:global where the build has module globals; before that the constant memory stays zero
-- (the same instructions run; the row's `filter` column says which) and nothing is verified.
local M = {}

M.IMAGE, M.FILTER = 4096, 7
M.AXES = {{"block_size_x", {16, 32, 48, 64, 96, 128}}, {"block_size_y", {1, 2, 4, 8, 16, 32}},
  {"tile_size_x", {1, 2, 4}}, {"tile_size_y", {1, 2, 4}}, {"use_padding", {0, 1}}, {"read_only", {0, 1}}}

function M.where(p)
  local threads = p.block_size_x * p.block_size_y
  return threads >= 32 and threads <= 1024 and (p.use_padding == 0 or p.block_size_x % 32 ~= 0)
end

-- The source's path: GPUEXP_KT_CONVOLUTION, else .kt/convolution.cu beside bench/.
function M.source_path()
  local given = os.getenv("GPUEXP_KT_CONVOLUTION")
  if given and given ~= "" then return given end
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
  return here .. "/../../.kt/convolution.cu"
end

function M.new(spec)
  spec = spec or {}
  local file = M.source_path()
  local probe = io.open(file, "r")
  if not probe then
    error("bench/tune/convolution.lua: Kernel Tuner's convolution.cu is not at " .. file .. " (see the header)", 2)
  end
  probe:close()
  local w, f = M.IMAGE, M.FILTER
  local input_side = w + f - 1
  local state = {}
  local space = {axes = M.AXES, where = M.where, sources = {file}, options = {}}

  function space.setup()
    if state.ready then return end
    local dev = gpuexp.device()
    state.output = dev:alloc("f32", w * w)
    state.input = dev:alloc("f32", input_side * input_side):random{seed = 3, min = -1, max = 1}
    state.filter = dev:alloc("f32", 33 * 33):random{seed = 4, min = -1, max = 1}
    state.filter_host = gpuexp.host("f32", 33 * 33):copy_from(state.filter)
    state.ready = true
  end

  function space.compile(p)
    return {file = file, name = "convolution.cu", defines = {block_size_x = p.block_size_x,
      block_size_y = p.block_size_y, tile_size_x = p.tile_size_x, tile_size_y = p.tile_size_y,
      use_padding = p.use_padding, read_only = p.read_only, filter_width = f, filter_height = f}}
  end

  -- the filter into the module's constant memory, where module globals exist (program:global)
  local function set_filter(program)
    if gpuexp.plan then return "none" end
    local ok, global = pcall(function() return program:global("d_filter", "f32") end)
    if not ok or not global then return "zeros" end
    global:copy_from(state.filter_host)
    return "constant"
  end

  function space.run(p)
    space.setup()
    local program = gpuexp.compile(space.compile(p))
    local kernel = program:kernel("convolution_kernel")
    local cols, rows = p.block_size_x * p.tile_size_x, p.block_size_y * p.tile_size_y
    local launch = {grid = {(w + cols - 1) // cols, (w + rows - 1) // rows}, block = {p.block_size_x, p.block_size_y},
      args = {state.output, state.input, state.filter}}
    if gpuexp.plan then
      kernel:bind(launch)
      return {registers = kernel.registers}
    end
    local filter = set_filter(program)
    local t = kernel:measure(launch)
    return {median_ms = t.median_ms, samples_ms = t.samples_ms, noise_pct = t.noise_pct, samples = t.samples,
      registers = kernel.registers, filter = filter}
  end
  return space
end

return M
