/* gpuexp: command line, Lua state, and the script run under a traceback handler. */
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "gx_cli.h"
#include "gx_device.h"
#include "gx_occupancy.h"
#include "gx_paths.h"
#include "gx_process.h"
#include "gx_trace.h"
#include "gx_worker.h"
#include "l_catalog.h"
#include "l_gpuexp.h"
#include "l_util.h"

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

/* Message handler: keeps error values as they are and adds a traceback beside them. */
static int message_handler(lua_State *L)
{
    const char *message = NULL;
    if (luaL_testudata(L, 1, GX_ERROR_TYPE) || lua_istable(L, 1)) {
        lua_getfield(L, 1, "message");
        message = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    if (!message)
        message = lua_tostring(L, 1);
    if (!message) {
        /* error({}) or error(nil): say what was raised and where, not just "table" */
        lua_Debug frame;
        const char *where = "";
        for (int level = 1; lua_getstack(L, level, &frame); level++) {
            lua_getinfo(L, "Sl", &frame);
            if (frame.currentline > 0) {
                where = lua_pushfstring(L, "%s:%d: ", frame.short_src, frame.currentline);
                break;
            }
        }
        message = lua_pushfstring(L, "%sthe script raised a %s value, not an error message (%s)", where,
                                  luaL_typename(L, 1), luaL_tolstring(L, 1, NULL));
    }
    luaL_traceback(L, L, message, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "gpuexp.traceback");
    return 1; /* the original error value */
}

/* The exit code of an error value. An error of no known kind is the script's own (exit 1) in a run,
   and a bug of gpuexp (exit 70) in a command written in Lua (compare, nightly, history, ...): there
   1 means "a regression was found", which a failure must never read as. */
static int exit_code_for(lua_State *L, int index, int builtin)
{
    int code = builtin ? GX_EXIT_INTERNAL : GX_EXIT_SCRIPT;
    if (!lua_istable(L, index))
        return code;
    lua_getfield(L, index, "kind");
    const char *kind = lua_tostring(L, -1);
    if (kind && (strcmp(kind, "driver") == 0 || strcmp(kind, "profiler") == 0))
        code = GX_EXIT_GPU;
    else if (kind && strcmp(kind, "compile") == 0)
        code = GX_EXIT_COMPILE;
    else if (kind && strcmp(kind, "write") == 0)
        code = GX_EXIT_WRITE;
    else if (kind && strcmp(kind, "busy") == 0)
        code = GX_EXIT_BUSY;
    else if (kind && strcmp(kind, "option") == 0)
        code = GX_EXIT_USAGE;
    else if (kind && strcmp(kind, "interrupted") == 0)
        code = 128 + (gx_process_stop_signal() ? gx_process_stop_signal() : SIGINT);
    lua_pop(L, 1);
    return code;
}

#define GX_DEFAULT_PLAN_ARCH "sm_90"
#define GX_STOP_GRACE_S 1.0 /* from a stop signal to the end of an in-process run stuck in a call */

struct options {
    const char *arch; /* offline plan */
    int no_plan;
    int device;
    const char *out;
    int quiet;
    const char *script;
    int script_index;
    const char *builtin; /* a subcommand written in Lua: the module whose main(args) runs */
    int worker;          /* this process is a worker of a supervised run */
    int option_count;    /* argv[1 .. option_count] are the options before the script */
    int automatic_plan;
    int inline_run;
    const char *history; /* record the run there; "" = the default file */
    const char *trace;   /* record a timeline (Chrome trace JSON) here */
    int diagnose;        /* diagnose every timed launch (gpuexp diagnose SCRIPT) */
    int profile;         /* gpuexp profile: each measured launch once, inside cuProfilerStart/Stop */
    /* the options C does not read itself: each a field of gpuexp.run_options, as the catalog's
       entry for the option names it (lua/gpuexp/catalog.lua; the supervisor reads them) */
    struct {
        char field[64];
        const char *value; /* NULL for a flag */
    } passed[48];
    int passed_count;
};

/* An option of the run command read from its catalog entry: 1 when it was one (its field and value
   kept for gpuexp.run_options, *i moved past the value), 0 when the catalog has no such option,
   -1 when its value is missing. */
static int catalog_option(struct options *o, int argc, char **argv, int *i)
{
    char field[64];
    int takes = l_catalog_option("run", argv[*i], field, sizeof field);
    if (takes < 0 || o->passed_count >= (int)(sizeof o->passed / sizeof o->passed[0]))
        return 0;
    if (takes && *i + 1 >= argc)
        return -1;
    snprintf(o->passed[o->passed_count].field, sizeof o->passed[0].field, "%s", field);
    o->passed[o->passed_count].value = takes ? argv[++*i] : NULL;
    o->passed_count++;
    return 1;
}

/* Whether an output file given on the command line is the script itself (gpuexp -o k.lua k.lua). */
static int is_script(const struct options *options, const char *path)
{
    char path_real[PATH_MAX], script_real[PATH_MAX];
    return path && realpath(path, path_real) && realpath(options->script, script_real)
           && strcmp(path_real, script_real) == 0;
}

/* gpuexp.run_options: what the supervisor needs of the command line. */
static void push_run_options(lua_State *L, int argc, char **argv, const struct options *o)
{
    lua_createtable(L, 0, 12);
    const struct {
        const char *name;
        int value;
    } flags[] = {{"no_plan", o->no_plan}, {"diagnose", o->diagnose}, {"profile", o->profile}, {"quiet", o->quiet}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        lua_pushboolean(L, flags[i].value);
        lua_setfield(L, -2, flags[i].name);
    }
    const char *strings[][2] = {{"plan_arch", o->arch}, {"history", o->history}, {"trace", o->trace}};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if (strings[i][1]) {
            lua_pushstring(L, strings[i][1]);
            lua_setfield(L, -2, strings[i][0]);
        }
    for (int i = 0; i < o->passed_count; i++) { /* the catalog's options, by their fields */
        if (o->passed[i].value)
            lua_pushstring(L, o->passed[i].value);
        else
            lua_pushboolean(L, 1);
        lua_setfield(L, -2, o->passed[i].field);
    }
    lua_pushinteger(L, o->device);
    lua_setfield(L, -2, "device");
    /* the worker's command line: this binary, the options, then -- SCRIPT ARGS */
    lua_createtable(L, argc + 4, 0);
    int n = 0;
    lua_pushstring(L, argv[0]);
    lua_rawseti(L, -2, ++n);
    for (int i = 1; i <= o->option_count; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, ++n);
    }
    if (o->automatic_plan) { /* decided once, here, so workers do not say "no GPU found" again */
        lua_pushstring(L, "--arch");
        lua_rawseti(L, -2, ++n);
        lua_pushstring(L, o->arch);
        lua_rawseti(L, -2, ++n);
    }
    lua_pushstring(L, "--");
    lua_rawseti(L, -2, ++n);
    for (int i = o->script_index; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, ++n);
    }
    lua_setfield(L, -2, "worker_argv");
    /* the command line as typed, for "resume with: ..." */
    lua_createtable(L, argc, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "argv");
}

