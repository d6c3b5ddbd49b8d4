#include "gx_output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

enum output_kind { OUTPUT_REPLACE, OUTPUT_IN_PLACE };

/* Where an output's name leads: the folder holding its last name (held open), that name, and what
   is there now. */
struct place {
    int folder;              /* O_PATH fd of the folder, -1 when none */
    char name[NAME_MAX + 1]; /* the last name inside it */
    int object;              /* O_PATH fd of what the name is, -1 when nothing has the name yet */
    struct stat info;        /* the object's status */
    int by_proc_link;        /* the last step followed a link of /proc (/dev/stdout: /proc/self/fd/1) */
    int in_proc;             /* the folder is in /proc or /sys: nothing there is replaced */
};

static void place_close(struct place *place)
{
    if (place->object >= 0)
        close(place->object);
    if (place->folder >= 0)
        close(place->folder);
    place->object = place->folder = -1;
}

/* A link is followed only when it belongs to the user running gpuexp or to root: as the kernel's
   protected_symlinks does in sticky folders, and in any folder. */
static int trusted_owner(uid_t owner)
{
    return owner == geteuid() || owner == 0;
}

static int on_file_system(int fd, long magic)
{
    struct statfs info;
    return fstatfs(fd, &info) == 0 && (long)info.f_type == magic;
}

