#include "gx_nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "gx_cache.h"

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
       turned off unless the user set it. */
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

/* ---- cache key: the source, every header it includes that can be found, options, arch, NVRTC ---- */

struct include_walk {
    XXH3_state_t *state;
    const gx_compile_request *request;
    char seen[128][512];
    int seen_count;
};

static void hash_string(XXH3_state_t *state, const char *text)
{
    XXH3_128bits_update(state, text, strlen(text) + 1); /* the NUL separates fields */
}

static void hash_includes(struct include_walk *walk, const char *text, const char *directory, int depth)
{
    if (depth > 16)
        return;
    for (const char *p = strstr(text, "#include"); p; p = strstr(p + 8, "#include")) {
        const char *q = p + 8;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '"' && *q != '<')
            continue;
        char close = *q == '"' ? '"' : '>';
        const char *end = strchr(q + 1, close);
        const char *newline = strchr(q + 1, '\n');
        if (!end || (newline && newline < end) || end - q - 1 >= 256)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(end - q - 1), q + 1);
        const char *search[66];
        int count = 0;
        if (directory)
            search[count++] = directory;
        for (int i = 0; i < walk->request->include_directory_count && count < 66; i++)
            search[count++] = walk->request->include_directories[i];
        for (int i = 0; i < count; i++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", search[i], name);
            char *contents;
            size_t size;
            gx_error ignored;
            if (gx_read_file(path, &contents, &size, &ignored))
                continue;
            int already = 0;
            for (int s = 0; s < walk->seen_count; s++)
                already |= strcmp(walk->seen[s], path) == 0;
            if (!already && walk->seen_count < 128) {
                snprintf(walk->seen[walk->seen_count++], 512, "%s", path);
                hash_string(walk->state, name);
                XXH3_128bits_update(walk->state, contents, size);
                char here[512];
                snprintf(here, sizeof here, "%s", path);
                char *slash = strrchr(here, '/');
                if (slash)
                    *slash = 0;
                hash_includes(walk, contents, here, depth + 1);
            }
            free(contents);
            break; /* the first directory that has it wins, as in the compiler */
        }
    }
}

/* The source key hashes what the kernel is (source, headers, options, names); the cache key adds
   where it was compiled for (architecture, NVRTC version and the cache format). */
static void compute_keys(const gx_compile_request *request, char key[33], char source_key[33])
{
    struct include_walk *walk = calloc(1, sizeof *walk);
    XXH3_state_t *state = XXH3_createState();
    XXH3_128bits_reset(state);
    for (int i = 0; i < request->option_count; i++)
        hash_string(state, request->options[i]);
    for (int i = 0; i < request->name_expression_count; i++)
        hash_string(state, request->name_expressions[i]);
    hash_string(state, request->source);
    if (walk) {
        walk->state = state;
        walk->request = request;
        hash_includes(walk, request->source, request->source_directory, 0);
    }
    XXH128_hash_t hash = XXH3_128bits_digest(state);
    snprintf(source_key, 33, "%016llx%016llx", (unsigned long long)hash.high64, (unsigned long long)hash.low64);
    XXH3_128bits_reset(state);
    char version[64];
    snprintf(version, sizeof version, "gpuexp-cubin-v2 nvrtc %d.%d", nvrtc.major, nvrtc.minor);
    hash_string(state, version);
    hash_string(state, request->arch);
    hash_string(state, source_key);
    hash = XXH3_128bits_digest(state);
    snprintf(key, 33, "%016llx%016llx", (unsigned long long)hash.high64, (unsigned long long)hash.low64);
    XXH3_freeState(state);
    free(walk);
}

static void cache_path(char *out, size_t size, const char *directory, const char *key, const char *extension)
{
    snprintf(out, size, "%s/%.2s/%s.%s", directory, key, key, extension);
}

static const char *const cache_extensions[] = {"cubin", "ptx", "log", "names"};

/* "<size> <xxh64>" of the four parts, one per line: written last, it marks a complete entry. */
static void cache_manifest(char *out, size_t size, char *const data[4], const size_t sizes[4])
{
    out[0] = 0;
    for (int i = 0; i < 4; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s %zu %016llx\n", cache_extensions[i], sizes[i],
                 (unsigned long long)XXH3_64bits(data[i], sizes[i]));
}

/* A hit only when every part is there and matches the manifest; a damaged entry is compiled
   again, with a warning for the caller to show. */
