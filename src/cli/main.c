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

/* A run as C carries it out. The options themselves are the run command's catalog entries
   (lua/gpuexp/catalog.lua), parsed by lua/gpuexp/engine/args.lua (l_catalog_parse): `parsed` holds
   every option given by its field, and the few C acts on itself are read from there by field
   (read_run_fields); the rest reach the script as gpuexp.run_options. */
struct options {
    struct l_parsed parsed;
    const char *arch; /* offline plan: plan_arch, or the default when no GPU is found */
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
    const char *trace; /* record a timeline (Chrome trace JSON) here */
    int diagnose;      /* diagnose every timed launch (gpuexp diagnose SCRIPT) */
    int profile;       /* gpuexp profile: each measured launch once, inside cuProfilerStart/Stop */
};

/* The fields C itself acts on, pushed into gpuexp.run_options its own way (or not at all). */
static int c_owned_field(const char *field)
{
    static const char *const owned[] = {"device", "plan_arch", "out", "inline", "help", "version", "no_plan",
                                        "diagnose", "profile", "quiet"};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        if (strcmp(field, owned[i]) == 0)
            return 1;
    return 0;
}

static int flag_given(const struct options *o, const char *field)
{
    const struct l_parsed_option *option = l_parsed_find(&o->parsed, field);
    return option && (option->value || option->on);
}

static const char *value_given(const struct options *o, const char *field)
{
    const struct l_parsed_option *option = l_parsed_find(&o->parsed, field);
    return option ? option->value : NULL;
}

/* Whether an output file given on the command line is the script itself (gpuexp -o k.lua k.lua). */
static int is_script(const struct options *options, const char *path)
{
    char path_real[PATH_MAX], script_real[PATH_MAX];
    return path && realpath(path, path_real) && realpath(options->script, script_real)
           && strcmp(path_real, script_real) == 0;
}

static void push_string_list(lua_State *L, char **items, int count, int *n)
{
    for (int i = 0; i < count; i++) {
        lua_pushstring(L, items[i]);
        lua_rawseti(L, -2, ++*n);
    }
}

/* gpuexp.run_options: every option given by its catalog field (a value as typed, a flag true),
   the ones C owns as C read them, the worker's command line and the command line as typed. */
static void push_run_options(lua_State *L, int argc, char **argv, const struct options *o)
{
    lua_createtable(L, 0, 12);
    for (int i = 0; i < o->parsed.count; i++) {
        const struct l_parsed_option *option = &o->parsed.given[i];
        if (c_owned_field(option->field))
            continue;
        if (option->value)
            lua_pushstring(L, option->value);
        else
            lua_pushboolean(L, option->on);
        lua_setfield(L, -2, option->field);
    }
    const struct {
        const char *name;
        int value;
    } flags[] = {{"no_plan", o->no_plan}, {"diagnose", o->diagnose}, {"profile", o->profile}, {"quiet", o->quiet}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        lua_pushboolean(L, flags[i].value);
        lua_setfield(L, -2, flags[i].name);
    }
    if (o->arch) {
        lua_pushstring(L, o->arch);
        lua_setfield(L, -2, "plan_arch");
    }
    lua_pushinteger(L, o->device);
    lua_setfield(L, -2, "device");
    /* the worker's command line: this binary, the options, then -- SCRIPT ARGS */
    lua_createtable(L, argc + 4, 0);
    int n = 0;
    push_string_list(L, argv, o->option_count + 1, &n);
    if (o->automatic_plan) { /* decided once, here, so workers do not say "no GPU found" again */
        char *plan[] = {"--arch", (char *)o->arch};
        push_string_list(L, plan, 2, &n);
    }
    char *separator[] = {"--"};
    push_string_list(L, separator, 1, &n);
    push_string_list(L, argv + o->script_index, argc - o->script_index, &n);
    lua_setfield(L, -2, "worker_argv");
    /* the command line as typed, for "resume with: ..." */
    lua_createtable(L, argc, 0);
    n = 0;
    push_string_list(L, argv, argc, &n);
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

/* A script run in this process (--inline, gpuexp profile) ends as a supervised one does, well or
   not: its sweeps closed, the history recorded, its failed points said on stderr and counted in
   the exit code (lua/gpuexp/api/sweep.lua's finish). code: the script's own exit code (0: it
   ended well); returns the run's. */
static int report_failures(lua_State *L, int handler, int code)
{
    lua_settop(L, handler);
    lua_getglobal(L, "require");
    lua_pushstring(L, "gpuexp.api.sweep");
    if (lua_pcall(L, 1, 1, handler) == LUA_OK && lua_getfield(L, -1, "finish") == LUA_TFUNCTION) {
        lua_pushinteger(L, code);
        if (code)
            lua_pushfstring(L, "the script failed (exit code %d)", code);
        else
            lua_pushnil(L);
        if (lua_pcall(L, 2, 1, handler) == LUA_OK) {
            int result = (int)lua_tointeger(L, -1);
            lua_settop(L, handler);
            return result;
        }
    }
    fprintf(stderr, "gpuexp: internal error: the failed points cannot be counted: %s\n", lua_tostring(L, -1));
    lua_settop(L, handler);
    return code ? code : GX_EXIT_SCRIPT;
}

/* The script's folder, absolute when it can be resolved. */
static void script_folder(const char *script, char *dir, size_t size)
{
    snprintf(dir, size, "%s", script);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, size, ".");
    char resolved[PATH_MAX];
    if (realpath(dir, resolved))
        snprintf(dir, size, "%s", resolved);
}

