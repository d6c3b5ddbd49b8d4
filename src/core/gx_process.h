/* The supervisor's side of a supervised run: worker processes (this binary again, exec'd with a
   channel and a shared status page), waiting on several with a deadline, ending them, the stop
   signals (Ctrl-C, SIGTERM, SIGHUP) as a flag, and other commands run to their end (nightly's
   experiments). No Lua, no CUDA. */
#ifndef GX_PROCESS_H
#define GX_PROCESS_H

#include <sys/types.h>

#include "gx_error.h"
#include "gx_guard.h"
#include "gx_worker.h"

typedef struct gx_process {
    pid_t pid; /* 0 once reaped */
    int fd;    /* the supervisor's end of the channel */
    gx_worker_page *page;
    int exit_code;   /* after gx_process_reap: the code, or 128 + signal */
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

/* How gx_process_run runs a command. Zero is the default for each field but error_sink (-1). */
typedef struct gx_run_options {
    const char *output;       /* file for its standard output and error (created, O_NOFOLLOW), or NULL: ours */
    int capture;              /* its standard output into result->captured (a memory file, nothing on disk) */
    int error_sink;           /* with capture: where its standard error goes (-1: /dev/null) */
    double timeout_s;         /* > 0: then SIGTERM to its group, grace_s, SIGKILL; result->timed_out */
    double grace_s;           /* between SIGTERM (or the stop signal passed on) and SIGKILL; 0: 5 s */
    const char *directory;    /* its working folder, or NULL: ours */
    char *const *environment; /* its environment, or NULL: ours */
    const char *record;       /* a file that names its process group while it runs ("PGID STARTTIME COMMAND
                                 STARTTIME": the guard and the command), so a later gpuexp can end it
                                 if this one and its guard are killed (gx_process_end_recorded) */
} gx_run_options;

typedef struct gx_run_result {
    int exit_code; /* its code, 128 + N when signal N ended it */
    int signal;    /* N when signal N ended it, else 0 */
    int stop;      /* the stop signal received while it ran (passed on to its group), or 0 */
    int timed_out; /* it ran past timeout_s and was ended */
    double seconds;
    char *captured; /* with capture: its standard output, NUL-terminated (free it) */
    size_t captured_size;
} gx_run_result;

/* Runs argv (PATH searched) under a guard (gx_guard.h): standard input /dev/null, an empty signal
   mask, every signal at its default action, in a process group of its own that ends with gpuexp
   whatever kills it; a stop signal received meanwhile (SIGINT, SIGTERM, SIGHUP) is passed on to
   that whole group and, grace_s later, SIGKILL ends what is left. What the command leaves running
   when it ends (a `monitor &`) may run on, but never past gpuexp's end. Returns GX_OK with *result filled, or an error
   when it could not be started (*error names the call). Every child of gpuexp but the workers starts here. */
int gx_process_run(char *const argv[], const gx_run_options *options, gx_run_result *result, gx_error *error);

/* gx_process_run in two steps, for a command that talks through a pipe while it runs (a script's
   io.popen): gx_process_start starts it with its standard input on input and its standard output
   on output (-1: as gx_process_run; options' capture is not used);
   gx_process_finish waits for it as gx_process_run does (stop signals, time limit). */
int gx_process_start(char *const argv[], const gx_run_options *options, int input, int output, gx_guarded *started,
                     gx_error *error);
int gx_process_finish(gx_guarded *started, const gx_run_options *options, gx_run_result *result, gx_error *error);

/* /proc/PID/name's text (NUL-terminated in size bytes): its length, or -1 when it cannot be read. */
ssize_t gx_process_read_proc(pid_t pid, const char *name, char *text, size_t size);
/* A process's start time (field 22 of /proc/PID/stat, clock ticks since boot), or 0 when there is
   no such process: with the pid, what tells a process from a later one given the same pid. */
unsigned long long gx_process_start_time(pid_t pid);
/* Whether a process is gone or on its way out (a zombie, or SIGKILL pending): 1, else 0. */
int gx_process_ending(pid_t pid);

/* Ends (SIGKILL) the process group a file written by gx_process_run's record names, if its leader
   (the guard) or the command is still the process that was recorded (same start time: a reused pid
   is left alone). Returns 1 when a group was ended, 0 when there was none, -1 when the file cannot
   be read. */
int gx_process_end_recorded(const char *path);

/* An in-process run (--inline, --profile): SIGINT, SIGTERM and SIGHUP set the stop flag and call
   callback (from the signal handler: it may only set a flag or a Lua hook); if the run has not
   called gx_process_stop_handled within grace_s, the watchdog ends the commands it started and
   the process (_exit(128 + N)): a kernel still running on the GPU ends with it. A second signal
   ends it at once. */
void gx_process_catch_stops(void (*callback)(int), double grace_s);
void gx_process_stop_handled(void);

#endif
