#include "gx_output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum output_kind { OUTPUT_REPLACE, OUTPUT_IN_PLACE };

/* Where path's bytes go: target (path, or the regular file a trusted link leads to) and whether it
   is replaced or written in place. *existing: the regular file replaced (its mode is kept), if any. */
static int resolve(const char *path, char *target, size_t target_size, enum output_kind *kind, struct stat *existing,
                   int *exists, gx_error *error)
{
    *exists = 0;
    if (!path[0])
        return gx_fail(error, GX_ERR_WRITE, "cannot write an output with an empty name");
    if (strlen(path) >= target_size)
        return gx_fail(error, GX_ERR_WRITE, "cannot write %.80s...: the name is too long", path);
    snprintf(target, target_size, "%s", path);
    struct stat named, followed;
    if (lstat(path, &named) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            *kind = OUTPUT_REPLACE;
            return GX_OK;
        }
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(errno));
    }
    int followed_ok = stat(path, &followed) == 0;
    if (S_ISDIR(named.st_mode) || (followed_ok && S_ISDIR(followed.st_mode)))
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: it is a folder; name a file", path);
    if (!S_ISLNK(named.st_mode)) {
        *kind = S_ISREG(named.st_mode) ? OUTPUT_REPLACE : OUTPUT_IN_PLACE;
        *existing = named;
        *exists = S_ISREG(named.st_mode);
        return GX_OK;
    }
    if (!followed_ok)
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: it is a symbolic link to %s; not followed", path,
                       errno == ENOENT ? "a file that does not exist" : strerror(errno));
    /* a device or a pipe through a link (/dev/stdout, /dev/fd/N), or standard output redirected
       to a file: written in place, as a shell's > would */
    char link[PATH_MAX];
    ssize_t length = readlink(path, link, sizeof link - 1);
    link[length > 0 ? length : 0] = 0;
    if (!S_ISREG(followed.st_mode) || strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0
        || strncmp(link, "/proc/", 6) == 0) {
        *kind = OUTPUT_IN_PLACE;
        return GX_OK;
    }
    if (named.st_uid != geteuid() && named.st_uid != 0)
        return gx_fail(error, GX_ERR_WRITE,
                       "cannot write %s: it is a symbolic link that belongs to another user (uid %ld); not followed "
                       "(name its target, or remove the link)",
                       path, (long)named.st_uid);
    char resolved[PATH_MAX];
    if (!realpath(path, resolved) || strlen(resolved) >= target_size)
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: cannot resolve its link: %s", path, strerror(errno));
    snprintf(target, target_size, "%s", resolved);
    *kind = OUTPUT_REPLACE;
    *existing = followed;
    *exists = 1;
    return GX_OK;
}

static int write_all(int fd, const char *data, size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

/* Creates a unique temporary beside target: its fd, with its name in temporary, or -1. */
static int create_temporary(const char *path, const char *target, char *temporary, size_t size,
                            const struct stat *existing, int exists, gx_error *error)
{
    const char *slash = strrchr(target, '/');
    int dir_length = slash ? (int)(slash - target) : 1;
    const char *dir = slash ? (slash == target ? "/" : target) : ".";
    if (slash == target)
        dir_length = 1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long seed = (unsigned long)now.tv_nsec ^ ((unsigned long)getpid() << 16);
    for (int attempt = 0; attempt < 100; attempt++) {
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        if (snprintf(temporary, size, "%.*s/.gpuexp-%08lx.tmp", dir_length, dir, (seed >> 20) & 0xfffffffful)
            >= (int)size)
            return gx_fail(error, GX_ERR_WRITE, "cannot write %s: the name is too long", path), -1;
        int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            if (exists && fchmod(fd, existing->st_mode & 07777) != 0) {
                /* the mode of the file replaced is a courtesy: the umask's stays */
            }
            return fd;
        }
        if (errno == EEXIST)
            continue;
        if (errno == ENOENT || errno == ENOTDIR)
            return gx_fail(error, GX_ERR_WRITE, "cannot write %s: the folder %.*s does not exist (it is not created)",
                           path, dir_length, dir),
                   -1;
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(errno)), -1;
    }
    return gx_fail(error, GX_ERR_WRITE, "cannot write %s: no free temporary name beside it", path), -1;
}

