-- Model vs driver for the SAXPY kernels at each block size, one launch each, so that ncu can read
-- its launch__occupancy_limit_* for the same launches:
--   ncu --clock-control none --csv --metrics launch__occupancy_limit_warps,... gpuexp bench/occupancy_limits.lua
local dev = gpuexp.device()
local program = gpuexp.compile{file = "kernels/saxpy.cu"}
local n = 1 << 20
local x = dev:alloc("f32", n):random{seed = 1}
local y = dev:alloc("f32", n):random{seed = 2}
local rows = {}
for _, variant in ipairs({"minimal", "balanced", "sophisticated"}) do
  local kernel = program:kernel(variant)
  for _, block in ipairs({64, 128, 256, 512, 1024}) do
    local driver = kernel:occupancy{block = block}
    local picked = kernel:occupancy{block = block, carveout = "driver"}
    kernel:launch{grid = n // block, block = block, args = {y, x, gpuexp.f32(2), gpuexp.i32(n)}}
    rows[#rows + 1] = {variant = variant, block_size = block, registers = kernel:resources().registers,
      driver_blocks = driver.active_blocks_per_sm, model_blocks = driver.model_blocks_per_sm,
      limit_warps = driver.limit_warps, limit_blocks = driver.limit_blocks, limit_registers = driver.limit_registers,
      limit_shared_max_carveout = driver.limit_shared, limit_shared_driver_pick = picked.limit_shared,
      shared_config_driver_pick = picked.shared_config_bytes, limit_barriers = driver.limit_barriers,
      occupancy_pct = driver.occupancy_pct, limiter = driver.limiter}
  end
end
dev:synchronize()
local columns = {"variant", "block_size", "registers", "driver_blocks", "model_blocks", "limit_warps", "limit_blocks",
  "limit_registers", "limit_shared_max_carveout", "limit_shared_driver_pick", "shared_config_driver_pick",
  "limit_barriers", "occupancy_pct", "limiter"}
local writer = gpuexp.csv.open(gpuexp.out or "results/occupancy_limits.csv")
writer:header(columns)
for _, row in ipairs(rows) do writer:row(row) end
writer:close()
gpuexp.print_table(rows, columns)
