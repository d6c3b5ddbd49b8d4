/* gx_output.c's system calls, watched (issue 34: the mutants the suite left alive). The test defines
   openat, fsync and renameat itself: the linker takes a program's own definitions before libc's,
   so every call gx_output.c makes comes here, is recorded, may be raced the way another user
   would race it (a name planted or swapped just before the open), and goes on to the kernel.
   Killed here: O_EXCL or O_NOFOLLOW dropped from the temporary's open, O_NOFOLLOW dropped from the
   append's or the in-place open, the fsync before the rename or the folder's after it dropped. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gx_output.h"

#include "check.h"

enum { CALL_OPEN, CALL_FSYNC, CALL_RENAME };
static struct call {
    int what, flags, fd, result;
    char name[256];
    mode_t mode; /* what fsync's fd is (S_IFREG, S_IFDIR) */
} calls[256];
static int call_count;

/* a race to run inside the next open whose name starts with race_prefix and whose flags have
   race_flags: what another user would do between gx_output's check and its open */
static const char *race_prefix;
static int race_flags;
static void (*race)(int dirfd, const char *name);

static struct call *record(int what, const char *name)
{
    struct call *call = &calls[call_count < 255 ? call_count++ : 255];
    memset(call, 0, sizeof *call);
    call->what = what;
    snprintf(call->name, sizeof call->name, "%s", name ? name : "");
    return call;
}

int openat(int dirfd, const char *name, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | __O_TMPFILE)) {
        va_list arguments;
        va_start(arguments, flags);
        mode = va_arg(arguments, mode_t);
        va_end(arguments);
    }
    if (race && strncmp(name, race_prefix, strlen(race_prefix)) == 0 && (flags & race_flags) == race_flags &&
        !(flags & O_PATH)) {
        void (*run)(int, const char *) = race;
        race = NULL;
        run(dirfd, name);
    }
    int fd = (int)syscall(SYS_openat, dirfd, name, flags, mode);
    struct call *call = record(CALL_OPEN, name);
    call->flags = flags;
    call->result = fd;
    return fd;
}

int fsync(int fd)
{
    struct stat info;
    struct call *call = record(CALL_FSYNC, NULL);
    call->fd = fd;
    call->mode = fstat(fd, &info) == 0 ? (info.st_mode & S_IFMT) : 0;
    return (int)syscall(SYS_fsync, fd);
}

int renameat(int from_dir, const char *from, int to_dir, const char *to)
{
    struct call *call = record(CALL_RENAME, from);
    call->result = (int)syscall(SYS_renameat, from_dir, from, to_dir, to);
    snprintf(call->name, sizeof call->name, "%s>%s", from, to);
    return call->result;
}

/* the open that created a temporary (O_CREAT on a .gpuexp- name), or NULL */
static const struct call *temporary_open(void)
{
    for (int i = 0; i < call_count; i++)
        if (calls[i].what == CALL_OPEN && (calls[i].flags & O_CREAT) && strncmp(calls[i].name, ".gpuexp-", 8) == 0 &&
            calls[i].result >= 0)
            return &calls[i];
    return NULL;
}

static char victim[512];
static const char victim_text[] = "precious\n";

static void write_text(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    CHECK(file && fputs(text, file) >= 0 && fclose(file) == 0);
}

static int holds(const char *path, const char *text)
{
    char buffer[512] = "";
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    size_t n = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[n] = 0;
    return strcmp(buffer, text) == 0;
}

/* another user who guessed the temporary's name: a hard link to the victim planted there */
static void plant_hard_link(int dirfd, const char *name)
{
    CHECK(linkat(AT_FDCWD, victim, dirfd, name, 0) == 0);
}
/* another user who swaps the name for a link to the victim between the check and the open */
static void swap_for_link(int dirfd, const char *name)
{
    CHECK(unlinkat(dirfd, name, 0) == 0);
    CHECK(symlinkat(victim, dirfd, name) == 0);
}

/* A file replaced: a temporary opened O_CREAT | O_EXCL | O_NOFOLLOW, fsync'ed, renamed over the
   name, then the folder fsync'ed; a name planted at the temporary's is never opened. */