/* The folder part of path, for messages ("." when none). */
static void folder_of(const char *path, char *folder, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(folder, size, ".");
    else
        snprintf(folder, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* shown: the names walked so far, as the user would write them, to name a link in a message */
static void shown_add(char *shown, size_t size, const char *component)
{
    size_t length = strlen(shown);
    if (length && shown[length - 1] != '/' && length + 1 < size)
        shown[length++] = '/', shown[length] = 0;
    snprintf(shown + length, size - length, "%s", component);
}

/* Finds path's place one name at a time, each opened with O_PATH | O_NOFOLLOW: a symbolic link is
   followed only when it belongs to this user or root (its text put in front of the rest of the
   path; a link of /proc, whose text names no path, followed by the kernel, one step), anything
   else refused naming the link. verb leads every message ("cannot write x"). folder_wanted: the
   last name must be a folder or nothing (gx_output_folder); make_parents: a missing folder on the
   way is made (mode 0777 less the umask). */
static int walk(const char *path, const char *verb, int folder_wanted, int make_parents, struct place *place,
                gx_error *error)
{
    place->folder = place->object = -1;
    place->by_proc_link = place->in_proc = 0;
    place->name[0] = 0;
    if (!path[0])
        return gx_fail(error, GX_ERR_WRITE, "%s: the name is empty", verb);
    size_t path_length = strlen(path);
    if (path_length >= PATH_MAX)
        return gx_fail(error, GX_ERR_WRITE, "%.80s...: %s", verb, strerror(ENAMETOOLONG));
    if (!folder_wanted && path[path_length - 1] == '/')
        return gx_fail(error, GX_ERR_WRITE, "%s: it names a folder; name a file", verb);
    char rest[2 * PATH_MAX + 2], shown[PATH_MAX] = "", component[NAME_MAX + 1];
    snprintf(rest, sizeof rest, "%s", path);
    int folder = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (folder < 0)
        return gx_fail(error, GX_ERR_WRITE, "%s: %s", verb, strerror(errno));
    if (path[0] == '/')
        snprintf(shown, sizeof shown, "/");
    int links = 0, last_from_link = 0;
    const char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 0) { /* "/" or "./" alone: the folder itself */
            close(folder);
            return gx_fail(error, GX_ERR_WRITE, "%s: it is a folder; name a file", verb);
        }
        if (n > NAME_MAX) {
            close(folder);
            return gx_fail(error, GX_ERR_WRITE, "%s: %s", verb, strerror(ENAMETOOLONG));
        }
        memcpy(component, p, n);
        component[n] = 0;
        p += n;
        while (*p == '/')
            p++;
        int last = !*p;
        size_t shown_before = strlen(shown);
        shown_add(shown, sizeof shown, component);
        int fd = openat(folder, component, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && make_parents && !last &&
            (mkdirat(folder, component, 0777) == 0 || errno == EEXIST))
            fd = openat(folder, component, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            int saved = errno;
            char parent[PATH_MAX];
            folder_of(path, parent, sizeof parent);
            if (saved == ENOENT && last && last_from_link) {
                close(folder);
                return gx_fail(error, GX_ERR_WRITE,
                               "%s: it is a symbolic link to a file that does not exist; not followed", verb);
            }
            if (saved == ENOENT && last) { /* a new name */
                place->folder = folder;
                snprintf(place->name, sizeof place->name, "%s", component);
                place->in_proc = on_file_system(folder, PROC_SUPER_MAGIC) || on_file_system(folder, SYSFS_MAGIC);
                return GX_OK;
            }
            close(folder);
            if (saved == ENOENT)
                return gx_fail(error, GX_ERR_WRITE, "%s: the folder %s does not exist (it is not created)", verb,
                               folder_wanted ? shown : parent);
            return gx_fail(error, GX_ERR_WRITE, "%s: %s", verb, strerror(saved));
        }
        struct stat info;
        if (fstat(fd, &info) != 0) {
            int saved = errno;
            close(fd), close(folder);
            return gx_fail(error, GX_ERR_WRITE, "%s: %s", verb, strerror(saved));
        }
        int by_proc_link = 0;
        if (S_ISLNK(info.st_mode)) {
            if (!trusted_owner(info.st_uid)) {
                close(fd), close(folder);
                if (strcmp(shown, path) == 0)
                    return gx_fail(error, GX_ERR_WRITE,
                                   "%s: it is a symbolic link that belongs to another user (uid %ld); not followed "
                                   "(name its target, or remove the link)",
                                   verb, (long)info.st_uid);
                return gx_fail(error, GX_ERR_WRITE,
                               "%s: %s is a symbolic link that belongs to another user (uid %ld); not followed (name "
                               "its target, or remove the link)",
                               verb, shown, (long)info.st_uid);
            }
            if (++links > 40) {
                close(fd), close(folder);
                return gx_fail(error, GX_ERR_WRITE, "%s: %s", verb, strerror(ELOOP));
            }
            if (on_file_system(fd, PROC_SUPER_MAGIC)) {
                /* /proc/self/fd/1 reads "pipe:[...]": no path, so the kernel follows it, this one step */
                close(fd);
                fd = openat(folder, component, O_PATH | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &info) != 0) {
                    int saved = errno;
                    if (fd >= 0)
                        close(fd);
                    close(folder);
                    return gx_fail(error, GX_ERR_WRITE, "%s: %s", verb, strerror(saved));
                }
                by_proc_link = 1;
            } else {
                char target[PATH_MAX], joined[sizeof rest];
                ssize_t length = readlinkat(fd, "", target, sizeof target - 1);
                close(fd);
                if (length <= 0) {
                    close(folder);
                    return gx_fail(error, GX_ERR_WRITE, "%s: cannot read the link %s", verb, shown);
                }
                target[length] = 0;
                if (snprintf(joined, sizeof joined, "%s%s%s", target, *p ? "/" : "", p) >= (int)sizeof joined) {
                    close(folder);
                    return gx_fail(error, GX_ERR_WRITE, "%.80s...: %s", verb, strerror(ENAMETOOLONG));
                }
                memcpy(rest, joined, strlen(joined) + 1);
                p = rest;
                last_from_link = last_from_link || last;
                if (target[0] == '/') {
                    close(folder);
                    folder = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                    if (folder < 0)
                        return gx_fail(error, GX_ERR_WRITE, "%s: %s", verb, strerror(errno));
                    snprintf(shown, sizeof shown, "/");
                } else {
                    shown[shown_before] = 0;
                }
                continue;
            }
        }
        if (S_ISDIR(info.st_mode) && !last) {
            close(folder);
            folder = fd;
            continue;
        }
        if (!last) {
            close(fd), close(folder);
            return gx_fail(error, GX_ERR_WRITE, "%s: %s is not a folder", verb, shown);
        }
        if (S_ISDIR(info.st_mode) != folder_wanted) {
            close(fd), close(folder);
            return gx_fail(error, GX_ERR_WRITE,
                           folder_wanted ? "%s: a file of that name is there" : "%s: it is a folder; name a file",
                           verb);
        }
        place->folder = folder;
        place->object = fd;
        place->info = info;
        place->by_proc_link = by_proc_link;
        place->in_proc = on_file_system(folder, PROC_SUPER_MAGIC) || on_file_system(folder, SYSFS_MAGIC);
        snprintf(place->name, sizeof place->name, "%s", component);
        return GX_OK;
    }
}

static const char *kind_of(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
                            : "not a regular file";
}

/* Where path's bytes go and how: replaced (a regular file or a new name in place->folder) or
   written in place (a device, a FIFO, /dev/stdout; only a name the user gave). */
