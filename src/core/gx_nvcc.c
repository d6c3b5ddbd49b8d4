#include "gx_clock.h"
#include "gx_nvcc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gx_files.h"
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
        if (snprintf(path, sizeof path, "%s/%s", folder, entry->d_name) >= (int)sizeof path ||
            gx_read_file(path, &data, size, &ignored))
            data = NULL;
    }
    closedir(dir);
    return data;
}

enum { ARGV_CAPACITY = 600 }; /* arguments of an nvcc command line */

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

/* Runs argv (nvcc) through the spawn helper (its own process group, ended with gpuexp's stop
   signals) with its output into log_file and TMPDIR set to log_file's folder, so its own tmpxft_*
   files go with that folder. *exit_code: its code, 128 + N when signal N ended it. */
static int run_nvcc(char **argv, const char *log_file, int *exit_code, gx_error *error)
{
    char tmpdir[4200];
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", log_file);
    char *slash = strrchr(tmpdir, '/');
    if (slash && slash > tmpdir + 7)
        *slash = 0;
    size_t count = 0;
    while (environ[count])
        count++;
    char **environment = calloc(count + 2, sizeof *environment);
    if (!environment)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0)
            environment[kept++] = environ[i];
    environment[kept] = tmpdir;
    gx_run_options options = {.output = log_file, .error_sink = -1, .environment = environment};
    gx_run_result run;
    int status = gx_process_run(argv, &options, &run, error);
    free(environment);
    if (status)
        return status;
    if (run.stop)
        return gx_fail(error, GX_ERR_INTERRUPTED, "nvcc: interrupted by signal %d", run.stop);
    *exit_code = run.exit_code;
    return GX_OK;
}

/* nvcc options that make it print something or stop early instead of writing the cubin (or that
   run what it built): a compile with them would fail with "cannot open out.cubin". NULL if fine. */
static const char *refused_option(const char *option)
{
    static const char *const refused[] = {"--version",
                                          "-V",
                                          "--dryrun",
                                          "-dryrun",
                                          "--help",
                                          "-h",
                                          "-help",
                                          "--list-gpu-arch",
                                          "-arch-ls",
                                          "--list-gpu-code",
                                          "-code-ls",
                                          "--preprocess",
                                          "-E",
                                          "--generate-dependencies",
                                          "-M",
                                          "-MM",
                                          "--generate-nonsystem-dependencies",
                                          "--run",
                                          "-run",
                                          "--lib",
                                          "-lib",
                                          "--link",
                                          "-link",
                                          "--compile",
                                          "-c",
                                          "--fatbin",
                                          "-fatbin",
                                          "--ptx",
                                          "-ptx",
                                          "--cubin",
                                          "-cubin",
                                          "--output-file",
                                          "-o",
                                          NULL};
    for (int i = 0; refused[i]; i++)
        if (strcmp(option, refused[i]) == 0)
            return refused[i];
    return NULL;
}

/* One compile's files: a temporary folder of its own (in $TMPDIR) for the output, nvcc's log and
   its kept files, and the source (the request's file, or the text written into the folder). */
typedef struct nvcc_files {
    char folder[2048], source[4096], output[4096], log[4096];
    int ptx_only; /* a compute_XY architecture: PTX is the output */
} nvcc_files;

/* nvcc has no name expressions: the file nvcc compiles is a wrapper that includes the source and
   takes the address of each requested name in a __device__ variable, so nvcc instantiates it in
   the very cubin gpuexp loads (a template the host code never instantiates was missing from it),
   and the PTX names its mangled symbol ("gpuexp_name_3 = _Z7reduce6IiLj256ELb1EEvPT_S1_j;"). */
static int write_names_wrapper(const gx_compile_request *request, nvcc_files *files, gx_error *error)
{
    char absolute[4096], wrapper[4096];
    if (!realpath(files->source, absolute))
        return gx_fail(error, GX_ERR_SYSTEM, "nvcc: cannot resolve %s: %m", files->source);
    snprintf(wrapper, sizeof wrapper, "%s/gpuexp_names.cu", files->folder);
    size_t capacity = 256 + strlen(absolute);
    for (int i = 0; i < request->name_expression_count; i++)
        capacity += strlen(request->name_expressions[i]) + 96;
    char *text = malloc(capacity);
    if (!text)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    size_t used = (size_t)snprintf(text, capacity, "#include \"%s\"\n", absolute);
    for (int i = 0; i < request->name_expression_count; i++)
        used += (size_t)snprintf(text + used, capacity - used, "__device__ void *gpuexp_name_%d = (void *)&%s;\n", i,
                                 request->name_expressions[i]);
    int status = gx_write_file_atomic(wrapper, text, used, error);
    free(text);
    if (status == GX_OK)
        snprintf(files->source, sizeof files->source, "%s", wrapper);
    return status;
}

