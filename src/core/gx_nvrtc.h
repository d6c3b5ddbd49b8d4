/* NVRTC, loaded with dlopen: compile CUDA C++ to a cubin, with the ptxas report and a disk cache. */
#ifndef GX_NVRTC_H
#define GX_NVRTC_H

#include <stddef.h>

#include "gx_error.h"

typedef struct gx_compile_request {
    const char *source;
    const char *source_name; /* shown in compiler messages, e.g. "kernels/saxpy.cu" */
    const char *source_directory; /* where the source's own #include "x.h" is found; may be NULL */
    const char *arch;        /* "sm_90" */
    const char *const *options; /* extra NVRTC options, "-D..." included */
    int option_count;
    const char *const *include_directories;
    int include_directory_count;
    const char *const *name_expressions; /* C++ names to lower, e.g. "axpy<float>" */
    int name_expression_count;
    const char *cache_directory; /* NULL or "" disables the cache */
} gx_compile_request;

typedef struct gx_compile_result {
    char *cubin;
    size_t cubin_size;
    char *ptx;
    char *log;   /* the full NVRTC log, ptxas -v report included */
    char *lowered_names; /* "expression\tlowered\n" per name expression */
    char key[33];        /* cache key: hex of a 128-bit hash */
    char source_key[33]; /* the same without architecture and NVRTC version: "did the kernel change" */
    int from_cache;
    char cache_warning[512]; /* a damaged cache entry that was compiled again, "" when none */
    double compile_seconds;
} gx_compile_result;

int gx_nvrtc_version(int *major, int *minor, gx_error *error);
int gx_nvrtc_compile(const gx_compile_request *request, gx_compile_result *result, gx_error *error);
void gx_compile_result_free(gx_compile_result *result);
/* The lowered (mangled) name of a name expression, or NULL. */
const char *gx_compile_lowered_name(const gx_compile_result *result, const char *expression, char *buffer,
                                    size_t size);

#endif
