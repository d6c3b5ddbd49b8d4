#include "gx_nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define GX_NVRTC_FUNCTIONS(X)                                                                      \
    X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)            \
    X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize)      \
    X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcAddNameExpression)                 \
    X(nvrtcGetLoweredName)

static struct {
#define GX_NVRTC_POINTER(name) __typeof__(name) *name;
    GX_NVRTC_FUNCTIONS(GX_NVRTC_POINTER)
#undef GX_NVRTC_POINTER
    int major, minor;
} nvrtc;
static gx_error load_error;
static int load_status = -1;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_nvrtc(void)
{
    /* With a driver present, NVRTC reuses the driver's compute cache (~/.nv/ComputeCache) for PTX it
       has seen and then skips ptxas and its -v report, which is where registers, spills and static
       shared memory come from offline. gpuexp's own cubin cache keeps the report, so the driver's is
       turned off unless the user set it (here for NVRTC without a driver, and in gx_driver.c before
       cuInit, which reads it as the driver starts). */
    setenv("CUDA_CACHE_DISABLE", "1", 0);
    char candidates[10][512];
    int n = 0;
    const char *explicit_path = getenv("GX_LIBNVRTC");
    const char *cuda_home = getenv("CUDA_HOME");
    if (explicit_path)
        snprintf(candidates[n++], 512, "%s", explicit_path);
    snprintf(candidates[n++], 512, "libnvrtc.so.13");
    snprintf(candidates[n++], 512, "libnvrtc.so.12");
    snprintf(candidates[n++], 512, "libnvrtc.so");
    if (cuda_home)
        snprintf(candidates[n++], 512, "%s/lib64/libnvrtc.so", cuda_home);
    snprintf(candidates[n++], 512, "/usr/local/cuda/lib64/libnvrtc.so.13");
    snprintf(candidates[n++], 512, "/usr/local/cuda/lib64/libnvrtc.so");
    void *handle = NULL;
    char tried[2048] = "";
    for (int i = 0; i < n && !handle; i++) {
        handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", i ? ", " : "", candidates[i]);
    }
    if (!handle) {
        load_status = gx_fail(&load_error, GX_ERR_DRIVER,
                              "NVRTC not found (tried %s); install the CUDA toolkit or set GX_LIBNVRTC", tried);
        return;
    }
#define GX_NVRTC_LOAD(name)                                                                        \
    nvrtc.name = (__typeof__(name) *)dlsym(handle, #name);                                         \
    if (!nvrtc.name) {                                                                             \
        load_status = gx_fail(&load_error, GX_ERR_DRIVER, "NVRTC has no %s (too old)", #name);    \
        return;                                                                                    \
    }
    GX_NVRTC_FUNCTIONS(GX_NVRTC_LOAD)
#undef GX_NVRTC_LOAD
    nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor);
    load_status = GX_OK;
}

static int nvrtc_get(gx_error *error)
{
    pthread_once(&load_once, load_nvrtc);
    if (load_status != GX_OK)
        *error = load_error;
    return load_status;
}

int gx_nvrtc_library_path(char *out, size_t size)
{
    gx_error ignored;
    Dl_info info;
    if (nvrtc_get(&ignored) || !dladdr((void *)nvrtc.nvrtcVersion, &info) || !info.dli_fname)
        return GX_ERR_SYSTEM;
    if (!realpath(info.dli_fname, out) || strlen(out) >= size)
        snprintf(out, size, "%s", info.dli_fname);
    return GX_OK;
}

int gx_nvrtc_loaded(void) { return load_status == GX_OK; }

int gx_nvrtc_version(int *major, int *minor, gx_error *error)
{
    if (nvrtc_get(error))
        return error->kind;
    *major = nvrtc.major;
    *minor = nvrtc.minor;
    return GX_OK;
}

static int nvrtc_fail(gx_error *error, const char *call, nvrtcResult result)
{
    return gx_fail(error, result == NVRTC_ERROR_COMPILATION ? GX_ERR_COMPILE : GX_ERR_SYSTEM, "%s failed: %s",
                   call, nvrtc.nvrtcGetErrorString(result));
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int gx_nvrtc_compile(const gx_compile_request *request, gx_compile_result *result, gx_error *error)
{
    memset(result, 0, sizeof *result);
    if (nvrtc_get(error))
        return error->kind;
    char compiler[64];
    snprintf(compiler, sizeof compiler, "nvrtc %d.%d", nvrtc.major, nvrtc.minor);
    gx_compile_keys(request, compiler, result->key, result->source_key);
    if (gx_compile_cache_load(request, result) == 0)
        return GX_OK;

    double start = now_seconds();
    nvrtcProgram program;
    nvrtcResult status = nvrtc.nvrtcCreateProgram(&program, request->source, request->source_name, 0, NULL, NULL);
    if (status != NVRTC_SUCCESS)
        return nvrtc_fail(error, "nvrtcCreateProgram", status);
    for (int i = 0; i < request->name_expression_count; i++) {
        status = nvrtc.nvrtcAddNameExpression(program, request->name_expressions[i]);
        if (status != NVRTC_SUCCESS) {
            nvrtc.nvrtcDestroyProgram(&program);
            return nvrtc_fail(error, "nvrtcAddNameExpression", status);
        }
    }
    int option_count = 0;
    int capacity = request->option_count + request->include_directory_count + request->system_directory_count + 4;
    char **options = calloc((size_t)capacity, sizeof *options);
    if (!options) {
        nvrtc.nvrtcDestroyProgram(&program);
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    if (asprintf(&options[option_count++], "--gpu-architecture=%s", request->arch) < 0
        || asprintf(&options[option_count++], "--ptxas-options=-v") < 0
        || (request->source_directory && asprintf(&options[option_count++], "-I%s", request->source_directory) < 0))
        options[--option_count] = NULL;
    for (int i = 0; i < request->include_directory_count; i++)
        if (asprintf(&options[option_count], "-I%s", request->include_directories[i]) >= 0)
            option_count++;
    for (int i = 0; i < request->system_directory_count; i++) /* after the user's: theirs win */
        if (asprintf(&options[option_count], "-I%s", request->system_directories[i]) >= 0)
            option_count++;
    for (int i = 0; i < request->option_count; i++)
        options[option_count++] = strdup(request->options[i]);

    status = nvrtc.nvrtcCompileProgram(program, option_count, (const char *const *)options);
    for (int i = 0; i < option_count; i++)
        free(options[i]);
    free(options);

    size_t log_size = 0;
    nvrtc.nvrtcGetProgramLogSize(program, &log_size);
    result->log = calloc(1, log_size + 1);
    if (result->log && log_size)
        nvrtc.nvrtcGetProgramLog(program, result->log);
    if (status != NVRTC_SUCCESS) {
        nvrtc_fail(error, "nvrtcCompileProgram", status);
        gx_error_append(error, " for %s (arch %s):\n%s", request->source_name, request->arch,
                        result->log ? result->log : "");
        nvrtc.nvrtcDestroyProgram(&program);
        gx_compile_result_free(result);
        return error->kind;
    }
    size_t ptx_size = 0;
    int ptx_only = strncmp(request->arch, "compute_", 8) == 0; /* the driver compiles the PTX at load */
    if (ptx_only && !(result->cubin = calloc(1, 1)))
        status = NVRTC_ERROR_OUT_OF_MEMORY;
    if ((!ptx_only && ((status = nvrtc.nvrtcGetCUBINSize(program, &result->cubin_size)) != NVRTC_SUCCESS
                       || !(result->cubin = malloc(result->cubin_size ? result->cubin_size : 1))
                       || (status = nvrtc.nvrtcGetCUBIN(program, result->cubin)) != NVRTC_SUCCESS))
        || !result->cubin
        || (status = nvrtc.nvrtcGetPTXSize(program, &ptx_size)) != NVRTC_SUCCESS
        || !(result->ptx = calloc(1, ptx_size + 1))
        || (status = nvrtc.nvrtcGetPTX(program, result->ptx)) != NVRTC_SUCCESS) {
        nvrtc.nvrtcDestroyProgram(&program);
        gx_compile_result_free(result);
        return status != NVRTC_SUCCESS ? nvrtc_fail(error, "nvrtcGetCUBIN/nvrtcGetPTX", status)
                                       : gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    size_t names_size = 1;
    result->lowered_names = calloc(1, 1);
    for (int i = 0; i < request->name_expression_count && result->lowered_names; i++) {
        const char *lowered = NULL;
        if (nvrtc.nvrtcGetLoweredName(program, request->name_expressions[i], &lowered) != NVRTC_SUCCESS || !lowered)
            continue;
        size_t add = strlen(request->name_expressions[i]) + strlen(lowered) + 2;
        char *grown = realloc(result->lowered_names, names_size + add);
        if (!grown)
            break;
        result->lowered_names = grown;
        snprintf(result->lowered_names + names_size - 1, add + 1, "%s\t%s\n", request->name_expressions[i], lowered);
        names_size += add;
    }
    nvrtc.nvrtcDestroyProgram(&program);
    if (!result->lowered_names) {
        gx_compile_result_free(result);
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    result->compile_seconds = now_seconds() - start;
    gx_compile_cache_store(request, result);
    return GX_OK;
}