/* The lowered names from the PTX of the wrapper, in NVRTC's form ("expression\tsymbol\n" each). */
static int read_lowered_names(const gx_compile_request *request, gx_compile_result *result, gx_error *error)
{
    size_t names_capacity = 1;
    for (int i = 0; i < request->name_expression_count; i++)
        names_capacity += strlen(request->name_expressions[i]) + 1024;
    char *names = calloc(1, names_capacity);
    if (!names)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    size_t names_used = 0;
    for (int i = 0; i < request->name_expression_count; i++) {
        char variable[64];
        snprintf(variable, sizeof variable, "gpuexp_name_%d = ", i);
        const char *at = result->ptx ? strstr(result->ptx, variable) : NULL,
                   *symbol = at ? at + strlen(variable) : NULL;
        size_t length = symbol ? strcspn(symbol, ";, \n}") : 0;
        if (symbol && *symbol == '{') /* "= {symbol}" in some PTX versions */
            symbol++, length = strcspn(symbol, ";, \n}");
        if (!length || length > 900) {
            free(names);
            return gx_fail(error, GX_ERR_COMPILE, "nvcc: the name '%s' did not lower to a kernel symbol in %s",
                           request->name_expressions[i], request->source_name);
        }
        names_used += (size_t)snprintf(names + names_used, names_capacity - names_used, "%s\t%.*s\n",
                                       request->name_expressions[i], (int)length, symbol);
    }
    free(result->lowered_names);
    result->lowered_names = names;
    return GX_OK;
}

/* Refuses the options that keep nvcc from writing the one cubin (or PTX) gpuexp reads. */
static int check_options(const gx_compile_request *request, gx_error *error)
{
    for (int i = 0; i < request->option_count; i++) {
        const char *refused = refused_option(request->options[i]);
        if (refused)
            return gx_fail(error, GX_ERR_USAGE,
                           "nvcc option '%s' is not accepted: gpuexp runs nvcc to write one cubin (or PTX) and reads "
                           "it; options that print, stop early, link or choose the output have no place there",
                           refused);
    }
    return GX_OK;
}

/* The compiler as the cache key names it: nvcc's path, size and time, so a changed toolkit
   compiles again. */
static void compiler_identity(const char *nvcc, char *out, size_t size)
{
    struct stat nvcc_stat;
    /* "names in the cubin": entries of builds before name expressions were instantiated in the cubin
       itself are not taken */
    snprintf(out, size, "nvcc %s %lld %lld names in the cubin", nvcc,
             stat(nvcc, &nvcc_stat) == 0 ? (long long)nvcc_stat.st_size : 0LL,
             stat(nvcc, &nvcc_stat) == 0 ? (long long)nvcc_stat.st_mtime : 0LL);
}

