/* Lua types gpuexp.Kernel and gpuexp.Launch (a kernel with its configuration and arguments bound),
   plus typed scalars. Launch, timing and the driver's occupancy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cupti.h"
#include "gx_occupancy.h"
#include "gx_stats.h"
#include "gx_timing.h"
#include "gx_tools.h"
#include "l_gpuexp.h"

const gx_module *l_program_module(lua_State *L, int program_index);

l_kernel *l_check_kernel(lua_State *L, int index)
{
    return luaL_checkudata(L, index, GX_KERNEL_TYPE);
}

static const gx_device *kernel_device(lua_State *L, const l_kernel *kernel)
{
    if (!kernel->kernel.function)
        l_raisef(L, GX_ERR_USAGE, "kernel '%s' was compiled for an offline plan (%s): it cannot run here",
                 kernel->kernel.name, l_offline_arch(L) ? l_offline_arch(L) : "no GPU");
    return kernel->kernel.module->device;
}

/* program:kernel(name): name is an extern "C" name, a name expression given at compile, or a
   mangled name. Works offline too: the resources then come from the ptxas report alone. */
int l_program_kernel(lua_State *L)
{
    l_program *program = l_check_program(L, 1);
    const char *name = luaL_checkstring(L, 2);
    char lowered[512];
    const char *symbol = gx_compile_lowered_name(&program->compiled, name, lowered, sizeof lowered);
    if (!symbol)
        symbol = name;
    l_kernel *kernel = lua_newuserdatauv(L, sizeof *kernel, 1);
    memset(kernel, 0, sizeof *kernel);
    luaL_setmetatable(L, GX_KERNEL_TYPE);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1); /* the kernel keeps its program (and module) alive */
    kernel->ptx_param_count = gx_ptx_params(program->compiled.ptx, symbol, kernel->ptx_params, GX_MAX_PARAMS);
    if (kernel->ptx_param_count < 0) {
        char entries[4096];
        gx_ptx_entries(program->compiled.ptx, entries, sizeof entries);
        return l_raisef(L, GX_ERR_USAGE, "no kernel '%s' in %s; it has: %s%s", name, program->source_name,
                        entries[0] ? entries : "(no kernels)",
                        strchr(entries, '_') && entries[0] == '_' ? " (C++ names are mangled: use extern \"C\" or compile{names={...}})" : "");
    }
    kernel->has_ptxas = gx_ptxas_find(program->compiled.log, symbol, &kernel->ptxas) == 0;
    snprintf(kernel->kernel.name, sizeof kernel->kernel.name, "%s", symbol);
    const gx_module *module = l_program_module(L, 1);
    if (module) {
        gx_error error;
        if (gx_kernel_get(&kernel->kernel, module, symbol, &error))
            return l_raise(L, &error);
    }
    return 1;
}

void l_push_function_info(lua_State *L, const l_kernel *k)
{
    lua_createtable(L, 0, 12);
    l_set_string(L, "name", k->kernel.name);
    if (k->kernel.function) {
        l_set_integer(L, "registers", k->kernel.info.registers);
        l_set_integer(L, "static_shared_bytes", k->kernel.info.static_shared_bytes);
        l_set_integer(L, "local_bytes", k->kernel.info.local_bytes);
        l_set_integer(L, "constant_bytes", k->kernel.info.constant_bytes);
        l_set_integer(L, "max_threads_per_block", k->kernel.info.max_threads_per_block);
        l_set_integer(L, "max_dynamic_shared_bytes", k->kernel.info.max_dynamic_shared_bytes);
        l_set_integer(L, "ptx_version", k->kernel.info.ptx_version);
        l_set_integer(L, "binary_version", k->kernel.info.binary_version);
    } else if (k->has_ptxas) {
        l_set_integer(L, "registers", k->ptxas.registers);
        l_set_integer(L, "static_shared_bytes", k->ptxas.static_shared_bytes);
        l_set_integer(L, "local_bytes", k->ptxas.stack_frame_bytes);
    }
    if (k->has_ptxas) {
        l_set_integer(L, "ptxas_registers", k->ptxas.registers);
        l_set_integer(L, "barriers", k->ptxas.barriers);
        l_set_integer(L, "stack_frame_bytes", k->ptxas.stack_frame_bytes);
        l_set_integer(L, "spill_store_bytes", k->ptxas.spill_store_bytes);
        l_set_integer(L, "spill_load_bytes", k->ptxas.spill_load_bytes);
    }
    lua_createtable(L, k->ptx_param_count, 0);
    for (int i = 0; i < k->ptx_param_count; i++) {
        lua_pushstring(L, k->ptx_params[i].ptx_type);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "params");
}