static int resolve(const char *path, int flags, struct place *place, enum output_kind *kind, gx_error *error)
{
    char verb[PATH_MAX + 32];
    snprintf(verb, sizeof verb, "cannot write %s", path);
    if (walk(path, verb, 0, 0, place, error))
        return error->kind;
    mode_t mode = place->info.st_mode;
    if (place->object < 0 || (S_ISREG(mode) && !place->by_proc_link && !place->in_proc)) {
        *kind = OUTPUT_REPLACE;
        return GX_OK;
    }
    *kind = OUTPUT_IN_PLACE;
    if (!(flags & GX_OUTPUT_NAMED) && !S_ISREG(mode)) {
        place_close(place);
        return gx_fail(error, GX_ERR_WRITE,
                       "%s: it is %s; gpuexp writes a device or a FIFO only where it is the output named, never at "
                       "a file name it makes up (remove it)",
                       verb, kind_of(mode));
    }
    if ((S_ISFIFO(mode) || S_ISSOCK(mode)) && !trusted_owner(place->info.st_uid)) {
        uid_t owner = place->info.st_uid;
        place_close(place);
        return gx_fail(error, GX_ERR_WRITE, "%s: it is %s that belongs to another user (uid %ld); not written", verb,
                       kind_of(mode), (long)owner);
    }
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

/* Opens the node found at place for writing at its end: a FIFO without blocking (nothing reading it
   within GX_OUTPUT_FIFO_WAIT_MS: refused, an unattended run never waits for ever), then blocking as
   a shell's > would write. The node opened must be the one checked. The fd, or -1 with *error. */
static int open_in_place(const char *path, const struct place *place, gx_error *error)
{
    int flags = O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC | (place->by_proc_link ? 0 : O_NOFOLLOW);
    int fifo = S_ISFIFO(place->info.st_mode), fd;
    for (int waited_ms = 0;; waited_ms += 10) {
        fd = openat(place->folder, place->name, flags | (fifo ? O_NONBLOCK : 0));
        if (fd >= 0 || errno != ENXIO || !fifo || waited_ms >= GX_OUTPUT_FIFO_WAIT_MS)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    if (fd < 0 && errno == ENXIO && fifo)
        return gx_fail(error, GX_ERR_WRITE,
                       "cannot write %s: it is a FIFO that nothing reads (waited %d s); not written (a run never "
                       "waits for a reader)",
                       path, GX_OUTPUT_FIFO_WAIT_MS / 1000),
               -1;
    if (fd < 0)
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(errno)), -1;
    struct stat opened;
    if (fstat(fd, &opened) != 0 || opened.st_dev != place->info.st_dev || opened.st_ino != place->info.st_ino) {
        close(fd);
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: it was replaced while it was opened; not written", path),
               -1;
    }
    if (fifo)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* Creates a unique temporary in place's folder: its fd, with its name in temporary, or -1. */
static int create_temporary(const char *path, const struct place *place, char *temporary, size_t size, gx_error *error)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long seed = (unsigned long)now.tv_nsec ^ ((unsigned long)getpid() << 16);
    for (int attempt = 0; attempt < 100; attempt++) {
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        snprintf(temporary, size, ".gpuexp-%08lx.tmp", (seed >> 20) & 0xfffffffful);
        int fd = openat(place->folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            if (place->object >= 0 && fchmod(fd, place->info.st_mode & 07777) != 0) {
                /* the mode of the file replaced is a courtesy: the umask's stays */
            }
            return fd;
        }
        if (errno == EEXIST)
            continue;
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(errno)), -1;
    }
    return gx_fail(error, GX_ERR_WRITE, "cannot write %s: no free temporary name beside it", path), -1;
}

/* Renames the written temporary over the name and makes the rename durable. */
static int replace_with(const char *path, const struct place *place, const char *temporary, int fd, gx_error *error)
{
    int saved = 0;
    if (fsync(fd) != 0 && errno != EINVAL)
        saved = errno;
    if (close(fd) != 0 && !saved)
        saved = errno;
    if (!saved && renameat(place->folder, temporary, place->folder, place->name) != 0)
        saved = errno;
    if (saved) {
        unlinkat(place->folder, temporary, 0);
        return gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(saved));
    }
    int folder_fd = openat(place->folder, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder_fd >= 0) {
        fsync(folder_fd); /* best effort: some file systems refuse it */
        close(folder_fd);
    }
    return GX_OK;
}

