// Hopper-native launches, one small kernel each, checked against host references by
// tests/gpu/test_hopper.lua and shown in docs/howto/own-kernels.md: module globals, thread block
// clusters (a launch's cluster and a kernel's own __cluster_dims__, distributed shared memory),
// a cooperative grid-wide sync, programmatic dependent launch, and TMA tile loads from a
// CUtensorMap passed by value and inside a struct. Compiles with NVRTC (no <cuda.h>: kernels/tma.cuh).
#include <cooperative_groups.h>

#include "tma.cuh"

namespace cg = cooperative_groups;

// ---- module globals: a __constant__ table and a __device__ counter
__constant__ float coefficients[8];
__device__ unsigned int calls;

// y = c0 + c1 x + ... + c7 x^7 (Horner); counts its launches in `calls`
extern "C" __global__ void polynomial(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        atomicAdd(&calls, 1u);
    if (i >= n)
        return;
    float v = x[i], acc = coefficients[7];
    for (int k = 6; k >= 0; k--)
        acc = acc * v + coefficients[k];
    y[i] = acc;
}

// Clusters, programmatic launches and TMA are 9.0's: on older architectures these kernels compile
// to nothing (gpuexp refuses their launches there before the driver sees them).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define HOPPER 1
#define CLUSTER_DIMS(x, y, z) __cluster_dims__(x, y, z)
#else
#define HOPPER 0
#define CLUSTER_DIMS(x, y, z)
#endif

// ---- clusters: each block reads its right neighbour's shared memory within the cluster
extern "C" __global__ void cluster_neighbors(int *rank, int *neighbor, int *size)
{
#if HOPPER
    __shared__ int own;
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0)
        own = blockIdx.x;
    cluster.sync();
    unsigned right = (cluster.block_rank() + 1) % cluster.num_blocks();
    int *remote = cluster.map_shared_rank(&own, right);
    if (threadIdx.x == 0) {
        rank[blockIdx.x] = (int)cluster.block_rank();
        neighbor[blockIdx.x] = *remote;
        size[blockIdx.x] = (int)cluster.num_blocks();
    }
    cluster.sync(); // no block leaves while another may still read its shared memory
#endif
}

// the same with the cluster fixed at compile time
extern "C" __global__ void CLUSTER_DIMS(2, 1, 1) cluster_pairs(int *size)
{
#if HOPPER
    if (threadIdx.x == 0)
        size[blockIdx.x] = (int)cg::this_cluster().num_blocks();
#endif
}

// ---- cooperative launch: per-block sums, a grid-wide sync, then block 0 adds them up
extern "C" __global__ void grid_sum(const int *values, int n, int *partial, int *total)
{
    __shared__ int block_sum;
    cg::grid_group grid = cg::this_grid();
    if (threadIdx.x == 0)
        block_sum = 0;
    __syncthreads();
    int sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += values[i];
    atomicAdd(&block_sum, sum);
    __syncthreads();
    if (threadIdx.x == 0)
        partial[blockIdx.x] = block_sum;
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int all = 0;
        for (unsigned b = 0; b < gridDim.x; b++)
            all += partial[b];
        *total = all;
    }
}

// ---- programmatic dependent launch: the producer lets its dependent start at once, then works;
// the consumer records when it started, waits for the producer's results, and uses them
__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void pdl_producer(float *data, int n, unsigned long long *finished_ns, int spin_us)
{
#if HOPPER
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    unsigned long long start = global_ns();
    while (global_ns() - start < (unsigned long long)spin_us * 1000)
        ;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        data[i] = 2.0f * i;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *finished_ns = global_ns();
}

extern "C" __global__ void pdl_consumer(const float *data, float *out, int n, unsigned long long *started_ns)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *started_ns = global_ns();
#if HOPPER
    asm volatile("griddepcontrol.wait;" ::: "memory"); // the producer's grid has finished, its writes visible
#endif
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = data[i] + 1.0f;
}

// ---- TMA: one thread loads a 32 x 32 f32 box into shared memory, the block copies it out
#define TILE 32

__device__ void tma_load_tile(const TensorMap *map, float *tile, unsigned long long *barrier, int x, int y)
{
#if HOPPER
    unsigned bar = shared_address(barrier);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
        asm volatile("fence.proxy.async.shared::cta;");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(TILE * TILE * 4));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(shared_address(tile)), "l"(map), "r"(x), "r"(y), "r"(bar)
                     : "memory");
    }
    __syncthreads(); // the barrier is initialized before anyone waits on it
    wait_phase0(bar);
#endif
}

__device__ void store_tile(const float *tile, float *out, int width, int height)
{
    for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x) {
        int x = blockIdx.x * TILE + i % TILE, y = blockIdx.y * TILE + i / TILE;
        if (x < width && y < height)
            out[(long long)y * width + x] = tile[i];
    }
}

// out = the tensor the map describes (width x height f32), tile by tile
extern "C" __global__ void tma_copy(const __grid_constant__ TensorMap map, float *out, int width, int height)
{
    __shared__ alignas(128) float tile[TILE * TILE];
    __shared__ alignas(8) unsigned long long barrier;
    tma_load_tile(&map, tile, &barrier, blockIdx.x * TILE, blockIdx.y * TILE);
    store_tile(tile, out, width, height);
}

// the same with the descriptor inside a struct passed by value
struct TmaArgs {
    TensorMap map;
    int width, height;
};

extern "C" __global__ void tma_copy_struct(const __grid_constant__ TmaArgs args, float *out)
{
    __shared__ alignas(128) float tile[TILE * TILE];
    __shared__ alignas(8) unsigned long long barrier;
    tma_load_tile(&args.map, tile, &barrier, blockIdx.x * TILE, blockIdx.y * TILE);
    store_tile(tile, out, args.width, args.height);
}