/* Renames the written temporary over target and makes the rename durable. */
static int replace_with(const char *path, const char *temporary, const char *target, int fd, gx_error *error)
{
    int saved = 0;
    if (fsync(fd) != 0 && errno != EINVAL)
        saved = errno;
    if (close(fd) != 0 && !saved)
        saved = errno;
    if (!saved && rename(temporary, target) != 0)
        saved = errno;
    if (saved) {
        unlink(temporary);
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(saved));
    }
    char dir[PATH_MAX];
    const char *slash = strrchr(target, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (slash == target ? 1 : (int)(slash - target)) : 1, slash ? target : ".");
    int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        fsync(dir_fd); /* best effort: some file systems refuse it */
        close(dir_fd);
    }
    return GX_OK;
}

int gx_output_write(const char *path, const void *data, size_t size, gx_error *error)
{
    char target[PATH_MAX], temporary[PATH_MAX + 32];
    enum output_kind kind;
    struct stat existing;
    int exists;
    if (resolve(path, target, sizeof target, &kind, &existing, &exists, error))
        return error->kind;
    if (kind == OUTPUT_IN_PLACE) {
        int fd = open(target, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
            return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(errno));
        int failed = write_all(fd, data, size) != 0;
        int saved = errno;
        if (close(fd) != 0 && !failed) {
            failed = 1;
            saved = errno;
        }
        return failed ? gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(saved)) : GX_OK;
    }
    int fd = create_temporary(path, target, temporary, sizeof temporary, &existing, exists, error);
    if (fd < 0)
        return error->kind;
    if (write_all(fd, data, size) != 0) {
        int saved = errno;
        close(fd);
        unlink(temporary);
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(saved));
    }
    return replace_with(path, temporary, target, fd, error);
}

int gx_output_open(const char *path, int append, gx_error *error)
{
    char target[PATH_MAX], temporary[PATH_MAX + 32];
    enum output_kind kind;
    struct stat existing;
    int exists;
    if (resolve(path, target, sizeof target, &kind, &existing, &exists, error))
        return -1;
    if (kind == OUTPUT_IN_PLACE) {
        int fd = open(target, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
            gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(errno));
        return fd;
    }
    if (append && exists) {
        int fd = open(target, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        struct stat opened;
        if (fd < 0)
            return gx_fail(error, GX_ERR_WRITE, "cannot append to %s: %s", path, strerror(errno)), -1;
        if (fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_nlink > 1) {
            close(fd);
            return gx_fail(error, GX_ERR_WRITE,
                           "cannot append to %s: it has %ld hard links, so another name could have a second writer; "
                           "copy it to a file of its own",
                           path, (long)opened.st_nlink),
                   -1;
        }
        return fd;
    }
    /* a fresh file under the name: an empty temporary renamed over it now, then written in place */
    int fd = create_temporary(path, target, temporary, sizeof temporary, &existing, exists, error);
    if (fd < 0)
        return -1;
    if (rename(temporary, target) != 0) {
        int saved = errno;
        close(fd);
        unlink(temporary);
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(saved)), -1;
    }
    return fd;
}

int gx_output_folder(const char *path, gx_error *error)
{
    if (!path[0])
        return gx_fail(error, GX_ERR_WRITE, "cannot make a folder with an empty name");
    if (mkdir(path, 0777) == 0)
        return GX_OK;
    int saved = errno;
    struct stat info;
    if (saved == EEXIST && stat(path, &info) == 0 && S_ISDIR(info.st_mode))
        return GX_OK;
    if (saved == EEXIST)
        return gx_fail(error, GX_ERR_WRITE, "cannot make the folder %s: a file of that name is there", path);
    if (saved == ENOENT)
        return gx_fail(error, GX_ERR_WRITE, "cannot make the folder %s: the folder it goes in does not exist (it is not "
                                            "created)", path);
    return gx_fail(error, GX_ERR_WRITE, "cannot make the folder %s: %s", path, strerror(saved));
}
