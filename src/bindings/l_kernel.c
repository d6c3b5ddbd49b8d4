/* Lua types gpuexp.Kernel and gpuexp.Launch (a kernel with its configuration and arguments bound),
   plus typed scalars. Launch, timing and the driver's occupancy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_launch_attributes.h"
#include "gx_occupancy.h"
#include "gx_stats.h"
#include "gx_timing.h"
#include "gx_helper_kernels.h"
#include "gx_narrow.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

l_kernel *l_check_kernel(lua_State *L, int index)
{
    return luaL_checkudata(L, index, GX_KERNEL_TYPE);
}

/* A zeroed Kernel of the program at program_index, which it keeps alive (and so its modules). */
l_kernel *l_push_kernel(lua_State *L, int program_index)
{
    l_kernel *kernel = lua_newuserdatauv(L, sizeof *kernel, 1);
    memset(kernel, 0, sizeof *kernel);
    luaL_setmetatable(L, GX_KERNEL_TYPE);
    lua_pushvalue(L, program_index);
    lua_setiuservalue(L, -2, 1);
    return kernel;
}

/* Fills a resources/occupancy table on the top of the stack. */
static void push_function_info(lua_State *L, const l_kernel *k)
{
    lua_createtable(L, 0, 12);
    l_set_string(L, "name", k->kernel.name);
    l_set_string(L, "symbol", k->symbol);
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
    lua_createtable(L, k->param_count, 0);
    for (int i = 0; i < k->param_count; i++) {
        lua_pushstring(L, k->params[i].ptx_type);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "params");
}

static int kernel_resources(lua_State *L)
{
    push_function_info(L, l_check_kernel(L, 1));
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

/* Does a scalar of gx type `type` fit the parameter? A parameter known only by its size (a
   binary's) takes any scalar of that size; __half, __nv_bfloat16 and the fp8 types are structs
   (PTX ".align 2 .b8 p[2]"), so an f16, bf16 or fp8 scalar fits any parameter of its size. */
static int scalar_matches(int type, const gx_param *param)
{
    int size = (int)gx_type_size((gx_type)type);
    if (param->size_bytes != size)
        return 0;
    if (gx_type_is_narrow_float((gx_type)type))
        return 1;
    if (param->type_class == GX_PARAM_BYTES)
        return 0;
    return param->type_class == GX_PARAM_SIZED ||
           (param->type_class == GX_PARAM_FLOAT) == gx_type_is_float((gx_type)type);
}

static int is_pointer_param(const gx_param *param)
{
    return param->size_bytes == 8 && (param->type_class == GX_PARAM_INTEGER || param->type_class == GX_PARAM_SIZED);
}

/* The parameters as the source writes them (float*, int) when known, else as PTX does (u64, u32). */
static void describe_params(const l_kernel *k, char *out, size_t size)
{
    out[0] = 0;
    for (int i = 0; i < k->param_count; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? ", " : "",
                 k->params[i].c_type[0] ? k->params[i].c_type : k->params[i].ptx_type);
}

/* One parameter's type for a message: "float (PTX .f32)" when the C type is known, else ".f32". */
static const char *expected_type(const gx_param *param, char *out, size_t size)
{
    const char *dot = param->type_class == GX_PARAM_SIZED ? "" : ".";
    if (param->c_type[0])
        snprintf(out, size, "%s (PTX %s%s)", param->c_type, dot, param->ptx_type);
    else
        snprintf(out, size, "%s%s", dot, param->ptx_type);
    return out;
}

/* What to pass for a parameter, for messages. */
static const char *suggestion(const gx_param *param)
{
    if (param->type_class == GX_PARAM_FLOAT)
        return param->size_bytes == 4   ? "gpuexp.f32(x)"
               : param->size_bytes == 8 ? "gpuexp.f64(x)"
                                        : "gpuexp.bytes(...)";
    if (param->type_class == GX_PARAM_BYTES)
        return "a struct of that size: gpuexp.struct{...} or gpuexp.bytes(...)";
    if (param->type_class == GX_PARAM_SIZED)
        return param->size_bytes == 8   ? "a buffer, a 64-bit scalar or 8 bytes"
               : param->size_bytes == 4 ? "a 32-bit scalar or 4 bytes"
                                        : "gpuexp.struct{...} or gpuexp.bytes(...) of that size";
    return param->size_bytes == 8   ? "a buffer, gpuexp.i64(n) or gpuexp.u64(n)"
           : param->size_bytes == 4 ? "gpuexp.i32(n) or gpuexp.u32(n)"
           : param->size_bytes == 1 ? "gpuexp.u8(n) or gpuexp.i8(n)"
                                    : "gpuexp.bytes(...)";
}

/* A TMA descriptor (or a struct holding some) goes to a parameter the kernel aligns to 64 bytes,
   as a CUtensorMap is: PTX's ".param .align 64". A binary's offsets say nothing of it: they count
   from the start of the parameter block, which sits at a constant-bank address that is not itself a
   multiple of 64 (0x210 on sm_90: on an H100 the driver gave a descriptor offset 48, and CUTLASS's
   own harness runs its GEMM with descriptors at offset 112). */
static void check_tensor_maps(lua_State *L, const l_kernel *k, const l_bytes *bytes, int i)
{
    if (!bytes->tensor_maps)
        return;
    const gx_param *param = &k->params[i];
    const char *what = bytes->size == 128 && bytes->tensor_maps == 1 ? "a TMA descriptor (gpuexp.tensor_map)"
                                                                     : "a struct holding TMA descriptors";
    if (param->type_class == GX_PARAM_BYTES && param->align_bytes < 64)
        l_raisef(L, GX_ERR_USAGE,
                 "argument %d of '%s' is %s, but the kernel's parameter is aligned to %d bytes, not 64: "
                 "declare it `const __grid_constant__ CUtensorMap` (or a struct with one) in the kernel",
                 i + 1, k->kernel.name, what, param->align_bytes);
    if (param->type_class != GX_PARAM_BYTES && param->type_class != GX_PARAM_SIZED)
        l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is %s, but the kernel's parameter is .%s", i + 1, k->kernel.name,
                 what, param->ptx_type);
}

