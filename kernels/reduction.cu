// Sum of n numbers three ways (seed 004 phase 2): the cost of contended atomics against warp
// shuffles, for floats (the seed's case) and for integers.

// Every thread adds its element to the one total: n atomics on one address. Written as PTX
// because the compiler turns atomicAdd on a uniform address into one atomic per warp (a warp
// reduction first), which is the next variant, not this one.
extern "C" __global__ void atomic_per_thread(int *total, const int *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int old;
        asm volatile("atom.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(total), "r"(in[i]) : "memory");
    }
}

__device__ __forceinline__ int warp_sum(int v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// One step between: a warp-shuffle sum, then one atomic per warp (n / 32 atomics).
extern "C" __global__ void atomic_per_warp(int *total, const int *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = warp_sum(i < n ? in[i] : 0);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(total, v);
}

// Warp shuffles, the warps' sums combined in shared memory, then one atomic per block.
extern "C" __global__ void atomic_per_block(int *total, const int *in, int n)
{
    __shared__ int partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = warp_sum(i < n ? in[i] : 0);
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)((blockDim.x + 31) >> 5) ? partial[lane] : 0;
        v = warp_sum(v);
        if (lane == 0)
            atomicAdd(total, v);
    }
}

// The seed's case (seed 004 phase 2, its reduction v1 and v4): a float sum. v1 is the seed's code,
// atomicAdd with the result unused, which compiles to a fire-and-forget reduction (RED) per thread:
// float adds are not reassociated, so the compiler cannot merge them into one per warp as it does
// for integers, and every one of them queues on the total's L2 line.
extern "C" __global__ void float_atomic_per_thread(float *total, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(total, in[i]);
}

__device__ __forceinline__ float warp_sum_f(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

extern "C" __global__ void float_atomic_per_warp(float *total, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_sum_f(i < n ? in[i] : 0.0f);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(total, v);
}

// The seed's v4: warp shuffles, the warps' sums in shared memory, one atomic per block.
extern "C" __global__ void float_atomic_per_block(float *total, const float *in, int n)
{
    __shared__ float partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_sum_f(i < n ? in[i] : 0.0f);
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)((blockDim.x + 31) >> 5) ? partial[lane] : 0.0f;
        v = warp_sum_f(v);
        if (lane == 0)
            atomicAdd(total, v);
    }
}
