// Shared-memory bank conflicts (seed 002, Mojo GPU Puzzles #32, in CUDA C++). 32 banks of 4 bytes:
// word address a is in bank a % 32, and a warp's access takes as many wavefronts as the largest
// number of distinct words it touches in one bank.
#define TPB 256

// out[i] = (in[i] + 10) * 2 through shared memory, thread t using word t: every warp touches 32
// banks once: no conflict.
extern "C" __global__ void no_conflict(float *out, const float *in, int n)
{
    __shared__ float buffer[TPB];
    int t = threadIdx.x, i = blockIdx.x * TPB + t;
    buffer[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = (buffer[t] + 10.0f) * 2.0f;
}

// The same result with thread t using word 2t: lanes t and t + 16 of a warp land in the same bank
// at different words, a 2-way conflict on every shared load and store (one extra wavefront each).
extern "C" __global__ void two_way_conflict(float *out, const float *in, int n)
{
    __shared__ float buffer[2 * TPB];
    int t = threadIdx.x, i = blockIdx.x * TPB + t;
    buffer[2 * t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n)
        out[i] = (buffer[2 * t] + 10.0f) * 2.0f;
}

// A column read of a 32-column tile whose rows are padded by `pad` words: lane L reads logical
// element L * stride, at word L * stride + (L * stride / 32) * pad, `iterations` times. Dynamic
// shared memory: 32 * (32 + pad) floats (the launch gives it).
extern "C" __global__ void strided_read(float *out, int stride, int pad, int iterations)
{
    extern __shared__ float tile[];
    int words = 32 * (32 + pad);
    for (int w = threadIdx.x; w < words; w += blockDim.x)
        tile[w] = (float)(w % 97);
    __syncthreads();
    int lane = threadIdx.x & 31;
    int logical = lane * stride;
    int address = logical + (logical / 32) * pad;
    volatile float *v = tile; // one load per iteration, as written
    float sum = 0.0f;
    for (int r = 0; r < iterations; r++)
        sum += v[address];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