/* Reads one argument (at the top of the stack) for parameter i into launch. */
static void read_argument(lua_State *L, l_kernel *k, l_launch *launch, int i, int keep)
{
    const gx_param *param = &k->params[i];
    char expected[96];
    l_buffer *buffer = luaL_testudata(L, -1, GX_BUFFER_TYPE);
    l_scalar *scalar = buffer ? NULL : luaL_testudata(L, -1, GX_SCALAR_TYPE);
    l_bytes *bytes = buffer || scalar ? NULL : luaL_testudata(L, -1, GX_BYTES_TYPE);
    if (buffer) {
        if (buffer->buffer.kind != GX_MEMORY_DEVICE)
            l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is a %s host buffer; kernels take device buffers", i + 1,
                     k->kernel.name, gx_memory_kind_name(buffer->buffer.kind));
        if (!buffer->buffer.device_pointer)
            l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is a freed buffer", i + 1, k->kernel.name);
        if (!is_pointer_param(param))
            l_raisef(L, GX_ERR_USAGE,
                     "argument %d of '%s' is a buffer (a pointer), but the kernel expects %s (give %s)", i + 1,
                     k->kernel.name, expected_type(param, expected, sizeof expected), suggestion(param));
        memcpy(launch->storage[i], &buffer->buffer.device_pointer, sizeof(CUdeviceptr));
        launch->pointers[i] = launch->storage[i];
    } else if (scalar) {
        if (!scalar_matches(scalar->type, param))
            l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is %s, but the kernel expects %s (give %s)", i + 1,
                     k->kernel.name, gx_type_name((gx_type)scalar->type),
                     expected_type(param, expected, sizeof expected), suggestion(param));
        memcpy(launch->storage[i], &scalar->value, gx_type_size((gx_type)scalar->type));
        launch->pointers[i] = launch->storage[i];
    } else if (bytes) {
        check_tensor_maps(L, k, bytes, i);
        if ((int)bytes->size != param->size_bytes)
            l_raisef(
                L, GX_ERR_USAGE, "argument %d of '%s' is %zu bytes, but the kernel's parameter is %d bytes (%s%s)%s",
                i + 1, k->kernel.name, bytes->size, param->size_bytes, param->type_class == GX_PARAM_SIZED ? "" : ".",
                param->ptx_type,
                param->type_class == GX_PARAM_BYTES ? ": check the struct's fields against the C declaration" : "");
        if (param->align_bytes && (int)bytes->align > param->align_bytes)
            l_raisef(L, GX_ERR_USAGE,
                     "argument %d of '%s' is a struct aligned to %zu bytes, but the kernel's parameter is "
                     "aligned to %d: check the struct's fields against the C declaration",
                     i + 1, k->kernel.name, bytes->align, param->align_bytes);
        launch->pointers[i] = bytes->data;   /* alive while the argument table (or the bound launch) is */
    } else if (l_is_planned_buffer(L, -1)) { /* offline: checked like a pointer, never passed */
        if (!is_pointer_param(param))
            l_raisef(L, GX_ERR_USAGE, "argument %d of '%s' is a buffer (a pointer), but the kernel expects %s", i + 1,
                     k->kernel.name, expected_type(param, expected, sizeof expected));
        launch->pointers[i] = launch->storage[i];
    } else {
        const char *type_name = luaL_typename(L, -1);
        const char *example = lua_type(L, -1) == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL) : "value";
        l_raisef(L, GX_ERR_USAGE,
                 "argument %d of '%s' is a %s; pass a device buffer or a typed scalar such as gpuexp.%s(%s) (the "
                 "kernel expects %s)",
                 i + 1, k->kernel.name, type_name,
                 param->type_class == GX_PARAM_FLOAT ? (param->size_bytes == 4 ? "f32" : "f64")
                                                     : (param->size_bytes == 8 ? "i64" : "i32"),
                 example, expected_type(param, expected, sizeof expected));
    }
    if (keep && (buffer || bytes)) {
        lua_pushvalue(L, -1);
        lua_rawseti(L, keep, i + 1);
    }
}