/* Makes the folder and places the source; on failure nothing is left behind. */
static int prepare_files(const gx_compile_request *request, nvcc_files *files, gx_error *error)
{
    const char *tmp = getenv("TMPDIR");
    if (snprintf(files->folder, sizeof files->folder, "%s/gpuexp-nvcc-XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
            (int)sizeof files->folder ||
        !mkdtemp(files->folder))
        return gx_fail(error, GX_ERR_SYSTEM, "nvcc: cannot make a temporary folder in %s: %m",
                       tmp && *tmp ? tmp : "/tmp");
    files->ptx_only = strncmp(request->arch, "compute_", 8) == 0;
    snprintf(files->output, sizeof files->output, "%s/out.%s", files->folder, files->ptx_only ? "ptx" : "cubin");
    snprintf(files->log, sizeof files->log, "%s/nvcc.log", files->folder);
    if (request->source_path) {
        snprintf(files->source, sizeof files->source, "%s", request->source_path);
        return GX_OK;
    }
    const char *base = strrchr(request->source_name, '/');
    base = base ? base + 1 : request->source_name;
    size_t length = strlen(base);
    int is_cu = length > 3 && strcmp(base + length - 3, ".cu") == 0;
    if (snprintf(files->source, sizeof files->source, "%s/%s%s", files->folder, base, is_cu ? "" : ".cu") >=
        (int)sizeof files->source)
        snprintf(files->source, sizeof files->source, "%s/source.cu", files->folder);
    if (gx_write_file_atomic(files->source, request->source, strlen(request->source), error)) {
        remove_tree(files->folder);
        return error->kind;
    }
    return GX_OK;
}

/* nvcc's command line: the output kind, the architecture, ptxas' report, the kept files, the
   source's folder and the include folders, the request's options, the source. Nonzero when it
   does not fit in ARGV_CAPACITY. */
static int build_command(const gx_compile_request *request, const char *nvcc, const nvcc_files *files, char **argv,
                         int *argc)
{
    int ptx_only = files->ptx_only;
    int full =
        push(argv, argc, ARGV_CAPACITY, strdup(nvcc)) ||
        push(argv, argc, ARGV_CAPACITY, strdup(ptx_only ? "-ptx" : "-cubin")) ||
        push(argv, argc, ARGV_CAPACITY, format("-arch=%s", request->arch)) ||
        (!ptx_only && push(argv, argc, ARGV_CAPACITY, strdup("-Xptxas=-v"))) ||
        push(argv, argc, ARGV_CAPACITY, strdup("--keep")) ||
        push(argv, argc, ARGV_CAPACITY, format("--keep-dir=%s", files->folder)) ||
        push(argv, argc, ARGV_CAPACITY, strdup("-o")) || push(argv, argc, ARGV_CAPACITY, strdup(files->output)) ||
        (request->source_directory && push(argv, argc, ARGV_CAPACITY, format("-I%s", request->source_directory)));
    for (int i = 0; !full && i < request->include_directory_count; i++)
        full = push(argv, argc, ARGV_CAPACITY, format("-I%s", request->include_directories[i]));
    for (int i = 0; !full && i < request->option_count; i++)
        full = push(argv, argc, ARGV_CAPACITY, strdup(request->options[i]));
    return full || push(argv, argc, ARGV_CAPACITY, strdup(files->source));
}

/* nvcc exited with a failure: its log, how it ended and the command (the start of it) that failed. */
static int nvcc_failed(const gx_compile_request *request, const gx_compile_result *result, char *const *argv, int argc,
                       int exit_code, gx_error *error)
{
    char command[1024] = "";
    for (int i = 0; i < argc && strlen(command) + 2 < sizeof command; i++)
        snprintf(command + strlen(command), sizeof command - strlen(command), "%s%s", i ? " " : "", argv[i]);
    return gx_fail(error, GX_ERR_COMPILE, "nvcc failed (%s %d) for %s (arch %s):\n%s\ncommand: %s",
                   exit_code < 128 ? "exit code" : "signal", exit_code < 128 ? exit_code : exit_code - 128,
                   request->source_name, request->arch, result->log ? result->log : "", command);
}

/* What nvcc wrote into the result: the cubin and the PTX it kept, or the PTX alone (an empty cubin). */
static int read_outputs(const nvcc_files *files, gx_compile_result *result, gx_error *error)
{
    size_t size = 0;
    if (files->ptx_only) {
        result->cubin = calloc(1, 1);
        if (gx_read_file(files->output, &result->ptx, &size, error))
            return error->kind;
    } else {
        if (gx_read_file(files->output, &result->cubin, &result->cubin_size, error))
            return error->kind;
        result->ptx = read_first_with_suffix(files->folder, ".ptx", &size);
        if (!result->ptx)
            result->ptx = strdup("");
    }
    result->lowered_names = strdup("");
    if (!result->cubin || !result->ptx || !result->log || !result->lowered_names)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    return GX_OK;
}

int gx_nvcc_compile(const gx_compile_request *request, gx_compile_result *result, gx_error *error)
{
    memset(result, 0, sizeof *result);
    int status = check_options(request, error);
    if (status)
        return status;
    char nvcc[GX_TOOLKIT_PATH];
    if (gx_toolkit_nvcc(gx_toolkit_get(), nvcc, sizeof nvcc, error))
        return error->kind;
    char compiler[GX_TOOLKIT_PATH + 64];
    compiler_identity(nvcc, compiler, sizeof compiler);
    gx_compile_keys(request, compiler, result->key, result->source_key);
    if (gx_compile_cache_load(request, result) == 0)
        return GX_OK;
    if (gx_compile_cache_failure(request, result->key, error))
        return error->kind;

    double start = gx_clock_s();
    nvcc_files files;
    if ((status = prepare_files(request, &files, error)) != GX_OK)
        return status;
    char *argv[ARGV_CAPACITY] = {0};
    int argc = 0;
    if (request->name_expression_count && (status = write_names_wrapper(request, &files, error)) != GX_OK)
        goto done;
    if (build_command(request, nvcc, &files, argv, &argc)) {
        status = gx_fail(error, GX_ERR_USAGE, "nvcc: too many options");
        goto done;
    }
    int exit_code = 0;
    if ((status = run_nvcc(argv, files.log, &exit_code, error)) != GX_OK)
        goto done;
    size_t log_size = 0;
    gx_error ignored;
    if (gx_read_file(files.log, &result->log, &log_size, &ignored))
        result->log = strdup("");
    if (exit_code != 0) {
        if (request->name_expression_count && result->log && strstr(result->log, "gpuexp_names.cu("))
            status = gx_fail(error, GX_ERR_COMPILE,
                             "nvcc could not resolve the names given to compile{names=...} in %s "
                             "(each must name a kernel, e.g. \"k<float, 128>\"):\n%s",
                             request->source_name, result->log);
        else
            status = nvcc_failed(request, result, argv, argc, exit_code, error);
        if (exit_code < 128) /* the source's error, kept; a signal (a kill, a timeout) is not */
            gx_compile_cache_store_failure(request, result->key, error);
        goto done;
    }
    if ((status = read_outputs(&files, result, error)) != GX_OK)
        goto done;
    if (request->name_expression_count && (status = read_lowered_names(request, result, error)) != GX_OK)
        goto done;
    result->compile_seconds = gx_clock_s() - start;
    gx_compile_cache_store(request, result);
done:
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    remove_tree(files.folder);
    if (status)
        gx_compile_result_free(result);
    return status;
}
