/* Lua type gpuexp.Sequence: a Lua function that enqueues work (several kernels, copies, other
   streams joined back with events), run on a stream of its own and timed as one unit: hot, cold,
   or captured into a CUDA graph (graph mode). Launches and copies without a stream of their own go
   to the sequence's stream. The measurement policy and the counters build on this (lua/gpuexp). */
#include <string.h>

#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

#define SEQUENCE_ERROR "gpuexp.sequence_error" /* the Lua error of a failed run, raised again as it was */

/* uservalues: 1 the Device, 2 the function, 3 the Stream handed to the function */
typedef struct l_sequence {
    gx_stream stream; /* the sequence's own blocking stream */
    int kernels;      /* kernels one run launched (counted at the first run); -1 before */
    int runs;
    char name[128];
} l_sequence;

static l_sequence *check_sequence(lua_State *L, int index)
{
    return luaL_checkudata(L, index, GX_SEQUENCE_TYPE);
}

/* A sequence of an offline plan: its device is the plan's, and its function gets a planned stream
   (gpuexp.stream{}), so that what the function does with it (events, waits, launches) is checked
   as on a GPU. Nothing runs; its launches are counted (sequence.kernels). */
static int plan_sequence(lua_State *L, int index, int device_index)
{
    if (device_index)
        lua_pushvalue(L, device_index);
    else
        l_call_gpuexp(L, "device");
    lua_setiuservalue(L, index, 1);
    l_call_gpuexp(L, "stream");
    lua_setiuservalue(L, index, 3);
    lua_settop(L, index);
    return 1;
}

/* gpuexp.sequence(function(stream) ... end [, {device =, name =}]) -> Sequence */
static int gpuexp_sequence(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    int options = lua_isnoneornil(L, 2) ? 0 : 2;
    int device_index = 0;
    const char *name = "sequence";
    if (options) {
        static const char *const allowed[] = {"device", "name", NULL};
        l_check_options(L, options, "sequence", allowed);
        name = l_opt_string_field(L, options, "name", name);
        if (lua_getfield(L, options, "device") != LUA_TNIL) {
            if (!l_is_planned_device(L, -1))
                l_check_device(L, -1);
            device_index = lua_gettop(L);
        } else {
            lua_pop(L, 1);
        }
    }
    if (!device_index && !l_offline_arch(L))
        l_default_device(L, &device_index);
    l_sequence *sequence = lua_newuserdatauv(L, sizeof *sequence, 3);
    memset(sequence, 0, sizeof *sequence);
    sequence->kernels = -1;
    snprintf(sequence->name, sizeof sequence->name, "%s", name);
    luaL_setmetatable(L, GX_SEQUENCE_TYPE);
    int index = lua_gettop(L);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, index, 2);
    if (l_offline_arch(L)) /* an offline plan: nothing runs; the function gets a plan's stream */
        return plan_sequence(L, index, device_index);
    lua_pushvalue(L, device_index);
    lua_setiuservalue(L, index, 1);
    l_device *device = lua_touserdata(L, device_index);
    gx_error error;
    if (gx_stream_create(&sequence->stream, &device->device, 0, 1, &error))
        return l_raise(L, &error);
    /* the Stream the function gets: borrowed, the sequence destroys the stream */
    l_stream *stream = lua_newuserdatauv(L, sizeof *stream, 1);
    memset(stream, 0, sizeof *stream);
    stream->stream = sequence->stream;
    stream->borrowed = 1;
    luaL_setmetatable(L, GX_STREAM_TYPE);
    lua_pushvalue(L, device_index);
    lua_setiuservalue(L, -2, 1);
    lua_setiuservalue(L, index, 3);
    lua_settop(L, index);
    return 1;
}

/* One run: the function called with the stream at the top of the stack's Stream, with work that
   names no stream going there. A Lua error is kept (SEQUENCE_ERROR) and reported as a usage error. */
static int call_function(lua_State *L, int sequence_index, l_stream *stream, gx_error *error)
{
    l_sequence *sequence = lua_touserdata(L, sequence_index);
    CUstream saved = gx_current_stream;
    if (stream) /* none in an offline plan, where launches are checked, not run */
        gx_current_stream = stream->stream.handle;
    uint64_t before = gx_kernel_launches;
    lua_getiuservalue(L, sequence_index, 2);
    lua_getiuservalue(L, sequence_index, 3);
    int status = lua_pcall(L, 1, 0, 0);
    gx_current_stream = saved;
    if (status != LUA_OK) {
        const char *message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!message && lua_istable(L, -1)) {
            lua_getfield(L, -1, "message");
            message = lua_tostring(L, -1);
            lua_pop(L, 1);
        }
        gx_fail(error, GX_ERR_USAGE, "%s", message ? message : "the sequence's function raised an error");
        lua_setfield(L, LUA_REGISTRYINDEX, SEQUENCE_ERROR);
        return error->kind;
    }
    int kernels = (int)(gx_kernel_launches - before);
    if (sequence->runs++ == 0)
        sequence->kernels = kernels;
    return GX_OK;
}

int l_sequence_run(lua_State *L, int sequence_index, gx_error *error)
{
    lua_getiuservalue(L, sequence_index, 3);
    l_stream *stream = lua_touserdata(L, -1); /* NULL in an offline plan */
    lua_pop(L, 1);                            /* alive through the sequence */
    return call_function(L, sequence_index, stream, error);
}