/* cluster = {x, y, z}, cooperative = true, programmatic = true */
static void read_attributes(lua_State *L, int table, gx_launch_config *config)
{
    lua_getfield(L, table, "cluster");
    int has_cluster = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (has_cluster)
        read_dim3(L, table, "cluster", config->cluster, 1);
    static const char *const flags[] = {"cooperative", "programmatic"};
    int *values[] = {&config->cooperative, &config->programmatic};
    for (int i = 0; i < 2; i++) {
        int type = lua_getfield(L, table, flags[i]);
        if (type != LUA_TNIL && type != LUA_TBOOLEAN)
            l_raisef(L, GX_ERR_USAGE, "launch: '%s' must be true or false, got %s", flags[i], luaL_typename(L, -1));
        *values[i] = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
}

/* An offline plan's launch attributes, checked with the architecture's facts and the model's
   occupancy on the largest GPU of the architecture. */
static void check_planned_attributes(lua_State *L, l_kernel *k, const gx_launch_config *config,
                                     const gx_arch_limits *arch)
{
    if (!config->cluster[0] && !config->cooperative && !config->programmatic && !k->required_cluster[0])
        return;
    char where[64];
    snprintf(where, sizeof where, "%s (offline plan)", arch->arch);
    gx_launch_target target = {.where = where,
                               .cc_major = arch->cc_major,
                               .cc_minor = arch->cc_minor,
                               .cluster_launch = arch->cc_major >= 9,
                               .cooperative_launch = 1,
                               .sm_count = gx_arch_largest_sm_count(arch->arch),
                               .sm_count_is_model = 1,
                               .blocks_per_sm = -1,
                               .max_active_clusters = -1};
    memcpy(target.required_cluster, k->required_cluster, sizeof target.required_cluster);
    gx_error error;
    if (config->cooperative) {
        gx_occupancy_input in = {.block_size = (int)(config->block[0] * config->block[1] * config->block[2]),
                                 .registers = k->ptxas.registers,
                                 .static_shared_bytes = k->ptxas.static_shared_bytes,
                                 .dynamic_shared_bytes = (int)config->shared_bytes,
                                 .barriers = k->ptxas.barriers,
                                 .carveout_kib = -1};
        gx_occupancy_result model;
        if (k->has_ptxas && gx_occupancy_compute(arch, &in, &model, &error) == GX_OK)
            target.blocks_per_sm = model.blocks_per_sm;
    }
    if (gx_launch_check_attributes(k->kernel.name, config, &target, &error))
        l_raise(L, &error);
}

/* Reads config and args from the table at `table` into launch; buffers and structs are stored in
   the table at `keep` (when non-zero) so a bound launch keeps them alive. */
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
    read_attributes(L, table, &launch->config);
    const gx_stream *stream = l_opt_stream(L, table, what, k->kernel.function ? k->kernel.module->device : NULL);
    launch->config.stream = stream ? stream->handle : NULL;
    if (stream && keep) { /* a bound launch keeps its stream alive */
        lua_getfield(L, table, "stream");
        lua_setfield(L, keep, "stream");
    }
    int type = lua_getfield(L, table, "args");
    if (type != LUA_TTABLE && type != LUA_TNIL)
        l_raisef(L, GX_ERR_USAGE, "launch: 'args' must be a list, got %s", luaL_typename(L, -1));
    int count = type == LUA_TNIL ? 0 : (int)lua_rawlen(L, -1);
    int expected = k->param_count;
    if (count != expected) {
        char params[1024];
        describe_params(k, params, sizeof params);
        l_raisef(L, GX_ERR_USAGE, "kernel '%s' takes %d argument%s (%s), got %d", k->kernel.name, expected,
                 expected == 1 ? "" : "s", params, count);
    }
    for (int i = 0; i < count; i++) {
        lua_rawgeti(L, -1, i + 1);
        read_argument(L, k, launch, i, keep);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    launch->arg_count = count;
    gx_error error;
    if (!k->kernel.function) { /* offline plan: nothing runs; the configuration is still checked */
        const gx_arch_limits *arch = gx_arch_find(l_offline_arch(L));
        if (arch && gx_launch_check_limits(arch, k->kernel.name, launch->config.block, launch->config.shared_bytes,
                                           k->ptxas.static_shared_bytes, &error))
            l_raise(L, &error);
        if (arch)
            check_planned_attributes(L, k, &launch->config, arch);
        return;
    }
    if (gx_kernel_prepare(&k->kernel, &launch->config, &error))
        l_raise(L, &error);
}

int l_launch_work(void *user, gx_error *error)
{
    l_launch *launch = user;
    if (!launch->kernel->kernel.function) {          /* offline plan: launches are checked, not run, */
        gx_note_launch(launch->kernel->kernel.name); /* and counted, as a sequence records them */
        return GX_OK;
    }
    return gx_kernel_launch(&launch->kernel->kernel, &launch->config, launch->pointers, error);
}

static const char *const launch_options[] = {L_LAUNCH_KEYS, "stream", NULL};
static const char *const time_options[] = {L_LAUNCH_KEYS, "warmup", "reps",  "cold", "graph",
                                           "batch",       "hold",   "clock", NULL};

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

/* Times `launch` (see l_time_work). */
static int time_launch(lua_State *L, l_launch *launch, int options, int kernel_index)
{
    l_timed_work work = {.work = l_launch_work,
                         .enqueue = launch_on_stream,
                         .user = launch,
                         .device = launch->kernel->kernel.function ? l_kernel_device(L, kernel_index) : NULL};
    return l_time_work(L, &work, options);
}

static int kernel_time(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    l_launch *launch = lua_newuserdatauv(L, sizeof *launch, 0); /* freed by the GC on any error */
    l_read_launch(L, 2, k, launch, 0, "time", time_options);
    return time_launch(L, launch, 2, 1);
}

/* A Launch, as a script holds it, is a table of its methods: closures over the bound launch (a
   userdata, upvalue 1), with GX_LAUNCH_TYPE as its metatable (the type's name and its methods'
   prototypes). bound:launch() then finds its method in the table itself (no metatable lookup) and
   the method needs no type check: a closure can only launch the one launch it was made for. The
   prototypes have no upvalue and refuse to run. */
static int launch_launch(lua_State *L);
static int launch_time(lua_State *L);
static void push_launch_methods(lua_State *L, int launch_index)
{
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, launch_index);
    lua_pushcclosure(L, launch_launch, 1);
    lua_setfield(L, -2, "launch");
    lua_pushvalue(L, launch_index);
    lua_pushcclosure(L, launch_time, 1);
    lua_setfield(L, -2, "time");
    luaL_setmetatable(L, GX_LAUNCH_TYPE);
}