/* The global gpuexp table (the bindings, the run's facts, gpuexp.run_options) and arg. */
static void push_globals(lua_State *L, int argc, char **argv, const struct options *options, const char *script_dir)
{
    lua_newtable(L); /* gpuexp */
    l_open_gpuexp(L);
    l_set_string(L, "script", options->script);
    l_set_string(L, "script_dir", script_dir);
    if (options->out)
        l_set_string(L, "out", options->out);
    lua_pushboolean(L, options->quiet);
    lua_setfield(L, -2, "quiet");
    lua_pushboolean(L, isatty(STDERR_FILENO));
    lua_setfield(L, -2, "stderr_is_terminal");
    l_set_integer(L, "device_ordinal", options->device);
    lua_pushboolean(L, options->arch != NULL);
    lua_setfield(L, -2, "plan");
    if (options->arch)
        l_set_string(L, "offline_arch", options->arch);
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
    lua_pop(L, 1); /* gpuexp */
}

/* A Lua state for the run: the libraries, stop signals caught, the registry's settings, the globals. */
static lua_State *new_run_state(int argc, char **argv, const struct options *options)
{
    lua_State *L = luaL_newstate();
    if (!L)
        return NULL;
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
    script_folder(options->script, script_dir, sizeof script_dir);
    lua_pushstring(L, script_dir);
    lua_setfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_SCRIPT_DIR);
    push_globals(L, argc, argv, options, script_dir);
    return L;
}

/* A command written in Lua: its module's main(arg). Returns the Lua status; *returned is the exit
   code main returned (-1 when none). */
static int run_builtin(lua_State *L, int handler, const char *module, int *returned)
{
    *returned = -1;
    lua_getglobal(L, "require");
    lua_pushstring(L, module);
    int status = lua_pcall(L, 1, 1, handler);
    if (status != LUA_OK)
        return status;
    lua_getfield(L, -1, "main");
    lua_getglobal(L, "arg");
    status = lua_pcall(L, 1, 1, handler); /* main may return the exit code */
    gx_process_stop_handled();
    if (status == LUA_OK && lua_isinteger(L, -1))
        *returned = (int)lua_tointeger(L, -1);
    return status;
}

/* The user's script, loaded, run with its arguments and (with --trace) traced. Returns the Lua
   status; *code is the exit code of a run that got that far (failed points, a trace that could not
   be written or started), else 0. */
static int run_file(lua_State *L, int handler, int argc, char **argv, const struct options *options, int *code)
{
    *code = 0;
    int status = luaL_loadfile(L, options->script);
    if (status != LUA_OK)
        return status;
    int tracing = options->trace && !options->arch;
    if (options->trace && options->arch && !options->worker)
        fprintf(stderr, "gpuexp: --trace: an offline plan runs nothing on a GPU; no trace is written\n");
    int trace_status = tracing ? start_trace(options) : GX_OK;
    if (trace_status != GX_OK) { /* a bad --trace (2), a trace file that cannot be written (7), no CUPTI (3) */
        *code = trace_status == GX_ERR_USAGE    ? GX_EXIT_USAGE
                : trace_status == GX_ERR_SYSTEM ? GX_EXIT_WRITE
                                                : GX_EXIT_GPU;
        return -1;
    }
    for (int i = options->script_index + 1; i < argc; i++)
        lua_pushstring(L, argv[i]);
    status = lua_pcall(L, argc - options->script_index - 1, 0, handler);
    gx_process_stop_handled(); /* the run came back: no watchdog while it closes */
    if (status == LUA_OK && !options->worker)
        *code = report_failures(L, handler, 0);
    gx_error trace_error;
    if (tracing && gx_trace_stop(&trace_error)) {
        fprintf(stderr, "gpuexp: %s\n", trace_error.message);
        if (status == LUA_OK)
            *code = GX_EXIT_WRITE;
    }
    return status;
}

/* The exit code of a failed run or command (the error value on top), its message printed. */
static int report_error(lua_State *L, const struct options *options)
{
    int code = exit_code_for(L, -1, options->builtin != NULL);
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
    return code;
}

