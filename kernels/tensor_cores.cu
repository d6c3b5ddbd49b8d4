// Tensor cores through mma.sync (seed 003, phase 5): FP16, BF16 and TF32 (sm_80+), INT8
// (sm_80+) and FP8 E4M3 (sm_89+), each with a check kernel (one warp, one D = A x B tile from
// matrices in global memory, laid out as the PTX ISA's fragment tables say) and a rate kernel
// (every warp issuing independent mma chains). Inputs are floats; the kernels convert them with
// PTX cvt, so small integers stay exact in every type and the host's product is the answer.
// On older architectures the kernels compile to nothing useful and the study skips them.

#define LANE_GROUP (threadIdx.x >> 2) // "groupID" in the PTX fragment tables
#define LANE_IN_GROUP (threadIdx.x & 3) // "threadID_in_group"

__device__ __forceinline__ unsigned pack_f16(float lo, float hi)
{
    unsigned d = 0;
#if __CUDA_ARCH__ >= 800
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
#endif
    return d;
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi)
{
    unsigned d = 0;
#if __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
#endif
    return d;
}
__device__ __forceinline__ unsigned tf32(float x)
{
    unsigned d = 0;
#if __CUDA_ARCH__ >= 800
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(d) : "f"(x));
#endif
    return d;
}
__device__ __forceinline__ unsigned pack_s8(float a, float b, float c, float d)
{
    return ((unsigned)(int)a & 0xffu) | (((unsigned)(int)b & 0xffu) << 8) | (((unsigned)(int)c & 0xffu) << 16)
           | (((unsigned)(int)d & 0xffu) << 24);
}
__device__ __forceinline__ unsigned pack_e4m3(float a, float b, float c, float d)
{
    unsigned short lo = 0, hi = 0;
#if __CUDA_ARCH__ >= 890
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(b), "f"(a));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(d), "f"(c));
#endif
    return (unsigned)lo | ((unsigned)hi << 16);
}