int gx_output_write(const char *path, const void *data, size_t size, int flags, gx_error *error)
{
    struct place place;
    enum output_kind kind;
    char temporary[64];
    if (resolve(path, flags, &place, &kind, error))
        return error->kind;
    int fd = kind == OUTPUT_IN_PLACE ? open_in_place(path, &place, error)
                                     : create_temporary(path, &place, temporary, sizeof temporary, error);
    if (fd < 0) {
        place_close(&place);
        return error->kind;
    }
    int status = GX_OK;
    if (kind == OUTPUT_IN_PLACE) {
        int failed = write_all(fd, data, size) != 0;
        int saved = errno;
        if (close(fd) != 0 && !failed) {
            failed = 1;
            saved = errno;
        }
        if (failed)
            status = gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(saved));
    } else if (write_all(fd, data, size) != 0) {
        int saved = errno;
        close(fd);
        unlinkat(place.folder, temporary, 0);
        status = gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(saved));
    } else {
        status = replace_with(path, &place, temporary, fd, error);
    }
    place_close(&place);
    return status;
}

/* Opens the regular file found at place to add to its end, refused when another name shares it. */
static int open_to_append(const char *path, const struct place *place, gx_error *error)
{
    int fd = openat(place->folder, place->name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    struct stat opened;
    if (fd < 0)
        return gx_fail(error, GX_ERR_WRITE, "cannot append to %s: %s", path, strerror(errno)), -1;
    if (fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_ino != place->info.st_ino ||
        opened.st_dev != place->info.st_dev) {
        close(fd);
        return gx_fail(error, GX_ERR_WRITE, "cannot append to %s: it was replaced while it was opened", path), -1;
    }
    if (opened.st_nlink > 1) {
        close(fd);
        return gx_fail(error, GX_ERR_WRITE,
                       "cannot append to %s: it has %ld hard links, so another name could have a second writer; "
                       "copy it to a file of its own",
                       path, (long)opened.st_nlink),
               -1;
    }
    return fd;
}

int gx_output_open(const char *path, int append, int flags, gx_error *error)
{
    struct place place;
    enum output_kind kind;
    char temporary[64];
    if (resolve(path, flags, &place, &kind, error))
        return -1;
    int fd;
    if (kind == OUTPUT_IN_PLACE) {
        fd = open_in_place(path, &place, error);
    } else if (append && place.object >= 0) {
        fd = open_to_append(path, &place, error);
    } else {
        /* a fresh file under the name: an empty temporary renamed over it now, then written in place */
        fd = create_temporary(path, &place, temporary, sizeof temporary, error);
        if (fd >= 0 && renameat(place.folder, temporary, place.folder, place.name) != 0) {
            int saved = errno;
            close(fd);
            unlinkat(place.folder, temporary, 0);
            gx_fail(error, GX_ERR_WRITE, "cannot write %s: %s", path, strerror(saved));
            fd = -1;
        }
    }
    place_close(&place);
    return fd;
}

int gx_output_check(const char *path, int flags, gx_error *error)
{
    struct place place;
    enum output_kind kind;
    if (resolve(path, flags, &place, &kind, error))
        return error->kind;
    place_close(&place);
    return GX_OK;
}

int gx_output_folder(const char *path, int parents, gx_error *error)
{
    struct place place;
    char verb[PATH_MAX + 32];
    snprintf(verb, sizeof verb, "cannot make the folder %s", path);
    if (!path[0])
        return gx_fail(error, GX_ERR_WRITE, "cannot make a folder with an empty name");
    if (walk(path, verb, 1, parents, &place, error))
        return error->kind;
    int status = GX_OK;
    if (place.object < 0 && mkdirat(place.folder, place.name, 0777) != 0 && errno != EEXIST)
        status = gx_fail(error, GX_ERR_WRITE, "%s: %s", verb, strerror(errno));
    place_close(&place);
    return status;
}

static int stdout_exit_code = 7;

static void check_stdout(void)
{
    /* an earlier write that failed set the stream's error; what is still buffered is flushed now. A
       closed stream (>&-) that was never written is no lost output. */
    int failed = ferror(stdout) != 0, saved = 0, pending = __fpending(stdout) > 0;
    if (fflush(stdout) != 0 && (pending || errno != EBADF)) {
        failed = 1;
        saved = errno;
    }
    if (!failed)
        return;
    fprintf(stderr, "gpuexp: cannot write the standard output: %s; what was printed is incomplete\n",
            saved ? strerror(saved) : "a write to it failed");
    _exit(stdout_exit_code);
}

void gx_output_check_stdout_at_exit(int exit_code)
{
    stdout_exit_code = exit_code;
    atexit(check_stdout);
}
