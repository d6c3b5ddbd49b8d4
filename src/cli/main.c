/* gpuexp: the command line: a command dispatched from the catalog, or a run's options read into a
   struct gx_run, the offline plan chosen, the supervisor or the inline run started (gx_cli_run.c). */
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gx_cli.h"
#include "gx_cli_run.h"
#include "gx_device.h"
#include "gx_occupancy.h"
#include "gx_output.h"
#include "gx_paths.h"
#include "gx_worker.h"
#include "l_catalog.h"

int gx_cli_help(const char *command, FILE *out) { return l_catalog_help(command, out); }
void gx_cli_did_you_mean(const char *command, const char *word, char *out, size_t size)
{
    l_catalog_did_you_mean(command, word, out, size);
}

static int usage_error(const char *format, const char *detail)
{
    fprintf(stderr, "gpuexp: ");
    fprintf(stderr, format, detail);
    fprintf(stderr, "\n(see gpuexp --help)\n");
    return GX_EXIT_USAGE;
}

#define GX_DEFAULT_PLAN_ARCH "sm_90"

/* What a script name that names no file was likely meant to be: a shipped experiment's path
   given from another folder (experiments/x.lua), or a misspelled command or experiment. */
static void script_hint(const char *script, char *hint, size_t size)
{
    char word[256], found[PATH_MAX];
    const char *base = strncmp(script, "experiments/", 12) == 0 ? script + 12 : script;
    snprintf(word, sizeof word, "%s", base);
    size_t n = strlen(word);
    if (n > 4 && strcmp(word + n - 4, ".lua") == 0)
        word[n - 4] = 0;
    if (base != script && gx_find_experiment(word, found, sizeof found)) {
        snprintf(hint, size, " (the shipped experiment runs by name from any folder: gpuexp %s)", word);
        return;
    }
    if (strchr(word, '/') && base == script)
        return;
    l_catalog_did_you_mean(NULL, word, hint, size);
}

/* A crash is a gpuexp bug: say so, with a backtrace to report, instead of dying silently. */
static void crash_handler(int signal_number)
{
    static const char text[] = "gpuexp: internal error (crashed); please report this with the backtrace below\n";
    if (write(STDERR_FILENO, text, sizeof text - 1) < 0)
        _exit(70);
    void *frames[64];
    int count = backtrace(frames, 64);
    backtrace_symbols_fd(frames, count, STDERR_FILENO);
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

/* A command other than run (lua/gpuexp/catalog.lua lists them): a C one runs here, a Lua one runs
   its module's main(args); an alias of a run option (gpuexp diagnose SCRIPT) becomes the option in
   argv. Returns the exit code, or -1 when the line is a run. */
static int run_command(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } native[] = {{"info", gx_cli_info}, {"occupancy", gx_cli_occupancy}, {"metrics", gx_cli_metrics}};
    static char run_option[128], module[128];
    char detail[128];
    /* a command's name is a word: a script's path (x.lua, dir/x) is never looked up */
    enum l_command_kind kind = argc > 1 && argv[1][0] != '-' && !strpbrk(argv[1], "./")
                                   ? l_catalog_command(argv[1], detail, sizeof detail)
                                   : L_COMMAND_NONE;
    if (kind == L_COMMAND_NATIVE) {
        for (size_t n = 0; n < sizeof native / sizeof native[0]; n++)
            if (strcmp(detail, native[n].name) == 0)
                return native[n].run(argc - 2, argv + 2);
        fprintf(stderr, "gpuexp: internal error: the command '%s' has no C implementation\n", detail);
        return GX_EXIT_INTERNAL;
    }
    if (kind == L_COMMAND_LUA) {
        struct gx_run options = {.script = argv[1], .script_index = 1, .builtin = module, .inline_run = 1};
        snprintf(module, sizeof module, "%s", detail);
        return gx_cli_run_script(argc, argv, &options);
    }
    if (kind == L_COMMAND_RUN_OPTION) {
        snprintf(run_option, sizeof run_option, "%s", detail);
        argv[1] = run_option; /* gpuexp diagnose SCRIPT is gpuexp --diagnose SCRIPT */
    }
    return -1;
}

/* The run's options, from the catalog (l_catalog_parse), into the fields C acts on. Returns -1 to
   go on, or the exit code: a usage error (2), --help or --version. */
static int read_run_fields(int argc, char **argv, struct gx_run *options)
{
    int parsed = l_catalog_parse("run", argc, argv, &options->parsed);
    if (parsed == -2) {
        fprintf(stderr, "gpuexp: internal error: %s\n", options->parsed.error);
        return GX_EXIT_INTERNAL;
    }
    if (parsed < 0)
        return usage_error("%s", options->parsed.error);
    options->diagnose = gx_run_flag(options, "diagnose");
    options->profile = gx_run_flag(options, "profile");
    if (gx_run_flag(options, "help"))
        return l_catalog_help(options->diagnose ? "diagnose" : options->profile ? "profile" : "run", stdout) == 0
                   ? GX_EXIT_OK
                   : GX_EXIT_USAGE;
    if (gx_run_flag(options, "version")) { /* gpuexp, Lua, SQLite and the CUDA pieces found: gpuexp doctor --version */
        char *version_argv[] = {argv[0], "doctor", "--version", NULL};
        struct gx_run doctor = {
            .script = "doctor", .script_index = 1, .builtin = "gpuexp.commands.doctor", .inline_run = 1};
        return gx_cli_run_script(3, version_argv, &doctor);
    }
    const char *device = gx_run_value(options, "device"); /* a whole number 0..1024 (its catalog entry) */
    options->device = device ? atoi(device) : 0;
    const char *arch = gx_run_value(options, "plan_arch");
    if (arch) {
        const gx_arch_limits *limits = gx_arch_find(arch);
        if (!limits)
            return usage_error("unknown architecture '%s' (gpuexp occupancy --limits lists them)", arch);
        options->arch = limits->arch; /* "8.6" and "86" become "sm_86" */
    }
    options->out = gx_run_value(options, "out");
    options->trace = gx_run_value(options, "trace");
    options->quiet = gx_run_flag(options, "quiet");
    options->no_plan = gx_run_flag(options, "no_plan");
    options->inline_run = gx_run_flag(options, "inline") || options->profile; /* profile: in the profiler's process */
    options->script_index = options->parsed.script_index;
    int i = options->script_index;
    options->option_count = i - 1 - (i > 1 && strcmp(argv[i - 1], "--") == 0);
    if (i >= argc)
        return usage_error("%s", "no script given");
    options->script = argv[i];
    return -1;
}

