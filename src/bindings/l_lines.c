/* Line profiles (gx_lines.c) for the Lua library (lua/gpuexp/api/lines.lua):
   gpuexp._line_profile(kernel, launch) runs the kernel's launch under CUPTI's PC sampling (or, asked,
   its SASS metrics: one collector a process, gx_lines.h); gpuexp._line_table(kernel) reads its
   cubin's line table without a GPU. Both give the
   raw instructions; the library shapes them into a profile (lua/gpuexp/store/line_profile.lua). */
#include <stdlib.h>
#include <string.h>

#include "gx_binary.h"
#include "gx_lines.h"
#include "l_gpuexp.h"
#include "l_types.h"
#include "l_util.h"

/* The image to load again for a stage, and the cubin whose line table maps its PCs (NULL: none,
 *why says why). */
static const void *kernel_images(lua_State *L, int kernel_index, l_program **program_out, size_t *cubin_size,
                                 const void **cubin, const char **why)
{
    l_kernel *k = l_check_kernel(L, kernel_index);
    lua_getiuservalue(L, kernel_index, 1);
    l_program *program = luaL_checkudata(L, -1, GX_PROGRAM_TYPE);
    lua_pop(L, 1); /* the kernel keeps its program alive */
    *program_out = program;
    *cubin = NULL;
    *cubin_size = 0;
    *why = NULL;
    if (strcmp(program->compiler, "binary") != 0) {
        if (program->compiled.cubin_size) {
            *cubin = program->compiled.cubin;
            *cubin_size = program->compiled.cubin_size;
            return program->compiled.cubin;
        }
        *why = "compiled to PTX only (the driver made its SASS): no cubin to read lines from";
        return program->compiled.ptx;
    }
    if (program->image_kind == GX_IMAGE_CUBIN) {
        *cubin = program->image;
        *cubin_size = program->image_size;
        return program->image;
    }
    *why = program->image_kind == GX_IMAGE_PTX
               ? "a PTX file (the driver made its SASS): no cubin to read lines from"
               : "a fat binary: PCs are not mapped to lines (load the architecture's .cubin)";
    for (int i = 0; i < program->module_count; i++) /* the module the kernel came from, loaded again */
        if (k->kernel.module == &program->modules[i] && program->image_kind == GX_IMAGE_HOST_ELF) {
            size_t offsets[GX_MAX_IMAGES], sizes[GX_MAX_IMAGES];
            int count = 0;
            gx_error error;
            if (gx_host_fatbins(program->image, program->image_size, offsets, sizes, &count, &error) || i >= count)
                return NULL;
            return program->image + offsets[i];
        }
    return program->image;
}

/* t[key] = the list of count names, on the table at the top. */
static void push_names(lua_State *L, const char (*names)[GX_LINES_NAME_SIZE], int count, const char *key)
{
    lua_createtable(L, count, 0);
    for (int i = 0; i < count; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, key);
}

/* t[key] = {done, seconds, error} of a stage, on the table at the top; the stage's table is left
   on the stack for its own fields (the caller pops it). */
static void push_stage(lua_State *L, const char *key, int done, double seconds, const char *error)
{
    lua_createtable(L, 0, 12);
    lua_pushboolean(L, done);
    lua_setfield(L, -2, "done");
    l_set_number(L, "seconds", seconds);
    if (error[0])
        l_set_string(L, "error", error);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, key);
}

/* The raw profile: {instructions = {{function, pc, file, directory, line, values = {...},
   samples = {[reason] = n}}...}, metrics, reasons, sass = {...}, pc = {...}, mapped, map_error,
   line_table (the cubin has one)}. */
