/* The supervisor's side of a supervised run: worker processes (this binary again, exec'd with a
   channel and a shared status page), waiting on several with a deadline, ending them, the stop
   signals (Ctrl-C, SIGTERM, SIGHUP) as a flag, and other commands run to their end (nightly's
   experiments). No Lua, no CUDA. */
#ifndef GX_PROCESS_H
#define GX_PROCESS_H

#include <sys/types.h>

#include "gx_error.h"
#include "gx_worker.h"

typedef struct gx_process {
    pid_t pid;     /* 0 once reaped */
    int fd;        /* the supervisor's end of the channel */
    gx_worker_page *page;
    int exit_code; /* after gx_process_reap: the code, or 128 + signal */
    char ended[160]; /* after gx_process_reap: "exited with code 3", "killed by signal SIGSEGV (...)" */
} gx_process;

/* Blocks the stop signals (they are taken only while waiting) and records them in a flag. */
void gx_process_init(void);
int gx_process_stop_signal(void); /* the signal number that asked to stop, or 0 */

/* Starts /proc/self/exe with argv in its own process group, killed if the supervisor dies.
   discard_stdout sends its standard output to /dev/null (secondary workers of one run). */
int gx_process_spawn(gx_process *process, char *const argv[], int device, int slot, int discard_stdout,
                     gx_error *error);
/* Waits until one of the processes has a message or has ended (returns its index), the timeout
   passes (returns -1; timeout_s < 0 waits for ever), a stop signal arrives (returns -2), or
   the wait itself fails (returns -3 with *error set). */
int gx_process_wait(gx_process *const *processes, int count, double timeout_s, gx_error *error);
void gx_process_kill(gx_process *process, int signal_number); /* the whole process group */
/* Waits for the process to end (at most grace_s, then SIGKILL) and fills exit_code and ended. */
void gx_process_reap(gx_process *process, double grace_s);
void gx_process_release(gx_process *process); /* closes the channel, unmaps the page */

/* Runs argv (execvp) in a process group of its own and waits for it; output (or NULL: this
   process's) gets its standard output and error. A stop signal received
   meanwhile (after gx_process_init) is passed to that group, *stop set to it, and the command
   waited for (killed 30 s later). Returns its exit code, 128 + N when a signal ended it; -1 (with
   *error) when it could not be started. */
int gx_process_run(char *const argv[], const char *output, int *stop, gx_error *error);

#endif
