/* The CUDA toolkit a kernel is compiled against: its include folders (with CCCL: CUB, libcu++,
   Thrust), its nvcc, and a stamp of its header versions for the cubin cache's key. Found from the
   NVRTC library in use, then CUDA_HOME, CUDA_PATH and /usr/local/cuda. */
#ifndef GX_TOOLKIT_H
#define GX_TOOLKIT_H

#include <stddef.h>

#include "gx_error.h"

#define GX_TOOLKIT_PATH 1024

typedef struct gx_toolkit {
    char root[GX_TOOLKIT_PATH];    /* "" when no toolkit headers were found */
    char include[GX_TOOLKIT_PATH]; /* root/include */
    char cccl[GX_TOOLKIT_PATH];    /* root/include/cccl (CUDA 13's CCCL), "" when absent */
    char nvcc[GX_TOOLKIT_PATH];    /* root/bin/nvcc, "" when absent */
    char found_by[64];             /* "the NVRTC library", "CUDA_HOME", "CUDA_PATH", "/usr/local/cuda" */
    char cuda_version[32];         /* "13.0", from CUDART_VERSION in cuda_runtime_api.h; "" when absent */
    char cccl_version[32];         /* "3.0.2", from CCCL_VERSION; "" when absent */
    char stamp[33];                /* hash of the folders and the two versions: part of the cache key */
    char searched[2048];           /* where it looked, for messages */
} gx_toolkit;

/* Finds the toolkit once per process; never fails (an empty root means none). */
const gx_toolkit *gx_toolkit_get(void);

/* The include folders to search after the user's own, in order (0, 1 or 2 of them). */
int gx_toolkit_include_directories(const gx_toolkit *toolkit, const char *out[2]);

/* The headers kernels commonly take from the toolkit, each with what provides it. */
typedef struct gx_toolkit_header {
    const char *name;    /* "cub/block/block_reduce.cuh" */
    const char *package; /* "cuda-cccl-13-0" */
} gx_toolkit_header;
extern const gx_toolkit_header gx_toolkit_headers[];
extern const int gx_toolkit_header_count;

/* Writes the names of the common headers this toolkit lacks, comma separated ("" when none), and
   the packages that provide them. Returns how many are missing. */
int gx_toolkit_missing(const gx_toolkit *toolkit, char *names, size_t names_size, char *packages, size_t packages_size);

/* Where nvcc is: the toolkit's bin/nvcc, else nvcc on PATH. Returns GX_OK with the path, or a
   system error saying where it looked. */
int gx_toolkit_nvcc(const gx_toolkit *toolkit, char *out, size_t size, gx_error *error);

#endif
