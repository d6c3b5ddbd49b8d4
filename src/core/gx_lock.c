#include "gx_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* One attempt: the locked fd, or -1 with *error. */
static int lock_once(const char *path, char *note, size_t note_size, gx_error *error)
{
    if (note && note_size)
        note[0] = 0;
    /* readable and writable by everyone: a lock left by one user never shuts out another */
    /* never through a link: one planted at the lock's name in a shared folder would have its
       target truncated and written (the holder's pid) */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0666);
    struct stat opened;
    if (fd >= 0 && (fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode))) {
        close(fd);
        gx_fail(error, GX_ERR_SYSTEM, "cannot use the lock file %s: it is not a regular file", path);
        return -1;
    }
    int writable = fd >= 0;
    if (fd >= 0)
        fchmod(fd, 0666); /* whatever the umask */
    else if (errno == EACCES)
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* another user's file: flock works on it all the same */
    if (fd < 0 && errno == ELOOP) {
        gx_fail(error, GX_ERR_SYSTEM, "cannot use the lock file %s: it is a symbolic link (not followed); remove it",
                path);
        return -1;
    }
    if (fd < 0) {
        gx_fail(error, GX_ERR_SYSTEM, "cannot open the lock file %s: %s", path, strerror(errno));
        return -1;
    }
    char holder[64] = "";
    ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
    holder[n > 0 ? n : 0] = 0;
    holder[strcspn(holder, "\n")] = 0;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        gx_fail(error, errno == EWOULDBLOCK ? GX_ERR_BUSY : GX_ERR_SYSTEM, "%s is held by another gpuexp (pid %s)", path,
                holder[0] ? holder : "unknown");
        close(fd);
        return -1;
    }
    long previous = atol(holder);
    if (previous > 0 && previous != (long)getpid() && note && note_size)
        snprintf(note, note_size, "took over the lock %s left by process %ld, which is gone", path, previous);
    if (writable) {
        char pid[32];
        int length = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)length, 0) != length) {
            /* the lock holds all the same; only the holder's pid is missing from the file */
        }
    }
    return fd;
}

int gx_lock_take(const char *path, char *note, size_t note_size, gx_error *error)
{
    /* a holder removes the file as it lets go (gx_lock_release): a lock taken on a name that was
       removed or replaced meanwhile is no lock on the name, so take it again */
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = lock_once(path, note, note_size, error);
        if (fd < 0)
            return -1;
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_ino == named.st_ino && held.st_dev == named.st_dev)
            return fd;
        close(fd);
    }
    return gx_fail(error, GX_ERR_BUSY, "%s keeps changing: other processes are taking and releasing it", path), -1;
}

void gx_lock_release(int fd, const char *path)
{
    /* removed while still held: whoever opens the name next makes a fresh file and locks it */
    unlink(path);
    close(fd);
}