/* An error message on standard error: names from data in it (a point, a CSV cell) may hold control
   characters, shown as \xHH so that none moves the cursor, clears the screen or recolours the
   terminal; new lines and tabs stay (tracebacks, compile logs). */
static void print_message(const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f)
            fprintf(stderr, "\\x%02x", *c);
        else
            fputc(*c, stderr);
    }
    fputc('\n', stderr);
}

/* --trace in the process that runs the script. A second worker of the run (another GPU, or a
   fresh one after a crash) writes FILE with its pid before the extension instead. */
static int start_trace(const struct options *options)
{
    gx_error error;
    int status = gx_trace_start(options->trace, options->worker, &error);
    if (status == GX_ERR_SYSTEM && errno == EEXIST) {
        char other[PATH_MAX];
        const char *dot = strrchr(options->trace, '.');
        int stem = dot && !strchr(dot, '/') ? (int)(dot - options->trace) : (int)strlen(options->trace);
        snprintf(other, sizeof other, "%.*s.%d%s", stem, options->trace, (int)getpid(), dot && !strchr(dot, '/') ? dot : "");
        status = gx_trace_start(other, 0, &error);
        if (status == GX_OK)
            fprintf(stderr, "gpuexp: this worker's trace goes to %s\n", other);
    }
    if (status)
        fprintf(stderr, "gpuexp: --trace: %s\n", error.message);
    return status;
}

