-- The mma.sync types of kernels/tensor_cores.cu (check_<kernel> and rate_<kernel>), the
-- architecture each needs, and the work one launch of a rate kernel does. Used by
-- experiments/tensor_cores.lua and gpuexp calibrate:
--   local tensor = dofile(gpuexp.resolve("kernels/tensor_types.lua"))
local M = {}

-- mma.sync m16n8kK; INT8's rate is integer operations
M.TYPES = {
  {name = "fp16", kernel = "f16", k = 16, min_cc = 80, label = "FP16", why = "mma.sync m16n8k16 with FP16 needs sm_80"},
  {name = "bf16", kernel = "bf16", k = 16, min_cc = 80, label = "BF16", why = "BF16 mma needs sm_80"},
  {name = "tf32", kernel = "tf32", k = 8, min_cc = 80, label = "TF32", why = "TF32 mma needs sm_80"},
  {name = "int8", kernel = "int8", k = 32, min_cc = 80, label = "INT8", why = "mma.sync m16n8k32 with INT8 needs sm_80"},
  {name = "fp8", kernel = "fp8", k = 32, min_cc = 89, label = "FP8 E4M3", why = "FP8 (E4M3) mma needs sm_89"},
}

-- FLOPs of one launch of rate_<kernel>: every warp runs 4 independent chains of `iterations`
-- m16n8kK products, 2 x 16 x 8 x K each
function M.flops(t, blocks, block, iterations)
  return blocks * (block // 32) * iterations * 4 * (2 * 16 * 8 * t.k)
end

return M
