#include "gx_toolkit.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "gx_files.h"
#include "gx_nvrtc.h"

const gx_toolkit_header gx_toolkit_headers[] = {
    {"cuda_runtime.h", "cuda-cudart-dev-13-0"},
    {"cooperative_groups.h", "cuda-cudart-dev-13-0"},
    {"cooperative_groups/reduce.h", "cuda-cudart-dev-13-0"},
    {"cuda_fp16.h", "cuda-cudart-dev-13-0"},
    {"cuda_bf16.h", "cuda-cudart-dev-13-0"},
    {"cuda_fp8.h", "cuda-cudart-dev-13-0"},
    {"mma.h", "cuda-cudart-dev-13-0"},
    {"cuda_pipeline.h", "cuda-cudart-dev-13-0"},
    {"cub/block/block_reduce.cuh", "cuda-cccl-13-0"},
    {"cuda/std/cstdint", "cuda-cccl-13-0"},
    {"cuda/pipeline", "cuda-cccl-13-0"},
    {"cuda/barrier", "cuda-cccl-13-0"},
    {"thrust/functional.h", "cuda-cccl-13-0"},
};
const int gx_toolkit_header_count = (int)(sizeof gx_toolkit_headers / sizeof gx_toolkit_headers[0]);

static gx_toolkit toolkit;
static pthread_once_t toolkit_once = PTHREAD_ONCE_INIT;

/* A toolkit root has include/cuda_runtime.h or include/cooperative_groups.h. */
static int has_headers(const char *root)
{
    char path[GX_TOOLKIT_PATH + 64];
    snprintf(path, sizeof path, "%s/include/cuda_runtime.h", root);
    if (gx_is_file(path))
        return 1;
    snprintf(path, sizeof path, "%s/include/cooperative_groups.h", root);
    return gx_is_file(path);
}

/* The number after `#define NAME` in a header, or -1. */
static long header_define(const char *path, const char *name)
{
    char *text;
    size_t size;
    gx_error ignored;
    if (gx_read_file(path, &text, &size, &ignored))
        return -1;
    long value = -1;
    size_t length = strlen(name);
    for (char *p = strstr(text, "#define "); p; p = strstr(p + 8, "#define ")) {
        char *q = p + 8;
        while (*q == ' ')
            q++;
        if (strncmp(q, name, length) == 0 && (q[length] == ' ' || q[length] == '\t')) {
            value = strtol(q + length, NULL, 10);
            break;
        }
    }
    free(text);
    return value;
}

static void note_searched(const char *where)
{
    size_t used = strlen(toolkit.searched);
    if (snprintf(toolkit.searched + used, sizeof toolkit.searched - used, "%s%s", used ? ", " : "", where) >=
        (int)(sizeof toolkit.searched - used))
        toolkit.searched[used] = 0; /* no room for this one */
}

/* Tries root; on success fills the toolkit and returns 1. */
static int try_root(const char *root, const char *found_by)
{
    if (!root || !*root)
        return 0;
    char resolved[PATH_MAX];
    if (!realpath(root, resolved) && snprintf(resolved, sizeof resolved, "%s", root) >= (int)sizeof resolved)
        return 0;
    note_searched(resolved);
    if (strlen(resolved) + 16 >= GX_TOOLKIT_PATH || !has_headers(resolved))
        return 0;
    snprintf(toolkit.root, sizeof toolkit.root, "%s", resolved);
    if (snprintf(toolkit.include, sizeof toolkit.include, "%s/include", resolved) >= (int)sizeof toolkit.include ||
        snprintf(toolkit.cccl, sizeof toolkit.cccl, "%s/include/cccl", resolved) >= (int)sizeof toolkit.cccl ||
        snprintf(toolkit.nvcc, sizeof toolkit.nvcc, "%s/bin/nvcc", resolved) >= (int)sizeof toolkit.nvcc)
        return 0;
    if (!gx_is_directory(toolkit.cccl))
        toolkit.cccl[0] = 0;
    if (access(toolkit.nvcc, X_OK) != 0)
        toolkit.nvcc[0] = 0;
    snprintf(toolkit.found_by, sizeof toolkit.found_by, "%s", found_by);
    return 1;
}

