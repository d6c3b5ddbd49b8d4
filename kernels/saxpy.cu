// SAXPY, y = alpha * x + y, four ways (seed 000, Mojo GPU Puzzles #31, rewritten in CUDA C++).
// The three kernels of the seed compute the same thing with very different resources:
//   minimal        few registers, no shared memory
//   balanced       16 KB of static shared memory and some extra arithmetic
//   sophisticated  48 KB of static shared memory and many more registers
// and a fourth, vectorized, that moves 16 bytes per load and store.
// All take (y, x, alpha, n); every variant is correct for any block size up to 1024.

extern "C" __global__ void minimal(float *y, const float *x, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}

// Stages x and y through shared memory and adds a tiny correction term, like the seed's kernel:
// the result is alpha * x + y within about 1e-5 relative (checked with rtol 1e-4).
extern "C" __global__ void balanced(float *y, const float *x, float alpha, int n)
{
    __shared__ float cache[4 * 1024]; // 16 KB
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    float xi = 0.0f, yi = 0.0f;
    if (i < n) {
        xi = x[i] * 1.00001f * 0.99999f;
        yi = y[i] * 1.00001f * 0.99999f;
    }
    cache[t] = xi;
    cache[t + 1024] = yi;
    __syncthreads();
    float stable_alpha = alpha * 1.000001f * 0.999999f;
    float hint = xi * xi * 0.000001f;
    if (i < n)
        y[i] = stable_alpha * cache[t] + cache[t + 1024] + hint;
}

// Over-engineered on purpose: a polynomial in x (to x^8) and chains of near-one factors are computed
// before the barrier and used after it, so they stay live in registers across it; partial results
// go through 48 KB of shared memory. The result is alpha * x + y within about 1e-4 relative for
// |x| <= 1 (checked with rtol 1e-3).
extern "C" __global__ void sophisticated(float *y, const float *x, float alpha, int n)
{
    __shared__ float cache[12 * 1024]; // 48 KB
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    float bx = 0.0f, by = 0.0f;
    if (i < n) {
        bx = x[i];
        by = y[i];
    }
    float x1 = bx * 1.0001f, x2 = x1 * 0.9999f, x3 = x2 * 1.000001f, px = x3 * 0.999999f;
    float y1 = by * 1.000005f, y2 = y1 * 0.999995f, y3 = y2 * 1.0000001f, py = y3 * 0.9999999f;
    float a1 = alpha * 1.00001f * 0.99999f, a2 = a1 * 1.000001f * 0.999999f;
    float pa = a2 * 1.0000001f * 0.9999999f * 1.00000001f * 0.99999999f;
    float p2 = px * px, p3 = p2 * px, p4 = p3 * px, p5 = p4 * px, p6 = p5 * px, p7 = p6 * px, p8 = p7 * px;
    float s1 = x1 - x2, s2 = x2 - x3, s3 = y1 - y2, s4 = y2 - y3, s5 = a1 - a2;
    cache[t] = px;
    cache[t + 1024] = py;
    cache[t + 2048] = pa;
    cache[t + 3072] = p2 * 1e-7f;
    __syncthreads();
    float correction = cache[t + 3072] - p4 * 1e-8f + p6 * 1e-9f - p8 * 1e-10f + (p3 - p5 + p7) * 1e-12f
                     + (s1 + s2 + s3 + s4 + s5) * 1e-9f + (x1 * y1 - x3 * y3) * 1e-9f;
    if (i < n)
        y[i] = cache[t + 2048] * cache[t] + cache[t + 1024] + correction;
}

// Four elements per thread with 16-byte loads and stores (float4); the last n % 4 elements are
// done one at a time by the first threads of the grid. x and y must be 16-byte aligned
// (device allocations are).
extern "C" __global__ void vectorized(float *y, const float *x, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int quads = n / 4;
    if (i < quads) {
        float4 xv = reinterpret_cast<const float4 *>(x)[i];
        float4 yv = reinterpret_cast<float4 *>(y)[i];
        yv.x = alpha * xv.x + yv.x;
        yv.y = alpha * xv.y + yv.y;
        yv.z = alpha * xv.z + yv.z;
        yv.w = alpha * xv.w + yv.w;
        reinterpret_cast<float4 *>(y)[i] = yv;
    }
    int tail = 4 * quads + i;
    if (i < n - 4 * quads)
        y[tail] = alpha * x[tail] + y[tail];
}
