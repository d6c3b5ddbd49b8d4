#include "gx_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define GUARD_NAME "gpuexp-guard"     /* its argv[0] and its name in ps */
#define GUARD_VARIABLE "GPUEXP_GUARD" /* "PARENT_PID,REPORT_FD": set only for the guard, never for the command */
#define PARENT_GONE SIGUSR1           /* the guard's parent-death signal */

/* ---- the guard itself ---- */

/* What the guard tells gpuexp on the report pipe: once the command runs (failed 0, its pid) or
   could not start, then its wait status when it ends. */
typedef struct started_report {
    int failed; /* errno of the step that failed, 0 when the command runs */
    int command;
} started_report;

static void send_report(int fd, const void *value, size_t size)
{
    while (write(fd, value, size) < 0 && errno == EINTR) {
    }
}

/* Ends, with SIGKILL, every process the guard has under it: its group, and its children in other
   groups (orphans of the command's tree come to the guard, a subreaper, even after setsid). */
static void end_everything(void)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0)
        close(fd);
    text[got > 0 ? got : 0] = 0;
    for (char *next = text, *end; *next; next = end) {
        long child = strtol(next, &end, 10);
        if (end == next)
            break;
        if (child > 1) {
            kill((pid_t)-child, SIGKILL); /* a child that leads a group of its own: the group */
            kill((pid_t)child, SIGKILL);
        }
    }
    kill(0, SIGKILL); /* the guard's own group, the guard with it */
    _exit(137);
}

/* The guard's life: argv[1..] is the command. Every signal is blocked (posix_spawn started it so):
   the stop signals gpuexp passes to the group reach the command, not the guard, which takes only
   SIGCHLD and PARENT_GONE. Once the command has ended (its status sent), the guard stays while
   what the command left running (a `monitor &`) runs, so that it too ends with gpuexp; it ends
   when nothing is left. */
static void guard(char **argv)
{
    const char *value = getenv(GUARD_VARIABLE);
    int parent = 0, report_fd = -1;
    if (!value || sscanf(value, "%d,%d", &parent, &report_fd) != 2 || report_fd < 0 || !argv[1])
        _exit(127);
    unsetenv(GUARD_VARIABLE);
    fcntl(report_fd, F_SETFD, FD_CLOEXEC);
    prctl(PR_SET_NAME, GUARD_NAME);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* from here on the parent's death is seen; if it died before, nothing is started */
    if (prctl(PR_SET_PDEATHSIG, PARENT_GONE) != 0 || getppid() != parent)
        _exit(127);
    started_report started = {0, 0};
    int exec_pipe[2];
    if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
        started.failed = errno;
        send_report(report_fd, &started, sizeof started);
        _exit(127);
    }
    pid_t command = fork();
    if (command == 0) {
        struct sigaction default_action = {0};
        default_action.sa_handler = SIG_DFL;
        for (int number = 1; number < NSIG; number++)
            if (number != SIGKILL && number != SIGSTOP)
                sigaction(number, &default_action, NULL);
        sigset_t empty;
        sigemptyset(&empty);
        sigprocmask(SIG_SETMASK, &empty, NULL);
        execvp(argv[1], argv + 1);
        int failed = errno;
        send_report(exec_pipe[1], &failed, sizeof failed);
        _exit(127);
    }
    started.failed = command < 0 ? errno : 0;
    started.command = (int)command;
    close(exec_pipe[1]);
    if (command > 0) /* EOF once exec closed its end: the command runs */
        while (read(exec_pipe[0], &started.failed, sizeof started.failed) < 0 && errno == EINTR) {
        }
    close(exec_pipe[0]);
    send_report(report_fd, &started, sizeof started);
    if (started.failed) {
        if (command > 0)
            waitpid(command, NULL, 0);
        _exit(127);
    }
    /* the command's standard streams are its own: the guard keeps no end of a pipe open */
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2 && null_fd >= 0; fd++)
        dup2(null_fd, fd);
    sigset_t taken;
    sigemptyset(&taken);
    sigaddset(&taken, SIGCHLD);
    sigaddset(&taken, PARENT_GONE);
    for (;;) {
        struct timespec second = {1, 0}; /* the parent is checked every second too, whatever woke it */
        sigtimedwait(&taken, NULL, &second);
        if (getppid() != parent)
            end_everything();
        int status = 0;
        pid_t ended;
        while ((ended = waitpid(-1, &status, WNOHANG)) > 0)
            if (ended == command && report_fd >= 0) {
                send_report(report_fd, &status, sizeof status);
                close(report_fd);
                report_fd = -1;
            }
        if (ended < 0 && errno == ECHILD)
            _exit(0); /* the command and all it left have ended */
    }
}

