/* Exclusive file locks beside outputs and per GPU (flock): one writer per output, one nightly per
   GPU. */
#ifndef GX_LOCK_H
#define GX_LOCK_H

#include <stddef.h>

#include "gx_error.h"

/* An exclusive lock (flock) held until gx_lock_release or the process's end: returns the fd, or -1
   with *error (GX_ERR_BUSY naming the holder's pid when another process holds it). The file is
   made readable and writable by everyone, so one user's lock never shuts out another. note gets
   a line when a lock left by a process that is gone was taken over. */
int gx_lock_take(const char *path, char *note, size_t note_size, gx_error *error);
/* Removes the lock file and releases the lock. */
void gx_lock_release(int fd, const char *path);

#endif
