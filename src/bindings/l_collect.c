/* Hardware metrics of launches with CUPTI's range profiler (gx_profiler.c):
   kernel:collect{...} for one launch, gpuexp._collect_batch for many launches in one replay. */
#include <stdlib.h>
#include <string.h>

#include "gx_cupti.h"
#include "gx_tools.h"
#include "l_gpuexp.h"

/* ---- hardware metrics: kernel:collect{grid, block, shared, args, metrics, restore, flush_l2} ---- */

struct collect_state {
    l_launch *launch;
    gx_profiler *profiler;
    gx_buffer *written[GX_MAX_PARAMS]; /* device buffers the kernel may write */
    gx_buffer snapshots[GX_MAX_PARAMS]; /* not owned: views into the profiler's scratch memory */
    gx_tools *tools; /* set when the L2 is flushed before each pass */
    int count, restore, flush;
};

/* Before each pass, outside the profiled range: the buffers as they were before the first pass,
   and a cold L2, so every pass sees what a single launch would see. */
static int collect_prepare(void *user, int pass, gx_error *error)
{
    struct collect_state *state = user;
    if (state->restore && pass == 0) { /* snapshots: views into the profiler's reused scratch memory */
        size_t total = 0;
        for (int i = 0; i < state->count; i++)
            total += (state->written[i]->bytes + 255) / 256 * 256;
        CUdeviceptr scratch;
        if (gx_profiler_scratch(state->profiler, total ? total : 256, &scratch, error))
            return error->kind;
        for (int i = 0; i < state->count; i++) {
            state->snapshots[i] = *state->written[i];
            state->snapshots[i].device_pointer = scratch;
            scratch += (state->written[i]->bytes + 255) / 256 * 256;
        }
    }
    for (int i = 0; state->restore && i < state->count; i++) {
        gx_buffer *buffer = state->written[i];
        gx_buffer *from = pass == 0 ? buffer : &state->snapshots[i], *to = pass == 0 ? &state->snapshots[i] : buffer;
        if (gx_buffer_copy(to, 0, from, 0, buffer->count, error))
            return error->kind;
    }
    return state->tools ? gx_tools_flush_l2(state->tools, error) : GX_OK;
}

static int collect_launch(void *user, int pass, gx_error *error)
{
    (void)pass;
    return l_launch_work(((struct collect_state *)user)->launch, error);
}

int l_kernel_collect(lua_State *L)
{
    static const char *const allowed[] = {"grid", "block", "shared", "args", "metrics", "restore", "flush_l2", NULL};
    l_kernel *k = l_check_kernel(L, 1);
    l_check_options(L, 2, "collect", allowed);
    lua_getfield(L, 2, "metrics");
    if (!lua_istable(L, -1) || lua_rawlen(L, -1) == 0)
        return l_raisef(L, GX_ERR_USAGE, "collect: 'metrics' must be a non-empty list of metric names");
    int count = (int)lua_rawlen(L, -1);
    const char **names = lua_newuserdatauv(L, sizeof(char *) * (size_t)count, 0);
    for (int i = 0; i < count; i++) {
        if (lua_rawgeti(L, -2, i + 1) != LUA_TSTRING)
            return l_raisef(L, GX_ERR_USAGE, "collect: metrics[%d] must be a string", i + 1);
        names[i] = lua_tostring(L, -1); /* kept alive by the metrics table */
        lua_pop(L, 1);
    }
    struct collect_state *state = lua_newuserdatauv(L, sizeof *state, 0);
    memset(state, 0, sizeof *state);
    state->launch = lua_newuserdatauv(L, sizeof(l_launch), 0);
    l_read_launch(L, 2, k, state->launch, 0, "collect", allowed);
    lua_getfield(L, 2, "restore");
    state->restore = lua_isnil(L, -1) || lua_toboolean(L, -1);
    lua_getfield(L, 2, "flush_l2");
    state->flush = lua_isnil(L, -1) || lua_toboolean(L, -1);
    lua_pop(L, 2);
    if (!k->kernel.function) {
        lua_pushnil(L);
        lua_pushstring(L, "no hardware counters in an offline plan");
        return 2;
    }
    l_device *device = l_kernel_device(L, 1);
    gx_error error;
    if (state->flush)
        state->tools = l_device_tools(L, device);
    if (!device->profiler && gx_profiler_open(&device->profiler, &device->device, &error)) {
        if (error.kind != GX_ERR_PROFILER)
            return l_raise(L, &error);
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        return 2;
    }
    state->profiler = device->profiler;
    lua_getfield(L, 2, "args");
    for (int i = 0; lua_istable(L, -1) && i < (int)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i + 1);
        l_buffer *buffer = luaL_testudata(L, -1, GX_BUFFER_TYPE);
        if (buffer && buffer->buffer.kind == GX_MEMORY_DEVICE)
            state->written[state->count++] = &buffer->buffer;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    double *values = lua_newuserdatauv(L, sizeof(double) * (size_t)count, 0);
    int passes = 0;
    int status = gx_profiler_collect(device->profiler, names, count, collect_prepare, collect_launch, state, values,
                                     &passes, &error);
    if (status == GX_ERR_PROFILER) {
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        return 2;
    }
    if (status)
        return l_raise(L, &error);
    lua_createtable(L, 0, count);
    for (int i = 0; i < count; i++) {
        lua_pushnumber(L, values[i]);
        lua_setfield(L, -2, names[i]);
    }
    lua_createtable(L, 0, 4);
    l_set_integer(L, "passes", passes);
    l_set_string(L, "chip", gx_profiler_chip(device->profiler));
    lua_createtable(L, 0, count);
    for (int i = 0; i < count; i++) {
        gx_metric_info info;
        if (gx_metric_check(gx_profiler_host(device->profiler), names[i], &info, &error) == GX_OK && info.dimension_unit) {
            lua_pushstring(L, info.dimension_unit);
            lua_setfield(L, -2, names[i]);
        }
    }
    lua_setfield(L, -2, "units");
    return 2;
}