static int cache_load(const gx_compile_request *request, gx_compile_result *result)
{
    if (!request->cache_directory || !*request->cache_directory)
        return -1;
    char *data[4] = {0}, *manifest = NULL;
    size_t sizes[4] = {0}, manifest_size = 0;
    char path[4096];
    gx_error ignored;
    cache_path(path, sizeof path, request->cache_directory, result->key, "sum");
    if (gx_read_file(path, &manifest, &manifest_size, &ignored))
        return -1; /* no entry (or one from before manifests): a plain miss */
    int missing = 0;
    for (int i = 0; i < 4; i++) {
        cache_path(path, sizeof path, request->cache_directory, result->key, cache_extensions[i]);
        if (gx_read_file(path, &data[i], &sizes[i], &ignored))
            missing = 1;
    }
    char expected[512];
    if (!missing)
        cache_manifest(expected, sizeof expected, data, sizes);
    if (missing || strcmp(expected, manifest) != 0) {
        char found[128] = "a part is missing";
        if (!missing) {
            unsigned long long want_size = 0;
            const char *line = strstr(manifest, "cubin ");
            if (line)
                sscanf(line, "cubin %llu", &want_size);
            snprintf(found, sizeof found, "cubin %zu bytes, the manifest says %llu, or a part's hash differs",
                     sizes[0], want_size);
        }
        snprintf(result->cache_warning, sizeof result->cache_warning,
                 "the cached build %.2s/%s in %s was damaged (%s); compiled again", result->key, result->key,
                 request->cache_directory, found);
        for (int i = 0; i < 4; i++)
            free(data[i]);
        free(manifest);
        return -1;
    }
    free(manifest);
    result->cubin = data[0];
    result->cubin_size = sizes[0];
    result->ptx = data[1];
    result->log = data[2];
    result->lowered_names = data[3];
    result->from_cache = 1;
    return 0;
}

/* A failed cache write costs only a recompile later, so it is not an error. */
static void cache_store(const gx_compile_request *request, const gx_compile_result *result)
{
    if (!request->cache_directory || !*request->cache_directory)
        return;
    char directory[4096];
    gx_error ignored;
    snprintf(directory, sizeof directory, "%s/%.2s", request->cache_directory, result->key);
    if (gx_make_directories(directory, &ignored))
        return;
    char *data[] = {result->cubin, result->ptx, result->log, result->lowered_names};
    size_t sizes[] = {result->cubin_size, strlen(result->ptx), strlen(result->log), strlen(result->lowered_names)};
    char path[4096];
    for (int i = 0; i < 4; i++) {
        cache_path(path, sizeof path, request->cache_directory, result->key, cache_extensions[i]);
        if (gx_write_file_atomic(path, data[i], sizes[i], &ignored))
            return;
    }
    char manifest[512]; /* last: it marks the entry complete */
    cache_manifest(manifest, sizeof manifest, data, sizes);
    cache_path(path, sizeof path, request->cache_directory, result->key, "sum");
    gx_write_file_atomic(path, manifest, strlen(manifest), &ignored);
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
    compute_keys(request, result->key, result->source_key);
    if (cache_load(request, result) == 0)
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
    int capacity = request->option_count + request->include_directory_count + 4;
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
    if ((status = nvrtc.nvrtcGetCUBINSize(program, &result->cubin_size)) != NVRTC_SUCCESS
        || !(result->cubin = malloc(result->cubin_size ? result->cubin_size : 1))
        || (status = nvrtc.nvrtcGetCUBIN(program, result->cubin)) != NVRTC_SUCCESS
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
    cache_store(request, result);
    return GX_OK;
}

void gx_compile_result_free(gx_compile_result *result)
{
    free(result->cubin);
    free(result->ptx);
    free(result->log);
    free(result->lowered_names);
    result->cubin = result->ptx = result->log = result->lowered_names = NULL;
}

const char *gx_compile_lowered_name(const gx_compile_result *result, const char *expression, char *buffer,
                                    size_t size)
{
    size_t length = strlen(expression);
    for (const char *line = result->lowered_names; line && *line;) {
        const char *tab = strchr(line, '\t');
        const char *end = strchr(line, '\n');
        if (!tab || !end)
            break;
        if ((size_t)(tab - line) == length && strncmp(line, expression, length) == 0) {
            snprintf(buffer, size, "%.*s", (int)(end - tab - 1), tab + 1);
            return buffer;
        }
        line = end + 1;
    }
    return NULL;
}
