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
T.done()