/* A script run in this process (--inline, gpuexp profile) ends as a supervised one does: its
   failed points said on stderr and counted in the exit code (lua/gpuexp/api/sweep.lua). */
static int report_failures(lua_State *L, int handler)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, "gpuexp.api.sweep");
    if (lua_pcall(L, 1, 1, handler) != LUA_OK || lua_getfield(L, -1, "report_failures") != LUA_TFUNCTION
        || lua_pcall(L, 0, 1, handler) != LUA_OK) {
        fprintf(stderr, "gpuexp: internal error: the failed points cannot be counted: %s\n", lua_tostring(L, -1));
        lua_settop(L, handler);
        return GX_EXIT_SCRIPT;
    }
    int code = (int)lua_tointeger(L, -1);
    lua_settop(L, handler);
    return code;
}

static int run_script(int argc, char **argv, const struct options *options)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "gpuexp: cannot create a Lua state (out of memory)\n");
        return GX_EXIT_SCRIPT;
    }
    luaL_openlibs(L);
    /* Ctrl-C, SIGTERM, SIGHUP: "interrupted" at the next Lua instruction, the process ended 1 s
       later if the run is stuck in a call (a kernel spinning on the GPU); the supervisor, nightly
       and bisect take them their own way (gx_process_init) */
    l_process_catch_stops(L, GX_STOP_GRACE_S);
    lua_pushinteger(L, options->device);
    lua_setfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_DEFAULT_DEVICE);
    if (options->arch) {
        lua_pushstring(L, options->arch);
        lua_setfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_OFFLINE_ARCH);
    }
    char script_dir[PATH_MAX];
    snprintf(script_dir, sizeof script_dir, "%s", options->script);
    char *slash = strrchr(script_dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(script_dir, sizeof script_dir, ".");
    char resolved[PATH_MAX];
    if (realpath(script_dir, resolved))
        snprintf(script_dir, sizeof script_dir, "%s", resolved);
    lua_pushstring(L, script_dir);
    lua_setfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_SCRIPT_DIR);

    lua_newtable(L); /* gpuexp */
    l_open_gpuexp(L);
    lua_pushstring(L, options->script);
    lua_setfield(L, -2, "script");
    lua_pushstring(L, script_dir);
    lua_setfield(L, -2, "script_dir");
    if (options->out) {
        lua_pushstring(L, options->out);
        lua_setfield(L, -2, "out");
    }
    lua_pushboolean(L, options->quiet);
    lua_setfield(L, -2, "quiet");
    lua_pushboolean(L, isatty(STDERR_FILENO));
    lua_setfield(L, -2, "stderr_is_terminal");
    lua_pushinteger(L, options->device);
    lua_setfield(L, -2, "device_ordinal");
    lua_pushboolean(L, options->arch != NULL);
    lua_setfield(L, -2, "plan");
    if (options->arch) {
        lua_pushstring(L, options->arch);
        lua_setfield(L, -2, "offline_arch");
    }
    lua_pushboolean(L, options->inline_run || options->worker ? 0 : 1);
    lua_setfield(L, -2, "supervised_run"); /* this process supervises (no CUDA here) */
    push_run_options(L, argc, argv, options);
    lua_setfield(L, -2, "run_options");
    lua_pushvalue(L, -1);
    lua_setglobal(L, "gpuexp");
    /* script arguments: arg[0] the script, arg[1..] the rest, as lua.c does */
    lua_createtable(L, argc - options->script_index, 1);
    for (int i = options->script_index; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - options->script_index);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "args");
    lua_setglobal(L, "arg");

    lua_pushcfunction(L, message_handler);
    int handler = lua_gettop(L);
    int status = LUA_OK, trace_failed = 0, failed_points = 0;
    /* the Lua library adds its functions (sweep, csv, ...) to the gpuexp table */
    lua_getglobal(L, "require");
    lua_pushstring(L, "gpuexp.init");
    status = lua_pcall(L, 1, 0, handler);
    if (status == LUA_OK) {
        if (options->builtin) {
            lua_getglobal(L, "require");
            lua_pushstring(L, options->builtin);
            status = lua_pcall(L, 1, 1, handler);
            if (status == LUA_OK) {
                lua_getfield(L, -1, "main");
                lua_getglobal(L, "arg");
            }
        } else {
            status = luaL_loadfile(L, options->script);
        }
        if (status == LUA_OK && options->builtin) {
            status = lua_pcall(L, 1, 1, handler); /* main may return the exit code */
            gx_process_stop_handled();
            if (status == LUA_OK && lua_isinteger(L, -1)) {
                int returned = (int)lua_tointeger(L, -1);
                lua_close(L);
                return returned;
            }
        } else if (status == LUA_OK) {
            int wanted = options->trace && !options->arch;
            if (options->trace && options->arch && !options->worker)
                fprintf(stderr, "gpuexp: --trace: an offline plan runs nothing on a GPU; no trace is written\n");
            int trace_status = wanted ? start_trace(options) : GX_OK;
            if (trace_status != GX_OK) {
                lua_close(L); /* a bad --trace (2), a trace file that cannot be written (7), no CUPTI (3) */
                return trace_status == GX_ERR_USAGE ? GX_EXIT_USAGE : trace_status == GX_ERR_SYSTEM ? GX_EXIT_WRITE : GX_EXIT_GPU;
            }
            int tracing = wanted;
            for (int i = options->script_index + 1; i < argc; i++)
                lua_pushstring(L, argv[i]);
            status = lua_pcall(L, argc - options->script_index - 1, 0, handler);
            gx_process_stop_handled(); /* the run came back: no watchdog while it closes */
            if (status == LUA_OK && !options->worker)
                failed_points = report_failures(L, handler);
            gx_error trace_error;
            if (tracing && gx_trace_stop(&trace_error)) {
                fprintf(stderr, "gpuexp: %s\n", trace_error.message);
                if (status == LUA_OK)
                    trace_failed = 1;
            }
        } else if (status == LUA_ERRFILE) {
            fprintf(stderr, "gpuexp: %s\n", lua_tostring(L, -1));
            lua_close(L);
            return GX_EXIT_USAGE;
        }
    }
    gx_process_stop_handled();
    int code = trace_failed ? GX_EXIT_WRITE : failed_points;
    if (status == LUA_OK && gx_process_stop_signal()) /* the script caught the interruption itself */
        code = 128 + gx_process_stop_signal();
    if (status != LUA_OK) {
        code = exit_code_for(L, -1, options->builtin != NULL);
        /* a command's own error raised as a value (gpuexp.error: a bad argument, a file it cannot
           read) is its message and exit code, a usage error exits 2; only a bug is internal */
        int command_error = options->builtin && lua_istable(L, -1);
        if (command_error && code == GX_EXIT_INTERNAL) {
            lua_getfield(L, -1, "kind");
            code = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "usage") == 0 ? GX_EXIT_USAGE : GX_EXIT_SCRIPT;
            lua_pop(L, 1);
        }
        if (code == GX_EXIT_INTERNAL)
            fprintf(stderr, "gpuexp: internal error in %s (exit %d; please report it with the text below):\n",
                    options->builtin, GX_EXIT_INTERNAL);
        /* a bad option, a busy output, a failed write or an interruption is not a bug in the
           script: no traceback */
        int plain = command_error || code == GX_EXIT_USAGE || code == GX_EXIT_BUSY || code == GX_EXIT_WRITE || code > 128;
        if (plain && lua_istable(L, -1))
            lua_getfield(L, -1, "message");
        else
            lua_getfield(L, LUA_REGISTRYINDEX, "gpuexp.traceback");
        const char *text = lua_tostring(L, -1);
        if (!text) /* syntax errors never reach the handler */
            text = luaL_tolstring(L, -2, NULL);
        print_message(text);
    }
    lua_close(L); /* runs __gc: buffers freed, contexts released, files closed */
    return code;
}

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

