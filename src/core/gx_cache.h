/* Files: whole-file reads, atomic writes, and checked entries of the on-disk cache. */
#ifndef GX_CACHE_H
#define GX_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "gx_error.h"

/* Reads a whole file, NUL-terminated; *data is malloc'ed. */
int gx_read_file(const char *path, char **data, size_t *size, gx_error *error);
/* gx_output_write (gx_output.h: a unique temporary and a rename), failing as GX_ERR_SYSTEM. */
int gx_write_file_atomic(const char *path, const void *data, size_t size, gx_error *error);
int gx_make_directories(const char *path, gx_error *error);

/* One checked file of the cache: a header line "gpuexp-blob SIZE XXH3-64\n", then the bytes.
   gx_blob_load: GX_OK and the bytes (malloc'ed) on a hit; -1 when there is no entry; -2 when the
   entry is damaged (truncated, or its bytes do not match the hash), with why. gx_blob_store
   writes atomically (temporary file and rename). */
int gx_blob_load(const char *path, uint8_t **data, size_t *size, char *why, size_t why_size);
int gx_blob_store(const char *path, const void *data, size_t size, gx_error *error);

/* $GPUEXP_CACHE_DIR, else $XDG_CACHE_HOME/gpuexp, else $HOME/.cache/gpuexp; "" when none. */
void gx_cache_directory(char *out, size_t size);

#endif
