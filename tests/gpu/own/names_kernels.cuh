// Kernels named the ways C++ code names them, for gpuexp's name lookup tests: many template
// instantiations (types, integers of several types, bools), an enum template argument (plain and
// scoped, in a namespace), const on either side, and an fp16 kernel taking a struct by value.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace own {
enum ScanAlgorithm { SCAN_RAKING, SCAN_WARP_SCANS };
enum class Mode : int { Plain = 0, Scaled = 3 };

template <typename T, unsigned int BlockSize, bool Check>
__global__ void reduce(const T *in, T *out, unsigned int n)
{
    __shared__ T partial[BlockSize];
    unsigned int i = blockIdx.x * BlockSize + threadIdx.x;
    partial[threadIdx.x] = (!Check || i < n) ? in[i] : T(0);
    __syncthreads();
    for (unsigned int s = BlockSize / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

template <typename T, unsigned long Warps, unsigned long long Items>
__global__ void multi_warp(T *data) { data[threadIdx.x % (Warps * Items)] += T(1); }

template <int Items, ScanAlgorithm Algorithm, Mode M>
__global__ void prefix_sum(const int *in, int *out)
{
    int v = in[threadIdx.x] * Items + (Algorithm == SCAN_WARP_SCANS ? 1 : 0);
    out[threadIdx.x] = M == Mode::Scaled ? 3 * v : v;
}

struct HalfParams {
    __half scale;   // 2 bytes
    bool relu;      // then a hole
    float bias;
    int n;
    __nv_bfloat16 floor;
};

// y = relu?(x * scale + bias) in fp16, and z = max(y, floor) in bf16
__global__ void scale_half(HalfParams p, const __half *x, __half *y, __nv_bfloat16 *z)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n)
        return;
    float v = __half2float(x[i]) * __half2float(p.scale) + p.bias;
    if (p.relu && v < 0)
        v = 0;
    y[i] = __float2half(v);
    float f = __bfloat162float(p.floor);
    z[i] = __float2bfloat16(v > f ? v : f);
}
} // namespace own
