// Arithmetic intensity as a parameter (seeds 001 and 003): one element in `every` (a power of two)
// goes through k FMAs spread over four independent chains, started by 3 adds and summed by 3 more:
// 2k + 6 FLOP per such element, as ncu counts them, on n * 2 * sizeof(T) bytes. Each thread moves
// four consecutive elements with 16-byte loads and stores, so the low-intensity points run at the
// GPU's copy bandwidth: with one 4-byte load per thread the FP32 points stopped at 2.37 TB/s on an
// H200 against a 4.26 TB/s copy ceiling, and the knee they gave was not the GPU's.

template <typename T> __device__ __forceinline__ T chain(T v, int k, T a, T b)
{
    T c0 = v, c1 = v + (T)1, c2 = v + (T)2, c3 = v + (T)3;
    int j = 0;
    for (; j + 4 <= k; j += 4) {
        c0 = c0 * a + b; c1 = c1 * a + b; c2 = c2 * a + b; c3 = c3 * a + b;
    }
    for (; j < k; j++)
        c0 = c0 * a + b;
    return c0 + c1 + c2 + c3;
}

__device__ __forceinline__ void load4(float *v, const float *p)
{
    float4 t = *reinterpret_cast<const float4 *>(p);
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
}
__device__ __forceinline__ void store4(float *p, const float *v)
{
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void load4_l2(float *v, const float *p) // ld.global.cg: from the L2, past L1
{
    float4 t = __ldcg(reinterpret_cast<const float4 *>(p));
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
}
__device__ __forceinline__ void load4(double *v, const double *p)
{
    double2 t0 = reinterpret_cast<const double2 *>(p)[0], t1 = reinterpret_cast<const double2 *>(p)[1];
    v[0] = t0.x; v[1] = t0.y; v[2] = t1.x; v[3] = t1.y;
}
__device__ __forceinline__ void load4_l2(double *v, const double *p)
{
    double2 t0 = __ldcg(reinterpret_cast<const double2 *>(p)), t1 = __ldcg(reinterpret_cast<const double2 *>(p) + 1);
    v[0] = t0.x; v[1] = t0.y; v[2] = t1.x; v[3] = t1.y;
}
__device__ __forceinline__ void store4(double *p, const double *v)
{
    reinterpret_cast<double2 *>(p)[0] = make_double2(v[0], v[1]);
    reinterpret_cast<double2 *>(p)[1] = make_double2(v[2], v[3]);
}

// One thread's four elements: loaded (through L1, or from the L2 past L1), k FMAs on those one in
// `every` selects, stored.
template <typename T, bool FROM_L2> __device__ __forceinline__ void apply(T *y, const T *x, int base, int k, int every, T a, T b)
{
    T v[4];
    if (FROM_L2)
        load4_l2(v, x + base);
    else
        load4(v, x + base);
#pragma unroll
    for (int q = 0; q < 4; q++)
        if (k > 0 && ((base + q) & (every - 1)) == 0)
            v[q] = chain(v[q], k, a, b);
    store4(y + base, v);
}

// n must be a multiple of 4; launch n / 4 threads.
template <typename T> __global__ void intensity(T *y, const T *x, int n, int k, int every, T a, T b)
{
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (base < n)
        apply<T, false>(y, x, base, k, every, a, b);
}

// The same work `passes` times over in one launch, loading from the L2 (past L1): with x and y
// L2-resident, a launch moves passes x n x 2 x sizeof(T) bytes through the L2 and lasts long
// enough to time (one pass over 8 MB is a few microseconds, mostly launch and tail). Launch as
// intensity; FLOPs and bytes are `passes` times intensity's.
template <typename T> __global__ void intensity_passes(T *y, const T *x, int n, int k, int every, T a, T b, int passes)
{
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (base >= n)
        return;
    for (int pass = 0; pass < passes; pass++)
        apply<T, true>(y, x, base, k, every, a, b);
}
