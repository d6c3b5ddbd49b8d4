#include "gx_cache.h"
#include "gx_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL /* header-only: no libxxhash at run time */
#include <xxhash.h>

int gx_read_file(const char *path, char **data, size_t *size, gx_error *error)
{
    *data = NULL;
    *size = 0;
    FILE *file = fopen(path, "rb");
    if (!file)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot open %s: %s", path, strerror(errno));
    size_t capacity = 1 << 16, length = 0;
    char *buffer = malloc(capacity);
    for (;;) {
        if (!buffer) {
            fclose(file);
            return gx_fail(error, GX_ERR_SYSTEM, "out of memory reading %s", path);
        }
        length += fread(buffer + length, 1, capacity - length - 1, file);
        if (length + 1 < capacity)
            break;
        capacity *= 2;
        char *grown = realloc(buffer, capacity);
        if (!grown)
            free(buffer);
        buffer = grown;
    }
    int failed = ferror(file);
    fclose(file);
    if (failed) {
        free(buffer);
        return gx_fail(error, GX_ERR_SYSTEM, "cannot read %s", path);
    }
    buffer[length] = 0;
    *data = buffer;
    *size = length;
    return GX_OK;
}

int gx_make_directories(const char *path, gx_error *error)
{
    char buffer[4096];
    snprintf(buffer, sizeof buffer, "%s", path);
    for (char *p = buffer + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buffer, 0755) != 0 && errno != EEXIST)
            return gx_fail(error, GX_ERR_SYSTEM, "cannot create directory %s: %s", buffer, strerror(errno));
        *p = '/';
    }
    if (mkdir(buffer, 0755) != 0 && errno != EEXIST)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot create directory %s: %s", buffer, strerror(errno));
    return GX_OK;
}

int gx_write_file_atomic(const char *path, const void *data, size_t size, gx_error *error)
{
    if (gx_output_write(path, data, size, error) == GX_OK)
        return GX_OK;
    return error->kind = GX_ERR_SYSTEM; /* the cache and nvcc's sources: not a user's output */
}

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
    int header_size = snprintf(header, sizeof header, "gpuexp-blob %zu %016llx\n", size,
                               (unsigned long long)XXH3_64bits(data, size));
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