static void push_profile(lua_State *L, const gx_line_profile *p, const char *why_unmapped, int line_table)
{
    lua_createtable(L, 0, 8);
    lua_createtable(L, (int)p->count, 0);
    for (size_t k = 0; k < p->count; k++) {
        const gx_line_instruction *i = &p->instructions[k];
        lua_createtable(L, 0, 7);
        l_set_string(L, "function", i->function);
        l_set_integer(L, "pc", (lua_Integer)i->pc);
        if (i->file) {
            l_set_string(L, "file", i->file);
            if (i->directory)
                l_set_string(L, "directory", i->directory);
            l_set_integer(L, "line", (lua_Integer)i->line);
        }
        if (p->sass_done) {
            lua_createtable(L, p->metric_count, 0);
            for (int m = 0; m < p->metric_count; m++) {
                lua_pushinteger(L, (lua_Integer)i->values[m]);
                lua_rawseti(L, -2, m + 1);
            }
            lua_setfield(L, -2, "values");
        }
        if (p->pc_done && i->samples) {
            lua_newtable(L);
            for (int r = 0; r < p->reason_count; r++)
                if (i->samples[r]) {
                    lua_pushinteger(L, (lua_Integer)i->samples[r]);
                    lua_rawseti(L, -2, r + 1);
                }
            lua_setfield(L, -2, "samples");
        }
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "instructions");
    push_names(L, p->metric_names, p->metric_count, "metrics");
    push_names(L, (const char(*)[GX_LINES_NAME_SIZE])p->reason_names, p->reason_count, "reasons");
    push_stage(L, "sass", p->sass_done, p->sass_seconds, p->sass_error);
    l_set_integer(L, "passes", p->sass_passes);
    lua_pop(L, 1);
    push_stage(L, "pc", p->pc_done, p->pc_seconds, p->pc_error);
    l_set_integer(L, "launches", p->launches);
    l_set_integer(L, "ranges", p->ranges);
    l_set_integer(L, "period", p->period);
    l_set_integer(L, "total_samples", (lua_Integer)p->total_samples);
    l_set_integer(L, "dropped_samples", (lua_Integer)p->dropped_samples);
    l_set_integer(L, "non_user_samples", (lua_Integer)p->non_user_samples);
    l_set_integer(L, "samples", (lua_Integer)p->record_samples);
    lua_pushboolean(L, p->buffer_full);
    lua_setfield(L, -2, "buffer_full");
    lua_pop(L, 1);
    l_set_integer(L, "mapped", (lua_Integer)p->mapped);
    lua_pushboolean(L, line_table);
    lua_setfield(L, -2, "line_table");
    if (why_unmapped)
        l_set_string(L, "map_error", why_unmapped);
    else if (p->map_error[0])
        l_set_string(L, "map_error", p->map_error);
}

/* Pushes the program's own source text and name (compiled from source), for the lines' text. */
static void push_source(lua_State *L, const l_program *program)
{
    if (program->source) {
        lua_pushstring(L, program->source);
        lua_setfield(L, -2, "source");
    }
    l_set_string(L, "source_name", program->source_name);
    l_set_string(L, "compiler", program->compiler);
}

/* The profile as Lua sees it (push_profile), with the program's source and the kernel's names;
   the profile's memory freed (its userdata's __gc finds nothing left). Returns 1. */
static int push_result(lua_State *L, gx_line_profile *p, const char *why_unmapped, int line_table,
                       const l_program *program, const l_kernel *k)
{
    push_profile(L, p, why_unmapped, line_table);
    push_source(L, program);
    l_set_string(L, "kernel", k->kernel.name);
    l_set_string(L, "symbol", k->symbol);
    l_set_string(L, "arch", k->arch);
    gx_line_profile_free(p);
    return 1;
}

struct profiled_launch {
    l_launch *launch;
};

/* Launches the fresh copy of the kernel with the user's configuration and arguments. */
static int launch_fresh(void *user, gx_kernel *kernel, gx_error *error)
{
    l_launch *launch = ((struct profiled_launch *)user)->launch;
    if (gx_kernel_prepare(kernel, &launch->config, error))
        return error->kind;
    return gx_kernel_launch(kernel, &launch->config, launch->pointers, error);
}

/* Releases a profile when the Lua value holding it is collected (an error raised midway). */
static int profile_gc(lua_State *L)
{
    gx_line_profile_free(lua_touserdata(L, 1));
    return 0;
}