static int kernel_resources(lua_State *L)
{
    l_push_function_info(L, l_check_kernel(L, 1));
    return 1;
}

/* ---- launch configuration and arguments ---- */

static void read_dim3(lua_State *L, int table, const char *key, unsigned out[3], int required)
{
    out[0] = out[1] = out[2] = 1;
    int type = lua_getfield(L, table, key);
    if (type == LUA_TNIL) {
        if (required)
            l_raisef(L, GX_ERR_USAGE, "launch: '%s' is required (a number or {x, y, z})", key);
    } else if (type == LUA_TNUMBER || type == LUA_TTABLE) {
        int count = type == LUA_TNUMBER ? 1 : (int)lua_rawlen(L, -1);
        if (count < 1 || count > 3)
            l_raisef(L, GX_ERR_USAGE, "launch: '%s' must have 1 to 3 dimensions", key);
        for (int i = 0; i < count; i++) {
            if (type == LUA_TTABLE)
                lua_rawgeti(L, -1 - 0, i + 1);
            else
                lua_pushvalue(L, -1);
            int is_integer;
            lua_Integer v = lua_tointegerx(L, -1, &is_integer);
            if (!is_integer || v < 1 || v > 0x7fffffff)
                l_raisef(L, GX_ERR_USAGE, "launch: %s[%d] must be an integer from 1 to 2^31-1, got %s", key, i + 1,
                         luaL_tolstring(L, -1, NULL));
            out[i] = (unsigned)v;
            lua_pop(L, 1);
        }
    } else {
        l_raisef(L, GX_ERR_USAGE, "launch: '%s' must be a number or {x, y, z}, got %s", key, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
}

/* Does a scalar of gx type `type` fit the PTX parameter? */
static int scalar_matches(int type, const gx_param *param)
{
    int size = (int)gx_type_size((gx_type)type);
    if (param->type_class == GX_PARAM_BYTES)
        return 0;
    if (param->size_bytes != size)
        return 0;
    return (param->type_class == GX_PARAM_FLOAT) == gx_type_is_float((gx_type)type);
}

static void describe_params(const l_kernel *k, char *out, size_t size)
{
    out[0] = 0;
    for (int i = 0; i < k->ptx_param_count; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? ", " : "", k->ptx_params[i].ptx_type);
}

/* A buffer of an offline plan: a table with kind = "planned" (made by the Lua library). */
static int is_planned_buffer(lua_State *L, int index)
{
    if (!l_offline_arch(L) || !lua_istable(L, index))
        return 0;
    lua_getfield(L, index, "kind");
    int planned = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "planned") == 0;
    lua_pop(L, 1);
    return planned;
}

/* Reads config and args from the table at `table` into launch; buffers are stored in the table at
   `keep` (when non-zero) so a bound launch keeps them alive. */
void l_read_launch(lua_State *L, int table, l_kernel *k, l_launch *launch, int keep, const char *what,
                   const char *const *allowed)
{
    l_check_options(L, table, what, allowed);
    memset(launch, 0, sizeof *launch);
    launch->kernel = k;
    read_dim3(L, table, "grid", launch->config.grid, 1);
    read_dim3(L, table, "block", launch->config.block, 1);
    lua_Integer shared = 0;
    l_opt_integer_field(L, table, "shared", 0, &shared);
    if (shared < 0 || shared > 0x7fffffff)
        l_raisef(L, GX_ERR_USAGE, "launch: 'shared' must be a byte count >= 0, got %lld", (long long)shared);
    launch->config.shared_bytes = (unsigned)shared;
    int type = lua_getfield(L, table, "args");
    if (type != LUA_TTABLE && type != LUA_TNIL)
        l_raisef(L, GX_ERR_USAGE, "launch: 'args' must be a list, got %s", luaL_typename(L, -1));
    int count = type == LUA_TNIL ? 0 : (int)lua_rawlen(L, -1);
    int expected = k->ptx_param_count;
    if (count != expected) {
        char params[512];
        describe_params(k, params, sizeof params);
        l_raisef(L, GX_ERR_USAGE, "kernel '%s' takes %d argument%s (%s), got %d", k->kernel.name, expected,
                 expected == 1 ? "" : "s", params, count);
    }
    for (int i = 0; i < count; i++) {
        const gx_param *param = &k->ptx_params[i];
        lua_rawgeti(L, -1, i + 1);
        l_buffer *buffer = luaL_testudata(L, -1, GX_BUFFER_TYPE);
        l_scalar *scalar = luaL_testudata(L, -1, GX_SCALAR_TYPE);
        if (buffer) {
            if (buffer->buffer.kind != GX_MEMORY_DEVICE)
                l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is a %s host buffer; kernels take device buffers", i + 1,
                         k->kernel.name, gx_memory_kind_name(buffer->buffer.kind));
            if (!buffer->buffer.device_pointer)
                l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is a freed buffer", i + 1, k->kernel.name);
            if (param->size_bytes != 8 || param->type_class != GX_PARAM_INTEGER)
                l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is a buffer (a pointer), but the kernel expects .%s", i + 1,
                         k->kernel.name, param->ptx_type);
            memcpy(launch->storage[i], &buffer->buffer.device_pointer, sizeof(CUdeviceptr));
            if (keep) {
                lua_pushvalue(L, -1);
                lua_rawseti(L, keep, i + 1);
            }
        } else if (scalar) {
            if (!scalar_matches(scalar->type, param))
                l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is %s, but the kernel expects .%s (give %s)", i + 1,
                         k->kernel.name, gx_type_name((gx_type)scalar->type), param->ptx_type,
                         param->type_class == GX_PARAM_FLOAT   ? (param->size_bytes == 4 ? "gpuexp.f32(x)" : "gpuexp.f64(x)")
                         : param->type_class == GX_PARAM_BYTES ? "a struct: not supported"
                         : param->size_bytes == 8              ? "a buffer, gpuexp.i64(n) or gpuexp.u64(n)"
                         : param->size_bytes == 4              ? "gpuexp.i32(n) or gpuexp.u32(n)"
                                                               : "gpuexp.u8(n) or gpuexp.i8(n)");
            memcpy(launch->storage[i], &scalar->value, gx_type_size((gx_type)scalar->type));
        } else if (is_planned_buffer(L, -1)) { /* offline: checked like a pointer, never passed */
            if (param->size_bytes != 8 || param->type_class != GX_PARAM_INTEGER)
                l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is a buffer (a pointer), but the kernel expects .%s", i + 1,
                         k->kernel.name, param->ptx_type);
        } else {
            const char *type_name = luaL_typename(L, -1);
            const char *example = lua_type(L, -1) == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL) : "value";
            l_raisef(L, GX_ERR_USAGE,
                     "argument %d of '%s' is a %s; pass a device buffer or a typed scalar such as gpuexp.%s(%s) (the kernel expects .%s)",
                     i + 1, k->kernel.name, type_name,
                     param->type_class == GX_PARAM_FLOAT ? (param->size_bytes == 4 ? "f32" : "f64")
                                                         : (param->size_bytes == 8 ? "i64" : "i32"),
                     example, param->ptx_type);
        }
        launch->pointers[i] = launch->storage[i];
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    launch->arg_count = count;
    if (!k->kernel.function) { /* offline plan: nothing runs; the configuration is still checked */
        unsigned long long threads = (unsigned long long)launch->config.block[0] * launch->config.block[1] * launch->config.block[2];
        if (threads > 1024)
            l_raisef(L, GX_ERR_USAGE, "launch of '%s' with a block of %llu threads: at most 1024 per block", k->kernel.name,
                     threads);
        /* shared memory against the architecture's opt-in limit, as the driver would check it */
        const gx_arch_limits *arch = gx_arch_find(l_offline_arch(L));
        long available = arch ? (long)arch->shared_per_block_optin_bytes - k->ptxas.static_shared_bytes : 0;
        if (arch && (long)launch->config.shared_bytes > available)
            l_raisef(L, GX_ERR_USAGE,
                     "launch of '%s' with %u bytes of dynamic shared memory: %s allows %d bytes per block, %d of them "
                     "taken by the kernel's static shared memory, so at most %ld dynamic",
                     k->kernel.name, launch->config.shared_bytes, arch->arch, arch->shared_per_block_optin_bytes,
                     k->ptxas.static_shared_bytes, available);
        return;
    }
    gx_error error;
    if (gx_kernel_prepare(&k->kernel, &launch->config, &error))
        l_raise(L, &error);
}