int main(int argc, char **argv)
{
    signal(SIGSEGV, crash_handler);
    signal(SIGBUS, crash_handler);
    signal(SIGFPE, crash_handler);
    struct options options = {0};
    int i = 1;
    /* a command (lua/gpuexp/catalog.lua lists them): C ones here, Lua ones run their
       module's main(args), an alias of a run option (gpuexp diagnose SCRIPT) becomes the option */
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } native[] = {{"info", gx_cli_info}, {"occupancy", gx_cli_occupancy}, {"metrics", gx_cli_metrics}};
    static char run_option[128];
    char detail[128];
    if (argc > 1 && strcmp(argv[1], "run") == 0) { /* gpuexp run SCRIPT: the default command, named */
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    /* a command's name is a word: a script's path (x.lua, dir/x) is never looked up */
    enum l_command_kind kind = argc > 1 && argv[1][0] != '-' && !strpbrk(argv[1], "./")
                                   ? l_catalog_command(argv[1], detail, sizeof detail)
                                   : L_COMMAND_NONE;
    if (kind == L_COMMAND_NATIVE) {
        for (size_t n = 0; n < sizeof native / sizeof native[0]; n++)
            if (strcmp(detail, native[n].name) == 0)
                return native[n].run(argc - 2, argv + 2);
        fprintf(stderr, "gpuexp: internal error: the command '%s' has no C implementation\n", detail);
        return GX_EXIT_USAGE;
    }
    if (kind == L_COMMAND_LUA) {
        static char module[128];
        snprintf(module, sizeof module, "%s", detail);
        options.script = argv[1];
        options.script_index = 1;
        options.builtin = module;
        options.inline_run = 1;
        return run_script(argc, argv, &options);
    }
    if (kind == L_COMMAND_RUN_OPTION) {
        snprintf(run_option, sizeof run_option, "%s", detail);
        argv[1] = run_option; /* gpuexp diagnose SCRIPT is gpuexp --diagnose SCRIPT */
    }
    gx_worker_install_hooks(); /* launches and lost contexts are recorded for a supervisor (or the error text) */
    gx_error attach_error;
    int worker_device = 0, worker_slot = 0;
    int attached = gx_worker_attach(&worker_device, &worker_slot, &attach_error);
    if (attached < 0) {
        fprintf(stderr, "gpuexp: %s\n", attach_error.message);
        return GX_EXIT_USAGE;
    }
    options.worker = attached;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *a = argv[i];
        int found;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            return l_catalog_help(options.diagnose ? "diagnose" : options.profile ? "profile" : "run", stdout) == 0 ? GX_EXIT_OK : GX_EXIT_USAGE;
        } else if (strcmp(a, "--diagnose") == 0) {
            options.diagnose = 1;
        } else if (strcmp(a, "--profile") == 0) {
            options.profile = 1;
            options.inline_run = 1; /* in this process, the one the profiler started */
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            /* gpuexp, Lua, SQLite and the CUDA pieces found: gpuexp doctor --version */
            char *version_argv[] = {argv[0], "doctor", "--version", NULL};
            options.script = "doctor";
            options.script_index = 1;
            options.builtin = "gpuexp.commands.doctor";
            options.inline_run = 1;
            return run_script(3, version_argv, &options);
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            options.quiet = 1;
        } else if (strcmp(a, "-d") == 0 || strcmp(a, "--device") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a GPU number", a);
            char *end;
            errno = 0;
            long value = strtol(argv[++i], &end, 10);
            if (*end || errno || value < 0 || value > 1024)
                return usage_error("--device takes a GPU number, got '%s'", argv[i]);
            options.device = (int)value;
        } else if (strcmp(a, "-a") == 0 || strcmp(a, "--arch") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs an architecture such as sm_86", a);
            const gx_arch_limits *limits = gx_arch_find(argv[++i]);
            if (!limits)
                return usage_error("unknown architecture '%s' (gpuexp occupancy --limits lists them)", argv[i]);
            options.arch = limits->arch; /* "8.6" and "86" become "sm_86" */
        } else if (strcmp(a, "--no-plan") == 0) {
            options.no_plan = 1;
        } else if (strcmp(a, "--inline") == 0) {
            options.inline_run = 1;
        } else if (strcmp(a, "--record") == 0) {
            options.history = "";
        } else if (strcmp(a, "--history") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs the history file's path", a);
            options.history = argv[++i];
        } else if (strcmp(a, "--trace") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", a);
            options.trace = argv[++i];
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a path", a);
            options.out = argv[++i];
        } else if ((found = catalog_option(&options, argc, argv, &i)) != 0) {
            if (found < 0)
                return usage_error("%s needs a value", a);
        } else {
            char hint[256];
            l_catalog_did_you_mean("run", a, hint, sizeof hint);
            fprintf(stderr, "gpuexp: unknown option '%s'%s\n(see gpuexp --help)\n", a, hint);
            return GX_EXIT_USAGE;
        }
    }
    options.option_count = i - 1 - (i <= argc && i > 1 && strcmp(argv[i - 1], "--") == 0);
    if (i >= argc)
        return usage_error("%s", "no script given");
    options.script = argv[i];
    options.script_index = i;
    static char shipped[PATH_MAX];
    if (access(options.script, R_OK) != 0 && options.script[0] != '/' && strncmp(options.script, "./", 2) != 0
        && gx_find_experiment(options.script, shipped, sizeof shipped)) {
        options.script = argv[i] = shipped; /* a shipped experiment by name: gpuexp occupancy_sweep */
    }
    if (access(options.script, R_OK) != 0) {
        int why = errno;
        char hint[512] = "";
        if (why == ENOENT)
            script_hint(options.script, hint, sizeof hint);
        fprintf(stderr, "gpuexp: cannot open %s: %s%s\n", options.script, strerror(why), hint);
        return GX_EXIT_USAGE;
    }
    if (options.worker) {
        options.device = worker_device; /* the GPU the supervisor gave this worker */
        return run_script(argc, argv, &options);
    }
    int automatic_plan = 0;
    if (!options.arch && !options.no_plan) {
        /* no GPU here: say so, and show the offline plan for a stated default architecture */
        int count = 0;
        gx_error error = {0};
        if (gx_device_count(&count, &error) != GX_OK || count == 0) {
            fprintf(stderr, "gpuexp: no GPU found (%s)\n", count == 0 && error.kind == GX_OK ? "the driver reports 0 devices" : error.message);
            fprintf(stderr, "gpuexp: showing the offline PLAN for %s instead (choose with --arch; --no-plan fails instead):\n"
                            "        kernels compiled for %s, occupancy from the model, timing columns EMPTY\n",
                    GX_DEFAULT_PLAN_ARCH, GX_DEFAULT_PLAN_ARCH);
            options.arch = GX_DEFAULT_PLAN_ARCH;
            automatic_plan = 1;
        }
    }
    options.automatic_plan = automatic_plan;
    const char *over = is_script(&options, options.trace) ? "--trace" : is_script(&options, options.out) ? "--out" : NULL;
    if (over && !options.worker) {
        fprintf(stderr, "gpuexp: %s names the script %s itself; give it another file\n", over, options.script);
        return GX_EXIT_USAGE;
    }
    if (!options.inline_run) { /* the supervisor: lua/gpuexp/engine/supervisor.lua runs the script in workers */
        options.builtin = "gpuexp.engine.supervisor";
        if (options.trace && !options.arch) {
            /* the first worker writes FILE.tmp (renamed to FILE at its end); a worker that finds
               FILE.tmp taken writes FILE.PID.json. A FILE.tmp left by an earlier run goes now. */
            char temporary[PATH_MAX];
            if (snprintf(temporary, sizeof temporary, "%s.tmp", options.trace) < (int)sizeof temporary)
                unlink(temporary);
        } else if (options.trace)
            fprintf(stderr, "gpuexp: --trace: an offline plan runs nothing on a GPU; no trace is written\n");
    }
    int code = run_script(argc, argv, &options);
    if (options.arch)
        fprintf(stderr, "gpuexp: this was an offline PLAN for %s: nothing ran on a GPU%s\n", options.arch,
                automatic_plan ? " (no GPU was found)" : "");
    return code;
}
