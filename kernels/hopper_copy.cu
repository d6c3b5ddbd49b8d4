// A tile shared by several blocks, loaded three ways (experiments/hopper_copy.lua): out[j] = in + j
// for j = 0 .. COPIES-1, one block per 64 x 64 f32 tile and copy, so every input tile is needed by
// COPIES blocks, as a GEMM's operand tile is needed by the blocks of its row. The stores are the
// same plain coalesced stores in every variant; only the loads differ:
//   plain          each thread loads its 16 floats from global memory (the copies after the first hit L2)
//   cp_async       each thread copies its 16 floats into shared memory with cp.async, then reads them
//   tma            one thread loads the tile with a TMA descriptor into shared memory (an mbarrier)
//   tma_multicast  the COPIES blocks of a tile form a cluster; its first block loads the tile once
//                  and the TMA unit writes it into the shared memory of every block of the cluster
#include <cooperative_groups.h>

#include "tma.cuh"

#ifndef COPIES
#define COPIES 4
#endif
#define TILE 64
#define THREADS 256

namespace cg = cooperative_groups;

__device__ __forceinline__ void store_tile(const float4 *tile4, float *out, int width, int height)
{
    // blockIdx.z is the copy: out holds COPIES images of width x height
    float add = (float)blockIdx.z;
    float *image = out + (long long)blockIdx.z * width * height;
    for (int i = threadIdx.x; i < TILE * TILE / 4; i += THREADS) {
        int row = i / (TILE / 4), column4 = i % (TILE / 4);
        float4 v = tile4[i];
        v.x += add, v.y += add, v.z += add, v.w += add;
        long long at = (long long)(blockIdx.y * TILE + row) * width + blockIdx.x * TILE + column4 * 4;
        *reinterpret_cast<float4 *>(image + at) = v;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) replicate_plain(const float *in, float *out, int width, int height)
{
    float add = (float)blockIdx.z;
    float *image = out + (long long)blockIdx.z * width * height;
    for (int i = threadIdx.x; i < TILE * TILE / 4; i += THREADS) {
        int row = i / (TILE / 4), column4 = i % (TILE / 4);
        long long at = (long long)(blockIdx.y * TILE + row) * width + blockIdx.x * TILE + column4 * 4;
        float4 v = *reinterpret_cast<const float4 *>(in + at);
        v.x += add, v.y += add, v.z += add, v.w += add;
        *reinterpret_cast<float4 *>(image + at) = v;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) replicate_cp_async(const float *in, float *out, int width, int height)
{
    __shared__ alignas(128) float4 tile[TILE * TILE / 4];
    for (int i = threadIdx.x; i < TILE * TILE / 4; i += THREADS) {
        int row = i / (TILE / 4), column4 = i % (TILE / 4);
        const float *from = in + (long long)(blockIdx.y * TILE + row) * width + blockIdx.x * TILE + column4 * 4;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((unsigned)__cvta_generic_to_shared(&tile[i])),
                     "l"(from));
    }
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    store_tile(tile, out, width, height);
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void __launch_bounds__(THREADS) replicate_tma(const __grid_constant__ TensorMap map, float *out,
                                                                    int width, int height)
{
    __shared__ alignas(128) float4 tile[TILE * TILE / 4];
    __shared__ alignas(8) unsigned long long barrier;
    unsigned bar = shared_address(&barrier);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
        asm volatile("fence.proxy.async.shared::cta;");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(TILE * TILE * 4));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(shared_address(tile)), "l"(&map), "r"((int)blockIdx.x * TILE), "r"((int)blockIdx.y * TILE), "r"(bar)
                     : "memory");
    }
    __syncthreads();
    wait_phase0(bar);
    store_tile(tile, out, width, height);
}

// launched with a cluster of (1, 1, COPIES): the blocks of one tile
extern "C" __global__ void __launch_bounds__(THREADS) replicate_tma_multicast(const __grid_constant__ TensorMap map,
                                                                              float *out, int width, int height)
{
    __shared__ alignas(128) float4 tile[TILE * TILE / 4];
    __shared__ alignas(8) unsigned long long barrier;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned bar = shared_address(&barrier);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    cluster.sync(); // every block's barrier is initialized before the first block multicasts into it
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(TILE * TILE * 4));
        if (cluster.block_rank() == 0) {
            unsigned short mask = (unsigned short)((1u << cluster.num_blocks()) - 1);
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                         "[%0], [%1, {%2, %3}], [%4], %5;"
                         ::"r"(shared_address(tile)), "l"(&map), "r"((int)blockIdx.x * TILE), "r"((int)blockIdx.y * TILE), "r"(bar),
                           "h"(mask)
                         : "memory");
        }
    }
    __syncthreads();
    wait_phase0(bar);
    store_tile(tile, out, width, height);
    cluster.sync(); // no block leaves while the multicast may still write into another's shared memory
}
#endif
