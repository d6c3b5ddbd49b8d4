// The project's build of names_cub.cuh: host code instantiating the CUB-based kernel with two of
// CUB's scan algorithms, as a team's .cu file does.
#include "names_cub.cuh"

int main()
{
    own::block_prefix_sum<128, cub::BLOCK_SCAN_RAKING><<<1, 128>>>(nullptr, nullptr);
    own::block_prefix_sum<128, cub::BLOCK_SCAN_WARP_SCANS><<<1, 128>>>(nullptr, nullptr);
    return 0;
}
