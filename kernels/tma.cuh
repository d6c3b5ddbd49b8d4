// TMA in device code without <cuda.h> (NVRTC): a descriptor as the 128 opaque bytes aligned to 64
// that CUtensorMap is, shared-memory addresses, and the wait on an mbarrier's first phase.
// Included by kernels/hopper.cu and kernels/hopper_copy.cu.
#pragma once

struct alignas(64) TensorMap {
    unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned shared_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// Waits until the mbarrier at shared address `barrier` completes its phase 0 (its arrivals and the
// bytes its TMA copies announced).
__device__ __forceinline__ void wait_phase0(unsigned barrier)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(barrier)
                     : "memory");
}
#endif
