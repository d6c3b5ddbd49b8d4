// Arithmetic intensity as a parameter (seeds 001 and 003): one element in `every` (a power of two)
// goes through k FMAs spread over four independent chains, started by 3 adds and summed by 3 more:
// 2k + 6 FLOP per such element, as ncu counts them, on n * 2 * sizeof(T) bytes.
template <typename T> __global__ void intensity(T *y, const T *x, int n, int k, int every, T a, T b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    T v = x[i];
    if (k > 0 && (i & (every - 1)) == 0) {
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
