// A tiled single-precision matrix multiply C = A * B (n x n, row-major) for gpuexp.tune's study:
// the block shape is chosen at launch (blockDim), the work per thread (TM rows x TN columns) and
// the unrolling of the inner k loop at compile time (-D). A block computes a (blockDim.y * TM) x
// (blockDim.x * TN) tile of C, staging KT-deep slices of A and B in dynamic shared memory; a
// thread's outputs are strided by the block's shape, so neighbouring threads read neighbouring
// shared-memory words. n must be a multiple of both tile sides and of KT.
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#define KT 16
#define GX_STRINGIFY(x) #x
#define GX_UNROLL(n) _Pragma(GX_STRINGIFY(unroll n))

extern "C" __global__ void matmul(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
                                  int n)
{
    extern __shared__ float shared[];
    const int bx = blockDim.x, by = blockDim.y;
    const int rows = by * TM, cols = bx * TN;
    float *as = shared;             // [KT][rows]
    float *bs = shared + KT * rows; // [KT][cols]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int thread = ty * bx + tx, threads = bx * by;
    const int row0 = blockIdx.y * rows, col0 = blockIdx.x * cols;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < n; k0 += KT) {
        for (int i = thread; i < KT * rows; i += threads) {
            const int r = i / KT, k = i % KT;
            as[k * rows + r] = a[(size_t)(row0 + r) * n + k0 + k];
        }
        for (int i = thread; i < KT * cols; i += threads) {
            const int k = i / cols, col = i % cols;
            bs[k * cols + col] = b[(size_t)(k0 + k) * n + col0 + col];
        }
        __syncthreads();
        GX_UNROLL(UNROLL)
        for (int k = 0; k < KT; ++k) {
            float av[TM], bv[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                av[i] = as[k * rows + ty + i * by];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                bv[j] = bs[k * cols + tx + j * bx];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += av[i] * bv[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            c[(size_t)(row0 + ty + i * by) * n + col0 + tx + j * bx] = acc[i][j];
}
