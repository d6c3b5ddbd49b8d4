/* Files: whole-file reads, and the on-disk cubin cache (atomic writes). */
#ifndef GX_CACHE_H
#define GX_CACHE_H

#include <stddef.h>

#include "gx_error.h"

/* Reads a whole file, NUL-terminated; *data is malloc'ed. */
int gx_read_file(const char *path, char **data, size_t *size, gx_error *error);
/* Writes via a temporary file and rename, so readers never see half a file. */
int gx_write_file_atomic(const char *path, const void *data, size_t size, gx_error *error);
int gx_make_directories(const char *path, gx_error *error);

/* $GPUEXP_CACHE_DIR, else $XDG_CACHE_HOME/gpuexp, else $HOME/.cache/gpuexp; "" when none. */
void gx_cache_directory(char *out, size_t size);

#endif