int l_launch_work(void *user, gx_error *error)
{
    l_launch *launch = user;
    if (!launch->kernel->kernel.function)
        return GX_OK; /* offline plan: launches are checked, not run */
    return gx_kernel_launch(&launch->kernel->kernel, &launch->config, launch->pointers, error);
}

static const char *const launch_options[] = {"grid", "block", "shared", "args", NULL};
static const char *const time_options[] = {"grid", "block", "shared", "args", "warmup", "reps", "cold", "graph", "clock", NULL};

l_device *l_kernel_device(lua_State *L, int kernel_index)
{
    if (!l_check_kernel(L, kernel_index)->kernel.function)
        return NULL;
    lua_getiuservalue(L, kernel_index, 1);
    lua_getiuservalue(L, -1, 1);
    l_device *device = l_check_device(L, -1);
    lua_pop(L, 2); /* kept alive by the kernel's program */
    return device;
}

static int launch_on_stream(void *user, CUstream stream, gx_error *error)
{
    l_launch *launch = user;
    gx_launch_config config = launch->config;
    config.stream = stream;
    return gx_kernel_launch(&launch->kernel->kernel, &config, launch->pointers, error);
}

static int flush_before(void *user, gx_error *error)
{
    return gx_tools_flush_l2(user, error);
}

