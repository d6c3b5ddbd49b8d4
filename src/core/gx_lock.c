#include "gx_lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gx_process.h"

/* The holder a lock file names: "PID STARTTIME" (an older gpuexp wrote the pid alone). */
typedef struct holder {
    long pid;
    unsigned long long start; /* 0: not recorded */
} holder;

/* One attempt: the locked fd, or -1 with *error (*busy set when another open file holds the lock);
   previous gets the holder the file names. */
static int lock_once(const char *path, holder *previous, int *busy, gx_error *error)
{
    *busy = 0;
    memset(previous, 0, sizeof *previous);
    /* readable and writable by everyone: a lock left by one user never shuts out another */
    /* never through a link: one planted at the lock's name in a shared folder would have its
       target truncated and written (the holder's pid) */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0666);
    int create_errno = fd < 0 ? errno : 0;
    struct stat opened;
    if (fd >= 0 && (fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode))) {
        close(fd);
        gx_fail(error, GX_ERR_SYSTEM, "cannot use the lock file %s: it is not a regular file", path);
        return -1;
    }
    int writable = fd >= 0;
    if (fd >= 0)
        fchmod(fd, 0666); /* whatever the umask */
    else if (errno == EACCES || errno == EROFS)
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* another user's file: flock works on it all the same */
    if (fd < 0 && errno == ELOOP) {
        gx_fail(error, GX_ERR_SYSTEM, "cannot use the lock file %s: it is a symbolic link (not followed); remove it",
                path);
        return -1;
    }
    if (fd < 0 && errno == ENOENT && create_errno && create_errno != ENOENT) {
        /* no file to share and none can be made: the folder is the reason */
        gx_fail(error, GX_ERR_SYSTEM, "cannot create the lock file %s: %s (its folder is not writable)", path,
                strerror(create_errno));
        return -1;
    }
    if (fd < 0) {
        gx_fail(error, GX_ERR_SYSTEM, "cannot open the lock file %s: %s", path, strerror(errno));
        return -1;
    }
    char text[96] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = 0;
    if (sscanf(text, "%ld %llu", &previous->pid, &previous->start) < 1)
        previous->pid = 0;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        *busy = errno == EWOULDBLOCK;
        gx_fail(error, *busy ? GX_ERR_BUSY : GX_ERR_SYSTEM, "%s is held by another gpuexp (pid %ld)", path,
                previous->pid);
        if (!previous->pid)
            snprintf(error->message, sizeof error->message, "%s is held by another gpuexp (pid unknown)", path);
        close(fd);
        return -1;
    }
    if (writable) {
        char line[64];
        int length = snprintf(line, sizeof line, "%ld %llu\n", (long)getpid(), gx_process_start_time(getpid()));
        if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)length, 0) != length) {
            /* the lock holds all the same; only the holder's name is missing from the file */
        }
    }
    return fd;
}

/* Whether the holder a lock file names still runs as itself (same start time) and is not ending
   (a zombie, or SIGKILL pending). A holder recorded without its start time counts by its pid. */
static int holder_runs(const holder *previous)
{
    if (previous->pid <= 0)
        return 1; /* nobody named: the lock is another's all the same */
    unsigned long long now = gx_process_start_time((pid_t)previous->pid);
    if (!now) /* no /proc entry to read: gone, unless the process is only hidden from this user */
        return kill((pid_t)previous->pid, 0) == 0 || errno == EPERM;
    if (previous->start && now != previous->start)
        return 0;
    return !gx_process_ending((pid_t)previous->pid);
}

/* The processes that hold the lock on path's open file description (their fd's fdinfo lists the
   lock: the kernel's word that they hold it, not only the file), ended with SIGKILL. They can only
   be what the lock's holder started (they inherited its descriptor: gx_lock_share), and that
   holder is gone. Writes their pids into ended (up to size). Returns how many. */
static int end_leftover_holders(const char *path, char *ended, size_t size)
{
    struct stat lock_file;
    if (stat(path, &lock_file) != 0)
        return 0;
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(proc))) {
        char *end;
        long pid = strtol(entry->d_name, &end, 10);
        if (*end || pid <= 1 || pid == (long)getpid())
            continue;
        char fds_path[64];
        snprintf(fds_path, sizeof fds_path, "/proc/%ld/fd", pid);
        DIR *fds = opendir(fds_path);
        if (!fds)
            continue;
        int holds = 0;
        struct dirent *fd_entry;
        while (!holds && (fd_entry = readdir(fds))) {
            char fd_path[320], info_path[320], info[2048];
            snprintf(fd_path, sizeof fd_path, "%s/%s", fds_path, fd_entry->d_name);
            struct stat target;
            if (fd_entry->d_name[0] == '.' || stat(fd_path, &target) != 0 || target.st_ino != lock_file.st_ino ||
                target.st_dev != lock_file.st_dev)
                continue;
            snprintf(info_path, sizeof info_path, "fdinfo/%s", fd_entry->d_name);
            gx_process_read_proc((pid_t)pid, info_path, info, sizeof info);
            holds = strstr(info, "lock:") && strstr(info, "FLOCK");
        }
        closedir(fds);
        if (holds && kill((pid_t)pid, SIGKILL) == 0) {
            size_t used = strlen(ended);
            if (used + 24 < size)
                snprintf(ended + used, size - used, "%s%ld", used ? ", " : "", pid);
            count++;
        }
    }
    closedir(proc);
    return count;
}

int gx_lock_take(const char *path, char *note, size_t note_size, gx_error *error)
{
    if (note && note_size)
        note[0] = 0;
    char ended[256] = "";
    double waited = 0;
    /* a holder removes the file as it lets go (gx_lock_release): a lock taken on a name that was
       removed or replaced meanwhile is no lock on the name, so take it again */
    for (int attempt = 0; attempt < 8;) {
        holder previous;
        int busy;
        int fd = lock_once(path, &previous, &busy, error);
        if (fd < 0 && busy && !holder_runs(&previous) && waited < GX_LOCK_LEFTOVER_WAIT_S) {
            /* the holder is gone (or ending) and yet the lock is held: by what it started, which
               inherited it and is being ended by its guards. Wait; after a second, end what still
               holds it (by then a new holder would have written its name in the file) */
            if (waited >= 1)
                end_leftover_holders(path, ended, sizeof ended);
            struct timespec step = {0, 50 * 1000 * 1000};
            nanosleep(&step, NULL);
            waited += 0.05;
            continue;
        }
        if (fd < 0 && busy && !holder_runs(&previous)) {
            snprintf(error->message, sizeof error->message,
                     "%s is held by processes that gpuexp %ld (gone) left running, still there after %g s", path,
                     previous.pid, GX_LOCK_LEFTOVER_WAIT_S);
            return -1;
        }
        if (fd < 0)
            return -1;
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_ino == named.st_ino &&
            held.st_dev == named.st_dev) {
            if (previous.pid > 0 && previous.pid != (long)getpid() && note && note_size)
                snprintf(note, note_size, "took over the lock %s left by process %ld, which is gone%s%s%s", path,
                         previous.pid, ended[0] ? " (ended what it left running: pid " : "", ended,
                         ended[0] ? ")" : "");
            return fd;
        }
        close(fd);
        attempt++;
    }
    return gx_fail(error, GX_ERR_BUSY, "%s keeps changing: other processes are taking and releasing it", path), -1;
}

int gx_lock_share(int fd)
{
    return fcntl(fd, F_SETFD, 0);
}

void gx_lock_release(int fd, const char *path)
{
    /* removed while still held: whoever opens the name next makes a fresh file and locks it */
    unlink(path);
    close(fd);
}
