// Host code beside the kernels, as in a team's .cu file: NVRTC cannot take it, nvcc can
// (nvcc -cubin / -fatbin, or gpuexp.compile{compiler = "nvcc"}), and gpuexp.load takes the result.
#include <cstdio>
#include <cstdlib>
#include "reduce_kernels.cuh"

static void check(cudaError_t status, const char *what)
{
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

int main()
{
    const size_t n = 1 << 20;
    float *in, *out;
    check(cudaMalloc(&in, n * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&out, sizeof(float)), "cudaMalloc");
    own::sum_squares_cub<256><<<264, 256>>>(out, in, n);
    own::sum_squares_cg<float><<<264, 256>>>(out, in, n);
    own::Axpy p = {2.0f, (int)n, in, in};
    own::axpy_params<<<(unsigned)(n / 256), 256>>>(p);
    own::scale<<<264, 256>>>(in, in, 0.5f, n);
    own::add<<<264, 256>>>(in, in, n);
    own::push_particles<<<1, 32>>>(nullptr, 0, 1.0f);
    check(cudaDeviceSynchronize(), "kernels");
    std::printf("ok\n");
    return 0;
}