static int kernel_launch(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    l_launch launch;
    l_read_launch(L, 2, k, &launch, 0, "launch", launch_options);
    gx_error error;
    if (l_launch_work(&launch, &error))
        return l_raise(L, &error);
    return 0;
}

/* Times `launch` with CUDA events. Options: warmup (default 5), reps (default 100), cold (flush
   the L2 before each sample, outside its events), graph = N (each sample is one CUDA graph of N
   launches, divided by N: no launch gaps), clock (probe the SM clock after the samples). */
static int time_launch(lua_State *L, l_launch *launch, int options, int kernel_index)
{
    lua_Integer warmup = 5, reps = 100, graph = 0;
    int cold = 0, clock = 0;
    if (options) {
        l_opt_integer_field(L, options, "warmup", 5, &warmup);
        l_opt_integer_field(L, options, "reps", 100, &reps);
        l_opt_integer_field(L, options, "graph", 0, &graph);
        lua_getfield(L, options, "cold");
        cold = lua_toboolean(L, -1);
        lua_getfield(L, options, "clock");
        clock = lua_toboolean(L, -1);
        lua_pop(L, 2);
    }
    if (warmup < 0 || reps < 1 || reps > 10000000 || graph < 0 || graph > 100000)
        return l_raisef(L, GX_ERR_USAGE,
                        "time: warmup must be >= 0, reps from 1 to 10^7 and graph from 0 to 10^5 (got %lld, %lld, %lld)",
                        (long long)warmup, (long long)reps, (long long)graph);
    if (!launch->kernel->kernel.function) { /* offline plan: no timings, never invented ones */
        lua_createtable(L, 0, 3);
        l_set_integer(L, "samples", 0);
        l_set_integer(L, "warmup", 0);
        l_set_string(L, "timer", "none (offline plan)");
        return 1;
    }
    double *samples = lua_newuserdatauv(L, sizeof(double) * (size_t)reps, 0);
    const gx_device *device = kernel_device(L, launch->kernel);
    l_device *owner = l_kernel_device(L, kernel_index);
    gx_tools *tools = cold || clock ? l_device_tools(L, owner) : NULL;
    gx_timing_request request = {.work = l_launch_work, .user = launch, .warmup = (int)warmup, .samples = (size_t)reps,
                                 .before_each = cold ? flush_before : NULL, .before_user = tools};
    gx_error error;
    gx_graph captured;
    memset(&captured, 0, sizeof captured);
    int status = GX_OK;
    if (graph > 0) {
        status = gx_graph_capture(&captured, device, launch_on_stream, launch, (int)graph, &error);
        request.work = gx_graph_launch;
        request.user = &captured;
    }
    if (status == GX_OK)
        status = gx_time_events(device, &request, samples, &error);
    gx_graph_destroy(&captured); /* before anything can raise */
    if (status)
        return l_raise(L, &error);
    for (lua_Integer i = 0; graph > 0 && i < reps; i++)
        samples[i] /= (double)graph;
    double clock_mhz = 0;
    if (clock && gx_tools_sm_clock(tools, &clock_mhz, &error))
        return l_raise(L, &error);
    lua_createtable(L, (int)reps, 0);
    for (lua_Integer i = 0; i < reps; i++) {
        lua_pushnumber(L, samples[i]);
        lua_rawseti(L, -2, i + 1);
    }
    l_push_stats(L, samples, (size_t)reps, "_ms");
    lua_insert(L, -2);
    lua_setfield(L, -2, "samples_ms");
    l_set_integer(L, "warmup", warmup);
    l_set_string(L, "timer", "cuda_events");
    l_set_string(L, "mode", graph > 0 ? "graph" : cold ? "cold" : "hot");
    if (graph > 0)
        l_set_integer(L, "launches_per_sample", graph);
    if (clock)
        l_set_number(L, "sm_clock_mhz", clock_mhz);
    return 1;
}