/* The launch a method was made for (its upvalue), or an error for the prototypes. */
static l_launch *own_launch(lua_State *L)
{
    l_launch *launch = lua_touserdata(L, lua_upvalueindex(1));
    if (!launch)
        luaL_error(L, "a Launch's methods run on the Launch kernel:bind{...} made");
    return launch;
}

/* kernel:bind{grid, block, shared, args} -> Launch, for tight loops with no per-call parsing. */
static int kernel_bind(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    l_launch *launch = lua_newuserdatauv(L, sizeof *launch, 2);
    int launch_index = lua_gettop(L);
    lua_newtable(L);
    int keep = lua_gettop(L);
    l_read_launch(L, 2, k, launch, keep, "bind", launch_options);
    lua_setiuservalue(L, launch_index, 2);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, launch_index, 1);
    push_launch_methods(L, launch_index);
    return 1;
}

/* The hot path of launch loops: the Launch is the closure's own (no type check, no lookup by name),
   and the launch goes straight to the driver. */
static int launch_launch(lua_State *L)
{
    gx_error error;
    if (l_launch_work(own_launch(L), &error))
        return l_raise(L, &error);
    return 0;
}

static int launch_time(lua_State *L)
{
    l_launch *launch = own_launch(L);
    static const char *const allowed[] = {"warmup", "reps", "cold", "graph", "batch", "hold", "clock", NULL};
    if (!lua_isnoneornil(L, 2))
        l_check_options(L, 2, "time", allowed);
    lua_getiuservalue(L, lua_upvalueindex(1), 1); /* the kernel */
    return time_launch(L, launch, lua_isnoneornil(L, 2) ? 0 : 2, lua_gettop(L));
}

