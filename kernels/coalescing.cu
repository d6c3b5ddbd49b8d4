// Global-memory coalescing (seed 003): out[i] = in[i * stride + offset] for elements of 4, 8 or
// 16 bytes. A warp's 32 loads cover 32 * size bytes when stride is 1; with a larger stride they
// touch more 32-byte sectors than they use, and a misaligned offset splits accesses across sectors.
template <typename T> __global__ void strided_copy(T *out, const T *in, long long n, int stride, int offset)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i * stride + offset];
}