static int kernel_time(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    l_launch *launch = lua_newuserdatauv(L, sizeof *launch, 0); /* freed by the GC on any error */
    l_read_launch(L, 2, k, launch, 0, "time", time_options);
    return time_launch(L, launch, 2, 1);
}

/* kernel:bind{grid, block, shared, args} -> Launch, for tight loops with no per-call parsing. */
static int kernel_bind(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    l_launch *launch = lua_newuserdatauv(L, sizeof *launch, 2);
    luaL_setmetatable(L, GX_LAUNCH_TYPE);
    int launch_index = lua_gettop(L);
    lua_newtable(L);
    int keep = lua_gettop(L);
    l_read_launch(L, 2, k, launch, keep, "bind", launch_options);
    lua_setiuservalue(L, launch_index, 2);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, launch_index, 1);
    return 1;
}

/* The hot path of launch loops: the type check compares the metatable with an upvalue instead
   of a registry lookup by name, and the launch goes straight to the driver. */
static int launch_launch(lua_State *L)
{
    l_launch *launch = lua_touserdata(L, 1);
    if (!launch || !lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(1)))
        return luaL_typeerror(L, 1, GX_LAUNCH_TYPE);
    gx_error error;
    if (l_launch_work(launch, &error))
        return l_raise(L, &error);
    return 0;
}

static int launch_time(lua_State *L)
{
    l_launch *launch = luaL_checkudata(L, 1, GX_LAUNCH_TYPE);
    static const char *const allowed[] = {"warmup", "reps", "cold", "graph", "clock", NULL};
    if (!lua_isnoneornil(L, 2))
        l_check_options(L, 2, "time", allowed);
    lua_getiuservalue(L, 1, 1); /* the kernel */
    return time_launch(L, launch, lua_isnoneornil(L, 2) ? 0 : 2, lua_gettop(L));
}

/* kernel:occupancy{block=, shared=, carveout=}: theoretical occupancy with the block limit of
   each resource and the limiter from the model; on a GPU, active_blocks_per_sm is the driver's
   (cuOccupancyMaxActiveBlocksPerMultiprocessor) and model_blocks_per_sm the model's. */
