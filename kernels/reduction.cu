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

template <typename T> __device__ __forceinline__ T warp_sum(T v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// One step between: a warp-shuffle sum, then one atomic per warp (n / 32 atomics).
template <typename T> __device__ __forceinline__ void per_warp(T *total, const T *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    T v = warp_sum(i < n ? in[i] : (T)0);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(total, v);
}

// Warp shuffles, the warps' sums combined in shared memory, then one atomic per block (the
// seed's v4).
template <typename T> __device__ __forceinline__ void per_block(T *total, const T *in, int n)
{
    __shared__ T partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    T v = warp_sum(i < n ? in[i] : (T)0);
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)((blockDim.x + 31) >> 5) ? partial[lane] : (T)0;
        v = warp_sum(v);
        if (lane == 0)
            atomicAdd(total, v);
    }
}

extern "C" __global__ void atomic_per_warp(int *total, const int *in, int n) { per_warp(total, in, n); }
extern "C" __global__ void atomic_per_block(int *total, const int *in, int n) { per_block(total, in, n); }

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

extern "C" __global__ void float_atomic_per_warp(float *total, const float *in, int n) { per_warp(total, in, n); }
extern "C" __global__ void float_atomic_per_block(float *total, const float *in, int n) { per_block(total, in, n); }
