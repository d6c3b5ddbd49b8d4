#include "gx_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static gx_driver driver;
static gx_error load_error;
static int load_status = -1; /* -1 not tried, else a gx_error_kind */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static void (*context_lost_hook)(const char *message);

void gx_driver_on_context_lost(void (*hook)(const char *message))
{
    context_lost_hook = hook;
}

static void load_driver(void)
{
    /* The driver's compute cache (~/.nv/ComputeCache) also serves NVRTC, which then skips ptxas and
       its -v report for PTX it has seen: no registers, spills or static shared memory for a kernel
       compiled the second time on a machine (gpuexp diagnose's spill evidence went missing). The
       driver reads the setting as it starts, so it is turned off here, before cuInit, unless the user
       set it; gpuexp's own cubin cache keeps the report. */
    setenv("CUDA_CACHE_DISABLE", "1", 0);
    const char *library = getenv("GX_LIBCUDA") ? getenv("GX_LIBCUDA") : "libcuda.so.1";
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        load_status = gx_fail(&load_error, GX_ERR_DRIVER,
                              "no CUDA driver found: dlopen(%s) failed: %s (is the NVIDIA driver installed?)", library,
                              dlerror());
        return;
    }
    /* cuInit first, through its one stable ABI, so a stub library or a missing GPU says so */
    PFN_cuInit_v2000 init = (PFN_cuInit_v2000)dlsym(handle, "cuInit");
    CUresult init_result = init ? init(0) : CUDA_ERROR_NOT_FOUND;
    if (init_result == CUDA_ERROR_STUB_LIBRARY) {
        load_status = gx_fail(&load_error, GX_ERR_DRIVER,
                              "no CUDA driver found: %s is the CUDA toolkit's stub library, not a driver (cuInit: "
                              "CUDA_ERROR_STUB_LIBRARY)",
                              library);
        return;
    }
    PFN_cuGetProcAddress_v12000 get_proc = (PFN_cuGetProcAddress_v12000)dlsym(handle, "cuGetProcAddress_v2");
    if (!get_proc) {
        load_status = gx_fail(
            &load_error, GX_ERR_DRIVER,
            "the CUDA driver in %s is too old: it has no cuGetProcAddress_v2 (CUDA 12.0 or newer is needed)", library);
        return;
    }
    CUdriverProcAddressQueryResult found;
#define GX_DRIVER_LOAD(name, version)                                                                                  \
    if (get_proc(#name, (void **)&driver.name, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||        \
        found != CU_GET_PROC_ADDRESS_SUCCESS || !driver.name) {                                                        \
        load_status = gx_fail(&load_error, GX_ERR_DRIVER,                                                              \
                              "the CUDA driver has no %s (ABI version %d); update the NVIDIA driver", #name, version); \
        return;                                                                                                        \
    }
    GX_DRIVER_FUNCTIONS(GX_DRIVER_LOAD)
#undef GX_DRIVER_LOAD
    CUresult result = driver.cuInit(0);
    if (result != CUDA_SUCCESS) {
        gx_cuda_fail(&load_error, "cuInit", result);
        if (result == CUDA_ERROR_STUB_LIBRARY)
            gx_error_append(&load_error, "; %s is the toolkit's stub, not a driver: no NVIDIA driver is installed",
                            library);
        else if (result == CUDA_ERROR_NO_DEVICE)
            gx_error_append(&load_error, "; no CUDA GPU found");
        load_status = GX_ERR_DRIVER;
        return;
    }
    driver.cuDriverGetVersion(&driver.version);
    load_status = GX_OK;
}

const gx_driver *gx_driver_get(gx_error *error)
{
    pthread_once(&load_once, load_driver);
    if (load_status != GX_OK) {
        *error = load_error;
        return NULL;
    }
    return &driver;
}

/* CUDA errors after which the context cannot be used again (illegal address, trap, ...). */
static int is_sticky(int result)
{
    switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_UNKNOWN: return 1;
    default: return 0;
    }
}

int gx_cuda_fail(gx_error *error, const char *call, CUresult result)
{
    const char *name = NULL, *text = NULL;
    if (driver.cuGetErrorName)
        driver.cuGetErrorName(result, &name);
    if (driver.cuGetErrorString)
        driver.cuGetErrorString(result, &text);
    char number[32];
    if (!name) {
        snprintf(number, sizeof number, "CUDA error %d", (int)result);
        name = number;
    }
    gx_fail(error, GX_ERR_DRIVER, "%s failed: %s (%s)", call, name, text ? text : "no description");
    /* the context is gone for good: a supervised run restarts the worker after this point */
    if (context_lost_hook && is_sticky(result))
        context_lost_hook(error->message);
    return GX_ERR_DRIVER;
}

int gx_cu_check(gx_error *error, const char *expression, CUresult result)
{
    if (result == CUDA_SUCCESS)
        return GX_OK;
    /* "driver->cuMemAlloc(&p, n)" -> "cuMemAlloc" */
    const char *start = strstr(expression, "cu");
    while (start && !(start[2] >= 'A' && start[2] <= 'Z'))
        start = strstr(start + 1, "cu");
    char call[128];
    size_t length = 0;
    if (start)
        while (start[length] && start[length] != '(' && length + 1 < sizeof call)
            length++;
    memcpy(call, start ? start : expression, length);
    call[length] = 0;
    return gx_cuda_fail(error, length ? call : expression, result);
}
