/* Files: whole-file reads, what a path names, folders made with their parents, and whole-file writes (a temporary
   and a rename) for files that are not a user's output (the cache, nvcc's sources). */
#ifndef GX_FILES_H
#define GX_FILES_H

#include <stddef.h>

#include "gx_error.h"

/* Reads a whole file, NUL-terminated; *data is malloc'ed. */
int gx_read_file(const char *path, char **data, size_t *size, gx_error *error);
/* gx_output_write (gx_output.h: a unique temporary and a rename), failing as GX_ERR_SYSTEM. */
int gx_write_file_atomic(const char *path, const void *data, size_t size, gx_error *error);
/* mkdir -p: the folder and its parents (0755); one that exists is fine. */
int gx_make_directories(const char *path, gx_error *error);
/* Whether path names a regular file, or a folder (links followed); 0 when it cannot be read. */
int gx_is_file(const char *path);
int gx_is_directory(const char *path);

#endif
