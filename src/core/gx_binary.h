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

#endif
