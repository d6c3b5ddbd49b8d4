/* Exclusive file locks beside outputs and per GPU (flock): one writer per output, one nightly per
   GPU. */
#ifndef GX_LOCK_H
#define GX_LOCK_H

#include <stddef.h>

#include "gx_error.h"

/* How long a lock whose holder is gone may stay held by what that holder left running (it is
   being ended by its guards) before taking it fails. */
#define GX_LOCK_LEFTOVER_WAIT_S 10.0

/* An exclusive lock (flock) held until gx_lock_release or the process's end: returns the fd, or -1
   with *error (GX_ERR_BUSY naming the holder's pid when another process holds it). The file names
   its holder ("PID STARTTIME"), so a later taker can tell that the holder is gone even when its
   pid was given to another process. When the holder is gone and the lock is still held (by the
   processes it started, which hold it too: gx_lock_share), the taker waits for them to end, ends
   those that still hold it after a second (the kernel lists the lock among their open files),
   and takes it. The file is made readable and writable by everyone, so one user's lock never
   shuts out another. note gets a line when a lock left by a process that is gone was taken over. */
int gx_lock_take(const char *path, char *note, size_t note_size, gx_error *error);
/* Lets the processes started from now on hold the lock too (the fd is kept across exec): it is
   free only when they have all ended. 0, or -1 with errno. */
int gx_lock_share(int fd);
/* Removes the lock file and releases the lock. */
void gx_lock_release(int fd, const char *path);

#endif
