#include "gx_paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_directory(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}

static int is_file(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

int gx_data_directory(char *out, size_t size)
{
    char executable[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length > 0) {
        executable[length] = 0;
        char *slash = strrchr(executable, '/');
        if (slash) {
            *slash = 0; /* BIN */
            char candidate[PATH_MAX + 32];
            snprintf(candidate, sizeof candidate, "%s/../share/gpuexp", executable);
            char resolved[PATH_MAX];
            if (is_directory(candidate) && realpath(candidate, resolved)) {
                snprintf(out, size, "%s", resolved);
                return 1;
            }
            /* a binary in a build folder of its source tree, wherever the tree was moved or copied */
            snprintf(candidate, sizeof candidate, "%s/../experiments", executable);
            if (is_directory(candidate) && realpath(candidate, resolved)) {
                *strrchr(resolved, '/') = 0;
                snprintf(out, size, "%s", resolved);
                return 1;
            }
        }
    }
#ifdef GX_SOURCE_DIR
    if (is_directory(GX_SOURCE_DIR "/experiments")) { /* a binary in its build tree */
        snprintf(out, size, "%s", GX_SOURCE_DIR);
        return 1;
    }
#endif
    return 0;
}

int gx_find_experiment(const char *name, char *out, size_t size)
{
    char data[PATH_MAX];
    if (!gx_data_directory(data, sizeof data))
        return 0;
    size_t n = strlen(name);
    const char *suffix = n > 4 && strcmp(name + n - 4, ".lua") == 0 ? "" : ".lua";
    char candidate[2 * PATH_MAX];
    snprintf(candidate, sizeof candidate, "%s/experiments/%s%s", data, name, suffix);
    if (!is_file(candidate))
        return 0;
    snprintf(out, size, "%s", candidate);
    return 1;
}