static int kernel_occupancy(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    static const char *const allowed[] = {"block", "shared", "carveout", NULL};
    l_check_options(L, 2, "occupancy", allowed);
    unsigned block[3];
    read_dim3(L, 2, "block", block, 1);
    lua_Integer shared = 0;
    l_opt_integer_field(L, 2, "shared", 0, &shared);
    if (shared < 0 || shared > 1 << 30)
        return l_raisef(L, GX_ERR_USAGE, "occupancy: 'shared' must be a byte count >= 0");
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    if (threads > 1024 || (k->kernel.function && threads > (unsigned long long)k->kernel.info.max_threads_per_block))
        return l_raisef(L, GX_ERR_USAGE, "occupancy: a block of %llu threads exceeds '%s''s limit of %d", threads,
                        k->kernel.name, k->kernel.function ? k->kernel.info.max_threads_per_block : 1024);
    const char *arch_name;
    char device_arch[16];
    if (k->kernel.function) {
        const gx_device *device = k->kernel.module->device;
        snprintf(device_arch, sizeof device_arch, "sm_%d%d", device->cc_major, device->cc_minor);
        arch_name = device_arch;
    } else {
        lua_getiuservalue(L, 1, 1);
        arch_name = l_check_program(L, -1)->arch;
        lua_pop(L, 1);
    }
    const gx_arch_limits *arch = gx_arch_find(arch_name);
    gx_occupancy_input in = {
        .block_size = (int)threads,
        .registers = k->kernel.function ? k->kernel.info.registers : k->ptxas.registers,
        .static_shared_bytes = k->kernel.function ? k->kernel.info.static_shared_bytes : k->ptxas.static_shared_bytes,
        .dynamic_shared_bytes = (int)shared,
        .barriers = k->ptxas.barriers,
        .carveout_kib = l_carveout_option(L, 2),
    };
    gx_error error;
    gx_occupancy_result model;
    int have_model = arch && gx_occupancy_compute(arch, &in, &model, &error) == GX_OK;
    if (!k->kernel.function) {
        if (!arch)
            l_check_arch(L, arch_name); /* raises with the known names */
        if (!have_model)
            return l_raise(L, &error);
        l_push_occupancy(L, arch, &in, &model);
        return 1;
    }
    gx_launch_config config = {.grid = {1, 1, 1}, .block = {block[0], block[1], block[2]}, .shared_bytes = (unsigned)shared};
    int blocks_per_sm;
    gx_device_facts facts;
    if (gx_kernel_prepare(&k->kernel, &config, &error)
        || gx_kernel_occupancy(&k->kernel, (int)threads, (size_t)shared, &blocks_per_sm, &error)
        || gx_device_facts_get(k->kernel.module->device, &facts, &error))
        return l_raise(L, &error);
    int warps_per_block = ((int)threads + facts.warp_size - 1) / facts.warp_size;
    if (have_model)
        l_push_occupancy(L, arch, &in, &model);
    else
        lua_createtable(L, 0, 8);
    l_set_integer(L, "block_size", (lua_Integer)threads);
    l_set_integer(L, "active_blocks_per_sm", blocks_per_sm);
    l_set_integer(L, "blocks_per_sm", blocks_per_sm);
    l_set_integer(L, "active_warps_per_sm", blocks_per_sm * warps_per_block);
    l_set_integer(L, "active_warps", blocks_per_sm * warps_per_block);
    l_set_integer(L, "max_warps_per_sm", facts.max_warps_per_sm);
    l_set_number(L, "occupancy_pct", 100.0 * blocks_per_sm * warps_per_block / facts.max_warps_per_sm);
    if (have_model)
        l_set_integer(L, "model_blocks_per_sm", model.blocks_per_sm);
    l_set_string(L, "source", "driver");
    return 1;
}

static int kernel_index(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    const char *key = luaL_checkstring(L, 2);
    luaL_getmetafield(L, 1, "methods");
    if (lua_getfield(L, -1, key) != LUA_TNIL)
        return 1;
    if (strcmp(key, "name") == 0)
        lua_pushstring(L, k->kernel.name);
    else if (strcmp(key, "program") == 0)
        lua_getiuservalue(L, 1, 1);
    else
        lua_pushnil(L);
    return 1;
}

static int kernel_tostring(lua_State *L)
{
    lua_pushfstring(L, "gpuexp.Kernel(%s)", l_check_kernel(L, 1)->kernel.name);
    return 1;
}

void l_open_kernel(lua_State *L)
{
    static const luaL_Reg methods[] = {{"launch", kernel_launch},     {"bind", kernel_bind},
                                       {"time", kernel_time},         {"occupancy", kernel_occupancy},
                                       {"resources", kernel_resources}, {"collect", l_kernel_collect},
                                       {NULL, NULL}};
    luaL_newmetatable(L, GX_KERNEL_TYPE);
    luaL_newlib(L, methods);
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, "_kernel_methods"); /* the Lua library adds kernel:metrics here */
    lua_setfield(L, -2, "methods");
    lua_pushcfunction(L, kernel_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, kernel_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    luaL_newmetatable(L, GX_LAUNCH_TYPE);
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, -2);
    lua_pushcclosure(L, launch_launch, 1); /* upvalue: the metatable itself */
    lua_setfield(L, -2, "launch");
    lua_pushcfunction(L, launch_time);
    lua_setfield(L, -2, "time");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

}
