/* libFuzzer target: the binary reader (src/core/gx_binary.c) on any bytes, as a file a team's
   build or an attacker gives `gpuexp.load`: the kind detected, and a host ELF's fat binaries,
   whose offsets and sizes must lie inside the input. */
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
    free(copy);
    return 0;
}
