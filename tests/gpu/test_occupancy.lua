-- Theoretical occupancy from the driver, checked against the limits computed by hand from the
-- device's attributes for kernels whose limiter is known.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local dev = T.require_gpu()
local f = dev.facts
local program = gpuexp.compile{file = gpuexp.script_dir .. "/../../kernels/saxpy.cu"}
local minimal = program:kernel("minimal")
local sophisticated = program:kernel("sophisticated")
T.eq(sophisticated:resources().static_shared_bytes, 49152, "48 KB static")

for _, block in ipairs({64, 128, 256, 512, 1024}) do
  local warps = block // 32
  -- minimal: few registers, no shared memory: limited by threads or blocks per SM
  local by_warps = f.max_warps_per_sm // warps
  local expected = math.min(by_warps, f.max_blocks_per_sm)
  local o = minimal:occupancy{block = block}
  T.eq(o.active_blocks_per_sm, expected, "minimal blocks per SM at " .. block)
  T.near(o.occupancy_pct, 100 * expected * warps / f.max_warps_per_sm, 1e-9, "minimal occupancy at " .. block)
  -- sophisticated: 48 KB + the per-block reservation against the SM's shared memory
  local by_shared = f.shared_per_sm_bytes // (49152 + f.reserved_shared_per_block_bytes)
  local s = sophisticated:occupancy{block = block}
  T.eq(s.active_blocks_per_sm, math.min(by_shared, by_warps, f.max_blocks_per_sm), "sophisticated at " .. block)
end
-- dynamic shared memory lowers it
local half = minimal:occupancy{block = 256, shared = f.shared_per_sm_bytes // 2}
T.eq(half.active_blocks_per_sm, 1, "half the SM's shared memory: one block")

-- the model's table row for this GPU equals the driver's attributes
local row = gpuexp.arch_limits(f.arch)
for _, field in ipairs({"max_threads_per_sm", "max_warps_per_sm", "max_blocks_per_sm", "registers_per_sm",
  "registers_per_block", "shared_per_sm_bytes", "shared_per_block_bytes", "shared_per_block_optin_bytes",
  "reserved_shared_per_block_bytes", "max_threads_per_block"}) do
  T.eq(row[field], f[field], "table vs driver: " .. field)
end

-- the model's blocks per SM equal cuOccupancyMaxActiveBlocksPerMultiprocessor, over block sizes,
-- dynamic shared memory and kernels with different registers, shared memory and barriers
local compared = 0
local seed = 7
for _, kernel in ipairs({minimal, program:kernel("balanced"), sophisticated, program:kernel("vectorized")}) do
  local static = kernel:resources().static_shared_bytes
  for _ = 1, 60 do
    seed = (seed * 1103515245 + 12345) % 2147483648
    local block = 1 + seed % 1024
    local dynamic = (seed // 1024) % 3 == 0 and 0 or (seed // 7) % (f.shared_per_block_optin_bytes - static)
    local o = kernel:occupancy{block = block, shared = dynamic}
    T.eq(o.model_blocks_per_sm, o.active_blocks_per_sm,
      string.format("model vs driver, %s block %d dynamic %d", kernel.name, block, dynamic))
    compared = compared + 1
  end
end
T.eq(compared, 240, "cases")
T.done()