/* A plan's cluster occupancy: what can be modelled without the GPU's GPC layout (the cluster's
   size, its checks, and a bound: the model's blocks per SM on the largest GPU of the architecture,
   in whole clusters); cuOccupancyMaxActiveClusters needs the GPU. */
static void push_planned_clusters(lua_State *L, l_kernel *k, const gx_arch_limits *arch, const unsigned cluster[3],
                                  const unsigned block[3], unsigned shared, int blocks_per_sm)
{
    gx_launch_config config = {.grid = {1, 1, 1},
                               .block = {block[0], block[1], block[2]},
                               .shared_bytes = shared,
                               .cluster = {cluster[0], cluster[1], cluster[2]}};
    gx_launch_target target = {.where = arch->arch,
                               .cc_major = arch->cc_major,
                               .cc_minor = arch->cc_minor,
                               .cluster_launch = arch->cc_major >= 9,
                               .blocks_per_sm = -1,
                               .max_active_clusters = -1};
    memcpy(target.required_cluster, k->required_cluster, sizeof target.required_cluster);
    unsigned shape[3];
    if (!gx_launch_cluster(&config, &target, shape))
        return;
    memcpy(config.grid, shape, sizeof config.grid);
    gx_error error;
    if (gx_launch_check_attributes(k->kernel.name, &config, &target, &error))
        l_raise(L, &error);
    int size = (int)(shape[0] * shape[1] * shape[2]);
    int sms = gx_arch_largest_sm_count(arch->arch);
    l_set_integer(L, "cluster_size", size);
    if (sms > 0)
        l_set_integer(L, "active_clusters_bound", (lua_Integer)blocks_per_sm * sms / size);
    l_set_string(L, "cluster_note",
                 "active_clusters needs the GPU (cuOccupancyMaxActiveClusters: clusters fill the SMs "
                 "of one GPC); active_clusters_bound is the model's blocks per SM on the largest GPU of the "
                 "architecture, in whole clusters");
}

