-- one launch of the bulk-copy (TMA) and cp.async variants of kernels/async_copy.cu, for compute-sanitizer (run from the repository root):
--   compute-sanitizer --tool racecheck build/gpuexp --inline bench/async_copy_once.lua
local dev = gpuexp.device()
local BLOCK, TILES = 256, 64
local sms = dev.sm_count
local input = dev:alloc("f32", sms * TILES * BLOCK * 4):random{seed = 9, min = 0, max = 1}
local output = dev:alloc("f32", sms * BLOCK)
for _, d in ipairs({{STAGES = 2, BULK = 1}, {STAGES = 4, BULK = 1}, {STAGES = 4}}) do
  local k = gpuexp.compile{file = os.getenv("PWD") .. "/kernels/async_copy.cu", defines = d}:kernel("tiled")
  k:launch{grid = sms, block = BLOCK, shared = 16 * BLOCK * d.STAGES, args = {input, output, gpuexp.i32(TILES), gpuexp.i32(4)}}
  dev:synchronize()
  print(d.STAGES, d.BULK, output[1], output[sms * BLOCK])
end
