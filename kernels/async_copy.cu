// Tiles loaded through shared memory (seed 003, phase 5): each block sums a function of its
// tiles, reading every element from another thread's slot, so the data must pass through shared
// memory. STAGES 0 loads each tile with ordinary loads and stores, then waits; STAGES 1..4 use
// cp.async (sm_80+) with that many tiles in flight: the loads of the next tiles overlap the work on
// this one. Each thread moves 16 bytes per tile. With BULK defined (sm_90+), one thread moves
// the whole tile with one bulk copy (cp.async.bulk: the TMA unit, in its one-dimensional form,
// no tensor map) that completes on an mbarrier per stage, which every thread waits on.
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

#if STAGES > 0 && defined(BULK)
__device__ __forceinline__ unsigned shared_address(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void barrier_init(unsigned long long *barrier)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(shared_address(barrier)) : "memory");
}
// the barrier's phase completes when this thread has arrived and `bytes` have landed
__device__ __forceinline__ void bulk_load(float4 *shared, const float4 *global, unsigned bytes, unsigned long long *barrier)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(shared_address(shared)), "l"(global), "r"(bytes), "r"(shared_address(barrier))
                 : "memory");
}
__device__ __forceinline__ void barrier_wait(unsigned long long *barrier, unsigned parity)
{
    asm volatile("{\n .reg .pred done;\n wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra wait_%=;\n}\n" ::"r"(shared_address(barrier)), "r"(parity)
                 : "memory");
}
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
#elif defined(BULK)
    __shared__ __align__(8) unsigned long long landed[STAGES]; // one mbarrier per slot
    const unsigned bytes = 16u * n;
    if (t == 0) {
        for (int s = 0; s < STAGES; s++)
            barrier_init(&landed[s]);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // the barriers, visible to the copy unit
        for (int s = 0; s < STAGES - 1 && s < tiles; s++) // the prologue: STAGES - 1 tiles in flight
            bulk_load(&tile[s * n], &mine[(long long)s * n], bytes, &landed[s]);
    }
    __syncthreads();
    for (int k = 0; k < tiles; k++) {
        int next = k + STAGES - 1;
        if (t == 0 && next < tiles) // into the slot everybody finished reading last iteration
            bulk_load(&tile[(next % STAGES) * n], &mine[(long long)next * n], bytes, &landed[next % STAGES]);
        barrier_wait(&landed[k % STAGES], (k / STAGES) & 1); // slot k % STAGES's (k / STAGES)-th fill
        acc += work_on(tile[(k % STAGES) * n + other], work);
        __syncthreads(); // nobody still reads the slot the next copy overwrites
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
