/* Outputs written safely where others may plant files (a shared results folder, root on a CI
   runner): what the user named and nothing else is created, replaced or written.

   The rules, for every output gpuexp writes (CSVs, metadata, reports, the site, exports, merges,
   the cache):
   - a regular file, or a name that does not exist yet, is replaced as a whole: a unique temporary
     created beside it (O_CREAT | O_EXCL | O_NOFOLLOW, the mode of the file it replaces, else
     0666 & ~umask), written, fsync'ed and renamed over the name;
   - an existing node that is not a regular file (a device such as /dev/null, a FIFO, a socket,
     a terminal, and /dev/stdout whatever it leads to) is written in place, never replaced;
   - a symbolic link to a regular file is followed (the target is replaced, the link kept) only
     when the link belongs to this user or to root; a link of another user, or one that leads
     nowhere, is refused;
   - the folder must exist: no folder is created, and a folder is never an output. */
#ifndef GX_OUTPUT_H
#define GX_OUTPUT_H

#include <stddef.h>

#include "gx_error.h"

/* Writes data as path's whole content under the rules above. GX_ERR_WRITE with a message naming
   path and the reason; on failure path is untouched (a temporary is removed). */
int gx_output_write(const char *path, const void *data, size_t size, gx_error *error);

/* Opens path for a writer that adds to it piece by piece (a sweep's CSV, its samples), under the
   rules above: append 0 starts it empty (a fresh file renamed over the name at once, so a hard
   link elsewhere keeps the old content and never gets a second writer); append 1 adds to the end
   of the regular file there (created when missing), refused when it has other hard links. Returns
   the fd (O_CLOEXEC), or -1 with *error. */
int gx_output_open(const char *path, int append, gx_error *error);

/* Makes the folder path names, not its parents (an output folder the user named: the site, a
   night): GX_OK when it is there already, GX_ERR_WRITE when its parent is missing or a file has
   its name. */
int gx_output_folder(const char *path, gx_error *error);

#endif
