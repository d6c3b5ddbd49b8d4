#include "gx_clock.h"
#include "gx_process.h"

#include "gx_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;
static sigset_t stop_signals;

static void on_stop_signal(int signal_number)
{
    stop_signal = signal_number;
}

void gx_process_init(void)
{
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    struct sigaction action = {0};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
    /* taken only inside ppoll, so a signal can never slip between the check and the wait */
    sigprocmask(SIG_BLOCK, &stop_signals, NULL);
}

int gx_process_stop_signal(void)
{
    return stop_signal;
}

/* In a forked child: every signal's default action and an empty mask, whatever this process
   inherited (a shell's `cmd &` ignores SIGINT; the supervisor blocks the stop signals), so the
   command it becomes can be stopped as any other. */
static void reset_signals(void)
{
    struct sigaction default_action = {0};
    default_action.sa_handler = SIG_DFL;
    for (int number = 1; number < NSIG; number++)
        if (number != SIGKILL && number != SIGSTOP)
            sigaction(number, &default_action, NULL); /* fails harmlessly for the few reserved ones */
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
}

int gx_process_spawn(gx_process *process, char *const argv[], int device, int slot, int discard_stdout, gx_error *error)
{
    memset(process, 0, sizeof *process);
    process->fd = -1;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return gx_fail(error, GX_ERR_SYSTEM, "socketpair failed: %s", strerror(errno));
    int page_fd = memfd_create("gpuexp-worker-page", MFD_CLOEXEC);
    if (page_fd < 0 || ftruncate(page_fd, sizeof(gx_worker_page)) != 0) {
        int saved = errno;
        close(pair[0]);
        close(pair[1]);
        if (page_fd >= 0)
            close(page_fd);
        return gx_fail(error, GX_ERR_SYSTEM, "memfd_create/ftruncate failed: %s", strerror(saved));
    }
    void *page = mmap(NULL, sizeof(gx_worker_page), PROT_READ | PROT_WRITE, MAP_SHARED, page_fd, 0);
    if (page == MAP_FAILED) {
        close(pair[0]);
        close(pair[1]);
        close(page_fd);
        return gx_fail(error, GX_ERR_SYSTEM, "mmap failed: %s", strerror(errno));
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        munmap(page, sizeof(gx_worker_page));
        close(pair[0]);
        close(pair[1]);
        close(page_fd);
        return gx_fail(error, GX_ERR_SYSTEM, "fork failed: %s", strerror(saved));
    }
    if (pid == 0) {
        /* the child: its own process group (Ctrl-C reaches only the supervisor, which forwards
           it), killed with its parent, then this binary again as a worker */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        reset_signals();
        int channel = dup(pair[1]); /* dup clears close-on-exec */
        int shared = dup(page_fd);
        if (discard_stdout) {
            int null_fd = open("/dev/null", O_WRONLY);
            if (null_fd >= 0)
                dup2(null_fd, STDOUT_FILENO);
        }
        char value[64];
        snprintf(value, sizeof value, "%d,%d,%d,%d", channel, shared, device, slot);
        setenv("GPUEXP_WORKER", value, 1);
        execv("/proc/self/exe", argv);
        fprintf(stderr, "gpuexp: cannot start a worker: exec of /proc/self/exe failed: %s\n", strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here: a kill of the group right after fork must reach the child */
    close(pair[1]);
    close(page_fd);
    process->pid = pid;
    process->fd = pair[0];
    process->page = page;
    return GX_OK;
}

int gx_process_wait(gx_process *const *processes, int count, double timeout_s, gx_error *error)
{
    if (timeout_s > 1e9) /* past a timespec's reach: for ever */
        timeout_s = -1;
    struct pollfd fds[256];
    if (count > 256)
        count = 256;
    for (int i = 0; i < count; i++) {
        fds[i].fd = processes[i]->fd;
        fds[i].events = POLLIN;
        fds[i].revents = 0;
    }
    if (stop_signal)
        return -2;
    struct timespec timeout, *timeout_pointer = NULL;
    if (timeout_s >= 0) {
        timeout.tv_sec = (time_t)timeout_s;
        timeout.tv_nsec = (long)((timeout_s - (double)timeout.tv_sec) * 1e9);
        timeout_pointer = &timeout;
    }
    sigset_t during;
    sigemptyset(&during); /* every stop signal is taken while waiting */
    int ready = ppoll(fds, (nfds_t)count, timeout_pointer, &during);
    if (ready < 0 && errno == EINTR)
        return stop_signal ? -2 : -1;
    if (ready < 0) {
        gx_fail(error, GX_ERR_SYSTEM, "ppoll failed: %s", strerror(errno));
        return -3;
    }
    if (ready == 0)
        return -1;
    for (int i = 0; i < count; i++)
        if (fds[i].revents)
            return i;
    return -1;
}

void gx_process_kill(gx_process *process, int signal_number)
{
    if (process->pid > 0)
        kill(-process->pid, signal_number);
}

void gx_process_reap(gx_process *process, double grace_s)
{
    if (process->pid <= 0)
        return;
    int status = 0;
    struct timespec step = {0, 10 * 1000 * 1000};
    pid_t done = 0;
    for (double waited = 0; waited < grace_s; waited += 0.01) {
        done = waitpid(process->pid, &status, WNOHANG);
        if (done != 0)
            break;
        nanosleep(&step, NULL);
    }
    if (done == 0) {
        kill(-process->pid, SIGKILL);
        done = waitpid(process->pid, &status, 0);
    }
    if (done < 0) {
        process->exit_code = 1;
        snprintf(process->ended, sizeof process->ended, "ended (waitpid failed: %s)", strerror(errno));
    } else if (WIFEXITED(status)) {
        process->exit_code = WEXITSTATUS(status);
        snprintf(process->ended, sizeof process->ended, "exited with code %d", process->exit_code);
    } else if (WIFSIGNALED(status)) {
        int number = WTERMSIG(status);
        const char *name = sigabbrev_np(number); /* "SEGV" */
        process->exit_code = 128 + number;
        snprintf(process->ended, sizeof process->ended, "killed by signal SIG%s (%s)%s", name ? name : "?",
                 strsignal(number), WCOREDUMP(status) ? ", core dumped" : "");
    }
    /* the rest of its process group (programs the script started) goes with it */
    kill(-process->pid, SIGKILL);
    process->pid = 0;
}

void gx_process_release(gx_process *process)
{
    if (process->fd >= 0)
        close(process->fd);
    process->fd = -1;
    if (process->page)
        munmap(process->page, sizeof(gx_worker_page));
    process->page = NULL;
}

/* ---- other commands: one spawn for every child (builds, hooks, git, nvcc, gnuplot, experiments) ---- */

/* The process groups of the commands running now, so a stop signal or the watchdog can end them
   from a signal handler (kill is async-signal-safe). */
#define GX_MAX_RUNNING 64
static volatile pid_t running_groups[GX_MAX_RUNNING];

static void remember_group(pid_t pid, int add)
{
    for (int i = 0; i < GX_MAX_RUNNING; i++)
        if (running_groups[i] == (add ? 0 : pid)) {
            running_groups[i] = add ? pid : 0;
            return;
        }
}

/* Sends signal_number to the process group of every command gx_process_run is running now
   (async-signal-safe). */
static void gx_process_end_children(int signal_number)
{
    for (int i = 0; i < GX_MAX_RUNNING; i++)
        if (running_groups[i] > 0)
            kill(-running_groups[i], signal_number);
}

ssize_t gx_process_read_proc(pid_t pid, const char *name, char *text, size_t size)
{
    char path[320];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, text, size - 1) : -1;
    if (fd >= 0)
        close(fd);
    text[got > 0 ? got : 0] = 0;
    return got;
}

unsigned long long gx_process_start_time(pid_t pid)
{
    char text[1024];
    if (gx_process_read_proc(pid, "stat", text, sizeof text) <= 0)
        return 0;
    const char *after = strrchr(text, ')'); /* the command name may hold spaces and parentheses */
    if (!after)
        return 0;
    int field = 2; /* the name was field 2; each space starts the next */
    for (const char *p = after + 1; *p; p++)
        if (*p == ' ' && ++field == 22)
            return strtoull(p + 1, NULL, 10);
    return 0;
}

int gx_process_ending(pid_t pid)
{
    char text[4096];
    if (gx_process_read_proc(pid, "status", text, sizeof text) < 0)
        return 1;
    const char *state = strstr(text, "\nState:");
    if (state) {
        state += strlen("\nState:");
        state += strspn(state, " \t");
        if (*state == 'Z' || *state == 'X') /* a zombie, or dead */
            return 1;
    }
    static const char *const pending[] = {"\nShdPnd:", "\nSigPnd:"};
    for (int i = 0; i < 2; i++) {
        const char *line = strstr(text, pending[i]);
        if (line && (strtoull(line + strlen(pending[i]), NULL, 16) >> (SIGKILL - 1) & 1))
            return 1;
    }
    return 0;
}

int gx_process_end_recorded(const char *path)
{
    FILE *file = fopen(path, "re");
    if (!file)
        return errno == ENOENT ? 0 : -1;
    int group = 0, command = 0;
    unsigned long long group_start = 0, command_start = 0;
    int fields = fscanf(file, "%d %llu %d %llu", &group, &group_start, &command, &command_start);
    fclose(file);
    if (fields < 2 || group <= 1 || group_start == 0)
        return -1;
    /* the proof that the group is the one recorded: its leader (the guard) is still that process,
       or, the guard being gone too, the command is, and still in that group */
    int leader = gx_process_start_time(group) == group_start;
    int member = fields == 4 && command > 1 && command_start && gx_process_start_time(command) == command_start &&
                 getpgid(command) == group;
    if (!leader && !member)
        return 0; /* gone, or its pid now belongs to another process */
    kill(-group, SIGKILL);
    return 1;
}

int gx_process_start(char *const argv[], const gx_run_options *options, int input, int output, gx_guarded *started,
                     gx_error *error)
{
    int sink = output;
    if (sink < 0 && options->output &&
        (sink = open(options->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot write %s: %s", options->output, strerror(errno));
    gx_guard_io io = {.input = input,
                      .output = sink,
                      .error = options->error_sink,
                      .directory = options->directory,
                      .environment = options->environment};
    if (io.error < 0 && sink >= 0 && output < 0)
        io.error = sink; /* a command's log: its output and errors together */
    int failed = gx_guard_spawn(argv, &io, started, error);
    if (sink >= 0 && sink != output)
        close(sink);
    if (failed)
        return failed;
    remember_group(started->guard, 1);
    if (options->record) { /* written after the spawn: the group exists, and is named only while it runs */
        FILE *record = fopen(options->record, "we");
        if (record) {
            fprintf(record, "%d %llu %d %llu\n", (int)started->guard, gx_process_start_time(started->guard),
                    (int)started->command, gx_process_start_time(started->command));
            fclose(record);
        }
    }
    return GX_OK;
}

int gx_process_finish(gx_guarded *started, const gx_run_options *options, gx_run_result *result, gx_error *error)
{
    (void)error;
    memset(result, 0, sizeof *result);
    pid_t group = started->guard;
    int status = 0;
    double begun = gx_clock_s(), kill_at = -1;
    double grace = options->grace_s > 0 ? options->grace_s : 5;
    sigset_t during; /* the stop signals let in while waiting, so one is taken here and passed on */
    sigprocmask(SIG_SETMASK, NULL, &during);
    sigdelset(&during, SIGINT);
    sigdelset(&during, SIGTERM);
    sigdelset(&during, SIGHUP);
    for (;;) {
        struct pollfd report = {started->report, POLLIN, 0};
        struct timespec nap = {0, 20 * 1000 * 1000};
        if (ppoll(&report, 1, &nap, &during) > 0 && gx_guard_ended(started, &status))
            break;
        double now = gx_clock_s();
        if (stop_signal && !result->stop) {
            result->stop = stop_signal;
            kill(-group, stop_signal); /* the group: a shell and what it started */
            kill_at = now + grace;
        } else if (!result->stop && !result->timed_out && options->timeout_s > 0 && now - begun > options->timeout_s) {
            result->timed_out = 1;
            kill(-group, SIGTERM);
            kill_at = now + grace;
        } else if (kill_at > 0 && now > kill_at) {
            kill(-group, SIGKILL);
            kill_at = -1;
        }
    }
    remember_group(group, 0);
    if (options->record)
        unlink(options->record);
    if (result->stop || result->timed_out)
        kill(-group, SIGKILL); /* what the command left in its group goes with it */
    result->seconds = gx_clock_s() - begun;
    result->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    result->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return GX_OK;
}

int gx_process_run(char *const argv[], const gx_run_options *options, gx_run_result *result, gx_error *error)
{
    static const gx_run_options defaults = {.grace_s = 5, .error_sink = -1};
    if (!options)
        options = &defaults;
    memset(result, 0, sizeof *result);
    int sink = -1;
    if (options->capture && (sink = memfd_create("gpuexp-capture", MFD_CLOEXEC)) < 0)
        return gx_fail(error, GX_ERR_SYSTEM, "memfd_create failed: %s", strerror(errno));
    gx_run_options adjusted = *options;
    int null_fd = -1;
    if (options->capture && options->error_sink < 0) { /* a captured command's errors: discarded */
        null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        adjusted.error_sink = null_fd >= 0 ? null_fd : sink;
    }
    gx_guarded started;
    int failed = gx_process_start(argv, &adjusted, -1, sink, &started, error);
    if (null_fd >= 0)
        close(null_fd);
    if (!failed)
        failed = gx_process_finish(&started, options, result, error);
    if (!failed && options->capture) {
        off_t size = lseek(sink, 0, SEEK_END);
        result->captured = size >= 0 ? malloc((size_t)size + 1) : NULL;
        if (!result->captured || pread(sink, result->captured, (size_t)size, 0) != size) {
            free(result->captured);
            result->captured = NULL;
            failed = gx_fail(error, GX_ERR_SYSTEM, "cannot read the output of %s: %s", argv[0],
                             strerror(errno ? errno : EIO));
        } else {
            result->captured[size] = 0;
            result->captured_size = (size_t)size;
        }
    }
    if (sink >= 0)
        close(sink);
    return failed;
}

/* ---- an in-process run (--inline, --profile): stop signals as a flag, a callback and a watchdog ---- */

static void (*on_stop_callback)(int);
static double watchdog_s;
static volatile sig_atomic_t stop_handled;

static void on_watchdog(int signal_number)
{
    (void)signal_number;
    if (stop_handled)
        return;
    static const char text[] =
        "gpuexp: interrupted; the running point did not return within the grace time (a "
        "kernel still running on the GPU ends with this process); rows written so far are kept\n";
    if (gx_worker_channel() < 0) { /* a worker's supervisor says why the run stopped */
        ssize_t written = write(STDERR_FILENO, text, sizeof text - 1); /* nothing to do if it fails */
        (void)written;
    }
    gx_process_end_children(SIGKILL);
    _exit(128 + stop_signal);
}

static void on_catch(int signal_number)
{
    if (stop_signal) { /* a second signal: no more waiting */
        gx_process_end_children(SIGKILL);
        _exit(128 + stop_signal);
    }
    stop_signal = signal_number;
    if (on_stop_callback)
        on_stop_callback(signal_number);
    gx_process_end_children(signal_number);
    struct itimerval timer = {0};
    timer.it_value.tv_sec = (time_t)watchdog_s;
    timer.it_value.tv_usec = (suseconds_t)((watchdog_s - (double)(time_t)watchdog_s) * 1e6);
    setitimer(ITIMER_REAL, &timer, NULL);
}

void gx_process_catch_stops(void (*callback)(int), double grace_s)
{
    on_stop_callback = callback;
    watchdog_s = grace_s > 0 ? grace_s : 1;
    struct sigaction action = {0};
    action.sa_handler = on_catch;
    action.sa_flags = SA_RESTART; /* driver calls are not cut short */
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
    action.sa_handler = on_watchdog;
    sigaction(SIGALRM, &action, NULL);
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    sigaddset(&stops, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &stops, NULL);
}

void gx_process_stop_handled(void)
{
    stop_handled = 1;
    struct itimerval off = {0};
    setitimer(ITIMER_REAL, &off, NULL);
}
