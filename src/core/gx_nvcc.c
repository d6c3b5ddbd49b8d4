#include "gx_nvcc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gx_cache.h"
#include "gx_process.h"
#include "gx_toolkit.h"

extern char **environ;

static int remove_entry(const char *path, const struct stat *s, int flag, struct FTW *ftw)
{
    (void)s, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The first file in folder whose name ends with suffix, read whole; NULL when none. */
static char *read_first_with_suffix(const char *folder, const char *suffix, size_t *size)
{
    DIR *dir = opendir(folder);
    if (!dir)
        return NULL;
    char *data = NULL;
    size_t suffix_length = strlen(suffix);
    for (struct dirent *entry; !data && (entry = readdir(dir)) != NULL;) {
        size_t length = strlen(entry->d_name);
        if (length <= suffix_length || strcmp(entry->d_name + length - suffix_length, suffix) != 0)
            continue;
        char path[4096];
        gx_error ignored;
        if (snprintf(path, sizeof path, "%s/%s", folder, entry->d_name) >= (int)sizeof path
            || gx_read_file(path, &data, size, &ignored))
            data = NULL;
    }
    closedir(dir);
    return data;
}

static int push(char **argv, int *argc, int capacity, char *text)
{
    if (!text || *argc + 1 >= capacity) {
        free(text);
        return -1;
    }
    argv[(*argc)++] = text;
    argv[*argc] = NULL;
    return 0;
}

static char *format(const char *pattern, const char *value)
{
    char *text;
    return asprintf(&text, pattern, value) < 0 ? NULL : text;
}

/* nvcc options that make it print something or stop early instead of writing the cubin (or that
   run what it built): a compile with them would fail with "cannot open out.cubin". NULL if fine. */
static const char *refused_option(const char *option)
{
    static const char *const refused[] = {"--version", "-V", "--dryrun", "-dryrun", "--help", "-h", "-help",
                                          "--list-gpu-arch", "-arch-ls", "--list-gpu-code", "-code-ls",
                                          "--preprocess", "-E", "--generate-dependencies", "-M", "-MM",
                                          "--generate-nonsystem-dependencies", "--run", "-run", "--lib", "-lib",
                                          "--link", "-link", "--compile", "-c", "--fatbin", "-fatbin",
                                          "--ptx", "-ptx", "--cubin", "-cubin", "--output-file", "-o", NULL};
    for (int i = 0; refused[i]; i++)
        if (strcmp(option, refused[i]) == 0)
            return refused[i];
    return NULL;
}

int gx_nvcc_compile(const gx_compile_request *request, gx_compile_result *result, gx_error *error)
{
    memset(result, 0, sizeof *result);
    for (int i = 0; i < request->option_count; i++) {
        const char *refused = refused_option(request->options[i]);
        if (refused)
            return gx_fail(error, GX_ERR_USAGE,
                           "nvcc option '%s' is not accepted: gpuexp runs nvcc to write one cubin (or PTX) and reads "
                           "it; options that print, stop early, link or choose the output have no place there",
                           refused);
    }
    const gx_toolkit *toolkit = gx_toolkit_get();
    char nvcc[GX_TOOLKIT_PATH];
    if (gx_toolkit_nvcc(toolkit, nvcc, sizeof nvcc, error))
        return error->kind;
    struct stat nvcc_stat;
    char compiler[GX_TOOLKIT_PATH + 64];
    snprintf(compiler, sizeof compiler, "nvcc %s %lld %lld", nvcc,
             stat(nvcc, &nvcc_stat) == 0 ? (long long)nvcc_stat.st_size : 0LL,
             stat(nvcc, &nvcc_stat) == 0 ? (long long)nvcc_stat.st_mtime : 0LL);
    gx_compile_keys(request, compiler, result->key, result->source_key);
    if (gx_compile_cache_load(request, result) == 0)
        return GX_OK;

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    const char *tmp = getenv("TMPDIR");
    char folder[2048];
    if (snprintf(folder, sizeof folder, "%s/gpuexp-nvcc-XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)sizeof folder
        || !mkdtemp(folder))
        return gx_fail(error, GX_ERR_SYSTEM, "nvcc: cannot make a temporary folder in %s: %m", tmp && *tmp ? tmp : "/tmp");
    int ptx_only = strncmp(request->arch, "compute_", 8) == 0;
    int status = GX_OK;
    char source_file[4096], output[4096], log_file[4096];
    snprintf(output, sizeof output, "%s/out.%s", folder, ptx_only ? "ptx" : "cubin");
    snprintf(log_file, sizeof log_file, "%s/nvcc.log", folder);
    if (request->source_path) {
        snprintf(source_file, sizeof source_file, "%s", request->source_path);
    } else {
        const char *base = strrchr(request->source_name, '/');
        base = base ? base + 1 : request->source_name;
        size_t length = strlen(base);
        int is_cu = length > 3 && strcmp(base + length - 3, ".cu") == 0;
        if (snprintf(source_file, sizeof source_file, "%s/%s%s", folder, base, is_cu ? "" : ".cu") >= (int)sizeof source_file)
            base = "source", snprintf(source_file, sizeof source_file, "%s/source.cu", folder);
        if (gx_write_file_atomic(source_file, request->source, strlen(request->source), error)) {
            remove_tree(folder);
            return error->kind;
        }
    }

    enum { CAPACITY = 600 };
    char *argv[CAPACITY] = {0};
    int argc = 0;
    int built = push(argv, &argc, CAPACITY, strdup(nvcc)) || push(argv, &argc, CAPACITY, strdup(ptx_only ? "-ptx" : "-cubin"))
                || push(argv, &argc, CAPACITY, format("-arch=%s", request->arch))
                || (!ptx_only && push(argv, &argc, CAPACITY, strdup("-Xptxas=-v")))
                || push(argv, &argc, CAPACITY, strdup("--keep"))
                || push(argv, &argc, CAPACITY, format("--keep-dir=%s", folder))
                || push(argv, &argc, CAPACITY, strdup("-o")) || push(argv, &argc, CAPACITY, strdup(output))
                || (request->source_directory && push(argv, &argc, CAPACITY, format("-I%s", request->source_directory)));
    for (int i = 0; !built && i < request->include_directory_count; i++)
        built = push(argv, &argc, CAPACITY, format("-I%s", request->include_directories[i]));
    for (int i = 0; !built && i < request->option_count; i++)
        built = push(argv, &argc, CAPACITY, strdup(request->options[i]));
    if (!built)
        built = push(argv, &argc, CAPACITY, strdup(source_file));
    if (built) {
        status = gx_fail(error, GX_ERR_USAGE, "nvcc: too many options");
        goto done;
    }

    /* its own process group, ended with gpuexp's stop signals; the folder goes whatever happened */
    /* and its own temporary files (tmpxft_*) in the folder too: TMPDIR set to it */
    size_t count = 0;
    while (environ[count])
        count++;
    char **environment = calloc(count + 2, sizeof *environment);
    char *tmpdir = format("TMPDIR=%s", folder);
    if (!environment || !tmpdir) {
        free(environment);
        free(tmpdir);
        status = gx_fail(error, GX_ERR_SYSTEM, "out of memory");
        goto done;
    }
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0)
            environment[kept++] = environ[i];
    environment[kept] = tmpdir;
    gx_run_options run_options = {.output = log_file, .error_sink = -1, .environment = environment};
    gx_run_result run;
    int failed = gx_process_run(argv, &run_options, &run, error);
    free(environment);
    free(tmpdir);
    if (failed) {
        status = error->kind;
        goto done;
    }
    if (run.stop) {
        status = gx_fail(error, GX_ERR_INTERRUPTED, "nvcc: interrupted (signal %d) while compiling %s", run.stop,
                         request->source_name);
        goto done;
    }
    size_t log_size = 0;
    gx_error ignored;
    if (gx_read_file(log_file, &result->log, &log_size, &ignored))
        result->log = strdup("");
    if (run.exit_code != 0) {
        char command[1024] = "";
        for (int i = 0; i < argc && strlen(command) + 2 < sizeof command; i++)
            snprintf(command + strlen(command), sizeof command - strlen(command), "%s%s", i ? " " : "", argv[i]);
        status = gx_fail(error, GX_ERR_COMPILE, "nvcc failed (%s %d) for %s (arch %s):\n%s\ncommand: %s",
                         run.exit_code < 128 ? "exit code" : "signal",
                         run.exit_code < 128 ? run.exit_code : run.exit_code - 128,
                         request->source_name, request->arch, result->log ? result->log : "", command);
        goto done;
    }
    size_t size = 0;
    if (ptx_only) {
        result->cubin = calloc(1, 1);
        if (gx_read_file(output, &result->ptx, &size, error)) {
            status = error->kind;
            goto done;
        }
    } else {
        if (gx_read_file(output, &result->cubin, &result->cubin_size, error)) {
            status = error->kind;
            goto done;
        }
        result->ptx = read_first_with_suffix(folder, ".ptx", &size);
        if (!result->ptx)
            result->ptx = strdup("");
    }
    result->lowered_names = strdup("");
    if (!result->cubin || !result->ptx || !result->log || !result->lowered_names) {
        status = gx_fail(error, GX_ERR_SYSTEM, "out of memory");
        goto done;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    result->compile_seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
    gx_compile_cache_store(request, result);
done:
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    remove_tree(folder);
    if (status)
        gx_compile_result_free(result);
    return status;
}