static void test_replace(const char *dir)
{
    char path[600];
    gx_error error;
    snprintf(path, sizeof path, "%s/out.txt", dir);
    call_count = 0;
    CHECK(gx_output_write(path, "new\n", 4, 0, &error) == GX_OK);
    CHECK(holds(path, "new\n"));
    const struct call *created = temporary_open();
    CHECK(created != NULL);
    if (!created)
        return;
    int flags = created->flags;
    CHECK((flags & O_EXCL) && (flags & O_NOFOLLOW) && (flags & O_CREAT));
    int synced = -1, renamed = -1, folder_synced = -1;
    for (int i = 0; i < call_count; i++) {
        if (calls[i].what == CALL_FSYNC && calls[i].fd == created->result && calls[i].mode == S_IFREG && synced < 0)
            synced = i;
        if (calls[i].what == CALL_RENAME && strstr(calls[i].name, ">out.txt") && renamed < 0)
            renamed = i;
        if (calls[i].what == CALL_FSYNC && calls[i].mode == S_IFDIR && renamed >= 0 && folder_synced < 0)
            folder_synced = i;
    }
    CHECK(synced >= 0 && renamed > synced); /* the data is on disk before the name moves to it */
    CHECK(folder_synced > renamed);         /* and the rename itself after */

    /* the temporary's name guessed and planted (a hard link to the victim): never opened */
    race_prefix = ".gpuexp-", race_flags = O_CREAT, race = plant_hard_link;
    CHECK(gx_output_write(path, "again\n", 6, 0, &error) == GX_OK);
    CHECK(race == NULL);
    CHECK(holds(path, "again\n"));
    CHECK(holds(victim, victim_text));
    char command[700];
    snprintf(command, sizeof command, "find %s -name '.gpuexp-*' -delete", dir);
    CHECK(system(command) == 0);
}

/* A file added to (a resumed CSV): opened O_NOFOLLOW, so a link swapped in at the last moment is
   refused as a link; the victim never written. */
static void test_append(const char *dir)
{
    char path[600];
    gx_error error;
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    write_text(path, "a\n");
    race_prefix = "rows.csv", race_flags = O_APPEND, race = swap_for_link;
    int fd = gx_output_open(path, 1, 0, &error);
    CHECK(race == NULL);
    CHECK(fd < 0);
    if (fd >= 0)
        close(fd);
    CHECK(strstr(error.message, "cannot append to") && strstr(error.message, strerror(ELOOP)));
    CHECK(holds(victim, victim_text));
    unlink(path);
    /* and without a race: added to the end */
    write_text(path, "a\n");
    fd = gx_output_open(path, 1, 0, &error);
    CHECK(fd >= 0 && write(fd, "b\n", 2) == 2 && close(fd) == 0);
    CHECK(holds(path, "a\nb\n"));
}

/* A device named as the output (written in place): opened O_NOFOLLOW, so one swapped for a link
   at the last moment is refused as a link. */
static void test_in_place(const char *dir)
{
    char path[600];
    gx_error error;
    snprintf(path, sizeof path, "%s/null", dir);
    if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) != 0) {
        fprintf(stderr, "note: no device node could be made here (not root): the in-place race is not tested\n");
        return;
    }
    CHECK(gx_output_write(path, "x", 1, GX_OUTPUT_NAMED, &error) == GX_OK);
    CHECK(gx_output_write(path, "x", 1, 0, &error) == GX_ERR_WRITE); /* not named: a device refused */
    CHECK(strstr(error.message, "it is a character device") != NULL);
    race_prefix = "null", race_flags = O_APPEND, race = swap_for_link;
    CHECK(gx_output_write(path, "x", 1, GX_OUTPUT_NAMED, &error) == GX_ERR_WRITE);
    CHECK(race == NULL);
    CHECK(strstr(error.message, strerror(ELOOP)) != NULL);
    CHECK(holds(victim, victim_text));
}

int main(void)
{
    char dir[] = "/tmp/gx_output_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    write_text(victim, victim_text);
    test_replace(dir);
    test_append(dir);
    test_in_place(dir);
    char command[300];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    CHECK(system(command) == 0);
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
