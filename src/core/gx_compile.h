/* What every compiler route shares: the request, the result (cubin, PTX, the ptxas report), the
   cache key and the on-disk cubin cache (an entry is a hit only when its manifest matches). */
#ifndef GX_COMPILE_H
#define GX_COMPILE_H

#include <stddef.h>

#include "gx_error.h"
#include "gx_options.h"

typedef struct gx_compile_request {
    const char *source;
    const char *source_name;      /* shown in compiler messages, e.g. "kernels/saxpy.cu" */
    const char *source_directory; /* where the source's own #include "x.h" is found; may be NULL */
    const char *source_path;      /* the file the source was read from, NULL for a string (nvcc compiles it in place) */
    const char *arch;             /* "sm_90", or "compute_90" for PTX alone (cubin_size 0) */
    const char *const *options;   /* extra NVRTC options, "-D..." included */
    int option_count;
    const char *const *include_directories;
    int include_directory_count;
    /* searched after include_directories (the toolkit's include and include/cccl); hashed into the
       key through toolkit_stamp, not header by header */
    const char *const *system_directories;
    int system_directory_count;
    const char *toolkit_stamp;
    const char *const *name_expressions; /* C++ names to lower, e.g. "axpy<float>" */
    int name_expression_count;
    const char *cache_directory; /* NULL or "" disables the cache */
} gx_compile_request;

typedef struct gx_compile_result {
    char *cubin;
    size_t cubin_size;
    char *ptx;
    char *log;           /* the full NVRTC log, ptxas -v report included */
    char *lowered_names; /* "expression\tlowered\n" per name expression */
    char key[33];        /* cache key: hex of a 128-bit hash */
    char source_key[33]; /* the same without architecture and NVRTC version: "did the kernel change" */
    int from_cache;
    char cache_warning[512];       /* a damaged cache entry that was compiled again, "" when none */
    char cache_store_warning[512]; /* the cache could not be written (every run compiles again), "" when it was */
    double compile_seconds;
} gx_compile_result;

/* key: what to look up in the cache (adds architecture and compiler); source_key: "did the kernel
   change" (source, headers, options, names, toolkit). compiler: "nvrtc 13.0", "nvcc ...". */
void gx_compile_keys(const gx_compile_request *request, const char *compiler, char key[33], char source_key[33]);
/* 0 and the result filled on a hit; -1 on a miss (result->cache_warning says when an entry was damaged). */
int gx_compile_cache_load(const gx_compile_request *request, gx_compile_result *result);
/* Best effort: a failed write costs a compile later. */
void gx_compile_cache_store(const gx_compile_request *request, gx_compile_result *result);
/* A kept compile error of this key: 0 when none, else GX_ERR_COMPILE with its message in *error. */
int gx_compile_cache_failure(const gx_compile_request *request, const char *key, gx_error *error);
/* Keeps a GX_ERR_COMPILE error under the key (other errors are not the source's). */
void gx_compile_cache_store_failure(const gx_compile_request *request, const char *key, const gx_error *error);
void gx_compile_result_free(gx_compile_result *result);
/* The compile policy, in the core so that no binding decides it:
   The architecture to compile for: `given` (arch = ...) when there is one, else the build of the
   options' targets that a GPU of device_arch would run (gx_options_pick_arch). notes: the
   options' own notes, then why the architecture is not the device's or the options' own.
   GX_ERR_USAGE when no build could run there, or when the result is not sm_XY or compute_XY. */
int gx_compile_choose_arch(const gx_options *options, const char *given, const char *device_arch, char *arch,
                           size_t arch_size, char *notes, size_t notes_size, gx_error *error);
/* Sorts options (the -D of a script's defines) in place, so the cache key does not depend on the
   order a Lua table gives them in. */
void gx_compile_sort_options(const char **options, int count);
/* The cubin cache's folder: the cache folder (gx_cache_directory) + "/cubin"; "" (no cache) when
   wanted is 0 (cache = false), when GPUEXP_NO_CACHE is set to anything but "" or "0", or when
   there is no cache folder. */
void gx_compile_cache_directory(int wanted, char *out, size_t size);
/* Every name expression's kernel is in what was compiled (the cubin's kernels, or the PTX's entries
   for PTX alone), so an offline plan and a GPU run agree; GX_ERR_COMPILE naming the kernel, its
   symbol and the file otherwise. */
int gx_compile_check_names(const gx_compile_request *request, const gx_compile_result *result, gx_error *error);
/* The lowered (mangled) name of a name expression, or NULL. */
const char *gx_compile_lowered_name(const gx_compile_result *result, const char *expression, char *buffer, size_t size);

#endif
