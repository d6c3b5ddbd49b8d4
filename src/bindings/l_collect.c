/* Hardware metrics of launches with CUPTI's range profiler (gx_profiler.c):
   kernel:collect{...} for one launch, gpuexp._collect_batch for many launches in one replay. */
#include <stdlib.h>
#include <string.h>

#include "gx_metric.h"
#include "gx_profiler.h"
#include "gx_helper_kernels.h"
#include "l_util.h"
#include "l_types.h"
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

/* The info table of a batch or a sequence: passes, the launches or kernels counted (key), the chip
   and where the time went. */
static void push_info(lua_State *L, l_device *device, int passes, const char *key, int count)
{
    lua_createtable(L, 0, 4);
    l_set_integer(L, "passes", passes);
    l_set_integer(L, key, count);
    l_set_string(L, "chip", gx_profiler_chip(device->profiler));
    push_timing(L, gx_profiler_timing(device->profiler));
    lua_setfield(L, -2, "timing");
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

/* The device buffers a launch may write, and their snapshots: views into the profiler's scratch
   memory, so every replay pass can start from what the launch saw. */
struct written {
    int count;
    size_t bytes;                      /* the snapshots' scratch, each 256-byte aligned */
    gx_buffer *buffers[GX_MAX_PARAMS]; /* kept alive by the caller's launch table */
    gx_buffer snapshots[GX_MAX_PARAMS];
};

static size_t aligned(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* The device buffers in the list at the top of the stack (kept alive by whoever holds the list). */
static void read_buffers(lua_State *L, struct written *w)
{
    for (int i = 0; lua_istable(L, -1) && i < (int)lua_rawlen(L, -1) && w->count < GX_MAX_PARAMS; i++) {
        lua_rawgeti(L, -1, i + 1);
        l_buffer *buffer = luaL_testudata(L, -1, GX_BUFFER_TYPE);
        if (buffer && buffer->buffer.kind == GX_MEMORY_DEVICE) {
            w->buffers[w->count++] = &buffer->buffer;
            w->bytes += aligned(buffer->buffer.bytes);
        }
        lua_pop(L, 1);
    }
}

/* The device buffers among the args of the launch table at `table`. */
static void read_written(lua_State *L, int table, struct written *w)
{
    lua_getfield(L, table, "args");
    read_buffers(L, w);
    lua_pop(L, 1);
}

/* Lays the snapshots out from scratch on; returns where the next ones may go. */
static CUdeviceptr place_snapshots(struct written *w, CUdeviceptr scratch)
{
    for (int i = 0; i < w->count; i++) {
        w->snapshots[i] = *w->buffers[i];
        w->snapshots[i].device_pointer = scratch;
        scratch += aligned(w->buffers[i]->bytes);
    }
    return scratch;
}

/* The first pass saves the buffers; every later pass puts them back first. */
static int restore_written(struct written *w, int pass, gx_error *error)
{
    for (int i = 0; i < w->count; i++) {
        gx_buffer *buffer = w->buffers[i];
        gx_buffer *from = pass == 0 ? buffer : &w->snapshots[i], *to = pass == 0 ? &w->snapshots[i] : buffer;
        if (gx_buffer_copy(to, 0, from, 0, buffer->count, error))
            return error->kind;
    }
    return GX_OK;
}

/* Counters that cannot be read here (permissions, another profiler, MIG...) are nil and why;
   anything else is raised. */
static int unavailable(lua_State *L, const gx_error *error)
{
    if (error->kind != GX_ERR_PROFILER)
        return l_raise(L, error);
    lua_pushnil(L);
    lua_pushstring(L, error->message);
    return 2;
}

static void push_values(lua_State *L, const char *const *names, int count, const double *values)
{
    lua_createtable(L, 0, count);
    for (int m = 0; m < count; m++) {
        lua_pushnumber(L, values[m]);
        lua_setfield(L, -2, names[m]);
    }
}

static const char OFFLINE[] = "no hardware counters in an offline plan";

/* ---- hardware metrics: kernel:collect{grid, block, shared, args, metrics, restore, flush_l2} ---- */

struct collect_state {
    l_launch *launch;
    gx_profiler *profiler;
    struct written written;
    gx_helper_kernels *helper_kernels; /* set when the L2 is flushed before each pass */
    int restore, flush;
};

/* Before each pass, outside the profiled range: the buffers as they were before the first pass,
   and a cold L2, so every pass sees what a single launch would see. */
static int collect_prepare(void *user, int pass, gx_error *error)
{
    struct collect_state *state = user;
    if (state->restore && pass == 0) {
        CUdeviceptr scratch;
        if (gx_profiler_scratch(state->profiler, state->written.bytes ? state->written.bytes : 256, &scratch, error))
            return error->kind;
        place_snapshots(&state->written, scratch);
    }
    if (state->restore && restore_written(&state->written, pass, error))
        return error->kind;
    return state->helper_kernels ? gx_helper_kernels_flush_l2(state->helper_kernels, error) : GX_OK;
}

static int collect_launch(void *user, int pass, gx_error *error)
{
    (void)pass;
    return l_launch_work(((struct collect_state *)user)->launch, error);
}

int l_kernel_collect(lua_State *L)
{
    static const char *const allowed[] = {L_LAUNCH_KEYS, "metrics", "restore", "flush_l2", NULL};
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
        lua_pushstring(L, OFFLINE);
        return 2;
    }
    l_device *device = l_kernel_device(L, 1);
    gx_error error;
    if (state->flush)
        state->helper_kernels = l_device_helper_kernels(L, device);
    if (l_device_profiler(device, &error))
        return unavailable(L, &error);
    state->profiler = device->profiler;
    read_written(L, 2, &state->written);
    double *values = lua_newuserdatauv(L, sizeof(double) * (size_t)count, 0);
    int passes = 0;
    if (gx_profiler_collect(device->profiler, names, count, collect_prepare, collect_launch, state, values, &passes,
                            &error))
        return unavailable(L, &error);
    push_values(L, names, count, values);
    lua_createtable(L, 0, 4);
    l_set_integer(L, "passes", passes);
    l_set_string(L, "chip", gx_profiler_chip(device->profiler));
    lua_createtable(L, 0, count);
    for (int i = 0; i < count; i++) {
        gx_metric_info info;
        if (gx_metric_check(gx_profiler_host(device->profiler), names[i], &info, &error) == GX_OK &&
            info.dimension_unit) {
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
    struct written written;
};

struct batch_state {
    struct batch_launch *launches;
    gx_helper_kernels *helper_kernels;
    int restore;
};

/* Inside the pass, before launch i: its buffers as they were before it ran in the first pass (the
   first pass takes the snapshot), then a cold L2. Every launch sees what it would see alone. */
static int batch_prepare(void *user, int pass, int index, gx_error *error)
{
    struct batch_state *state = user;
    if (state->restore && restore_written(&state->launches[index].written, pass, error))
        return error->kind;
    return state->helper_kernels ? gx_helper_kernels_flush_l2(state->helper_kernels, error) : GX_OK;
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
    static const char *const allowed[] = {"kernel", L_LAUNCH_KEYS, NULL};
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
            return l_raisef(L, GX_ERR_USAGE, "metrics: launch %d must be a table {kernel=, grid=, block=, args=}",
                            i + 1);
        int table = lua_gettop(L);
        lua_getfield(L, table, "kernel");
        l_kernel *k = luaL_testudata(L, -1, GX_KERNEL_TYPE);
        if (!k)
            return l_raisef(L, GX_ERR_USAGE, "metrics: launch %d has no 'kernel' (a kernel from program:kernel)",
                            i + 1);
        l_device *owner = l_kernel_device(L, lua_gettop(L));
        if (!owner) {
            lua_pushnil(L);
            lua_pushstring(L, OFFLINE);
            return 2;
        }
        if (device && owner != device)
            return l_raisef(L, GX_ERR_USAGE, "metrics: launch %d runs on another GPU than launch 1; one batch, one GPU",
                            i + 1);
        device = owner;
        lua_pop(L, 1);
        l_read_launch(L, table, k, &list[i].launch, 0, "metrics", allowed);
        read_written(L, table, &list[i].written); /* kept alive by the launches table */
        snapshot_bytes += list[i].written.bytes;
        lua_pop(L, 1);
    }
    gx_error error;
    struct batch_state state = {list, flush ? l_device_helper_kernels(L, device) : NULL, restore};
    if (l_device_profiler(device, &error))
        return unavailable(L, &error);
    if (restore) { /* one snapshot per written buffer per launch: launches may share buffers */
        CUdeviceptr scratch;
        if (gx_profiler_scratch(device->profiler, snapshot_bytes ? snapshot_bytes : 256, &scratch, &error))
            return l_raise(L, &error);
        for (int i = 0; i < launches; i++)
            scratch = place_snapshots(&list[i].written, scratch);
    }
    double *values = lua_newuserdatauv(L, sizeof(double) * (size_t)count * (size_t)launches, 0);
    int passes = 0;
    if (gx_profiler_collect_batch(device->profiler, names, count, launches, flush ? 1 : 0, batch_prepare,
                                  batch_launch_one, &state, values, &passes, &error))
        return unavailable(L, &error);
    lua_createtable(L, launches, 0);
    for (int i = 0; i < launches; i++) {
        push_values(L, names, count, values + (size_t)i * (size_t)count);
        lua_rawseti(L, -2, i + 1);
    }
    push_info(L, device, passes, "launches", launches);
    return 2;
}

/* ---- gpuexp._collect_sequence(sequence, metrics, restore_buffers, flush_l2) ---- */

struct sequence_state {
    lua_State *L;
    gx_profiler *profiler;
    struct written written;
    gx_helper_kernels *helper_kernels;
};

/* Before each pass, outside the range: the restore buffers as they were, and a cold L2. */
static int sequence_prepare(void *user, int pass, gx_error *error)
{
    struct sequence_state *state = user;
    if (state->written.count && pass == 0) {
        CUdeviceptr scratch;
        if (gx_profiler_scratch(state->profiler, state->written.bytes, &scratch, error))
            return error->kind;
        place_snapshots(&state->written, scratch);
    }
    if (state->written.count && restore_written(&state->written, pass, error))
        return error->kind;
    return state->helper_kernels ? gx_helper_kernels_flush_l2(state->helper_kernels, error) : GX_OK;
}

static int sequence_pass(void *user, int pass, gx_error *error)
{
    (void)pass;
    return l_sequence_run(((struct sequence_state *)user)->L, 1, error);
}

/* -> list of {name = kernel name, values...} per kernel of one run, info {passes, chip, kernels,
   timing}; or nil and why when counters cannot be read here. A first run (not profiled) counts
   and names the kernels. */
static int collect_sequence(lua_State *L)
{
    luaL_checkudata(L, 1, GX_SEQUENCE_TYPE);
    luaL_checktype(L, 2, LUA_TTABLE);
    int flush = lua_isnoneornil(L, 4) || lua_toboolean(L, 4);
    lua_settop(L, 4);
    int count;
    const char **names = read_names(L, 2, "metrics", &count); /* 5 */
    if (lua_getiuservalue(L, 1, 1) != LUA_TUSERDATA) {
        lua_pushnil(L);
        lua_pushstring(L, OFFLINE);
        return 2;
    }
    l_device *device = lua_touserdata(L, -1); /* 6, alive through the sequence */
    struct sequence_state *state = lua_newuserdatauv(L, sizeof *state, 0);
    memset(state, 0, sizeof *state);
    state->L = L;
    lua_pushvalue(L, 3);
    read_buffers(L, &state->written);
    lua_pop(L, 1);
    if (flush)
        state->helper_kernels = l_device_helper_kernels(L, device);
    enum { MAX_KERNELS = 4096 };
    char(*kernel_names)[128] = lua_newuserdatauv(L, sizeof(char[128]) * MAX_KERNELS, 0);
    int kernels = 0;
    gx_error error;
    gx_record_launches(kernel_names, MAX_KERNELS, &kernels);
    int status = l_sequence_run(L, 1, &error);
    gx_record_launches(NULL, 0, NULL);
    if (status)
        return l_sequence_raise(L, &error);
    if (gx_synchronize(&device->device, &error))
        return l_raise(L, &error);
    if (kernels > MAX_KERNELS)
        return l_raisef(L, GX_ERR_USAGE, "metrics: the sequence launched %d kernels; at most %d are profiled", kernels,
                        MAX_KERNELS);
    if (l_device_profiler(device, &error))
        return unavailable(L, &error);
    state->profiler = device->profiler;
    double *values = lua_newuserdatauv(L, sizeof(double) * (size_t)count * (size_t)(kernels ? kernels : 1), 0);
    int passes = 0;
    if (gx_profiler_collect_ranges(device->profiler, names, count, kernels, sequence_prepare, sequence_pass, state,
                                   values, &passes, &error)) {
        if (lua_getfield(L, LUA_REGISTRYINDEX, "gpuexp.sequence_error") != LUA_TNIL)
            return l_sequence_raise(L, &error);
        lua_pop(L, 1);
        return unavailable(L, &error);
    }
    lua_createtable(L, kernels, 0);
    for (int k = 0; k < kernels; k++) {
        push_values(L, names, count, values + (size_t)k * (size_t)count);
        l_set_string(L, "kernel", kernel_names[k]);
        lua_rawseti(L, -2, k + 1);
    }
    push_info(L, device, passes, "kernels", kernels);
    return 2;
}

void l_open_collect(lua_State *L)
{
    lua_pushcfunction(L, collect_sequence);
    lua_setfield(L, -2, "_collect_sequence");
    lua_pushcfunction(L, collect_batch);
    lua_setfield(L, -2, "_collect_batch");
}
