// A kernel with CUB's enum as a template argument: its mangled name carries CCCL's inline ABI
// namespace, which changes with the architectures a build targets (SM_900, SM_800_900, ...).
#pragma once
#include <cub/block/block_scan.cuh>

namespace own {
template <int BlockThreads, cub::BlockScanAlgorithm Algorithm>
__global__ void block_prefix_sum(const int *in, int *out)
{
    using BlockScan = cub::BlockScan<int, BlockThreads, Algorithm>;
    __shared__ typename BlockScan::TempStorage temp;
    int v = in[threadIdx.x];
    BlockScan(temp).ExclusiveSum(v, v);
    out[threadIdx.x] = v;
}
} // namespace own
