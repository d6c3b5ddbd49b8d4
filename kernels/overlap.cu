// The overlap study's compute stage: over one chunk, `iterations` dependent FMAs per element
// (a = a * s + c, whose closed form the host checks), so its time can be matched to the copies'.
extern "C" __global__ void chunk_work(float *out, const float *in, unsigned long long offset, unsigned long long count,
                                      int iterations, float s, float c)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float a = in[offset + i];
        for (int k = 0; k < iterations; k++)
            a = fmaf(a, s, c);
        out[offset + i] = a;
    }
}
