#include "gx_cupti.h"
#include "gx_cupti_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>

#include "gx_driver.h"

struct gx_cupti_functions gx_cupti;
static gx_error load_error;
static int load_status = -1;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_cupti(void)
{
    const char *candidates[6];
    int n = 0;
    char from_home[512];
    if (getenv("GX_LIBCUPTI")) /* when set, the only candidate: tests use it to take CUPTI away */
        candidates[n++] = getenv("GX_LIBCUPTI");
    else
        candidates[n++] = "libcupti.so.13";
    if (!getenv("GX_LIBCUPTI") && getenv("CUDA_HOME")) {
        snprintf(from_home, sizeof from_home, "%s/lib64/libcupti.so.13", getenv("CUDA_HOME"));
        candidates[n++] = from_home;
    }
    if (!getenv("GX_LIBCUPTI")) {
        candidates[n++] = "/usr/local/cuda/lib64/libcupti.so.13";
        candidates[n++] = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13";
    }
    void *handle = NULL;
    for (int i = 0; i < n && !handle; i++)
        handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        char tried[2048] = "";
        for (int i = 0; i < n; i++)
            snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", i ? ", " : "", candidates[i]);
        load_status = gx_fail(&load_error, GX_ERR_PROFILER,
                              "CUPTI not found (tried %s): install the CUDA toolkit's CUPTI or set GX_LIBCUPTI", tried);
        return;
    }
#define GX_CUPTI_LOAD(name)                                                                                            \
    if (!(gx_cupti.name = (__typeof__(name) *)dlsym(handle, #name))) {                                                 \
        load_status = gx_fail(&load_error, GX_ERR_PROFILER, "CUPTI has no %s: CUPTI 13 is needed", #name);             \
        return;                                                                                                        \
    }
    GX_CUPTI_FUNCTIONS(GX_CUPTI_LOAD)
#undef GX_CUPTI_LOAD
    load_status = GX_OK;
}

int gx_cupti_loaded(void)
{
    return load_status == GX_OK;
}

int gx_cupti_get(gx_error *error)
{
    pthread_once(&load_once, load_cupti);
    if (load_status != GX_OK)
        *error = load_error;
    return load_status;
}

/* "cuptiX failed: CUPTI_ERROR_Y (text)" plus what the user can do about the common ones. */
int gx_cupti_fail(gx_error *error, const char *call, CUptiResult result)
{
    const char *name = "CUPTI_ERROR", *text = "";
    gx_cupti.cuptiGetResultString(result, &name);
    gx_cupti.cuptiGetErrorMessage(result, &text);
    int kind = result == CUPTI_ERROR_INVALID_METRIC_NAME ? GX_ERR_USAGE : GX_ERR_PROFILER;
    gx_fail(error, kind, "%s failed: %s (%s)", call, name, text);
    switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        gx_error_append(error,
                        ": the driver lets only administrators read GPU performance counters (ERR_NVGPUCTRPERM). "
                        "Run as root or with CAP_SYS_ADMIN (CAP_PERFMON from driver R565), or have an admin set "
                        "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d, rebuild the "
                        "initramfs and reboot; in a container the host's setting applies");
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        gx_error_append(error, ": another profiler owns this process (ncu, nsys, cuda-gdb, or a framework's tracer); "
                               "run gpuexp without it to collect metrics");
        break;
    case CUPTI_ERROR_HARDWARE_BUSY:
        gx_error_append(error,
                        ": another process is using the GPU's counters (a profiler, or DCGM: 'dcgmi profile --pause'); "
                        "try again when it is done");
        break;
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
        gx_error_append(error, ": on a MIG instance counters need a compute instance that owns its whole GPU instance");
        break;
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        gx_error_append(error,
                        ": this is a virtual GPU; the hypervisor's administrator must enable profiling for the VM");
        break;
    case CUPTI_ERROR_NOT_INITIALIZED:
        gx_error_append(error, ": CUPTI could not load libnvperf_host.so, which must sit beside libcupti.so");
        break;
    default: break;
    }
    return kind;
}

/* cuptiProfilerInitialize, once a process (the range profiler, SASS metrics and PC sampling share it). */
int gx_cupti_profiler_initialize(gx_error *error)
{
    static int initialized;
    if (gx_cupti_get(error))
        return error->kind;
    if (!initialized) {
        CUpti_Profiler_Initialize_Params init = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        CUPTI_CHECK(error, cuptiProfilerInitialize, &init);
        initialized = 1;
    }
    return GX_OK;
}

/* GX_OK when CUPTI supports `api` on the device; else why not, in the user's words. */
int gx_cupti_device_supported(const gx_device *device, CUpti_Profiler_API api, gx_error *error)
{
    if (gx_cupti_profiler_initialize(error))
        return error->kind;
    CUpti_Profiler_DeviceSupported_Params supported = {.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    supported.cuDevice = device->handle;
    supported.api = api;
    CUPTI_CHECK(error, cuptiProfilerDeviceSupported, &supported);
    if (supported.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return GX_OK;
    const char *why =
        supported.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "its architecture is older than 7.5"
        : supported.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED
            ? "it is a virtual GPU without profiling enabled by the hypervisor"
        : supported.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "confidential computing is on"
        : supported.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "it is a crypto-mining processor (CMP)"
        : supported.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "SLI is enabled"
        : supported.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "WSL does not support it here"
                                                                  : "CUPTI gives no reason";
    static const char *const apis[] = {"profile", "sample the PCs of", "count the SASS instructions of", "sample"};
    return gx_fail(error, GX_ERR_PROFILER, "CUPTI cannot %s %s: %s",
                   (int)api >= 0 && (int)api < 4 ? apis[api] : "profile", device->name, why);
}

int gx_cupti_version(unsigned *version, gx_error *error)
{
    if (gx_cupti_get(error))
        return error->kind;
    CUptiResult result = gx_cupti.cuptiGetVersion(version);
    return result == CUPTI_SUCCESS ? GX_OK : gx_cupti_fail(error, "cuptiGetVersion", result);
}
