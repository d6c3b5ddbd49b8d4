// The register cliff (seed 003 phase 3): a kernel that wants about 40 registers (24 live values), compiled with -maxrregcount swept around it: below what it needs the compiler
// spills to local memory; at 33+ registers at 256 threads, sm_80/90 lose a quarter of the blocks.
extern "C" __global__ void pressure(float *out, const float *in, long long n, int rounds)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v[24];
#pragma unroll
    for (int j = 0; j < 24; j++)
        v[j] = in[(i + j * 4099) % n];
    for (int r = 0; r < rounds; r++) {
#pragma unroll
        for (int j = 0; j < 24; j++)
            v[j] = v[j] * v[(j + 1) % 24] + v[(j + 7) % 24] * 0.5f;
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 24; j++)
        s += v[j];
    out[i] = s;
}
