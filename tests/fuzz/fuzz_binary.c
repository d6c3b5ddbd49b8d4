/* libFuzzer target: the binary reader (src/core/gx_binary.c) on any bytes, as a file a team's
   build or an attacker gives `gpuexp.load`: the kind detected, a host ELF's fat binaries (whose
   offsets and sizes must lie inside the input), and the kernels and parameter sizes listed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gx_binary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: AddressSanitizer sees a read one past it */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    gx_image_detect(copy, size);
    size_t offsets[GX_MAX_IMAGES], sizes[GX_MAX_IMAGES];
    int count = 0;
    gx_error error;
    if (gx_host_fatbins(copy, size, offsets, sizes, &count, &error) == GX_OK)
        for (int i = 0; i < count; i++)
            if (offsets[i] > size || sizes[i] > size - offsets[i])
                abort(); /* a fat binary claimed past the file */
    /* the kernels and their parameter sizes, as gpuexp.load reads a cubin, a fat binary or an object */
    gx_image_kernels list;
    if (gx_image_list_kernels(copy, size, &list, &error) == GX_OK)
        gx_image_kernels_free(&list);
    free(copy);
    return 0;
}