/* Raises again what the function raised (its own message and line), else the error. */
int l_sequence_raise(lua_State *L, const gx_error *error)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, SEQUENCE_ERROR) != LUA_TNIL) {
        lua_pushnil(L);
        lua_setfield(L, LUA_REGISTRYINDEX, SEQUENCE_ERROR);
        return lua_error(L);
    }
    lua_pop(L, 1);
    return l_raise(L, error);
}

struct timed_run {
    lua_State *L;
    int sequence_index;
    l_stream *capture; /* the borrowed Stream for graph capture */
};

static int run_work(void *user, gx_error *error)
{
    struct timed_run *run = user;
    return l_sequence_run(run->L, run->sequence_index, error);
}

/* In graph mode: one run enqueued on the capture stream. */
static int run_on_stream(void *user, CUstream stream, gx_error *error)
{
    struct timed_run *run = user;
    run->capture->stream.handle = stream;
    return call_function(run->L, run->sequence_index, run->capture, error);
}

static int raise_run(lua_State *L, void *user, const gx_error *error)
{
    (void)user;
    return l_sequence_raise(L, error);
}

static l_device *sequence_device(lua_State *L, int index)
{
    if (lua_getiuservalue(L, index, 1) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        return NULL;
    }
    l_device *device = lua_touserdata(L, -1);
    lua_pop(L, 1); /* the sequence keeps it alive */
    return device;
}

/* sequence:time{warmup =, reps =, cold =, graph =, clock =} -> statistics, as kernel:time gives */
static int sequence_time(lua_State *L)
{
    check_sequence(L, 1);
    static const char *const allowed[] = {"warmup", "reps", "cold", "graph", "batch", "hold", "clock", NULL};
    int options = lua_isnoneornil(L, 2) ? 0 : 2;
    if (options)
        l_check_options(L, options, "time", allowed);
    lua_settop(L, 2);
    struct timed_run run = {L, 1, NULL};
    l_device *device = sequence_device(L, 1);
    if (!device) { /* an offline plan: one run checks the function's launches; no time */
        gx_error error;
        if (l_sequence_run(L, 1, &error))
            return l_sequence_raise(L, &error);
    }
    if (device) { /* a borrowed Stream to hand to the function while it is captured */
        run.capture = lua_newuserdatauv(L, sizeof *run.capture, 1);
        memset(run.capture, 0, sizeof *run.capture);
        run.capture->stream.device = &device->device;
        run.capture->borrowed = 1;
        luaL_setmetatable(L, GX_STREAM_TYPE);
        lua_getiuservalue(L, 1, 1);
        lua_setiuservalue(L, -2, 1);
    }
    l_timed_work work = {
        .work = run_work, .enqueue = run_on_stream, .user = &run, .device = device, .raise = raise_run};
    int results = l_time_work(L, &work, options);
    if (run.capture)
        run.capture->stream.handle = NULL; /* the capture stream is gone */
    return results;
}

/* sequence:run(): once, then waits for the GPU (in an offline plan its launches are checked) */
static int sequence_run(lua_State *L)
{
    check_sequence(L, 1);
    l_device *device = sequence_device(L, 1);
    gx_error error;
    if (l_sequence_run(L, 1, &error))
        return l_sequence_raise(L, &error);
    if (device && gx_synchronize(&device->device, &error))
        return l_raise(L, &error);
    return 0;
}

static int sequence_index(lua_State *L)
{
    l_sequence *sequence = check_sequence(L, 1);
    const char *key = luaL_checkstring(L, 2);
    luaL_getmetafield(L, 1, "methods");
    if (lua_getfield(L, -1, key) != LUA_TNIL)
        return 1;
    if (strcmp(key, "name") == 0)
        lua_pushstring(L, sequence->name);
    else if (strcmp(key, "kernels") == 0 && sequence->kernels >= 0)
        lua_pushinteger(L, sequence->kernels);
    else if (strcmp(key, "stream") == 0)
        lua_getiuservalue(L, 1, 3);
    else if (strcmp(key, "device") == 0)
        lua_getiuservalue(L, 1, 1);
    else
        lua_pushnil(L);
    return 1;
}

static int sequence_gc(lua_State *L)
{
    l_sequence *sequence = check_sequence(L, 1);
    gx_stream_destroy(&sequence->stream);
    return 0;
}

static int sequence_tostring(lua_State *L)
{
    lua_pushfstring(L, "gpuexp.Sequence(%s)", check_sequence(L, 1)->name);
    return 1;
}

void l_open_sequence(lua_State *L)
{
    static const luaL_Reg methods[] = {{"time", sequence_time}, {"run", sequence_run}, {NULL, NULL}};
    static const luaL_Reg metamethods[] = {
        {"__index", sequence_index}, {"__gc", sequence_gc}, {"__tostring", sequence_tostring}, {NULL, NULL}};
    l_new_class(L, GX_SEQUENCE_TYPE, methods, metamethods);
    luaL_getmetatable(L, GX_SEQUENCE_TYPE);
    lua_getfield(L, -1, "methods");
    lua_setfield(L, -3, "_sequence_methods"); /* the Lua library adds measure and metrics */
    lua_pop(L, 1);
    lua_pushcfunction(L, gpuexp_sequence);
    lua_setfield(L, -2, "sequence");
}
