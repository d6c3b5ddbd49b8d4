/* Lua type gpuexp.Program: NVRTC output (cubin, PTX, log) for one architecture, loaded lazily. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gx_cache.h"
#include "l_gpuexp.h"

#define COMPILED_SOURCES "gpuexp.compiled_sources"

l_program *l_check_program(lua_State *L, int index)
{
    return luaL_checkudata(L, index, GX_PROGRAM_TYPE);
}

/* Resolves a path named by a script: absolute as is, else against the script's folder, then its
   parent (so experiments/x.lua can name "kernels/y.cu"). Pushes the path found, or raises. */
static const char *push_script_path(lua_State *L, const char *path, const char *what)
{
    if (path[0] == '/') {
        lua_pushstring(L, path);
        return lua_tostring(L, -1);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_SCRIPT_DIR);
    const char *script_dir = lua_tostring(L, -1);
    lua_pop(L, 1);
    const char *bases[] = {script_dir ? script_dir : ".", NULL};
    char parent[PATH_MAX];
    if (script_dir) {
        snprintf(parent, sizeof parent, "%s/..", script_dir);
        bases[1] = parent;
    }
    for (int i = 0; i < 2 && bases[i]; i++) {
        lua_pushfstring(L, "%s/%s", bases[i], path);
        if (access(lua_tostring(L, -1), R_OK) == 0)
            return lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    return l_raisef(L, GX_ERR_USAGE, "%s '%s' not found in %s or its parent folder", what, path,
                    script_dir ? script_dir : "."),
           NULL;
}

static int gpuexp_resolve(lua_State *L)
{
    push_script_path(L, luaL_checkstring(L, 1), "file");
    return 1;
}

/* Reads the list of strings at t[key] into a userdata-backed array; returns the count. */
static int string_list(lua_State *L, int table, const char *key, const char ***out)
{
    *out = NULL;
    int type = lua_getfield(L, table, key);
    if (type == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (type != LUA_TTABLE)
        l_raisef(L, GX_ERR_USAGE, "compile: '%s' must be a list of strings, got %s", key, luaL_typename(L, -1));
    int n = (int)lua_rawlen(L, -1);
    const char **items = lua_newuserdatauv(L, sizeof *items * (size_t)(n + 1), 0);
    lua_setfield(L, LUA_REGISTRYINDEX, key); /* anchored until the next compile replaces it */
    for (int i = 0; i < n; i++) {
        if (lua_rawgeti(L, -1, i + 1) != LUA_TSTRING)
            l_raisef(L, GX_ERR_USAGE, "compile: %s[%d] must be a string, got %s", key, i + 1, luaL_typename(L, -1));
        items[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    *out = items;
    return n;
}

static int program_gc(lua_State *L)
{
    l_program *program = luaL_checkudata(L, 1, GX_PROGRAM_TYPE);
    if (program->loaded)
        gx_module_unload(&program->module);
    program->loaded = 0;
    gx_compile_result_free(&program->compiled);
    return 0;
}

/* gpuexp.compile{source= | file=, name=, arch=, options=, defines=, include=, names=, device=, cache=} */
static int gpuexp_compile(lua_State *L)
{
    static const char *const allowed[] = {"source", "file", "name", "arch", "options", "defines", "include",
                                          "names", "device", "cache", NULL};
    l_check_options(L, 1, "compile", allowed);
    lua_settop(L, 1);
    const char *source = l_opt_string_field(L, 1, "source", NULL);
    const char *file = l_opt_string_field(L, 1, "file", NULL);
    if (!source == !file)
        return l_raisef(L, GX_ERR_USAGE, "compile: give exactly one of 'source' (a string) or 'file' (a path)");
    char source_dir[PATH_MAX] = "";
    const char *source_name = l_opt_string_field(L, 1, "name", file ? file : "source.cu");
    if (file) {
        const char *path = push_script_path(L, file, "kernel file"); /* index 2 */
        char *text;
        size_t size;
        gx_error error;
        if (gx_read_file(path, &text, &size, &error))
            return l_raise(L, &error);
        lua_pushlstring(L, text, size); /* index 3 */
        free(text);
        source = lua_tostring(L, 3);
        snprintf(source_dir, sizeof source_dir, "%s", path);
        char *slash = strrchr(source_dir, '/');
        if (slash)
            *slash = 0;
    } else {
        lua_pushnil(L);
        lua_pushnil(L);
    }
    /* the device: explicit, default, or none when planning offline */
    int device_index = 0;
    if (lua_getfield(L, 1, "device") != LUA_TNIL) {
        l_check_device(L, -1);
        device_index = lua_gettop(L);
    } else {
        lua_pop(L, 1);
    }
    char arch[16];
    const char *arch_option = l_opt_string_field(L, 1, "arch", NULL);
    /* the default device is opened now only when its architecture is needed */
    if (!device_index && !arch_option && !l_offline_arch(L))
        l_default_device(L, &device_index);
    if (arch_option)
        snprintf(arch, sizeof arch, "%s", arch_option);
    else if (device_index) {
        l_device *device = lua_touserdata(L, device_index);
        snprintf(arch, sizeof arch, "sm_%d%d", device->device.cc_major, device->device.cc_minor);
    } else
        snprintf(arch, sizeof arch, "%s", l_offline_arch(L));
    if (strncmp(arch, "sm_", 3) != 0 && strncmp(arch, "compute_", 8) != 0)
        return l_raisef(L, GX_ERR_USAGE, "compile: arch must look like 'sm_90', got '%s'", arch);

    const char **options, **includes, **names;
    int option_count = string_list(L, 1, "options", &options);
    int include_count = string_list(L, 1, "include", &includes);
    int name_count = string_list(L, 1, "names", &names);
    /* defines become -D options after the user's own, collected in an anchor table */
    lua_newtable(L);
    int anchor = lua_gettop(L), define_count = 0;
    int defines_type = lua_getfield(L, 1, "defines");
    if (defines_type == LUA_TTABLE) {
        int defines = lua_gettop(L);
        for (lua_pushnil(L); lua_next(L, defines); lua_pop(L, 1)) {
            if (lua_type(L, -2) != LUA_TSTRING)
                return l_raisef(L, GX_ERR_USAGE, "compile: define names must be strings");
            const char *key = lua_tostring(L, -2);
            int type = lua_type(L, -1);
            if (type == LUA_TBOOLEAN) {
                if (!lua_toboolean(L, -1))
                    continue;
                lua_pushfstring(L, "-D%s", key);
            } else if (type == LUA_TNUMBER || type == LUA_TSTRING) {
                const char *value = luaL_tolstring(L, -1, NULL);
                lua_pushfstring(L, "-D%s=%s", key, value);
                lua_remove(L, -2);
            } else
                return l_raisef(L, GX_ERR_USAGE, "compile: define '%s' must be a number, string or boolean", key);
            lua_rawseti(L, anchor, ++define_count);
        }
    } else if (defines_type != LUA_TNIL)
        return l_raisef(L, GX_ERR_USAGE, "compile: 'defines' must be a table of NAME = value");
    lua_pop(L, 1);
    const char **all_options = lua_newuserdatauv(L, sizeof(char *) * (size_t)(option_count + define_count + 1), 0);
    for (int i = 0; i < option_count; i++)
        all_options[i] = options[i];
    int n = option_count;
    for (int i = 1; i <= define_count; i++) {
        lua_rawgeti(L, anchor, i);
        all_options[n++] = lua_tostring(L, -1); /* anchored in the table */
        lua_pop(L, 1);
    }
    /* sort the defines so the cache key does not depend on table order */
    for (int i = option_count; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(all_options[j], all_options[i]) < 0) {
                const char *t = all_options[i];
                all_options[i] = all_options[j];
                all_options[j] = t;
            }
    const char **resolved_includes = lua_newuserdatauv(L, sizeof(char *) * (size_t)(include_count + 1), 0);
    for (int i = 0; i < include_count; i++) {
        resolved_includes[i] = push_script_path(L, includes[i], "include folder");
        lua_insert(L, -2);
    }
    int use_cache = 1;
    if (lua_getfield(L, 1, "cache") != LUA_TNIL)
        use_cache = lua_toboolean(L, -1);
    lua_pop(L, 1);
    const char *no_cache = getenv("GPUEXP_NO_CACHE");
    if (no_cache && *no_cache && strcmp(no_cache, "0") != 0)
        use_cache = 0;
    char cache_dir[PATH_MAX];
    gx_cache_directory(cache_dir, sizeof cache_dir);
    if (use_cache && cache_dir[0])
        strncat(cache_dir, "/cubin", sizeof cache_dir - strlen(cache_dir) - 1);

    gx_compile_request request = {
        .source = source,
        .source_name = source_name,
        .source_directory = source_dir[0] ? source_dir : NULL,
        .arch = arch,
        .options = all_options,
        .option_count = n,
        .include_directories = resolved_includes,
        .include_directory_count = include_count,
        .name_expressions = names,
        .name_expression_count = name_count,
        .cache_directory = use_cache ? cache_dir : NULL,
    };
    l_program *program = lua_newuserdatauv(L, sizeof *program, 1);
    memset(program, 0, sizeof *program);
    luaL_setmetatable(L, GX_PROGRAM_TYPE);
    snprintf(program->arch, sizeof program->arch, "%s", arch);
    snprintf(program->source_name, sizeof program->source_name, "%s", source_name);
    if (device_index) {
        lua_pushvalue(L, device_index);
        lua_setiuservalue(L, -2, 1);
    }
    gx_error error;
    int failed = gx_nvrtc_compile(&request, &program->compiled, &error);
    if (program->compiled.cache_warning[0])
        fprintf(stderr, "gpuexp: warning: %s\n", program->compiled.cache_warning);
    if (failed)
        return l_raise(L, &error);
    /* what this run compiled, by name: a resumed run refuses when a kernel changed */
    lua_getfield(L, LUA_REGISTRYINDEX, COMPILED_SOURCES);
    lua_pushstring(L, program->compiled.source_key);
    lua_setfield(L, -2, source_name);
    lua_pop(L, 1);
    return 1;
}

/* gpuexp._compiled_sources() -> {source name = source key} of every program compiled so far */
static int gpuexp_compiled_sources(lua_State *L)
{
    lua_newtable(L);
    lua_getfield(L, LUA_REGISTRYINDEX, COMPILED_SOURCES);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -5);
    }
    lua_pop(L, 1);
    return 1;
}

static int program_kernels(lua_State *L)
{
    l_program *program = l_check_program(L, 1);
    char names[8192];
    gx_ptx_entries(program->compiled.ptx, names, sizeof names);
    lua_newtable(L);
    int i = 0;
    for (char *token = strtok(names, ", "); token; token = strtok(NULL, ", "))
        lua_pushstring(L, token), lua_rawseti(L, -2, ++i);
    return 1;
}

static void push_resources(lua_State *L, const gx_resources *r)
{
    lua_createtable(L, 0, 8);
    l_set_string(L, "name", r->name);
    l_set_integer(L, "registers", r->registers);
    l_set_integer(L, "barriers", r->barriers);
    l_set_integer(L, "static_shared_bytes", r->static_shared_bytes);
    l_set_integer(L, "stack_frame_bytes", r->stack_frame_bytes);
    l_set_integer(L, "spill_store_bytes", r->spill_store_bytes);
    l_set_integer(L, "spill_load_bytes", r->spill_load_bytes);
}

/* program:resources([name]): the ptxas report, for one kernel or all of them (works offline). */
static int program_resources(lua_State *L)
{
    l_program *program = l_check_program(L, 1);
    gx_resources all[128];
    int count = gx_ptxas_parse(program->compiled.log, all, 128);
    if (lua_isnoneornil(L, 2)) {
        lua_createtable(L, 0, count);
        for (int i = 0; i < count; i++) {
            push_resources(L, &all[i]);
            lua_setfield(L, -2, all[i].name);
        }
        return 1;
    }
    const char *name = luaL_checkstring(L, 2);
    char lowered[512];
    const char *symbol = gx_compile_lowered_name(&program->compiled, name, lowered, sizeof lowered);
    for (int i = 0; i < count; i++)
        if (strcmp(all[i].name, symbol ? symbol : name) == 0) {
            push_resources(L, &all[i]);
            return 1;
        }
    return l_raisef(L, GX_ERR_USAGE, "no kernel '%s' in the ptxas report of %s", name, program->source_name);
}

static int program_index(lua_State *L)
{
    l_program *program = l_check_program(L, 1);
    const char *key = luaL_checkstring(L, 2);
    luaL_getmetafield(L, 1, "methods");
    if (lua_getfield(L, -1, key) != LUA_TNIL)
        return 1;
    if (strcmp(key, "log") == 0)
        lua_pushstring(L, program->compiled.log);
    else if (strcmp(key, "ptx") == 0)
        lua_pushstring(L, program->compiled.ptx);
    else if (strcmp(key, "arch") == 0)
        lua_pushstring(L, program->arch);
    else if (strcmp(key, "name") == 0)
        lua_pushstring(L, program->source_name);
    else if (strcmp(key, "cache_key") == 0)
        lua_pushstring(L, program->compiled.key);
    else if (strcmp(key, "source_key") == 0)
        lua_pushstring(L, program->compiled.source_key);
    else if (strcmp(key, "cache_hit") == 0)
        lua_pushboolean(L, program->compiled.from_cache);
    else if (strcmp(key, "compile_seconds") == 0)
        lua_pushnumber(L, program->compiled.compile_seconds);
    else if (strcmp(key, "cubin_bytes") == 0)
        lua_pushinteger(L, (lua_Integer)program->compiled.cubin_size);
    else
        lua_pushnil(L);
    return 1;
}

/* Loads the module on the program's device on first use; returns NULL when planning offline. */
const gx_module *l_program_module(lua_State *L, int program_index_on_stack)
{
    l_program *program = l_check_program(L, program_index_on_stack);
    if (program->loaded)
        return &program->module;
    if (lua_getiuservalue(L, program_index_on_stack, 1) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        if (l_offline_arch(L))
            return NULL;
        int device_index;
        l_default_device(L, &device_index); /* compiled with an explicit arch: run on the default GPU */
        lua_pushvalue(L, device_index);
        lua_setiuservalue(L, program_index_on_stack, 1);
        lua_getiuservalue(L, program_index_on_stack, 1);
    }
    l_device *device = l_check_device(L, -1);
    lua_pop(L, 1); /* the program's uservalue keeps it alive */
    gx_error error;
    if (gx_module_load(&program->module, &device->device, program->compiled.cubin, &error)) {
        if (error.kind == GX_ERR_DRIVER)
            gx_error_append(&error, " (loading %s, compiled for %s, on %s sm_%d%d)", program->source_name,
                            program->arch, device->device.name, device->device.cc_major, device->device.cc_minor);
        l_raise(L, &error);
    }
    program->loaded = 1;
    return &program->module;
}

void l_open_program(lua_State *L)
{
    extern int l_program_kernel(lua_State * L);
    static const luaL_Reg methods[] = {{"kernel", l_program_kernel},
                                       {"kernels", program_kernels},
                                       {"resources", program_resources},
                                       {NULL, NULL}};
    static const luaL_Reg metamethods[] = {{"__index", program_index}, {"__gc", program_gc}, {NULL, NULL}};
    luaL_newmetatable(L, GX_PROGRAM_TYPE);
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "methods");
    lua_pop(L, 1);
    lua_pushcfunction(L, gpuexp_compile);
    lua_setfield(L, -2, "compile");
    lua_pushcfunction(L, gpuexp_resolve);
    lua_setfield(L, -2, "resolve");
    lua_pushcfunction(L, gpuexp_compiled_sources);
    lua_setfield(L, -2, "_compiled_sources");
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, COMPILED_SOURCES);
}
