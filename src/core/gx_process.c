#include "gx_process.h"

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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;
static sigset_t stop_signals, original_mask;

static void on_stop_signal(int signal_number) { stop_signal = signal_number; }

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
    sigprocmask(SIG_BLOCK, &stop_signals, &original_mask);
}

int gx_process_stop_signal(void) { return stop_signal; }

/* In a child: the stop signals' default actions and the mask this process started with, so the
   command it becomes can be stopped as any other. */
static void restore_stop_signals(void)
{
    struct sigaction default_action = {0};
    default_action.sa_handler = SIG_DFL;
    sigaction(SIGINT, &default_action, NULL);
    sigaction(SIGTERM, &default_action, NULL);
    sigaction(SIGHUP, &default_action, NULL);
    sigprocmask(SIG_SETMASK, &original_mask, NULL);
}

int gx_process_spawn(gx_process *process, char *const argv[], int device, int slot, int discard_stdout,
                     gx_error *error)
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
        restore_stop_signals();
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

int gx_process_run(char *const argv[], const char *output, int *stop, gx_error *error)
{
    *stop = 0;
    int sink = -1;
    if (output && (sink = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return gx_fail(error, GX_ERR_SYSTEM, "cannot write %s: %s", output, strerror(errno)), -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        gx_fail(error, GX_ERR_SYSTEM, "fork failed: %s", strerror(errno));
        if (sink >= 0)
            close(sink);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0); /* a group of its own: a stop signal is passed on to all of it */
        if (sink >= 0 && (dup2(sink, STDOUT_FILENO) < 0 || dup2(sink, STDERR_FILENO) < 0))
            _exit(127);
        restore_stop_signals();
        execvp(argv[0], argv);
        fprintf(stderr, "gpuexp: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    if (sink >= 0)
        close(sink);
    int status = 0;
    double grace_until = -1;
    for (;;) {
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid)
            break;
        if (done < 0 && errno != EINTR) {
            gx_fail(error, GX_ERR_SYSTEM, "waitpid failed: %s", strerror(errno));
            return -1;
        }
        /* sleep a little with the stop signals let in, so one is taken here and passed on */
        struct timespec nap = {0, 50 * 1000 * 1000};
        sigset_t during = original_mask;
        sigdelset(&during, SIGINT);
        sigdelset(&during, SIGTERM);
        sigdelset(&during, SIGHUP);
        ppoll(NULL, 0, &nap, &during);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double seconds = (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
        if (stop_signal && !*stop) {
            *stop = stop_signal;
            kill(-pid, stop_signal);
            grace_until = seconds + 30; /* it finishes its rows and exits; past that it is killed */
        } else if (grace_until > 0 && seconds > grace_until) {
            kill(-pid, SIGKILL);
            grace_until = -1;
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