// ---- the mma instructions: D (4 x f32 or s32) = A x B + C ----
__device__ __forceinline__ void mma_f16(float *d, const unsigned *a, const unsigned *b)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ __forceinline__ void mma_bf16(float *d, const unsigned *a, const unsigned *b)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ __forceinline__ void mma_tf32(float *d, const unsigned *a, const unsigned *b)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ __forceinline__ void mma_s8(int *d, const unsigned *a, const unsigned *b)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
__device__ __forceinline__ void mma_e4m3(float *d, const unsigned *a, const unsigned *b)
{
#if __CUDA_ARCH__ >= 890
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// ---- fragments from A (16 x K, row-major) and B (K x 8, B[k * 8 + n]) as the PTX ISA lays them out ----
// 16-bit types, m16n8k16: a0 (g, 2t..+1), a1 (g+8, 2t..+1), a2 (g, 2t+8..+9), a3 (g+8, 2t+8..+9);
// b0 (k 2t..+1, n g), b1 (k 2t+8..+9, n g)
#define A16(r, c) A[(r) * 16 + (c)]
#define B16(k, n) B[(k) * 8 + (n)]
#define FRAGMENTS_16BIT(pack)                                                                                 \
    const int g = LANE_GROUP, t = LANE_IN_GROUP;                                                             \
    unsigned a[4] = {pack(A16(g, 2 * t), A16(g, 2 * t + 1)), pack(A16(g + 8, 2 * t), A16(g + 8, 2 * t + 1)),    \
                     pack(A16(g, 2 * t + 8), A16(g, 2 * t + 9)), pack(A16(g + 8, 2 * t + 8), A16(g + 8, 2 * t + 9))}; \
    unsigned b[2] = {pack(B16(2 * t, g), B16(2 * t + 1, g)), pack(B16(2 * t + 8, g), B16(2 * t + 9, g))};
// TF32, m16n8k8: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (k t, n g), b1 (k t+4, n g)
#define FRAGMENTS_TF32                                                                                       \
    const int g = LANE_GROUP, t = LANE_IN_GROUP;                                                             \
    unsigned a[4] = {tf32(A[g * 8 + t]), tf32(A[(g + 8) * 8 + t]), tf32(A[g * 8 + t + 4]), tf32(A[(g + 8) * 8 + t + 4])}; \
    unsigned b[2] = {tf32(B[t * 8 + g]), tf32(B[(t + 4) * 8 + g])};
// 8-bit types, m16n8k32: a0 (g, 4t..+3), a1 (g+8, 4t..+3), a2 (g, 4t+16..+19), a3 (g+8, 4t+16..+19);
// b0 (k 4t..+3, n g), b1 (k 4t+16..+19, n g)
#define A32(r, c) A[(r) * 32 + (c)]
#define B32(k, n) B[(k) * 8 + (n)]
#define FRAGMENTS_8BIT(pack)                                                                                  \
    const int g = LANE_GROUP, t = LANE_IN_GROUP;                                                             \
    unsigned a[4] = {pack(A32(g, 4 * t), A32(g, 4 * t + 1), A32(g, 4 * t + 2), A32(g, 4 * t + 3)),             \
                     pack(A32(g + 8, 4 * t), A32(g + 8, 4 * t + 1), A32(g + 8, 4 * t + 2), A32(g + 8, 4 * t + 3)), \
                     pack(A32(g, 4 * t + 16), A32(g, 4 * t + 17), A32(g, 4 * t + 18), A32(g, 4 * t + 19)),     \
                     pack(A32(g + 8, 4 * t + 16), A32(g + 8, 4 * t + 17), A32(g + 8, 4 * t + 18), A32(g + 8, 4 * t + 19))}; \
    unsigned b[2] = {pack(B32(4 * t, g), B32(4 * t + 1, g), B32(4 * t + 2, g), B32(4 * t + 3, g)),             \
                     pack(B32(4 * t + 16, g), B32(4 * t + 17, g), B32(4 * t + 18, g), B32(4 * t + 19, g))};
// D (16 x 8): d0 (g, 2t), d1 (g, 2t+1), d2 (g+8, 2t), d3 (g+8, 2t+1)
#define STORE_D(d)                                                                                           \
    D[g * 8 + 2 * t] = (float)d[0];                                                                          \
    D[g * 8 + 2 * t + 1] = (float)d[1];                                                                      \
    D[(g + 8) * 8 + 2 * t] = (float)d[2];                                                                    \
    D[(g + 8) * 8 + 2 * t + 1] = (float)d[3];

// ---- check kernels: one warp, one tile ----
extern "C" __global__ void check_f16(const float *A, const float *B, float *D)
{
    FRAGMENTS_16BIT(pack_f16)
    float d[4] = {0, 0, 0, 0};
    mma_f16(d, a, b);
    STORE_D(d)
}
extern "C" __global__ void check_bf16(const float *A, const float *B, float *D)
{
    FRAGMENTS_16BIT(pack_bf16)
    float d[4] = {0, 0, 0, 0};
    mma_bf16(d, a, b);
    STORE_D(d)
}
extern "C" __global__ void check_tf32(const float *A, const float *B, float *D)
{
    FRAGMENTS_TF32
    float d[4] = {0, 0, 0, 0};
    mma_tf32(d, a, b);
    STORE_D(d)
}
extern "C" __global__ void check_int8(const float *A, const float *B, float *D)
{
    FRAGMENTS_8BIT(pack_s8)
    int d[4] = {0, 0, 0, 0};
    mma_s8(d, a, b);
    STORE_D(d)
}
extern "C" __global__ void check_fp8(const float *A, const float *B, float *D)
{
    FRAGMENTS_8BIT(pack_e4m3)
    float d[4] = {0, 0, 0, 0};
    mma_e4m3(d, a, b);
    STORE_D(d)
}

// ---- rate kernels: every warp runs CHAINS independent accumulators for `iterations` ----
#define CHAINS 4
#define RATE_KERNEL(name, T, fragment_setup, mma)                                                             \
    extern "C" __global__ void name(const float *A, const float *B, float *out, int iterations)              \
    {                                                                                                        \
        fragment_setup                                                                                       \
        T acc[CHAINS][4] = {};                                                                               \
        for (int i = 0; i < iterations; i++) {                                                               \
            _Pragma("unroll") for (int c = 0; c < CHAINS; c++) mma(acc[c], a, b);                            \
        }                                                                                                    \
        T sum = 0;                                                                                           \
        for (int c = 0; c < CHAINS; c++)                                                                     \
            sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];                                            \
        out[blockIdx.x * blockDim.x + threadIdx.x] = (float)sum;                                             \
    }
RATE_KERNEL(rate_f16, float, FRAGMENTS_16BIT(pack_f16), mma_f16)
RATE_KERNEL(rate_bf16, float, FRAGMENTS_16BIT(pack_bf16), mma_bf16)
RATE_KERNEL(rate_tf32, float, FRAGMENTS_TF32, mma_tf32)
RATE_KERNEL(rate_int8, int, FRAGMENTS_8BIT(pack_s8), mma_s8)
RATE_KERNEL(rate_fp8, float, FRAGMENTS_8BIT(pack_e4m3), mma_e4m3)

// The CUDA-core peer: FP32 FMA, 8 independent chains per thread.
extern "C" __global__ void rate_fp32_fma(const float *A, const float *B, float *out, int iterations)
{
    float r[8];
    for (int c = 0; c < 8; c++)
        r[c] = A[threadIdx.x & 15] + c;
    const float x = 0.999f, y = B[0];
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int c = 0; c < 8; c++)
            r[c] = fmaf(r[c], x, y);
    }
    float sum = 0;
    for (int c = 0; c < 8; c++)
        sum += r[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
