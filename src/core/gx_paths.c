#include "gx_paths.h"
#include "gx_files.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

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
            if (gx_is_directory(candidate) && realpath(candidate, resolved)) {
                snprintf(out, size, "%s", resolved);
                return 1;
            }
            /* a binary in a build folder of its source tree, wherever the tree was moved or copied */
            snprintf(candidate, sizeof candidate, "%s/../experiments", executable);
            if (gx_is_directory(candidate) && realpath(candidate, resolved)) {
                *strrchr(resolved, '/') = 0;
                snprintf(out, size, "%s", resolved);
                return 1;
            }
        }
    }
#ifdef GX_SOURCE_DIR
    if (gx_is_directory(GX_SOURCE_DIR "/experiments")) { /* a binary in its build tree */
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
    if (!gx_is_file(candidate))
        return 0;
    snprintf(out, size, "%s", candidate);
    return 1;
}

/* Adds folder's *.lua files (as PREFIX NAME, without .lua) to names; one level of subfolders. */
static int add_experiments(const char *folder, const char *prefix, int depth, char *names, size_t names_size, int have,
                           int max)
{
    DIR *directory = opendir(folder);
    if (!directory)
        return have;
    struct dirent *entry;
    while (have < max && (entry = readdir(directory))) {
        if (entry->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", folder, entry->d_name);
        size_t n = strlen(entry->d_name);
        if (n > 4 && strcmp(entry->d_name + n - 4, ".lua") == 0 && gx_is_file(path)) {
            snprintf(names + (size_t)have * names_size, names_size, "%s%.*s", prefix, (int)(n - 4), entry->d_name);
            have++;
        } else if (depth == 0 && gx_is_directory(path)) {
            char inner[256];
            snprintf(inner, sizeof inner, "%s/", entry->d_name);
            have = add_experiments(path, inner, 1, names, names_size, have, max);
        }
    }
    closedir(directory);
    return have;
}

int gx_experiment_names(char *names, size_t names_size, int max)
{
    char data[PATH_MAX], folder[PATH_MAX + 16];
    if (!gx_data_directory(data, sizeof data))
        return 0;
    snprintf(folder, sizeof folder, "%s/experiments", data);
    return add_experiments(folder, "", 0, names, names_size, 0, max);
}
