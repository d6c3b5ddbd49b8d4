/* gpuexp: the process. C does only what must happen before Lua runs: the crash handler, a supervised
   worker's channel and status page (GPUEXP_WORKER, read and cleared before anything else), the hooks
   that record launches for a supervisor, and stop signals; then ONE Lua state, with the bindings in
   the gpuexp table, runs lua/gpuexp/main.lua with the command line, which parses it from the catalog,
   runs the command or the script, and returns the exit code. */
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "gx_cli.h"
#include "gx_worker.h"
#include "l_gpuexp.h"
#include "l_util.h"

#define GX_STOP_GRACE_S 1.0 /* from a stop signal to the end of a run stuck in a call (a kernel spinning) */

/* A crash is a gpuexp bug: say so, with a backtrace to report, instead of dying silently. */
static void crash_handler(int signal_number)
{
    static const char text[] = "gpuexp: internal error (crashed); please report this with the backtrace below\n";
    if (write(STDERR_FILENO, text, sizeof text - 1) < 0)
        _exit(EX_SOFTWARE);
    void *frames[64];
    int count = backtrace(frames, 64);
    backtrace_symbols_fd(frames, count, STDERR_FILENO);
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

int gx_cli_raise(lua_State *L, const gx_error *error, enum gx_error_kind kind)
{
    l_push_error(L, error->kind == GX_ERR_USAGE ? GX_ERR_USAGE : kind, error->message);
    return lua_error(L);
}

void gx_cli_open(lua_State *L)
{
    static const luaL_Reg commands[] = {
        {"info", gx_cli_info}, {"occupancy", gx_cli_occupancy}, {"metrics", gx_cli_metrics}, {NULL, NULL}};
    lua_newtable(L);
    luaL_setfuncs(L, commands, 0);
    lua_setfield(L, -2, "_cli");
}

/* What C learned before Lua: whether this process is a supervised worker (GPUEXP_WORKER), its GPU
   and slot; read before the bindings open (gpuexp._worker is the channel). */
struct process_start {
    int attached, device, slot;
    gx_error error;
};

/* The second argument of main.lua's main: {worker =, device =, slot =}, or {attach_error =} when
   GPUEXP_WORKER is malformed. */
static void push_process(lua_State *L, const struct process_start *start)
{
    lua_createtable(L, 0, 4);
    if (start->attached < 0) {
        l_set_string(L, "attach_error", start->error.message);
        return;
    }
    lua_pushboolean(L, start->attached);
    lua_setfield(L, -2, "worker");
    l_set_integer(L, "device", start->device);
    l_set_integer(L, "slot", start->slot);
}

/* A failure of main.lua itself (it reports every other one): a bug of gpuexp. */
static int internal_error(lua_State *L)
{
    luaL_traceback(L, L, luaL_tolstring(L, 1, NULL), 1);
    return 1;
}

int main(int argc, char **argv)
{
    signal(SIGSEGV, crash_handler);
    signal(SIGBUS, crash_handler);
    signal(SIGFPE, crash_handler);
    gx_worker_install_hooks(); /* launches and lost contexts are recorded for a supervisor (or the error text) */
    struct process_start start = {0};
    start.attached = gx_worker_attach(&start.device, &start.slot, &start.error);
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "gpuexp: internal error: cannot create a Lua state (out of memory)\n");
        return EX_SOFTWARE;
    }
    luaL_openlibs(L);
    /* Ctrl-C, SIGTERM, SIGHUP: "interrupted" at the next Lua instruction, the process ended 1 s later
       if it is stuck in a call; the supervisor, nightly and bisect take them their own way
       (gpuexp._process.init) */
    l_process_catch_stops(L, GX_STOP_GRACE_S);
    lua_pushcfunction(L, internal_error);
    int handler = lua_gettop(L);
    lua_newtable(L); /* gpuexp: the bindings (l_open_gpuexp) and the C commands */
    l_open_gpuexp(L);
    gx_cli_open(L);
    lua_setglobal(L, "gpuexp");
    lua_getglobal(L, "require");
    lua_pushstring(L, "gpuexp.main");
    int code = EX_SOFTWARE, failed = 1;
    if (lua_pcall(L, 1, 1, handler) == LUA_OK && lua_getfield(L, -1, "main") == LUA_TFUNCTION) {
        lua_createtable(L, argc, 1); /* the command line: [0] this binary, [1 ..] its arguments */
        for (int i = 0; i < argc; i++) {
            lua_pushstring(L, argv[i]);
            lua_rawseti(L, -2, i);
        }
        push_process(L, &start);
        if (lua_pcall(L, 2, 1, handler) == LUA_OK) {
            code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : EX_SOFTWARE;
            failed = !lua_isinteger(L, -1);
        }
    }
    if (failed)
        fprintf(stderr, "gpuexp: internal error (exit %d; please report it with the text below):\n%s\n", EX_SOFTWARE,
                luaL_tolstring(L, -1, NULL));
    lua_close(L); /* runs __gc: buffers freed, contexts released, files closed */
    return code;
}
