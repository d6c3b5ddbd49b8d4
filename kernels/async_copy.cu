// Tiles loaded through shared memory (seed 003, phase 5): each block sums a function of its
// tiles, reading every element from another thread's slot, so the data must pass through shared
// memory. STAGES 0 loads each tile with ordinary loads and stores, then waits; STAGES 1..4 use
// cp.async (sm_80+) with that many tiles in flight: the loads of the next tiles overlap the work on
// this one. Each thread moves 16 bytes per tile.
#ifndef STAGES
#define STAGES 0
#endif

__device__ __forceinline__ float work_on(float4 v, int work)
{
    float s = v.x + v.y + v.z + v.w;
    for (int w = 0; w < work; w++)
        s = s * 0.999f + 0.001f;
    return s;
}

#if STAGES > 0
__device__ __forceinline__ void copy_async(float4 *shared, const float4 *global)
{
    unsigned address = (unsigned)__cvta_generic_to_shared(shared);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void wait_all_but_newest() { asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 1)); }
#endif

extern "C" __global__ void tiled(const float4 *in, float *out, int tiles, int work)
{
    extern __shared__ float4 tile[]; // max(STAGES, 1) slots of blockDim.x
    const int n = blockDim.x, t = threadIdx.x, other = (t * 7 + 3) % n;
    const float4 *mine = in + (long long)blockIdx.x * tiles * n;
    float acc = 0;
#if STAGES == 0
    for (int k = 0; k < tiles; k++) {
        tile[t] = mine[(long long)k * n + t];
        __syncthreads();
        acc += work_on(tile[other], work);
        __syncthreads();
    }
#else
    for (int s = 0; s < STAGES - 1; s++) { // the prologue: STAGES - 1 tiles in flight
        if (s < tiles)
            copy_async(&tile[s * n + t], &mine[(long long)s * n + t]);
        commit();
    }
    for (int k = 0; k < tiles; k++) {
        int next = k + STAGES - 1;
        if (next < tiles)
            copy_async(&tile[(next % STAGES) * n + t], &mine[(long long)next * n + t]);
        commit();               // one group per iteration, empty or not, so the count below holds
        wait_all_but_newest();  // tile k has landed (STAGES - 1 newer groups may still fly)
        __syncthreads();
        acc += work_on(tile[(k % STAGES) * n + other], work);
        __syncthreads();        // nobody still reads the slot the next copy overwrites
    }
#endif
    out[(long long)blockIdx.x * n + t] = acc;
}
