#include "gx_clock.h"
#include "gx_nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// an X-macro list, one entry a line (clang-format 14 does not settle on such a list)
// clang-format off
#define GX_NVRTC_FUNCTIONS(X) \
    X(nvrtcVersion) \
    X(nvrtcGetErrorString) \
    X(nvrtcCreateProgram) \
    X(nvrtcDestroyProgram) \
    X(nvrtcCompileProgram) \
    X(nvrtcGetProgramLogSize) \
    X(nvrtcGetProgramLog) \
    X(nvrtcGetPTXSize) \
    X(nvrtcGetPTX) \
    X(nvrtcGetCUBINSize) \
    X(nvrtcGetCUBIN) \
    X(nvrtcAddNameExpression) \
    X(nvrtcGetLoweredName)
// clang-format on

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
#define GX_NVRTC_LOAD(name)                                                                                            \
    nvrtc.name = (__typeof__(name) *)dlsym(handle, #name);                                                             \
    if (!nvrtc.name) {                                                                                                 \
        load_status = gx_fail(&load_error, GX_ERR_DRIVER, "NVRTC has no %s (too old)", #name);                         \
        return;                                                                                                        \
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

int gx_nvrtc_loaded(void)
{
    return load_status == GX_OK;
}

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
    return gx_fail(error, result == NVRTC_ERROR_COMPILATION ? GX_ERR_COMPILE : GX_ERR_SYSTEM, "%s failed: %s", call,
                   nvrtc.nvrtcGetErrorString(result));
}

/* A program of the request's source with its name expressions added (for their lowered names). */
static int create_program(const gx_compile_request *request, nvrtcProgram *program, gx_error *error)
{
    nvrtcResult status = nvrtc.nvrtcCreateProgram(program, request->source, request->source_name, 0, NULL, NULL);
    if (status != NVRTC_SUCCESS)
        return nvrtc_fail(error, "nvrtcCreateProgram", status);
    for (int i = 0; i < request->name_expression_count; i++) {
        status = nvrtc.nvrtcAddNameExpression(*program, request->name_expressions[i]);
        if (status != NVRTC_SUCCESS) {
            nvrtc.nvrtcDestroyProgram(program);
            return nvrtc_fail(error, "nvrtcAddNameExpression", status);
        }
    }
    return GX_OK;
}

static int add_option(char **options, int *count, const char *format, const char *value)
{
    char *text;
    if (asprintf(&text, format, value) < 0)
        return -1;
    options[(*count)++] = text;
    return 0;
}

static void free_options(char **options, int count)
{
    for (int i = 0; i < count; i++)
        free(options[i]);
    free(options);
}

/* NVRTC's options: the architecture, ptxas' report, the source's folder, the request's include
   folders, the toolkit's (after the user's: theirs win), the request's options. NULL when out of
   memory. */
static char **compile_options(const gx_compile_request *request, int *count)
{
    int capacity = request->option_count + request->include_directory_count + request->system_directory_count + 3;
    char **options = calloc((size_t)capacity, sizeof *options);
    if (!options)
        return NULL;
    int n = 0;
    int failed = add_option(options, &n, "--gpu-architecture=%s", request->arch) ||
                 add_option(options, &n, "%s", "--ptxas-options=-v") ||
                 (request->source_directory && add_option(options, &n, "-I%s", request->source_directory));
    for (int i = 0; !failed && i < request->include_directory_count; i++)
        failed = add_option(options, &n, "-I%s", request->include_directories[i]);
    for (int i = 0; !failed && i < request->system_directory_count; i++)
        failed = add_option(options, &n, "-I%s", request->system_directories[i]);
    for (int i = 0; !failed && i < request->option_count; i++)
        failed = add_option(options, &n, "%s", request->options[i]);
    if (failed) {
        free_options(options, n);
        return NULL;
    }
    *count = n;
    return options;
}

/* Compiles the program; its log into result->log, and into the error when NVRTC refused it. */
static int compile_program(nvrtcProgram program, const gx_compile_request *request, gx_compile_result *result,
                           gx_error *error)
{
    int option_count = 0;
    char **options = compile_options(request, &option_count);
    if (!options)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    nvrtcResult status = nvrtc.nvrtcCompileProgram(program, option_count, (const char *const *)options);
    free_options(options, option_count);
    size_t log_size = 0;
    if (nvrtc.nvrtcGetProgramLogSize(program, &log_size) != NVRTC_SUCCESS)
        log_size = 0;
    result->log = calloc(1, log_size + 1);
    if (result->log && log_size && nvrtc.nvrtcGetProgramLog(program, result->log) != NVRTC_SUCCESS)
        result->log[0] = 0;
    if (status != NVRTC_SUCCESS) {
        nvrtc_fail(error, "nvrtcCompileProgram", status);
        gx_error_append(error, " for %s (arch %s):\n%s", request->source_name, request->arch,
                        result->log ? result->log : "");
        return error->kind;
    }
    return result->log ? GX_OK : gx_fail(error, GX_ERR_SYSTEM, "out of memory");
}

/* The cubin (an empty one for a compute_XY architecture: the driver compiles the PTX at load) and
   the PTX. */
static int read_outputs(nvrtcProgram program, const gx_compile_request *request, gx_compile_result *result,
                        gx_error *error)
{
    nvrtcResult status = NVRTC_SUCCESS;
    size_t ptx_size = 0;
    int ptx_only = strncmp(request->arch, "compute_", 8) == 0;
    if (ptx_only && !(result->cubin = calloc(1, 1)))
        status = NVRTC_ERROR_OUT_OF_MEMORY;
    if ((!ptx_only && ((status = nvrtc.nvrtcGetCUBINSize(program, &result->cubin_size)) != NVRTC_SUCCESS ||
                       !(result->cubin = malloc(result->cubin_size ? result->cubin_size : 1)) ||
                       (status = nvrtc.nvrtcGetCUBIN(program, result->cubin)) != NVRTC_SUCCESS)) ||
        !result->cubin || (status = nvrtc.nvrtcGetPTXSize(program, &ptx_size)) != NVRTC_SUCCESS ||
        !(result->ptx = calloc(1, ptx_size + 1)) || (status = nvrtc.nvrtcGetPTX(program, result->ptx)) != NVRTC_SUCCESS)
        return status != NVRTC_SUCCESS ? nvrtc_fail(error, "nvrtcGetCUBIN/nvrtcGetPTX", status)
                                       : gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    return GX_OK;
}

/* The name expressions NVRTC lowered, "expression\tsymbol\n" each, into result->lowered_names. */
static int read_lowered_names(nvrtcProgram program, const gx_compile_request *request, gx_compile_result *result,
                              gx_error *error)
{
    size_t names_size = 1;
    result->lowered_names = calloc(1, 1);
    for (int i = 0; i < request->name_expression_count && result->lowered_names; i++) {
        const char *lowered = NULL;
        if (nvrtc.nvrtcGetLoweredName(program, request->name_expressions[i], &lowered) != NVRTC_SUCCESS || !lowered)
            continue;
        size_t add = strlen(request->name_expressions[i]) + strlen(lowered) + 2;
        char *grown = realloc(result->lowered_names, names_size + add);
        if (!grown) {
            free(result->lowered_names);
            result->lowered_names = NULL;
            break;
        }
        result->lowered_names = grown;
        snprintf(result->lowered_names + names_size - 1, add + 1, "%s\t%s\n", request->name_expressions[i], lowered);
        names_size += add;
    }
    return result->lowered_names ? GX_OK : gx_fail(error, GX_ERR_SYSTEM, "out of memory");
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
    if (gx_compile_cache_failure(request, result->key, error))
        return error->kind;

    double start = gx_clock_s();
    nvrtcProgram program;
    int status = create_program(request, &program, error);
    if (status)
        return status;
    status = compile_program(program, request, result, error);
    if (status)
        gx_compile_cache_store_failure(request, result->key, error);
    if (!status)
        status = read_outputs(program, request, result, error);
    if (!status)
        status = read_lowered_names(program, request, result, error);
    nvrtc.nvrtcDestroyProgram(&program);
    if (status) {
        gx_compile_result_free(result);
        return status;
    }
    result->compile_seconds = gx_clock_s() - start;
    gx_compile_cache_store(request, result);
    return GX_OK;
}