/* Runs before main in every process of this binary: the guard's argv[0] and variable make it one
   (both, so a stray variable never turns a gpuexp into a guard). glibc passes argc, argv and envp
   to the functions of .init_array. */
__attribute__((constructor)) static void become_guard_if_asked(int argc, char **argv, char **envp)
{
    (void)envp;
    if (argc >= 2 && argv && strcmp(argv[0], GUARD_NAME) == 0 && getenv(GUARD_VARIABLE))
        guard(argv);
}

/* ---- starting a guard (gpuexp's side) ---- */

/* The command's environment with the guard's variable added: an array of pointers into environment
   (freed by the caller) and into variable. */
static char **guard_environment(char *const *environment, char *variable)
{
    size_t count = 0;
    while (environment[count])
        count++;
    char **list = calloc(count + 2, sizeof *list);
    if (!list)
        return NULL;
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (strncmp(environment[i], GUARD_VARIABLE "=", sizeof GUARD_VARIABLE) != 0)
            list[kept++] = environment[i];
    list[kept] = variable;
    return list;
}

/* posix_spawn of the guard: every signal blocked and at its default action, a process group of
   its own, the command's standard streams, folder and environment. */
static int spawn_guard(char *const *guard_argv, const gx_guard_io *io, char **environment, pid_t *pid, gx_error *error)
{
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_t actions;
    int failed = posix_spawnattr_init(&attributes);
    if (failed)
        return gx_fail(error, GX_ERR_SYSTEM, "posix_spawnattr_init failed: %s", strerror(failed));
    failed = posix_spawn_file_actions_init(&actions);
    if (failed) {
        posix_spawnattr_destroy(&attributes);
        return gx_fail(error, GX_ERR_SYSTEM, "posix_spawn_file_actions_init failed: %s", strerror(failed));
    }
    sigset_t every;
    sigfillset(&every);
    const char *call = "posix_spawnattr_setflags";
    failed =
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    if (!failed)
        call = "posix_spawnattr_setsigmask", failed = posix_spawnattr_setsigmask(&attributes, &every);
    if (!failed) {
        sigset_t defaults = every;
        sigdelset(&defaults, SIGKILL);
        sigdelset(&defaults, SIGSTOP);
        call = "posix_spawnattr_setsigdefault", failed = posix_spawnattr_setsigdefault(&attributes, &defaults);
    }
    if (!failed)
        call = "posix_spawnattr_setpgroup", failed = posix_spawnattr_setpgroup(&attributes, 0);
    if (!failed) {
        call = io->input >= 0 ? "posix_spawn_file_actions_adddup2" : "posix_spawn_file_actions_addopen";
        failed = io->input >= 0 ? posix_spawn_file_actions_adddup2(&actions, io->input, STDIN_FILENO)
                                : posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    }
    if (!failed && io->output >= 0)
        call = "posix_spawn_file_actions_adddup2",
        failed = posix_spawn_file_actions_adddup2(&actions, io->output, STDOUT_FILENO);
    if (!failed && io->error >= 0)
        call = "posix_spawn_file_actions_adddup2",
        failed = posix_spawn_file_actions_adddup2(&actions, io->error, STDERR_FILENO);
    if (!failed && io->directory)
        call = "posix_spawn_file_actions_addchdir_np",
        failed = posix_spawn_file_actions_addchdir_np(&actions, io->directory);
    if (!failed) {
        fflush(NULL);
        call = "posix_spawn";
        failed = posix_spawn(pid, "/proc/self/exe", &actions, &attributes, guard_argv, environment);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (failed)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot run %s: %s failed: %s", guard_argv[1], call, strerror(failed));
    return GX_OK;
}

int gx_guard_spawn(char *const argv[], const gx_guard_io *io, gx_guarded *started, gx_error *error)
{
    memset(started, 0, sizeof *started);
    started->report = -1;
    gx_guard_reap();
    size_t count = 0;
    while (argv[count])
        count++;
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot run %s: pipe2 failed: %s", argv[0], strerror(errno));
    char variable[64];
    snprintf(variable, sizeof variable, GUARD_VARIABLE "=%d,%d", (int)getpid(), pipe_fds[1]);
    char **environment = guard_environment(io->environment ? io->environment : environ, variable);
    char **guard_argv = calloc(count + 2, sizeof *guard_argv);
    if (!environment || !guard_argv) {
        free(environment);
        free(guard_argv);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return gx_fail(error, GX_ERR_SYSTEM, "cannot run %s: out of memory", argv[0]);
    }
    guard_argv[0] = GUARD_NAME;
    memcpy(guard_argv + 1, argv, count * sizeof *argv);
    /* the guard inherits the report pipe's end (only this spawn: it is close-on-exec again at once) */
    fcntl(pipe_fds[1], F_SETFD, 0);
    int failed = spawn_guard(guard_argv, io, environment, &started->guard, error);
    close(pipe_fds[1]);
    free(environment);
    free(guard_argv);
    if (failed) {
        close(pipe_fds[0]);
        return failed;
    }
    started_report report = {-1, 0};
    ssize_t got;
    while ((got = read(pipe_fds[0], &report, sizeof report)) < 0 && errno == EINTR) {
    }
    if (got == (ssize_t)sizeof report && report.failed == 0) {
        started->command = report.command;
        started->report = pipe_fds[0];
        return GX_OK;
    }
    close(pipe_fds[0]);
    waitpid(started->guard, NULL, 0);
    kill(-started->guard, SIGKILL);
    if (got != (ssize_t)sizeof report)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot run %s: its guard process ended before starting it", argv[0]);
    if (report.failed == ENOENT)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot run %s: no such program", argv[0]);
    return gx_fail(error, GX_ERR_SYSTEM, "cannot run %s: %s", argv[0], strerror(report.failed));
}

/* Guards whose command has ended but which stay for what it left running: reaped when they end. */
static pid_t *staying;
static size_t staying_count, staying_capacity;

void gx_guard_reap(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < staying_count; i++)
        if (waitpid(staying[i], NULL, WNOHANG) == 0)
            staying[kept++] = staying[i];
    staying_count = kept;
}

int gx_guard_ended(gx_guarded *started, int *status)
{
    ssize_t got;
    while ((got = read(started->report, status, sizeof *status)) < 0 && errno == EINTR) {
    }
    if (got < 0 && errno == EAGAIN)
        return 0;
    close(started->report);
    started->report = -1;
    if (got == (ssize_t)sizeof *status) {
        if (waitpid(started->guard, NULL, WNOHANG) == 0) { /* it stays: reaped later */
            if (staying_count == staying_capacity) {
                size_t capacity = staying_capacity ? 2 * staying_capacity : 16;
                pid_t *grown = realloc(staying, capacity * sizeof *grown);
                if (grown)
                    staying = grown, staying_capacity = capacity;
            }
            if (staying_count < staying_capacity)
                staying[staying_count++] = started->guard;
        }
        return 1;
    }
    /* the guard ended without a word: it was killed (with its group, by gpuexp's SIGKILL) */
    waitpid(started->guard, status, 0);
    return 1;
}
