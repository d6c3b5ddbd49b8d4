#include "gx_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    char temporary[4200];
    snprintf(temporary, sizeof temporary, "%s.tmp.%ld", path, (long)getpid());
    FILE *file = fopen(temporary, "wb");
    if (!file)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot write %s: %s", temporary, strerror(errno));
    int ok = fwrite(data, 1, size, file) == size;
    ok = (fclose(file) == 0) && ok;
    if (!ok || rename(temporary, path) != 0) {
        int saved = errno;
        remove(temporary);
        return gx_fail(error, GX_ERR_SYSTEM, "cannot write %s: %s", path, strerror(saved));
    }
    return GX_OK;
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
