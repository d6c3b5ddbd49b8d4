/* gpuexp: a script run in a Lua state under a traceback handler, its exit code and the end of an
   in-process run (gx_cli_run.h). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "gx_cli.h"
#include "gx_cli_run.h"
#include "gx_device.h"
#include "gx_occupancy.h"
#include "gx_paths.h"
#include "gx_process.h"
#include "gx_trace.h"
#include "gx_worker.h"
#include "l_catalog.h"
#include "l_gpuexp.h"
#include "l_util.h"

#define GX_STOP_GRACE_S 1.0 /* from a stop signal to the end of an in-process run stuck in a call */

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

int gx_run_flag(const struct gx_run *o, const char *field)
{
    const struct l_parsed_option *option = l_parsed_find(&o->parsed, field);
    return option && (option->value || option->on);
}

const char *gx_run_value(const struct gx_run *o, const char *field)
{
    const struct l_parsed_option *option = l_parsed_find(&o->parsed, field);
    return option ? option->value : NULL;
}

/* Whether an output file given on the command line is the script itself (gpuexp -o k.lua k.lua). */
int gx_run_is_script(const struct gx_run *options, const char *path)
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
static void push_run_options(lua_State *L, int argc, char **argv, const struct gx_run *o)
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
static int start_trace(const struct gx_run *options)
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
static void push_globals(lua_State *L, int argc, char **argv, const struct gx_run *options, const char *script_dir)
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
static lua_State *new_run_state(int argc, char **argv, const struct gx_run *options)
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
static int run_file(lua_State *L, int handler, int argc, char **argv, const struct gx_run *options, int *code)
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
static int report_error(lua_State *L, const struct gx_run *options)
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
    if (options->worker && code > 128)
        return code; /* a worker is stopped by its supervisor, which says why (a user's signal, a full disk) */
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

int gx_cli_run_script(int argc, char **argv, const struct gx_run *options)
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
