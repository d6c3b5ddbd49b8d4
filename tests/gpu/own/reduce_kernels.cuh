// A team's kernels as they usually live: a header of templates in a namespace, using cooperative
// groups and CUB's block primitives from the toolkit, included by host code (reduce_main.cu).
#pragma once
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/block/block_reduce.cuh>

namespace own {
namespace cg = cooperative_groups;

// sum of squares with CUB's BlockReduce: one atomic per block
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) sum_squares_cub(float *out, const float *in, size_t n)
{
    using Reduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename Reduce::TempStorage temp;
    float acc = 0.f;
    for (size_t i = blockIdx.x * (size_t)BLOCK + threadIdx.x; i < n; i += (size_t)gridDim.x * BLOCK)
        acc += in[i] * in[i];
    float block_sum = Reduce(temp).Sum(acc);
    if (threadIdx.x == 0)
        atomicAdd(out, block_sum);
}

// the same with cooperative groups: a warp reduce, one atomic per warp
template <typename T>
__global__ void sum_squares_cg(float *out, const T *in, size_t n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float acc = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        acc += (float)in[i] * (float)in[i];
    float warp_sum = cg::reduce(warp, acc, cg::plus<float>());
    if (warp.thread_rank() == 0)
        atomicAdd(out, warp_sum);
}

// CUTLASS-style parameters passed by value
struct Axpy {
    float alpha;
    int n;
    const float *x;
    float *y;
};

__global__ void axpy_params(Axpy p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        p.y[i] += p.alpha * p.x[i];
}

// an array of structs behind a pointer
struct Particle {
    float position[3];
    int id;
    double mass;
};

__global__ void push_particles(Particle *particles, int n, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        particles[i].position[0] += dt * particles[i].id;
        particles[i].mass *= 2.0;
    }
}

// three steps of one operation, for sequences: scale, add, square-sum
__global__ void scale(float *y, const float *x, float a, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = a * x[i];
}

__global__ void add(float *y, const float *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] += x[i];
}
} // namespace own
