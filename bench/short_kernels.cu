// The kernels of bench/short_sequence.lua and its C peer bench/short_sequence.c: a scale and two
// adds over a few MB (a sequence of about 15 µs on an H100/H200) and the scale alone over less
// (a kernel of about 3 µs). extern "C" so the C peer finds them by the same names.
extern "C" __global__ void scale(float *out, const float *in, float factor, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = factor * in[i];
}

extern "C" __global__ void add(float *out, const float *in, unsigned long long n)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] += in[i];
}
