/* Lua type gpuexp.Process (a worker seen from the supervisor) and the worker's side of the
   channel: the primitives under lua/gpuexp/engine/supervisor.lua and the sweeps of a worker. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gx_channel.h"
#include "gx_lock.h"
#include "gx_process.h"
#include "gx_worker.h"
#include "l_util.h"
#include "l_wire.h"
#include "l_gpuexp.h"

#define GX_PROCESS_TYPE "gpuexp.Process"

static gx_process *check_process(lua_State *L, int index)
{
    return luaL_checkudata(L, index, GX_PROCESS_TYPE);
}

/* Pushes a received message (a value), or nil, why and whether the other side is gone. */
static int push_received(lua_State *L, int fd)
{
    char *data;
    size_t size;
    int closed;
    gx_error error;
    if (gx_channel_receive(fd, &data, &size, &closed, &error)) {
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        lua_pushboolean(L, closed);
        return 3;
    }
    int decoded = l_wire_push(L, data, size);
    free(data);
    if (!decoded) {
        lua_pushnil(L);
        lua_pushstring(L, "a malformed message on the channel");
        lua_pushboolean(L, 0);
        return 3;
    }
    return 1;
}

/* Sends the value at index (plain data) as one frame: true, or nil and why. */
static int send_frame(lua_State *L, int fd, int index)
{
    luaL_checkany(L, index);
    size_t size;
    char *data = l_wire_encode(L, index, &size);
    gx_error error;
    int failed = gx_channel_send(fd, data, size, &error);
    free(data);
    return l_push_outcome(L, failed, &error);
}

/* gpuexp._process.spawn(argv, device, slot, discard_stdout) -> Process */
static int process_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int device = (int)luaL_checkinteger(L, 2), slot = (int)luaL_checkinteger(L, 3);
    int discard = lua_toboolean(L, 4);
    int count = (int)lua_rawlen(L, 1);
    if (count < 1 || count > 4096)
        return l_raisef(L, GX_ERR_USAGE, "spawn: argv must hold 1 to 4096 strings");
    const char **argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(count + 1), 0); /* freed by the GC */
    for (int i = 0; i < count; i++) {
        lua_rawgeti(L, 1, i + 1);
        argv[i] = luaL_checkstring(L, -1); /* kept alive by the argv table */
        lua_pop(L, 1);
    }
    argv[count] = NULL;
    gx_process *process = lua_newuserdatauv(L, sizeof *process, 0);
    memset(process, 0, sizeof *process);
    process->fd = -1;
    luaL_setmetatable(L, GX_PROCESS_TYPE);
    gx_error error;
    if (gx_process_spawn(process, (char *const *)argv, device, slot, discard, &error))
        return l_raise(L, &error);
    return 1;
}

static int process_send(lua_State *L)
{
    return send_frame(L, check_process(L, 1)->fd, 2);
}
static int process_receive(lua_State *L)
{
    return push_received(L, check_process(L, 1)->fd);
}

/* process:kill([signal name, default "KILL"]) */
static int process_kill(lua_State *L)
{
    static const char *const names[] = {"KILL", "TERM", "INT", NULL};
    static const int numbers[] = {SIGKILL, SIGTERM, SIGINT};
    gx_process_kill(check_process(L, 1), numbers[luaL_checkoption(L, 2, "KILL", names)]);
    return 0;
}

/* process:reap([grace_s]) -> exit code, "exited with code N" / "killed by signal SIGX (...)" */
static int process_reap(lua_State *L)
{
    gx_process *process = check_process(L, 1);
    gx_process_reap(process, luaL_optnumber(L, 2, 5.0));
    lua_pushinteger(L, process->exit_code);
    lua_pushstring(L, process->ended);
    return 2;
}

/* process:status() -> {launches, last_launch, context_error}: the worker's shared page */
static int process_status(lua_State *L)
{
    gx_process *process = check_process(L, 1);
    if (!process->page)
        return 0;
    char text[512];
    gx_worker_describe_launch(process->page, text, sizeof text);
    lua_createtable(L, 0, 3);
    l_set_integer(L, "launches", (lua_Integer)process->page->launches);
    l_set_string(L, "last_launch", text);
    if (process->page->context_error[0])
        l_set_string(L, "context_error", process->page->context_error);
    return 1;
}

static int process_gc(lua_State *L)
{
    gx_process *process = check_process(L, 1);
    if (process->pid > 0) {
        gx_process_kill(process, SIGKILL);
        gx_process_reap(process, 1.0);
    }
    gx_process_release(process);
    return 0;
}

static int process_index(lua_State *L)
{
    gx_process *process = check_process(L, 1);
    const char *key = luaL_checkstring(L, 2);
    if (strcmp(key, "pid") == 0) {
        lua_pushinteger(L, process->pid);
        return 1;
    }
    luaL_getmetatable(L, GX_PROCESS_TYPE);
    lua_getfield(L, -1, "methods");
    lua_getfield(L, -1, key);
    return 1;
}

