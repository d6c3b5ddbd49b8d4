/* Hardware metrics of launches with CUPTI's range profiler (gx_profiler.c):
   kernel:collect{...} for one launch, gpuexp._collect_batch for many launches in one replay. */
#include <stdlib.h>
#include <string.h>

#include "gx_cupti.h"
#include "gx_tools.h"
#include "l_gpuexp.h"

/* {setup_s, prepare_s, start_s, launch_s, stop_s, decode_s, evaluate_s}: where a collect's time went */
static void push_timing(lua_State *L, const gx_profile_timing *t)
{
    lua_createtable(L, 0, 7);
    const double values[] = {t->setup_s, t->prepare_s, t->start_s, t->launch_s, t->stop_s, t->decode_s, t->evaluate_s};
    const char *const names[] = {"setup_s", "prepare_s", "start_s", "launch_s", "stop_s", "decode_s", "evaluate_s"};
    for (int i = 0; i < 7; i++) {
        lua_pushnumber(L, values[i]);
        lua_setfield(L, -2, names[i]);
    }
}

/* The metric names of the list at `index` (kept alive by it), in a userdata array pushed on the stack. */
static const char **read_names(lua_State *L, int index, const char *what, int *count)
{
    if (!lua_istable(L, index) || lua_rawlen(L, index) == 0)
        l_raisef(L, GX_ERR_USAGE, "%s: 'metrics' must be a non-empty list of metric names", what);
    *count = (int)lua_rawlen(L, index);
    const char **names = lua_newuserdatauv(L, sizeof(char *) * (size_t)*count, 0);
    for (int i = 0; i < *count; i++) {
        if (lua_rawgeti(L, index, i + 1) != LUA_TSTRING)
            l_raisef(L, GX_ERR_USAGE, "%s: metrics[%d] must be a string", what, i + 1);
        names[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    return names;
}

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
    int count;
    const char **names = read_names(L, lua_gettop(L), "collect", &count);
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
    push_timing(L, gx_profiler_timing(device->profiler));
    lua_setfield(L, -2, "timing");
    return 2;
}


/* ---- gpuexp._collect_batch(launches, metrics, restore, flush_l2) ---- */

struct batch_launch {
    l_launch launch;
    int count;                          /* written buffers */
    gx_buffer *written[GX_MAX_PARAMS];  /* device buffers the kernel may write */
    gx_buffer snapshots[GX_MAX_PARAMS]; /* views into the profiler's scratch memory */
};

struct batch_state {
    struct batch_launch *launches;
    gx_tools *tools;
    int restore;
};

/* Inside the pass, before launch i: its buffers as they were before it ran in the first pass (the
   first pass takes the snapshot), then a cold L2. Every launch sees what it would see alone. */
static int batch_prepare(void *user, int pass, int index, gx_error *error)
{
    struct batch_state *state = user;
    struct batch_launch *b = &state->launches[index];
    for (int i = 0; state->restore && i < b->count; i++) {
        gx_buffer *buffer = b->written[i];
        gx_buffer *from = pass == 0 ? buffer : &b->snapshots[i], *to = pass == 0 ? &b->snapshots[i] : buffer;
        if (gx_buffer_copy(to, 0, from, 0, buffer->count, error))
            return error->kind;
    }
    return state->tools ? gx_tools_flush_l2(state->tools, error) : GX_OK;
}

static int batch_launch_one(void *user, int pass, int index, gx_error *error)
{
    (void)pass;
    return l_launch_work(&((struct batch_state *)user)->launches[index].launch, error);
}

/* gpuexp._collect_batch({{kernel=, grid=, block=, shared=, args=}...}, {metric names}, restore, flush_l2)
   -> list of {name = value} per launch, info {passes, chip, launches, timing}; or nil and why when
   counters cannot be read here. Every launch runs on one device. */
static int collect_batch(lua_State *L)
{
    static const char *const allowed[] = {"kernel", "grid", "block", "shared", "args", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    int restore = lua_isnoneornil(L, 3) || lua_toboolean(L, 3);
    int flush = lua_isnoneornil(L, 4) || lua_toboolean(L, 4);
    int count;
    const char **names = read_names(L, 2, "metrics", &count);
    int launches = (int)lua_rawlen(L, 1);
    if (launches == 0)
        return l_raisef(L, GX_ERR_USAGE, "metrics: no launches given");
    struct batch_launch *list = lua_newuserdatauv(L, sizeof *list * (size_t)launches, 0);
    memset(list, 0, sizeof *list * (size_t)launches);
    l_device *device = NULL;
    size_t snapshot_bytes = 0;
    for (int i = 0; i < launches; i++) {
        if (lua_rawgeti(L, 1, i + 1) != LUA_TTABLE)
            return l_raisef(L, GX_ERR_USAGE, "metrics: launch %d must be a table {kernel=, grid=, block=, args=}", i + 1);
        int table = lua_gettop(L);
        lua_getfield(L, table, "kernel");
        l_kernel *k = luaL_testudata(L, -1, GX_KERNEL_TYPE);
        if (!k)
            return l_raisef(L, GX_ERR_USAGE, "metrics: launch %d has no 'kernel' (a kernel from program:kernel)", i + 1);
        l_device *owner = l_kernel_device(L, lua_gettop(L));
        if (!owner) {
            lua_pushnil(L);
            lua_pushstring(L, "no hardware counters in an offline plan");
            return 2;
        }
        if (device && owner != device)
            return l_raisef(L, GX_ERR_USAGE, "metrics: launch %d runs on another GPU than launch 1; one batch, one GPU", i + 1);
        device = owner;
        lua_pop(L, 1);
        l_read_launch(L, table, k, &list[i].launch, 0, "metrics", allowed);
        lua_getfield(L, table, "args");
        for (int a = 0; lua_istable(L, -1) && a < (int)lua_rawlen(L, -1); a++) {
            lua_rawgeti(L, -1, a + 1);
            l_buffer *buffer = luaL_testudata(L, -1, GX_BUFFER_TYPE);
            if (buffer && buffer->buffer.kind == GX_MEMORY_DEVICE) {
                list[i].written[list[i].count++] = &buffer->buffer; /* kept alive by the launches table */
                snapshot_bytes += (buffer->buffer.bytes + 255) / 256 * 256;
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 2);
    }
    gx_error error;
    struct batch_state state = {list, flush ? l_device_tools(L, device) : NULL, restore};
    if (!device->profiler && gx_profiler_open(&device->profiler, &device->device, &error)) {
        if (error.kind != GX_ERR_PROFILER)
            return l_raise(L, &error);
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        return 2;
    }
    if (restore) { /* one snapshot per written buffer per launch: launches may share buffers */
        CUdeviceptr scratch;
        if (gx_profiler_scratch(device->profiler, snapshot_bytes ? snapshot_bytes : 256, &scratch, &error))
            return l_raise(L, &error);
        for (int i = 0; i < launches; i++)
            for (int b = 0; b < list[i].count; b++) {
                list[i].snapshots[b] = *list[i].written[b];
                list[i].snapshots[b].device_pointer = scratch;
                scratch += (list[i].written[b]->bytes + 255) / 256 * 256;
            }
    }
    double *values = lua_newuserdatauv(L, sizeof(double) * (size_t)count * (size_t)launches, 0);
    int passes = 0;
    int status = gx_profiler_collect_batch(device->profiler, names, count, launches, flush ? 1 : 0, batch_prepare,
                                           batch_launch_one, &state, values, &passes, &error);
    if (status == GX_ERR_PROFILER) {
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        return 2;
    }
    if (status)
        return l_raise(L, &error);
    lua_createtable(L, launches, 0);
    for (int i = 0; i < launches; i++) {
        lua_createtable(L, 0, count);
        for (int m = 0; m < count; m++) {
            lua_pushnumber(L, values[(size_t)i * (size_t)count + (size_t)m]);
            lua_setfield(L, -2, names[m]);
        }
        lua_rawseti(L, -2, i + 1);
    }
    lua_createtable(L, 0, 4);
    l_set_integer(L, "passes", passes);
    l_set_integer(L, "launches", launches);
    l_set_string(L, "chip", gx_profiler_chip(device->profiler));
    push_timing(L, gx_profiler_timing(device->profiler));
    lua_setfield(L, -2, "timing");
    return 2;
}

void l_open_collect(lua_State *L)
{
    lua_pushcfunction(L, collect_batch);
    lua_setfield(L, -2, "_collect_batch");
}