/* The script: a file, or a shipped experiment by name (gpuexp occupancy_sweep). Returns -1 when it
   can be read, else the usage error's exit code, said with a hint. */
static int find_script(char **argv, struct gx_run *options)
{
    static char shipped[PATH_MAX];
    if (access(options->script, R_OK) != 0 && options->script[0] != '/' && strncmp(options->script, "./", 2) != 0
        && gx_find_experiment(options->script, shipped, sizeof shipped)) {
        options->script = argv[options->script_index] = shipped;
    }
    if (access(options->script, R_OK) == 0)
        return -1;
    int why = errno;
    char hint[512] = "";
    if (why == ENOENT)
        script_hint(options->script, hint, sizeof hint);
    fprintf(stderr, "gpuexp: cannot open %s: %s%s\n", options->script, strerror(why), hint);
    return GX_EXIT_USAGE;
}

/* With no GPU here, say so and make the run an offline plan for a stated default architecture. */
static void choose_plan(struct gx_run *options)
{
    if (options->arch || options->no_plan)
        return;
    int count = 0;
    gx_error error = {0};
    if (gx_device_count(&count, &error) == GX_OK && count > 0)
        return;
    fprintf(stderr, "gpuexp: no GPU found (%s)\n",
            count == 0 && error.kind == GX_OK ? "the driver reports 0 devices" : error.message);
    fprintf(stderr, "gpuexp: showing the offline PLAN for %s instead (choose with --arch; --no-plan fails instead):\n"
                    "        kernels compiled for %s, occupancy from the model, timing columns EMPTY\n",
            GX_DEFAULT_PLAN_ARCH, GX_DEFAULT_PLAN_ARCH);
    options->arch = GX_DEFAULT_PLAN_ARCH;
    options->automatic_plan = 1;
}

/* The supervisor (lua/gpuexp/engine/supervisor.lua) runs the script in workers. With --trace, the
   first worker writes FILE.tmp (renamed to FILE at its end) and a worker that finds FILE.tmp taken
   writes FILE.PID.json: a FILE.tmp left by an earlier run goes now. */
static void become_supervisor(struct gx_run *options)
{
    options->builtin = "gpuexp.engine.supervisor";
    if (options->trace && !options->arch) {
        char temporary[PATH_MAX];
        if (snprintf(temporary, sizeof temporary, "%s.tmp", options->trace) < (int)sizeof temporary)
            unlink(temporary);
    } else if (options->trace) {
        fprintf(stderr, "gpuexp: --trace: an offline plan runs nothing on a GPU; no trace is written\n");
    }
}

int main(int argc, char **argv)
{
    signal(SIGSEGV, crash_handler);
    signal(SIGBUS, crash_handler);
    signal(SIGFPE, crash_handler);
    gx_output_check_stdout_at_exit(GX_EXIT_WRITE); /* a report lost on a full disk is exit 7, never 0 or 1 */
    if (argc > 1 && strcmp(argv[1], "run") == 0) { /* gpuexp run SCRIPT: the default command, named */
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    int code = run_command(argc, argv);
    if (code >= 0)
        return code;
    gx_worker_install_hooks(); /* launches and lost contexts are recorded for a supervisor (or the error text) */
    gx_error attach_error;
    int worker_device = 0, worker_slot = 0;
    int attached = gx_worker_attach(&worker_device, &worker_slot, &attach_error);
    if (attached < 0) {
        fprintf(stderr, "gpuexp: %s\n", attach_error.message);
        return GX_EXIT_USAGE;
    }
    static struct gx_run options; /* static: the parsed options are large */
    options.worker = attached;
    if ((code = read_run_fields(argc, argv, &options)) >= 0 || (code = find_script(argv, &options)) >= 0)
        return code;
    if (options.worker) {
        options.device = worker_device; /* the GPU the supervisor gave this worker */
        return gx_cli_run_script(argc, argv, &options);
    }
    choose_plan(&options);
    const char *over = gx_run_is_script(&options, options.trace) ? "--trace"
                       : gx_run_is_script(&options, options.out) ? "--out"
                                                           : NULL;
    if (over) {
        fprintf(stderr, "gpuexp: %s names the script %s itself; give it another file\n", over, options.script);
        return GX_EXIT_USAGE;
    }
    if (!options.inline_run)
        become_supervisor(&options);
    code = gx_cli_run_script(argc, argv, &options);
    if (options.arch)
        fprintf(stderr, "gpuexp: this was an offline PLAN for %s: nothing ran on a GPU%s\n", options.arch,
                options.automatic_plan ? " (no GPU was found)" : "");
    return code;
}
