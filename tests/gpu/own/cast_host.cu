// The issue's case: a project's .cu whose host code never instantiates the template a script
// names (copy_and_cast_kernel<float, __nv_bfloat16>), as llm.c's kernels are written. With
// compile{compiler = "nvcc", names = {...}} the instantiation must end up in the cubin that loads.
#include <cstdio>
#include <cuda_bf16.h>

template <class Td, class Ts>
__global__ void copy_and_cast_kernel(Td *dst, const Ts *src, size_t n, ptrdiff_t stride_dst, ptrdiff_t stride_src)
{
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx < n)
        dst[idx + stride_dst * blockIdx.y] = (Td)src[idx + stride_src * blockIdx.y];
}

__constant__ float cast_scale[4]; // a global beside it, read back by the GPU test

int main()
{
    // only the float -> float instantiation is launched here
    copy_and_cast_kernel<float, float><<<1, 32>>>(nullptr, nullptr, 0, 0, 0);
    std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
