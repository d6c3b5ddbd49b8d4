// Kernels of the shipped nightly suite (experiments/nightly/): a memory-bound triad, a
// compute-bound FMA chain and a shared-memory reduction. EXTRA_WORK_PCT (default 0) makes a kernel
// do that much more work with the same result: the injected slowdown of bench/nightly_rule/.

#ifndef EXTRA_WORK_PCT
#define EXTRA_WORK_PCT 0
#endif

// a = b + s * c over n elements, `repeat` times (an L2-resident array is swept many times in one
// launch, so the launch's ramp does not dominate); with EXTRA_WORK_PCT the first elements are
// processed again (same values written), so the kernel moves that much more data.
extern "C" __global__ void triad(float *a, const float *b, const float *c, float s, unsigned long long n, int repeat)
{
    unsigned long long work = n + n * EXTRA_WORK_PCT / 100;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (int r = 0; r < repeat; r++)
        for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < work; i += stride) {
            unsigned long long j = i < n ? i : i - n;
            a[j] = b[j] + s * c[j];
        }
}

// 8 independent FMA chains per thread; EXTRA_WORK_PCT more iterations.
extern "C" __global__ void fma_chain(float *out, int iterations, float x, float y)
{
    int total = iterations + iterations * EXTRA_WORK_PCT / 100;
    float r0 = threadIdx.x, r1 = r0 + 1, r2 = r0 + 2, r3 = r0 + 3, r4 = r0 + 4, r5 = r0 + 5, r6 = r0 + 6, r7 = r0 + 7;
    for (int i = 0; i < total; i++) {
        r0 = fmaf(r0, x, y); r1 = fmaf(r1, x, y); r2 = fmaf(r2, x, y); r3 = fmaf(r3, x, y);
        r4 = fmaf(r4, x, y); r5 = fmaf(r5, x, y); r6 = fmaf(r6, x, y); r7 = fmaf(r7, x, y);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = r0 + r1 + r2 + r3 + r4 + r5 + r6 + r7;
}

// Sum of each block's slice through shared memory (tree reduction), one partial sum per block;
// the slice is read `passes` times (EXTRA_WORK_PCT more passes, rounded down: the suite uses 20
// passes, so 5% is one more pass).
extern "C" __global__ void block_sum(float *partial, const float *in, unsigned long long n, int passes)
{
    extern __shared__ float tile[];
    int total = passes + passes * EXTRA_WORK_PCT / 100;
    float sum = 0;
    for (int p = 0; p < total; p++) {
        unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
        float v = i < n ? in[i] : 0.0f;
        tile[threadIdx.x] = v;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s)
                tile[threadIdx.x] += tile[threadIdx.x + s];
            __syncthreads();
        }
        if (p == 0)
            sum = tile[0];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = sum;
}
