/* The CUDA driver, loaded with dlopen; every entry point through cuGetProcAddress. */
#ifndef GX_DRIVER_H
#define GX_DRIVER_H

#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>

#include "gx_error.h"

/* X(name, version): the PFN_<name>_v<version> type and the ABI version asked of the driver. */
#define GX_DRIVER_FUNCTIONS(X)                                                                                         \
    X(cuInit, 2000)                                                                                                    \
    X(cuDriverGetVersion, 2020)                                                                                        \
    X(cuGetErrorName, 6000)                                                                                            \
    X(cuGetErrorString, 6000)                                                                                          \
    X(cuDeviceGetCount, 2000)                                                                                          \
    X(cuDeviceGet, 2000)                                                                                               \
    X(cuDeviceGetName, 2000)                                                                                           \
    X(cuDeviceGetUuid, 11040)                                                                                          \
    X(cuDeviceTotalMem, 3020)                                                                                          \
    X(cuDeviceGetAttribute, 2000)                                                                                      \
    X(cuDeviceGetPCIBusId, 4010)                                                                                       \
    X(cuDevicePrimaryCtxRetain, 7000)                                                                                  \
    X(cuDevicePrimaryCtxRelease, 11000)                                                                                \
    X(cuCtxSetCurrent, 4000)                                                                                           \
    X(cuCtxSynchronize, 2000)                                                                                          \
    X(cuModuleLoadData, 2000)                                                                                          \
    X(cuModuleLoadDataEx, 2010)                                                                                        \
    X(cuModuleGetFunctionCount, 12040)                                                                                 \
    X(cuModuleEnumerateFunctions, 12040)                                                                               \
    X(cuFuncGetName, 12030)                                                                                            \
    X(cuModuleUnload, 2000)                                                                                            \
    X(cuModuleGetFunction, 2000)                                                                                       \
    X(cuModuleGetGlobal, 3020)                                                                                         \
    X(cuFuncGetAttribute, 2020)                                                                                        \
    X(cuFuncSetAttribute, 9000)                                                                                        \
    X(cuFuncGetParamInfo, 12040)                                                                                       \
    X(cuLaunchKernel, 4000)                                                                                            \
    X(cuLaunchKernelEx, 11060)                                                                                         \
    X(cuOccupancyMaxActiveClusters, 11070)                                                                             \
    X(cuOccupancyMaxPotentialClusterSize, 11070)                                                                       \
    X(cuTensorMapEncodeTiled, 12000)                                                                                   \
    X(cuMemAlloc, 3020)                                                                                                \
    X(cuMemFree, 3020)                                                                                                 \
    X(cuMemGetInfo, 3020)                                                                                              \
    X(cuMemcpyHtoD, 3020)                                                                                              \
    X(cuMemcpyDtoH, 3020)                                                                                              \
    X(cuMemcpyDtoD, 3020)                                                                                              \
    X(cuMemcpyHtoDAsync, 3020)                                                                                         \
    X(cuMemcpyDtoHAsync, 3020)                                                                                         \
    X(cuMemcpyDtoDAsync, 3020)                                                                                         \
    X(cuMemsetD8, 3020)                                                                                                \
    X(cuMemsetD32, 3020)                                                                                               \
    X(cuMemHostAlloc, 2020)                                                                                            \
    X(cuMemFreeHost, 2000)                                                                                             \
    X(cuMemHostGetDevicePointer, 3020)                                                                                 \
    X(cuEventCreate, 2000)                                                                                             \
    X(cuEventRecord, 2000)                                                                                             \
    X(cuEventSynchronize, 2000)                                                                                        \
    X(cuEventElapsedTime, 2000)                                                                                        \
    X(cuEventDestroy, 4000)                                                                                            \
    X(cuEventQuery, 2000)                                                                                              \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050)                                                               \
    X(cuStreamCreate, 2000)                                                                                            \
    X(cuStreamDestroy, 4000)                                                                                           \
    X(cuStreamSynchronize, 2000)                                                                                       \
    X(cuStreamCreateWithPriority, 5050)                                                                                \
    X(cuStreamGetPriority, 5050)                                                                                       \
    X(cuCtxGetStreamPriorityRange, 5050)                                                                               \
    X(cuStreamWaitEvent, 3020)                                                                                         \
    X(cuStreamQuery, 2000)                                                                                             \
    X(cuStreamIsCapturing, 10000)                                                                                      \
    X(cuStreamBeginCapture, 10010)                                                                                     \
    X(cuStreamEndCapture, 10000)                                                                                       \
    X(cuGraphInstantiateWithFlags, 11040)                                                                              \
    X(cuGraphLaunch, 10000)                                                                                            \
    X(cuGraphExecDestroy, 10000)                                                                                       \
    X(cuGraphDestroy, 10000)                                                                                           \
    X(cuProfilerStart, 4000)                                                                                           \
    X(cuProfilerStop, 4000)

#define GX_DRIVER_POINTER(name, version) PFN_##name##_v##version name;
typedef struct gx_driver {
    GX_DRIVER_FUNCTIONS(GX_DRIVER_POINTER)
    int version; /* cuDriverGetVersion, e.g. 13000 */
} gx_driver;
#undef GX_DRIVER_POINTER

/* Loads libcuda.so.1 and calls cuInit(0) once; later calls return the first result.
   Returns NULL with *error set when there is no usable driver. */
const gx_driver *gx_driver_get(gx_error *error);

/* Called with the message of the first error after which the context cannot be used again
   (illegal address, trap, ...): a supervised worker records it for its supervisor. */
void gx_driver_on_context_lost(void (*hook)(const char *message));

/* Formats "<call> failed: CUDA_ERROR_X (text)" into *error and returns GX_ERR_DRIVER. */
int gx_cuda_fail(gx_error *error, const char *call, CUresult result);

/* Checks a driver call: `if (GX_CU(error, cuX(...))) return error->kind;` */
#define GX_CU(error, call_expression) gx_cu_check((error), #call_expression, (call_expression))
int gx_cu_check(gx_error *error, const char *expression, CUresult result);

#endif
