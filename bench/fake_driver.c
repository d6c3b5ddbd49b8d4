/* A stand-in for libcuda.so.1 that does no work, for measuring what gpuexp's own code costs around
   a driver call with no GPU (bench/launch_overhead.sh): GX_LIBCUDA=build/bench/libgx_fake_cuda.so.
   One device (an H100's facts: compute capability 9.0, 132 SMs), a context, modules and functions
   that are tokens, kernels with no parameters, and a cuLaunchKernel that only counts. Every other
   entry point cuGetProcAddress_v2 is asked for succeeds and does nothing. Not a driver: nothing runs. */
#include <stdint.h>
#include <string.h>

#include <cuda.h>

static unsigned long long launches;

static CUresult ok(void)
{
    return CUDA_SUCCESS;
}

static CUresult fake_cuInit(unsigned flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

static CUresult fake_cuDriverGetVersion(int *version)
{
    *version = 13000;
    return CUDA_SUCCESS;
}

static CUresult fake_cuGetErrorName(CUresult error, const char **text)
{
    (void)error;
    *text = "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}

static CUresult fake_cuGetErrorString(CUresult error, const char **text)
{
    (void)error;
    *text = "the fake driver has no GPU";
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetCount(int *count)
{
    *count = 1;
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGet(CUdevice *device, int ordinal)
{
    *device = ordinal;
    return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult fake_cuDeviceGetName(char *name, int size, CUdevice device)
{
    (void)device;
    strncpy(name, "gpuexp fake driver (no GPU)", (size_t)size);
    name[size - 1] = 0;
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetUuid(CUuuid *uuid, CUdevice device)
{
    (void)device;
    memset(uuid->bytes, 0x42, sizeof uuid->bytes);
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceTotalMem(size_t *bytes, CUdevice device)
{
    (void)device;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetPCIBusId(char *id, int size, CUdevice device)
{
    (void)device;
    strncpy(id, "0000:00:00.0", (size_t)size);
    id[size - 1] = 0;
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device)
{
    (void)device;
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 233472; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = 5120; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
    default: *value = 0;
    }
    return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
{
    (void)device;
    *context = (CUcontext)(uintptr_t)0x1000;
    return CUDA_SUCCESS;
}

static CUresult fake_cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned count, CUjit_option *options,
                                        void **values)
{
    (void)image, (void)count, (void)options, (void)values;
    *module = (CUmodule)(uintptr_t)0x2000;
    return CUDA_SUCCESS;
}

static CUresult fake_cuModuleLoadData(CUmodule *module, const void *image)
{
    return fake_cuModuleLoadDataEx(module, image, 0, NULL, NULL);
}

static CUresult fake_cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    (void)module, (void)name;
    *function = (CUfunction)(uintptr_t)0x3000;
    return CUDA_SUCCESS;
}

static CUresult fake_cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function)
{
    (void)function;
    *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024
             : attribute == CU_FUNC_ATTRIBUTE_NUM_REGS            ? 8
                                                                  : 0;
    return CUDA_SUCCESS;
}

static CUresult fake_cuFuncGetParamInfo(CUfunction function, size_t index, size_t *offset, size_t *size)
{
    (void)function, (void)index, (void)offset, (void)size;
    return CUDA_ERROR_INVALID_VALUE; /* kernels with no parameters */
}

static CUresult fake_cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                    unsigned by, unsigned bz, unsigned shared, CUstream stream, void **params,
                                    void **extra)
{
    (void)function, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream;
    (void)params, (void)extra;
    launches++;
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    (void)start, (void)end;
    *ms = 0.001f;
    return CUDA_SUCCESS;
}

static CUresult fake_cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 0;
    *greatest = -5;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = (size_t)79 << 30;
    *total_bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemAlloc(CUdeviceptr *pointer, size_t bytes)
{
    static CUdeviceptr next = 0x100000000ull;
    *pointer = next;
    next += (bytes + 255) & ~(size_t)255;
    return CUDA_SUCCESS;
}

#define FAKE(name)                                                                                                     \
    {                                                                                                                  \
#name, (void *)fake_##name                                                                                     \
    }
static const struct {
    const char *name;
    void *function;
} entries[] = {FAKE(cuInit),
               FAKE(cuDriverGetVersion),
               FAKE(cuGetErrorName),
               FAKE(cuGetErrorString),
               FAKE(cuDeviceGetCount),
               FAKE(cuDeviceGet),
               FAKE(cuDeviceGetName),
               FAKE(cuDeviceGetUuid),
               FAKE(cuDeviceTotalMem),
               FAKE(cuDeviceGetPCIBusId),
               FAKE(cuDeviceGetAttribute),
               FAKE(cuDevicePrimaryCtxRetain),
               FAKE(cuModuleLoadDataEx),
               FAKE(cuModuleLoadData),
               FAKE(cuModuleGetFunction),
               FAKE(cuFuncGetAttribute),
               FAKE(cuFuncGetParamInfo),
               FAKE(cuLaunchKernel),
               FAKE(cuEventElapsedTime),
               FAKE(cuCtxGetStreamPriorityRange),
               FAKE(cuMemGetInfo),
               FAKE(cuMemAlloc)};

CUresult cuInit(unsigned flags)
{
    return fake_cuInit(flags);
}

CUresult cuGetProcAddress_v2(const char *symbol, void **function, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    (void)version, (void)flags;
    *function = (void *)ok;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        if (strcmp(entries[i].name, symbol) == 0)
            *function = entries[i].function;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

/* The launches counted (for a check that a benchmark's loop reached the driver). */
unsigned long long gx_fake_cuda_launches(void)
{
    return launches;
}
