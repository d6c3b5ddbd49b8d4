// Host code that instantiates the kernels of names_kernels.cuh, as a project's .cu file does:
// gpuexp compiles it with compiler = "nvcc" and the tests build cubins and fat binaries from it.
#include <cstdio>

#include "names_kernels.cuh"

template <typename T, unsigned int B> static void run_reduce(const T *in, T *out, unsigned int n)
{
    own::reduce<T, B, true><<<(n + B - 1) / B, B>>>(in, out, n);
    own::reduce<T, B, false><<<n / B, B>>>(in, out, n);
}

int main()
{
    int *ints = nullptr;
    float *floats = nullptr;
    double *doubles = nullptr;
    run_reduce<int, 128>(ints, ints, 0);
    run_reduce<int, 256>(ints, ints, 0);
    run_reduce<float, 256>(floats, floats, 0);
    run_reduce<double, 512>(doubles, doubles, 0);
    own::multi_warp<float, 256, 128><<<1, 32>>>(floats);
    own::prefix_sum<4, own::SCAN_RAKING, own::Mode::Plain><<<1, 32>>>(ints, ints);
    own::prefix_sum<4, own::SCAN_WARP_SCANS, own::Mode::Scaled><<<1, 32>>>(ints, ints);
    own::HalfParams p{};
    own::scale_half<<<1, 32>>>(p, nullptr, nullptr, nullptr);
    std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
