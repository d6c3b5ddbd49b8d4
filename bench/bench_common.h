/* Shared by the C peers: compile one kernel from source with NVRTC and load it. Exits on error:
   these are benchmark programs, not library code. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gx_driver.h"
#include "gx_module.h"
#include "gx_nvrtc.h"

static inline void bench_check(int status, const gx_error *error)
{
    if (status) {
        fprintf(stderr, "%s\n", error->message);
        exit(3);
    }
}

static inline double bench_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Opens GPU 0 and loads `name` from `source` compiled for the GPU's own architecture. */
static inline CUfunction bench_kernel(gx_device *device, gx_module *module, const char *source, const char *name)
{
    gx_error error;
    bench_check(gx_device_open(device, 0, &error), &error);
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", device->cc_major, device->cc_minor);
    gx_compile_request request = {.source = source, .source_name = name, .arch = arch};
    gx_compile_result result;
    bench_check(gx_nvrtc_compile(&request, &result, &error), &error);
    bench_check(gx_module_load(module, device, result.cubin, NULL, 0, &error), &error);
    gx_compile_result_free(&result);
    const gx_driver *d = gx_driver_get(&error);
    CUfunction function;
    bench_check(GX_CU(&error, d->cuModuleGetFunction(&function, module->handle, name)), &error);
    return function;
}

#endif
