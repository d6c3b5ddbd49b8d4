/* The guard: a small process between gpuexp and every command it runs (nvcc, builds, hooks, git,
   gnuplot, the runs of nightly, tune, ab and bisect, a script's os.execute and io.popen). It is
   this binary again, exec'd as "gpuexp-guard" (a constructor in gx_guard.c takes it over before
   main), so it is small and single-threaded whatever the parent holds. It leads the command's
   process group and asks the kernel for a signal when its parent dies (PR_SET_PDEATHSIG, which
   posix_spawn cannot set on the command itself); then it ends the whole group with SIGKILL, so
   nothing gpuexp started outlives it, whatever killed it (kill -9 included). Otherwise it waits
   for the command and ends as it ended: its exit code, or the same signal. No Lua, no CUDA. */
#ifndef GX_GUARD_H
#define GX_GUARD_H

#include <sys/types.h>

#include "gx_error.h"

/* What the command gets: standard input, output and error (-1: /dev/null for input, ours for the
   others), its working folder and environment (NULL: ours). */
typedef struct gx_guard_io {
    int input, output, error;
    const char *directory;
    char *const *environment;
} gx_guard_io;

/* A command started under a guard. */
typedef struct gx_guarded {
    pid_t guard; /* leads the command's process group: its pid is the group's */
    pid_t command;
    int report; /* the guard's pipe: the command's wait status comes when it ends (poll it) */
} gx_guarded;

/* Starts argv (PATH searched) under a guard: the guard leads a new process group with the command
   in it; the command starts with an empty signal mask and every signal at its default action.
   Returns GX_OK once the command was started (*started filled), or an error naming what failed
   ("cannot run X: no such program"). */
int gx_guard_spawn(char *const argv[], const gx_guard_io *io, gx_guarded *started, gx_error *error);

/* Reads the command's end once started->report is readable: returns 1 with its wait status (the
   report closed), or 0 when nothing came yet. A guard killed before it could say gives its own
   status (SIGKILL). A guard that stays for what the command left running is reaped later. */
int gx_guard_ended(gx_guarded *started, int *status);

/* Reaps the guards that stayed and have since ended (gx_guard_spawn calls it too). */
void gx_guard_reap(void);

#endif