/* gpuexp._process.wait({processes...}, timeout_s) -> index, or nil ("timeout"), or "signal" */
static int process_wait(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    double timeout = luaL_optnumber(L, 2, -1);
    int count = (int)lua_rawlen(L, 1);
    if (count > 256)
        return l_raisef(L, GX_ERR_USAGE, "wait: at most 256 processes");
    gx_process *list[256];
    for (int i = 0; i < count; i++) {
        lua_rawgeti(L, 1, i + 1);
        list[i] = check_process(L, -1);
        lua_pop(L, 1);
    }
    gx_error error;
    int ready = gx_process_wait(list, count, timeout, &error);
    if (ready == -3)
        return l_raise(L, &error);
    if (ready == -2)
        lua_pushliteral(L, "signal");
    else if (ready == -1)
        lua_pushnil(L);
    else
        lua_pushinteger(L, ready + 1);
    return 1;
}

static int process_init(lua_State *L)
{
    (void)L;
    gx_process_init();
    return 0;
}

static int process_stop_signal(lua_State *L)
{
    lua_pushinteger(L, gx_process_stop_signal());
    return 1;
}

/* gpuexp._process.nice(increment) -> this process's new niceness, or nil and why (a compile helper
   of gpuexp.tune lowers its own priority, so that the measuring process it works for, whose every
   wake-up is on the GPU's critical path, never queues behind a compile for a core). */
static int process_nice(lua_State *L)
{
    int increment = (int)luaL_checkinteger(L, 1);
    errno = 0;
    int value = nice(increment);
    if (value == -1 && errno != 0) {
        lua_pushnil(L);
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    lua_pushinteger(L, value);
    return 1;
}

/* gpuexp._process.run({argv...} [, output or {output=, capture=, timeout_s=, grace_s=, directory=}])
   -> exit code (128 + N for a signal), the stop signal received while it ran (0 when none),
   whether it ran past timeout_s, and (capture) its standard output. Every child but the workers:
   its own process group, default signals, an empty mask (gx_process_run). */
static int process_run(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2); /* the options (or nil) stay at 2, below what is pushed here */
    int argc = (int)lua_rawlen(L, 1);
    if (argc < 1)
        return l_raisef(L, GX_ERR_USAGE, "_process.run: an empty command");
    char **argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(argc + 1), 0);
    for (int i = 0; i < argc; i++) {
        lua_rawgeti(L, 1, i + 1);
        argv[i] = (char *)luaL_checkstring(L, -1);
        lua_pop(L, 1); /* anchored in the argument table */
    }
    argv[argc] = NULL;
    gx_run_options options = {.error_sink = -1};
    if (lua_type(L, 2) == LUA_TSTRING) {
        options.output = lua_tostring(L, 2);
    } else if (!lua_isnoneornil(L, 2)) {
        static const char *const allowed[] = {"output", "capture", "timeout_s", "grace_s", "directory", "record", NULL};
        l_check_options(L, 2, "_process.run", allowed);
        lua_getfield(L, 2, "output");
        options.output = luaL_optstring(L, -1, NULL); /* anchored in the options table */
        lua_getfield(L, 2, "directory");
        options.directory = luaL_optstring(L, -1, NULL);
        lua_getfield(L, 2, "capture");
        options.capture = lua_toboolean(L, -1);
        lua_getfield(L, 2, "timeout_s");
        options.timeout_s = luaL_optnumber(L, -1, 0);
        lua_getfield(L, 2, "grace_s");
        options.grace_s = luaL_optnumber(L, -1, 0);
        lua_getfield(L, 2, "record");
        options.record = luaL_optstring(L, -1, NULL);
        lua_pop(L, 6);
    }
    gx_run_result result;
    gx_error error;
    if (gx_process_run(argv, &options, &result, &error))
        return l_raise(L, &error);
    lua_pushinteger(L, result.exit_code);
    lua_pushinteger(L, result.stop);
    lua_pushboolean(L, result.timed_out);
    if (result.captured)
        lua_pushlstring(L, result.captured, result.captured_size);
    else
        lua_pushnil(L);
    free(result.captured);
    return 4;
}

/* An in-process run: a stop signal sets a hook that raises "interrupted" at the next Lua
   instruction (as lua.c does for Ctrl-C), so Lua code that spins is stopped too. */
static lua_State *interrupted_state;

static void interrupt_hook(lua_State *L, lua_Debug *debug)
{
    (void)debug;
    lua_sethook(L, NULL, 0, 0);
    int number = gx_process_stop_signal();
    l_raisef(L, GX_ERR_INTERRUPTED, "interrupted by SIG%s", sigabbrev_np(number) ? sigabbrev_np(number) : "?");
}

