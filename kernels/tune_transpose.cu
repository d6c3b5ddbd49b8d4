// A tiled matrix transpose (out = in^T, n x n floats), tuned by defines, for the tuning study's
// nvcc space (kernels/tune_transpose.lua):
//   TILE  the tile's side; ROWS  the block's thread rows (each thread moves TILE / ROWS rows);
//   VEC   consecutive columns per thread (TILE / VEC threads across); PAD  a padding column in
//   shared memory against bank conflicts; LDG  loads through the read-only cache.
extern "C" __global__ void transpose(float *__restrict__ out, const float *__restrict__ in, int n)
{
    __shared__ float tile[TILE][TILE + PAD];
    int x0 = blockIdx.x * TILE, y0 = blockIdx.y * TILE;
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
#pragma unroll
        for (int v = 0; v < VEC; ++v) {
            int c = threadIdx.x * VEC + v, gx = x0 + c, gy = y0 + r;
            float value = 0.0f;
            if (gx < n && gy < n) {
#if LDG
                value = __ldg(in + (size_t)gy * n + gx);
#else
                value = in[(size_t)gy * n + gx];
#endif
            }
            tile[r][c] = value;
        }
    }
    __syncthreads();
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
#pragma unroll
        for (int v = 0; v < VEC; ++v) {
            int c = threadIdx.x * VEC + v, gx = y0 + c, gy = x0 + r;
            if (gx < n && gy < n)
                out[(size_t)gy * n + gx] = tile[c][r];
        }
    }
}
