// Arithmetic intensity as a parameter (seeds 001 and 003): every `every`-th element loaded goes
// through a chain of k dependent-free FMAs (four independent chains), so a run does 2 * k * n / every
// FLOP on n * 2 * sizeof(T) bytes. k = 0 is a plain copy.
template <typename T> __global__ void intensity(T *y, const T *x, long long n, int k, int every, T a, T b)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    T v = x[i];
    if (k > 0 && i % every == 0) {
        T c0 = v, c1 = v + (T)1, c2 = v + (T)2, c3 = v + (T)3;
        int j = 0;
        for (; j + 4 <= k; j += 4) {
            c0 = c0 * a + b; c1 = c1 * a + b; c2 = c2 * a + b; c3 = c3 * a + b;
        }
        for (; j < k; j++)
            c0 = c0 * a + b;
        v = c0 + c1 + c2 + c3;
    }
    y[i] = v;
}
