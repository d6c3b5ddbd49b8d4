/* Files: a whole file read, folders made, a file written whole (gx_output_write's temporary and
   rename) for what is not a user's output. */
#include "gx_files.h"
#include "gx_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    if (gx_output_write(path, data, size, 0, error) == GX_OK)
        return GX_OK;
    return error->kind = GX_ERR_SYSTEM; /* the cache and nvcc's sources: not a user's output */
}

int gx_is_file(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

int gx_is_directory(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}