static void on_stop(int signal_number)
{
    (void)signal_number;
    if (interrupted_state)
        lua_sethook(interrupted_state, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

void l_process_catch_stops(lua_State *L, double grace_s)
{
    interrupted_state = L;
    gx_process_catch_stops(on_stop, grace_s);
}

/* gpuexp._process.end_recorded(path) -> true when the recorded group was still running and was ended */
static int process_end_recorded(lua_State *L)
{
    lua_pushboolean(L, gx_process_end_recorded(luaL_checkstring(L, 1)) == 1);
    return 1;
}

/* gpuexp._process.stop_handled(): the run has seen the stop signal and is ending (the watchdog is off) */
static int process_stop_handled(lua_State *L)
{
    (void)L;
    gx_process_stop_handled();
    return 0;
}

#define HELD_LOCKS "gpuexp.held_locks" /* path -> fd */

/* gpuexp._process.lock(path [, share]) -> true [, note], or nil, why and "busy" (another process
   holds it) or "system"; held until _process.unlock(path) or the process ends. note: a lock whose
   holder was gone was taken over. share: the commands started from now on hold it too, so it is
   free only once they have all ended (gx_lock_share). */
static int process_lock(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int share = lua_toboolean(L, 2);
    gx_error error;
    char note[512];
    int fd = gx_lock_take(path, note, sizeof note, &error);
    if (fd >= 0 && share && gx_lock_share(fd) != 0) {
        gx_fail(&error, GX_ERR_SYSTEM, "cannot share the lock %s: fcntl failed: %s", path, strerror(errno));
        gx_lock_release(fd, path);
        fd = -1;
    }
    if (fd < 0) {
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        lua_pushstring(L, gx_error_kind_name(error.kind));
        return 3;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, HELD_LOCKS);
    lua_pushinteger(L, fd);
    lua_setfield(L, -2, path);
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    if (!note[0])
        return 1;
    lua_pushstring(L, note);
    return 2;
}

/* gpuexp._process.unlock(path): removes the lock file and releases the lock */
static int process_unlock(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, HELD_LOCKS);
    if (lua_getfield(L, -1, path) == LUA_TNUMBER) {
        gx_lock_release((int)lua_tointeger(L, -1), path);
        lua_pushnil(L);
        lua_setfield(L, -3, path);
    }
    return 0;
}

/* The held locks' __gc, at lua_close: a run that ends on an error (a failed write, exit 7) lets go
   of its outputs' locks and removes their files as a clean end does. */
static int release_held_locks(lua_State *L)
{
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TNUMBER)
            gx_lock_release((int)lua_tointeger(L, -1), lua_tostring(L, -2));
        lua_pop(L, 1);
    }
    return 0;
}

/* ---- the worker's side ---- */

static int worker_send(lua_State *L)
{
    return send_frame(L, gx_worker_channel(), 1);
}
static int worker_receive(lua_State *L)
{
    return push_received(L, gx_worker_channel());
}

/* gpuexp._context_error() -> the CUDA error that made this process's context unusable, or nil */
static int worker_context_error(lua_State *L)
{
    const char *message = gx_worker_context_error();
    if (!message)
        return 0;
    char text[512];
    gx_worker_describe_launch(gx_worker_own_page(), text, sizeof text);
    lua_pushstring(L, message);
    lua_pushstring(L, text);
    return 2;
}

void l_open_process(lua_State *L)
{
    static const luaL_Reg methods[] = {{"send", process_send}, {"receive", process_receive}, {"kill", process_kill},
                                       {"reap", process_reap}, {"status", process_status},   {NULL, NULL}};
    static const luaL_Reg metamethods[] = {{"__gc", process_gc}, {"__index", process_index}, {NULL, NULL}};
    l_new_class(L, GX_PROCESS_TYPE, methods, metamethods);

    static const luaL_Reg functions[] = {{"init", process_init},
                                         {"spawn", process_spawn},
                                         {"wait", process_wait},
                                         {"stop_signal", process_stop_signal},
                                         {"nice", process_nice},
                                         {"lock", process_lock},
                                         {"unlock", process_unlock},
                                         {"run", process_run},
                                         {"stop_handled", process_stop_handled},
                                         {"end_recorded", process_end_recorded},
                                         {NULL, NULL}};
    lua_newtable(L);
    luaL_setfuncs(L, functions, 0);
    lua_setfield(L, -2, "_process");
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, release_held_locks);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, HELD_LOCKS);
    lua_pushcfunction(L, worker_context_error);
    lua_setfield(L, -2, "_context_error");
    if (gx_worker_channel() >= 0) {
        static const luaL_Reg worker[] = {{"send", worker_send}, {"receive", worker_receive}, {NULL, NULL}};
        lua_newtable(L);
        luaL_setfuncs(L, worker, 0);
        l_set_integer(L, "slot", gx_worker_slot());
        lua_setfield(L, -2, "_worker");
    }
}
