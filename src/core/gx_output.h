/* Outputs written safely where others may plant files (a shared results folder, root on a CI
   runner): what the user named and nothing else is created, replaced or written.

   The rules, for every output gpuexp writes (CSVs, metadata, reports, the site, exports, merges,
   the cache):
   - the name is found one component at a time (openat with O_PATH | O_NOFOLLOW from the current
     folder, or from / for an absolute name): a symbolic link anywhere on it, a folder's or the
     last name's, is followed only when it belongs to this user or to root, and is refused, with
     nothing written, when it belongs to anyone else, whatever it leads to (a file, a folder, a
     device, a FIFO, anything under /proc); the folder found is held open, so the name cannot be
     moved elsewhere between the check and the write;
   - a regular file, or a name that does not exist yet, is replaced as a whole: a unique temporary
     created in that folder (O_CREAT | O_EXCL | O_NOFOLLOW, the mode of the file it replaces, else
     0666 & ~umask), written, fsync'ed and renamed over the name, the folder fsync'ed;
   - an existing node that is not a regular file (a device such as /dev/null, a FIFO, a terminal,
     and /dev/stdout whatever it leads to) is written in place, never replaced, and only where the
     caller says the user named it (GX_OUTPUT_NAMED); a companion file (X.meta.json, a samples
     file, a report inside a folder) must be a regular file or a new name. A FIFO is opened
     without blocking: one nothing reads is refused after GX_OUTPUT_FIFO_WAIT_MS, never waited on
     for ever; a FIFO or a socket of another user is refused;
   - the folder must exist: no folder is created, and a folder is never an output. */
#ifndef GX_OUTPUT_H
#define GX_OUTPUT_H

#include <stddef.h>

#include "gx_error.h"

/* flags: GX_OUTPUT_NAMED, the output is a name the user gave (compare -o, a sweep's -o): a device
   or a FIFO there is written in place. Without it only a regular file or a new name is written. */
enum { GX_OUTPUT_NAMED = 1 };

/* How long a FIFO named as an output may go without a reader before it is refused. */
#define GX_OUTPUT_FIFO_WAIT_MS 3000

/* Writes data as path's whole content under the rules above. GX_ERR_WRITE with a message naming
   path and the reason; on failure path is untouched (a temporary is removed). */
int gx_output_write(const char *path, const void *data, size_t size, int flags, gx_error *error);

/* Opens path for a writer that adds to it piece by piece (a sweep's CSV, its samples), under the
   rules above: append 0 starts it empty (a fresh file renamed over the name at once, so a hard
   link elsewhere keeps the old content and never gets a second writer); append 1 adds to the end
   of the regular file there (created when missing), refused when it has other hard links. Returns
   the fd (O_CLOEXEC), or -1 with *error. */
int gx_output_open(const char *path, int append, int flags, gx_error *error);

/* Whether path could be written under the rules above, without writing it or opening what is
   there: every link on the way belongs to this user or root, its folder exists, it is no folder,
   and no device or FIFO where flags lack GX_OUTPUT_NAMED (a sweep's outputs checked before its
   lock is taken and its CSV begun). GX_OK, or GX_ERR_WRITE naming the reason. */
int gx_output_check(const char *path, int flags, gx_error *error);

/* Makes the folder path names, its links checked as an output's: GX_OK when it is there already,
   GX_ERR_WRITE when a file has its name, a link of another user is on the way, or (parents 0: an
   output folder the user named, the site, a night) its parent is missing. parents 1 makes the
   missing folders on the way too (gpuexp's own defaults: results/, gpuexp-nightly/TIME, the
   history's folder). */
int gx_output_folder(const char *path, int parents, gx_error *error);

/* Checks the standard output when the process exits (atexit): every printer's lost write (a full
   disk, an I/O error) shows as the stream's error or as its final flush failing. On a failure it
   says so on stderr and the process ends with exit_code (the command line's "output not written",
   7), never the code the command returned (0 clean, 1 a regression). Call it once, early. */
void gx_output_check_stdout_at_exit(int exit_code);

#endif