static int run_script(int argc, char **argv, const struct options *options)
{
    lua_State *L = new_run_state(argc, argv, options);
    if (!L) {
        fprintf(stderr, "gpuexp: cannot create a Lua state (out of memory)\n");
        return GX_EXIT_SCRIPT;
    }
    lua_pushcfunction(L, message_handler);
    int handler = lua_gettop(L);
    int code = 0;
    /* the Lua library adds its functions (sweep, csv, ...) to the gpuexp table */
    lua_getglobal(L, "require");
    lua_pushstring(L, "gpuexp.init");
    int status = lua_pcall(L, 1, 0, handler);
    if (status == LUA_OK && options->builtin) {
        status = run_builtin(L, handler, options->builtin, &code);
        if (status == LUA_OK && code >= 0) {
            lua_close(L);
            return code;
        }
        code = 0;
    } else if (status == LUA_OK) {
        status = run_file(L, handler, argc, argv, options, &code);
        if (status < 0 || status == LUA_ERRFILE) { /* the trace could not start; the script cannot be read */
            if (status == LUA_ERRFILE)
                fprintf(stderr, "gpuexp: %s\n", lua_tostring(L, -1));
            lua_close(L);
            return status < 0 ? code : GX_EXIT_USAGE;
        }
    }
    gx_process_stop_handled();
    if (status == LUA_OK && gx_process_stop_signal()) /* the script caught the interruption itself */
        code = 128 + gx_process_stop_signal();
    if (status != LUA_OK) {
        code = report_error(L, options);
        if (!options->builtin && !options->worker && code != GX_EXIT_INTERNAL && code <= 128)
            code = report_failures(L, handler, code); /* the run ends as a supervised one does */
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
        struct options options = {.script = argv[1], .script_index = 1, .builtin = module, .inline_run = 1};
        snprintf(module, sizeof module, "%s", detail);
        return run_script(argc, argv, &options);
    }
    if (kind == L_COMMAND_RUN_OPTION) {
        snprintf(run_option, sizeof run_option, "%s", detail);
        argv[1] = run_option; /* gpuexp diagnose SCRIPT is gpuexp --diagnose SCRIPT */
    }
    return -1;
}

/* The run's options, from the catalog (l_catalog_parse), into the fields C acts on. Returns -1 to
   go on, or the exit code: a usage error (2), --help or --version. */
static int read_run_fields(int argc, char **argv, struct options *options)
{
    int parsed = l_catalog_parse("run", argc, argv, &options->parsed);
    if (parsed == -2) {
        fprintf(stderr, "gpuexp: internal error: %s\n", options->parsed.error);
        return GX_EXIT_INTERNAL;
    }
    if (parsed < 0)
        return usage_error("%s", options->parsed.error);
    options->diagnose = flag_given(options, "diagnose");
    options->profile = flag_given(options, "profile");
    if (flag_given(options, "help"))
        return l_catalog_help(options->diagnose ? "diagnose" : options->profile ? "profile" : "run", stdout) == 0
                   ? GX_EXIT_OK
                   : GX_EXIT_USAGE;
    if (flag_given(options, "version")) { /* gpuexp, Lua, SQLite and the CUDA pieces found: gpuexp doctor --version */
        char *version_argv[] = {argv[0], "doctor", "--version", NULL};
        struct options doctor = {
            .script = "doctor", .script_index = 1, .builtin = "gpuexp.commands.doctor", .inline_run = 1};
        return run_script(3, version_argv, &doctor);
    }
    const char *device = value_given(options, "device"); /* a whole number 0..1024 (its catalog entry) */
    options->device = device ? atoi(device) : 0;
    const char *arch = value_given(options, "plan_arch");
    if (arch) {
        const gx_arch_limits *limits = gx_arch_find(arch);
        if (!limits)
            return usage_error("unknown architecture '%s' (gpuexp occupancy --limits lists them)", arch);
        options->arch = limits->arch; /* "8.6" and "86" become "sm_86" */
    }
    options->out = value_given(options, "out");
    options->trace = value_given(options, "trace");
    options->quiet = flag_given(options, "quiet");
    options->no_plan = flag_given(options, "no_plan");
    options->inline_run = flag_given(options, "inline") || options->profile; /* profile: in the profiler's process */
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
static int find_script(char **argv, struct options *options)
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
static void choose_plan(struct options *options)
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
static void become_supervisor(struct options *options)
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
    static struct options options; /* static: the parsed options are large */
    options.worker = attached;
    if ((code = read_run_fields(argc, argv, &options)) >= 0 || (code = find_script(argv, &options)) >= 0)
        return code;
    if (options.worker) {
        options.device = worker_device; /* the GPU the supervisor gave this worker */
        return run_script(argc, argv, &options);
    }
    choose_plan(&options);
    const char *over = is_script(&options, options.trace) ? "--trace"
                       : is_script(&options, options.out) ? "--out"
                                                           : NULL;
    if (over) {
        fprintf(stderr, "gpuexp: %s names the script %s itself; give it another file\n", over, options.script);
        return GX_EXIT_USAGE;
    }
    if (!options.inline_run)
        become_supervisor(&options);
    code = run_script(argc, argv, &options);
    if (options.arch)
        fprintf(stderr, "gpuexp: this was an offline PLAN for %s: nothing ran on a GPU%s\n", options.arch,
                options.automatic_plan ? " (no GPU was found)" : "");
    return code;
}
