/* The on-disk cache: where it is, and its checked entries (a header with the size and the hash of
   the bytes, so a truncated or damaged entry is found and rebuilt, never used). */
#include "gx_cache.h"
#include "gx_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL /* header-only: no libxxhash at run time */
#include <xxhash.h>

int gx_blob_load(const char *path, uint8_t **data, size_t *size, char *why, size_t why_size)
{
    *data = NULL;
    *size = 0;
    char *text;
    size_t length;
    gx_error ignored;
    if (access(path, F_OK) != 0 || gx_read_file(path, &text, &length, &ignored))
        return -1;
    unsigned long long want_size, want_hash;
    int header = 0;
    if (sscanf(text, "gpuexp-blob %llu %llx\n%n", &want_size, &want_hash, &header) != 2 || header <= 0) {
        snprintf(why, why_size, "no header");
    } else if ((size_t)header + want_size != length) {
        snprintf(why, why_size, "%zu bytes where the header says %llu", length - (size_t)header, want_size);
    } else if (XXH3_64bits(text + header, want_size) != want_hash) {
        snprintf(why, why_size, "its bytes do not match their hash");
    } else {
        memmove(text, text + header, want_size);
        *data = (uint8_t *)text;
        *size = want_size;
        return GX_OK;
    }
    free(text);
    return -2;
}

int gx_blob_store(const char *path, const void *data, size_t size, gx_error *error)
{
    char header[96];
    int header_size =
        snprintf(header, sizeof header, "gpuexp-blob %zu %016llx\n", size, (unsigned long long)XXH3_64bits(data, size));
    char *whole = malloc((size_t)header_size + size);
    if (!whole)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    memcpy(whole, header, (size_t)header_size);
    memcpy(whole + header_size, data, size);
    int status = gx_write_file_atomic(path, whole, (size_t)header_size + size, error);
    free(whole);
    return status;
}

void gx_cache_directory(char *out, size_t size)
{
    const char *explicit_dir = getenv("GPUEXP_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (explicit_dir && *explicit_dir)
        snprintf(out, size, "%s", explicit_dir);
    else if (xdg && *xdg)
        snprintf(out, size, "%s/gpuexp", xdg);
    else if (home && *home)
        snprintf(out, size, "%s/.cache/gpuexp", home);
    else
        out[0] = 0;
}
