// Kernels that fail on purpose, for the supervisor's GPU tests and the restart-cost bench.
extern "C" __global__ void store(float *out, int bad)
{
    float *target = bad ? (float *)16 : out; // address 16: CUDA_ERROR_ILLEGAL_ADDRESS
    target[threadIdx.x] = (float)threadIdx.x;
}

extern "C" __global__ void spin(volatile int *flag, int forever)
{
    if (forever)
        while (*flag == 0) { } // nothing ever sets it: the kernel never returns
}

extern "C" __global__ void trap(float *out, int bad)
{
    if (bad)
        asm volatile("trap;"); // CUDA_ERROR_LAUNCH_FAILED
    out[threadIdx.x] = 1.0f;
}