/* kernel:occupancy{block=, shared=, carveout=, cluster=}: theoretical occupancy with the block limit of
   each resource and the limiter from the model; on a GPU, active_blocks_per_sm is the driver's
   (cuOccupancyMaxActiveBlocksPerMultiprocessor) and model_blocks_per_sm the model's. */
static int kernel_occupancy(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    static const char *const allowed[] = {"block", "shared", "carveout", "cluster", NULL};
    l_check_options(L, 2, "occupancy", allowed);
    unsigned block[3], cluster[3] = {0, 0, 0};
    read_dim3(L, 2, "block", block, 1);
    lua_getfield(L, 2, "cluster");
    if (!lua_isnil(L, -1))
        read_dim3(L, 2, "cluster", cluster, 1);
    lua_pop(L, 1);
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
        arch_name = k->arch;
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
        push_planned_clusters(L, k, arch, cluster, block, (unsigned)shared, model.blocks_per_sm);
        return 1;
    }
    gx_launch_config config = {.grid = {1, 1, 1},
                               .block = {block[0], block[1], block[2]},
                               .shared_bytes = (unsigned)shared,
                               .cluster = {cluster[0], cluster[1], cluster[2]}};
    int clustered = cluster[0] || k->kernel.info.required_cluster[0];
    for (int i = 0; i < 3 && clustered; i++) /* one cluster's worth of grid: the checks ask a whole number */
        config.grid[i] =
            cluster[0] ? cluster[i]
                       : (unsigned)(k->kernel.info.required_cluster[i] > 0 ? k->kernel.info.required_cluster[i] : 1);
    int blocks_per_sm, active_clusters = -1;
    gx_device_facts facts;
    if (gx_kernel_prepare(&k->kernel, &config, &error) ||
        (clustered && gx_kernel_active_clusters(&k->kernel, &config, &active_clusters, &error)) ||
        gx_kernel_occupancy(&k->kernel, (int)threads, (size_t)shared, &blocks_per_sm, &error) ||
        gx_device_facts_get(k->kernel.module->device, &facts, &error))
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
    if (clustered) {
        l_set_integer(L, "cluster_size", (lua_Integer)config.grid[0] * config.grid[1] * config.grid[2]);
        l_set_integer(L, "active_clusters", active_clusters);
    }
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
    else if (strcmp(key, "symbol") == 0)
        lua_pushstring(L, k->symbol);
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
    static const luaL_Reg methods[] = {{"launch", kernel_launch},
                                       {"bind", kernel_bind},
                                       {"time", kernel_time},
                                       {"occupancy", kernel_occupancy},
                                       {"resources", kernel_resources},
                                       {"collect", l_kernel_collect},
                                       {NULL, NULL}};
    static const luaL_Reg metamethods[] = {{"__index", kernel_index}, {"__tostring", kernel_tostring}, {NULL, NULL}};
    l_new_class(L, GX_KERNEL_TYPE, methods, metamethods);
    luaL_getmetatable(L, GX_KERNEL_TYPE);
    lua_getfield(L, -1, "methods");
    lua_setfield(L, -3, "_kernel_methods"); /* the Lua library adds kernel:metrics here */
    lua_pop(L, 1);
    static const char *const keys[] = {L_LAUNCH_KEYS};
    lua_createtable(L, (int)(sizeof keys / sizeof keys[0]), 0);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        lua_pushstring(L, keys[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "launch_keys"); /* gpuexp.launch_keys: what a launch table may hold */

    /* the Launch type: its name and its methods' prototypes (a Launch's own are its fields) */
    luaL_newmetatable(L, GX_LAUNCH_TYPE);
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, launch_launch);
    lua_setfield(L, -2, "launch");
    lua_pushcfunction(L, launch_time);
    lua_setfield(L, -2, "time");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}
