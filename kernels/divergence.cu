// Branch divergence (seed 003 phase 1): the same work per thread, routed through branches that
// split a warp in different ways. Each branch runs a chain of `work` FMAs with its own constants,
// so a warp whose lanes take d different branches runs d chains one after another.
__device__ __forceinline__ float chain(float v, int work, float a, float b)
{
    for (int j = 0; j < work; j++)
        v = v * a + b;
    return v;
}

// pattern: 0 none, 1 warp-aligned (whole warps take the same branch), 2 half-warp, 3 per lane
// (4 branches, lane % 4), 4 data-dependent (the branch is chosen by the input value)
extern "C" __global__ void branches(float *out, const float *in, const int *keys, long long n, int pattern, int work)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int lane = threadIdx.x & 31, warp = (int)(i >> 5);
    int branch = pattern == 0 ? 0 : pattern == 1 ? (warp & 3) : pattern == 2 ? (lane >> 4) : pattern == 3 ? (lane & 3) : (keys[i] & 3);
    float v = in[i];
    switch (branch) {
    case 0: v = chain(v, work, 0.999f, 0.001f); break;
    case 1: v = chain(v, work, 0.998f, 0.002f); break;
    case 2: v = chain(v, work, 0.997f, 0.003f); break;
    default: v = chain(v, work, 0.996f, 0.004f); break;
    }
    out[i] = v;
}