static void find_toolkit(void)
{
    /* the toolkit NVRTC came from first: its headers are the ones it was built to compile */
    char library[GX_TOOLKIT_PATH];
    if (gx_nvrtc_library_path(library, sizeof library) == GX_OK) {
        char *slash = strrchr(library, '/');
        if (slash) {
            *slash = 0; /* the library's folder: lib, lib64, targets/x86_64-linux/lib, nvidia/cu13/lib */
            char root[GX_TOOLKIT_PATH + 8];
            snprintf(root, sizeof root, "%s/..", library);
            if (!try_root(root, "the NVRTC library")) {
                snprintf(root, sizeof root, "%s/../..", library);
                try_root(root, "the NVRTC library");
            }
        }
    }
    if (!toolkit.root[0] && !try_root(getenv("CUDA_HOME"), "CUDA_HOME") && !try_root(getenv("CUDA_PATH"), "CUDA_PATH"))
        try_root("/usr/local/cuda", "/usr/local/cuda");

    XXH3_state_t *state = XXH3_createState();
    if (!state)
        return;
    XXH3_128bits_reset(state);
    char path[GX_TOOLKIT_PATH + 64];
    if (toolkit.root[0]) {
        snprintf(path, sizeof path, "%s/cuda_runtime_api.h", toolkit.include);
        long cudart = header_define(path, "CUDART_VERSION");
        if (cudart > 0)
            snprintf(toolkit.cuda_version, sizeof toolkit.cuda_version, "%ld.%ld", cudart / 1000, cudart % 1000 / 10);
        snprintf(path, sizeof path, "%s/cuda/std/__cccl/version.h", toolkit.cccl[0] ? toolkit.cccl : toolkit.include);
        long cccl = header_define(path, "CCCL_VERSION");
        if (cccl > 0)
            snprintf(toolkit.cccl_version, sizeof toolkit.cccl_version, "%ld.%ld.%ld", cccl / 1000000,
                     cccl / 1000 % 1000, cccl % 1000);
    }
    const char *parts[] = {"gpuexp-toolkit-v1", toolkit.include, toolkit.cccl, toolkit.cuda_version,
                           toolkit.cccl_version};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        XXH3_128bits_update(state, parts[i], strlen(parts[i]) + 1);
    XXH128_hash_t hash = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    snprintf(toolkit.stamp, sizeof toolkit.stamp, "%016llx%016llx", (unsigned long long)hash.high64,
             (unsigned long long)hash.low64);
}

const gx_toolkit *gx_toolkit_get(void)
{
    pthread_once(&toolkit_once, find_toolkit);
    return &toolkit;
}

int gx_toolkit_include_directories(const gx_toolkit *t, const char *out[2])
{
    int count = 0;
    if (t->include[0])
        out[count++] = t->include;
    if (t->cccl[0])
        out[count++] = t->cccl;
    return count;
}

int gx_toolkit_missing(const gx_toolkit *t, char *names, size_t names_size, char *packages, size_t packages_size)
{
    names[0] = packages[0] = 0;
    int missing = 0;
    for (int i = 0; i < gx_toolkit_header_count; i++) {
        int found = 0;
        const char *folders[2];
        int folder_count = gx_toolkit_include_directories(t, folders);
        for (int f = 0; f < folder_count && !found; f++) {
            char path[GX_TOOLKIT_PATH + 128];
            snprintf(path, sizeof path, "%s/%s", folders[f], gx_toolkit_headers[i].name);
            found = gx_is_file(path);
        }
        if (found)
            continue;
        missing++;
        size_t used = strlen(names);
        snprintf(names + used, names_size - used, "%s%s", used ? ", " : "", gx_toolkit_headers[i].name);
        if (!strstr(packages, gx_toolkit_headers[i].package)) {
            used = strlen(packages);
            snprintf(packages + used, packages_size - used, "%s%s", used ? " " : "", gx_toolkit_headers[i].package);
        }
    }
    return missing;
}

int gx_toolkit_nvcc(const gx_toolkit *t, char *out, size_t size, gx_error *error)
{
    if (t->nvcc[0]) {
        snprintf(out, size, "%s", t->nvcc);
        return GX_OK;
    }
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : "");
    for (char *saveptr = NULL, *dir = strtok_r(copy, ":", &saveptr); dir; dir = strtok_r(NULL, ":", &saveptr)) {
        char candidate[GX_TOOLKIT_PATH + 16];
        snprintf(candidate, sizeof candidate, "%s/nvcc", dir);
        if (access(candidate, X_OK) == 0) {
            snprintf(out, size, "%s", candidate);
            free(copy);
            return GX_OK;
        }
    }
    free(copy);
    return gx_fail(error, GX_ERR_SYSTEM,
                   "nvcc not found (looked in the toolkit%s%s and on PATH); install the CUDA toolkit's compiler "
                   "(apt: cuda-nvcc-13-0) or set CUDA_HOME",
                   t->root[0] ? " at " : "", t->root);
}
