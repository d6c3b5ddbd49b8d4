/* Binaries other compilers made, as files: a cubin (a CUDA ELF), a fat binary (nvcc -fatbin), PTX
   text, or a host object, library or executable that embeds fat binaries (nvcc's .nv_fatbin
   section, one per translation unit). Pure parsing: no driver. */
#ifndef GX_BINARY_H
#define GX_BINARY_H

#include <stddef.h>

#include "gx_error.h"

typedef enum gx_image_kind {
    GX_IMAGE_UNKNOWN,
    GX_IMAGE_CUBIN,    /* ELF for the GPU (e_machine EM_CUDA) */
    GX_IMAGE_FATBIN,   /* starts with the fat binary magic 0xBA55ED50 */
    GX_IMAGE_PTX,      /* text with .version and .target */
    GX_IMAGE_HOST_ELF, /* a host ELF: an object, a shared library or an executable */
} gx_image_kind;

const char *gx_image_kind_name(gx_image_kind kind);
gx_image_kind gx_image_detect(const void *data, size_t size);

#define GX_MAX_IMAGES 64

/* The fat binaries of a host ELF's .nv_fatbin section: offsets into data and sizes. A file with
   only relocatable device code (-rdc=true, section __nv_relfatbin) or none is an error saying so. */
int gx_host_fatbins(const void *data, size_t size, size_t offsets[GX_MAX_IMAGES], size_t sizes[GX_MAX_IMAGES],
                    int *count, gx_error *error);

/* The kernels of a cubin, fat binary or host binary, read without the driver (an offline plan):
   their symbols and parameter sizes as the driver would report them. Fat binaries hold one ELF per
   architecture: a kernel is listed once. Compressed device code cannot be read here (an error says
   so when nothing else could be). */
#define GX_IMAGE_MAX_PARAMS 256
typedef struct gx_image_kernel {
    char *symbol;
    int param_count;
    int param_sizes[GX_IMAGE_MAX_PARAMS];
} gx_image_kernel;
typedef struct gx_image_kernels {
    gx_image_kernel *kernels;
    int count, capacity;
} gx_image_kernels;
int gx_image_list_kernels(const void *data, size_t size, gx_image_kernels *list, gx_error *error);
void gx_image_kernels_free(gx_image_kernels *list);

/* The module globals (__constant__ and __device__ variables) of a cubin, fat binary or host binary,
   read without the driver: their symbols and sizes from the ELF symbol table. */
typedef struct gx_image_global {
    char *symbol;
    size_t bytes;
    int constant; /* __constant__, else __device__ */
} gx_image_global;
typedef struct gx_image_globals {
    gx_image_global *globals;
    int count, capacity;
} gx_image_globals;
int gx_image_list_globals(const void *data, size_t size, gx_image_globals *list, gx_error *error);
void gx_image_globals_free(gx_image_globals *list);

#endif