static gx_line_profile *new_profile(lua_State *L)
{
    gx_line_profile *p = lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    if (luaL_newmetatable(L, "gpuexp.LineProfile")) {
        lua_pushcfunction(L, profile_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return p;
}

/* gpuexp._line_profile(kernel, {grid, block, shared, args, sass, pc_sampling, period, serialized,
   min_samples, max_launches, max_seconds, metrics}) -> raw profile, or nil and why (an offline
   plan; CUPTI that cannot be loaded) */
static int line_profile(lua_State *L)
{
    static const char *const allowed[] = {"grid",        "block",   "shared",     "args",        "sass",
                                          "pc_sampling", "period",  "serialized", "min_samples", "max_launches",
                                          "max_seconds", "metrics", NULL};
    l_kernel *k = l_check_kernel(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    l_check_options(L, 2, "line_profile", allowed);
    struct profiled_launch *state = lua_newuserdatauv(L, sizeof *state, 0);
    state->launch = lua_newuserdatauv(L, sizeof(l_launch), 0);
    l_read_launch(L, 2, k, state->launch, 0, "line_profile", allowed);
    gx_line_options options = {.sass = 0, .pc_sampling = 1}; /* SASS counts only when asked (gx_lines.h) */
    if (lua_getfield(L, 2, "sass") != LUA_TNIL)
        options.sass = lua_toboolean(L, -1);
    if (lua_getfield(L, 2, "pc_sampling") != LUA_TNIL)
        options.pc_sampling = lua_toboolean(L, -1);
    if (lua_getfield(L, 2, "serialized") != LUA_TNIL)
        options.serialized = lua_toboolean(L, -1);
    lua_pop(L, 3);
    lua_Integer period = 0, min_samples = 0, max_launches = 0;
    l_opt_integer_field(L, 2, "period", 0, &period);
    l_opt_integer_field(L, 2, "min_samples", 0, &min_samples);
    l_opt_integer_field(L, 2, "max_launches", 0, &max_launches);
    if (period && (period < 5 || period > 31))
        return l_raisef(L, GX_ERR_USAGE, "line_profile: 'period' is N for 2^N cycles, from 5 to 31; got %lld",
                        (long long)period);
    if (min_samples < 0 || max_launches < 0 || max_launches > 100000)
        return l_raisef(L, GX_ERR_USAGE,
                        "line_profile: 'min_samples' and 'max_launches' are counts >= 0 (max_launches up to 100000)");
    options.period = (int)period;
    options.min_samples = (uint64_t)min_samples;
    options.max_launches = (int)max_launches;
    options.max_seconds = l_opt_number_field(L, 2, "max_seconds", 0);
    if (!(options.max_seconds >= 0) || options.max_seconds > 3600)
        return l_raisef(L, GX_ERR_USAGE, "line_profile: 'max_seconds' must be from 0 to 3600");
    const char *names[GX_LINES_MAX_METRICS];
    int type = lua_getfield(L, 2, "metrics");
    if (type == LUA_TTABLE) {
        int count = (int)lua_rawlen(L, -1);
        if (count < 1 || count > GX_LINES_MAX_METRICS)
            return l_raisef(L, GX_ERR_USAGE, "line_profile: 'metrics' lists 1 to %d SASS metric names, got %d",
                            GX_LINES_MAX_METRICS, count);
        for (int m = 0; m < count; m++) {
            if (lua_rawgeti(L, -1, m + 1) != LUA_TSTRING)
                return l_raisef(L, GX_ERR_USAGE, "line_profile: metrics[%d] must be a string", m + 1);
            names[m] = lua_tostring(L, -1); /* kept alive by the options table */
            lua_pop(L, 1);
        }
        options.metrics = names;
        options.metric_count = count;
    } else if (type != LUA_TNIL)
        return l_raisef(L, GX_ERR_USAGE, "line_profile: 'metrics' must be a list of SASS metric names");
    lua_pop(L, 1);
    if (!k->kernel.function) {
        lua_pushnil(L);
        lua_pushstring(L, "no line profiles in an offline plan (gpuexp.line_table reads the cubin's lines)");
        return 2;
    }
    l_program *program;
    size_t cubin_size;
    const void *cubin;
    const char *why;
    const void *image = kernel_images(L, 1, &program, &cubin_size, &cubin, &why);
    if (!image)
        return l_raisef(L, GX_ERR_USAGE, "line_profile: the module of %s cannot be found in its binary",
                        k->kernel.name);
    gx_line_profile *p = new_profile(L);
    gx_error error;
    if (gx_line_profile_collect(p, k->kernel.module->device, image, k->symbol, &options, launch_fresh, state, &error)) {
        if (error.kind == GX_ERR_PROFILER) { /* CUPTI missing: said, never raised */
            lua_pushnil(L);
            lua_pushstring(L, error.message);
            return 2;
        }
        return l_raise(L, &error); /* the profile is freed by its __gc */
    }
    if (cubin)
        gx_line_profile_map(p, cubin, cubin_size);
    return push_result(L, p, cubin ? NULL : why, cubin && gx_cubin_has_line_table(cubin, cubin_size), program, k);
}

/* gpuexp._line_table(kernel) -> the raw profile of the cubin's line table (no counts), without a
   GPU; or nil and why (no cubin) */
static int line_table(lua_State *L)
{
    l_kernel *k = l_check_kernel(L, 1);
    l_program *program;
    size_t cubin_size;
    const void *cubin;
    const char *why;
    kernel_images(L, 1, &program, &cubin_size, &cubin, &why);
    if (!cubin) {
        lua_pushnil(L);
        lua_pushstring(L, why);
        return 2;
    }
    gx_line_profile *p = new_profile(L);
    gx_error error;
    if (gx_line_profile_static(p, cubin, cubin_size, k->symbol, &error))
        return l_raise(L, &error);
    return push_result(L, p, NULL, gx_cubin_has_line_table(cubin, cubin_size), program, k);
}

void l_open_lines(lua_State *L)
{
    static const luaL_Reg functions[] = {{"_line_profile", line_profile}, {"_line_table", line_table}, {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
