/* gpuexp.compile: CUDA C++ to a Program with NVRTC (the toolkit's headers found, a project's nvcc
   options translated) or with the toolkit's nvcc (for a .cu file that holds host code); and
   gpuexp.toolkit, what was found of the toolkit. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_clock.h"
#include "gx_files.h"
#include "gx_nvcc.h"
#include "gx_toolkit.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

static double compile_seconds; /* time spent in compiles and cache lookups (gpuexp._compile_seconds) */

/* Reads the list of strings at t[key] into a userdata-backed array; returns the count. */
static int string_list(lua_State *L, int table, const char *what, const char *key, const char ***out)
{
    *out = NULL;
    int type = lua_getfield(L, table, key);
    if (type == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (type != LUA_TTABLE)
        l_raisef(L, GX_ERR_USAGE, "%s: '%s' must be a list of strings, got %s", what, key, luaL_typename(L, -1));
    int n = (int)lua_rawlen(L, -1);
    const char **items = lua_newuserdatauv(L, sizeof *items * (size_t)(n + 1), 0);
    lua_setfield(L, LUA_REGISTRYINDEX, key); /* anchored until the next compile replaces it */
    for (int i = 0; i < n; i++) {
        if (lua_rawgeti(L, -1, i + 1) != LUA_TSTRING)
            l_raisef(L, GX_ERR_USAGE, "%s: %s[%d] must be a string, got %s", what, key, i + 1, luaL_typename(L, -1));
        items[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    *out = items;
    return n;
}

/* Copies strings into a new userdata array anchored in the table at anchor (as its next items). */
static const char **anchored_list(lua_State *L, int anchor, char *const *items, int count)
{
    const char **list = lua_newuserdatauv(L, sizeof(char *) * (size_t)(count + 1), 0);
    lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
    for (int i = 0; i < count; i++) {
        lua_pushstring(L, items[i]);
        list[i] = lua_tostring(L, -1);
        lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
    }
    return list;
}

/* Hints after a compile error, for what users meet first. */
static void compile_hints(gx_error *error, const char *compiler)
{
    static const char host_code[] = "NVRTC compiles device code only; if this file holds host code (a project's .cu "
                                    "with main, launches, host headers), compile it with the toolkit's nvcc, "
                                    "compile{file = ..., compiler = \"nvcc\"}, or load the project's own build with "
                                    "gpuexp.load{file = \"x.cubin\"}";
    if (strcmp(compiler, "nvrtc") != 0)
        return;
    if (strstr(error->message, "not allowed in JIT mode")) {
        gx_error_append(error, "\nhint: %s", host_code);
        return;
    }
    if (strstr(error->message, "could not open source file") || strstr(error->message, "cannot open source file")) {
        const gx_toolkit *toolkit = gx_toolkit_get();
        if (!toolkit->root[0])
            gx_error_append(error,
                            "\nhint: no CUDA toolkit headers were found (looked in %s); install them "
                            "(apt: cuda-cudart-dev-13-0 cuda-cccl-13-0) or set CUDA_HOME",
                            toolkit->searched);
        else
            gx_error_append(error,
                            "\nhint: the toolkit's headers in %s%s%s are searched after the include folders "
                            "(give others with include = {...} or -I); %s",
                            toolkit->include, toolkit->cccl[0] ? " and " : "", toolkit->cccl, host_code);
    }
}

/* Reads the kernel file, found as the script finds files: its path anchored at anchor[1], its text
   (returned) at anchor[2], its folder (for its own #include "x.h") in directory. */
static const char *read_source_file(lua_State *L, int anchor, const char *file, const char **path, char *directory,
                                    size_t directory_size)
{
    l_push_script_path(L, file, "kernel file");
    lua_rawseti(L, anchor, 1);
    lua_rawgeti(L, anchor, 1);
    *path = lua_tostring(L, -1);
    lua_pop(L, 1);
    char *text;
    size_t size;
    gx_error error;
    if (gx_read_file(*path, &text, &size, &error))
        l_raise(L, &error);
    lua_pushlstring(L, text, size);
    free(text);
    const char *source = lua_tostring(L, -1);
    lua_rawseti(L, anchor, 2);
    snprintf(directory, directory_size, "%s", *path);
    char *slash = strrchr(directory, '/');
    if (slash)
        *slash = 0;
    return source;
}

/* What a project's nvcc options become (gx_options_translate) and the architecture they, arch = or
   the device choose (gx_compile_choose_arch); the lists anchored at anchor. */
struct build {
    const char **options, **includes;
    int option_count, include_count;
    char arch[24], notes[2048];
};

static void translate_build(lua_State *L, int anchor, const char **options, int option_count, int use_nvcc,
                            const char *arch_option, int device_index, struct build *out)
{
    gx_options translated;
    gx_error error;
    if (gx_options_translate(options, option_count, use_nvcc, &translated, &error))
        l_raise(L, &error);
    char own[24] = "";
    if (!arch_option)
        l_device_arch(L, device_index, own, sizeof own);
    int status = gx_compile_choose_arch(&translated, arch_option, own, out->arch, sizeof out->arch, out->notes,
                                        sizeof out->notes, &error);
    out->option_count = use_nvcc ? translated.nvcc_count : translated.nvrtc_count;
    out->options = anchored_list(L, anchor, use_nvcc ? translated.nvcc : translated.nvrtc, out->option_count);
    out->include_count = translated.include_count;
    out->includes = anchored_list(L, anchor, translated.includes, translated.include_count);
    gx_options_free(&translated); /* before any raise: nothing else frees it */
    if (status)
        l_raise(L, &error);
}

/* The build's options, then the script's defines as -D options, sorted (gx_compile_sort_options);
   anchored at anchor. */
static const char **with_defines(lua_State *L, int anchor, const struct build *build, int *count)
{
    lua_newtable(L);
    int define_table = lua_gettop(L), define_count = 0;
    int defines_type = lua_getfield(L, 1, "defines");
    if (defines_type == LUA_TTABLE) {
        int defines = lua_gettop(L);
        for (lua_pushnil(L); lua_next(L, defines); lua_pop(L, 1)) {
            if (lua_type(L, -2) != LUA_TSTRING)
                l_raisef(L, GX_ERR_USAGE, "compile: define names must be strings");
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
                l_raisef(L, GX_ERR_USAGE, "compile: define '%s' must be a number, string or boolean", key);
            lua_rawseti(L, define_table, ++define_count);
        }
    } else if (defines_type != LUA_TNIL)
        l_raisef(L, GX_ERR_USAGE, "compile: 'defines' must be a table of NAME = value");
    lua_pop(L, 1);
    const char **all = lua_newuserdatauv(L, sizeof(char *) * (size_t)(build->option_count + define_count + 1), 0);
    lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
    int n = 0;
    for (int i = 0; i < build->option_count; i++)
        all[n++] = build->options[i];
    for (int i = 1; i <= define_count; i++) {
        lua_rawgeti(L, define_table, i);
        all[n++] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1); /* the defines' texts, anchored */
    gx_compile_sort_options(all + build->option_count, define_count);
    *count = n;
    return all;
}

/* Include folders: the script's, then those of the options, each found as the script finds files;
   anchored at anchor. */
static const char **resolved_includes(lua_State *L, int anchor, const char **includes, int include_count,
                                      const struct build *build)
{
    int total = include_count + build->include_count;
    const char **resolved = lua_newuserdatauv(L, sizeof(char *) * (size_t)(total + 1), 0);
    lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
    for (int i = 0; i < total; i++) {
        resolved[i] = l_push_script_path(L, i < include_count ? includes[i] : build->includes[i - include_count],
                                         "include folder");
        lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
    }
    return resolved;
}

/* A damaged cache entry is said each time; a cache that cannot be written once a process (every
   compile of a run would say it again). */
static void say_cache_warnings(const gx_compile_result *compiled, int failed)
{
    static int cache_store_warned;
    if (compiled->cache_warning[0])
        fprintf(stderr, "gpuexp: warning: %s\n", compiled->cache_warning);
    if (!failed && compiled->cache_store_warning[0] && !cache_store_warned) {
        cache_store_warned = 1;
        fprintf(stderr, "gpuexp: warning: %s\n", compiled->cache_store_warning);
    }
}

/* Keeps the spec (the table at index 1, with the architecture chosen) as the program's user value
   2: names lowered later (program:kernel) are the same compile for the same architecture. */
static void keep_spec(lua_State *L, const char *arch)
{
    lua_newtable(L);
    for (lua_pushnil(L); lua_next(L, 1);) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -4);
    }
    lua_pushstring(L, arch);
    lua_setfield(L, -2, "arch");
    lua_setiuservalue(L, -2, 2);
}

/* gpuexp.compile{source= | file=, name=, arch=, options=, defines=, include=, names=, device=, cache=,
   compiler=} */
int l_compile(lua_State *L)
{
    static const char *const allowed[] = {"source",  "file",  "name",   "arch",  "options",  "defines",
                                          "include", "names", "device", "cache", "compiler", NULL};
    l_check_options(L, 1, "compile", allowed);
    lua_settop(L, 1);
    lua_newtable(L); /* 2: anchors for strings made here */
    int anchor = 2;
    const char *source = l_opt_string_field(L, 1, "source", NULL);
    const char *file = l_opt_string_field(L, 1, "file", NULL);
    if (!source == !file)
        return l_raisef(L, GX_ERR_USAGE, "compile: give exactly one of 'source' (a string) or 'file' (a path)");
    const char *compiler = l_opt_string_field(L, 1, "compiler", "nvrtc");
    int use_nvcc = strcmp(compiler, "nvcc") == 0;
    if (!use_nvcc && strcmp(compiler, "nvrtc") != 0)
        return l_raisef(L, GX_ERR_USAGE, "compile: compiler must be \"nvrtc\" or \"nvcc\", got '%s'", compiler);
    char source_dir[PATH_MAX] = "";
    const char *source_name = l_opt_string_field(L, 1, "name", file ? file : "source.cu");
    const char *source_path = NULL;
    if (file)
        source = read_source_file(L, anchor, file, &source_path, source_dir, sizeof source_dir);
    const char *arch_option = l_opt_string_field(L, 1, "arch", NULL);
    /* the default device is opened now only when its architecture is needed */
    int device_index = l_device_option(L, 1, !arch_option);

    const char **options, **includes, **names;
    int option_count = string_list(L, 1, "compile", "options", &options);
    int include_count = string_list(L, 1, "compile", "include", &includes);
    int name_count = string_list(L, 1, "compile", "names", &names);
    struct build build;
    translate_build(L, anchor, options, option_count, use_nvcc, arch_option, device_index, &build);
    int all_count;
    const char **all_options = with_defines(L, anchor, &build, &all_count);
    const char **include_dirs = resolved_includes(L, anchor, includes, include_count, &build);
    int use_cache = 1;
    if (lua_getfield(L, 1, "cache") != LUA_TNIL)
        use_cache = lua_toboolean(L, -1);
    lua_pop(L, 1);
    char cache_dir[PATH_MAX];
    gx_compile_cache_directory(use_cache, cache_dir, sizeof cache_dir);

    const gx_toolkit *toolkit = gx_toolkit_get();
    const char *system_dirs[2];
    int system_count = use_nvcc ? 0 : gx_toolkit_include_directories(toolkit, system_dirs); /* nvcc has its own */
    gx_compile_request request = {
        .source = source,
        .source_name = source_name,
        .source_directory = source_dir[0] ? source_dir : NULL,
        .source_path = source_path,
        .arch = build.arch,
        .options = all_options,
        .option_count = all_count,
        .include_directories = include_dirs,
        .include_directory_count = include_count + build.include_count,
        .system_directories = system_dirs,
        .system_directory_count = system_count,
        .toolkit_stamp = toolkit->stamp,
        .name_expressions = names,
        .name_expression_count = name_count,
        .cache_directory = cache_dir,
    };
    l_program *program = l_push_program(L, device_index, source_name, use_nvcc ? "nvcc" : "nvrtc");
    snprintf(program->arch, sizeof program->arch, "%s", build.arch);
    snprintf(program->notes, sizeof program->notes, "%s", build.notes);
    program->source = strdup(source); /* NULL when out of memory: the messages then give PTX types */
    gx_error error;
    double started = gx_clock_s();
    int failed = use_nvcc ? gx_nvcc_compile(&request, &program->compiled, &error)
                          : gx_nvrtc_compile(&request, &program->compiled, &error);
    say_cache_warnings(&program->compiled, failed);
    if (!failed)
        failed = gx_compile_check_names(&request, &program->compiled, &error);
    compile_seconds += gx_clock_s() - started;
    if (failed) {
        compile_hints(&error, program->compiler);
        return l_raise(L, &error);
    }
    l_note_source(L, source_name, program->compiled.source_key);
    keep_spec(L, program->arch);
    return 1;
}

/* gpuexp._compile_seconds() -> the seconds this process has spent in gpuexp.compile's compiles and cache
   lookups (gpuexp.tune's wall-time breakdown: the difference over a configuration is its own). */
static int gpuexp_compile_seconds(lua_State *L)
{
    lua_pushnumber(L, compile_seconds);
    return 1;
}

/* gpuexp.toolkit() -> {root, include, cccl, nvcc, found_by, cuda_version, cccl_version, missing, packages} */
static int gpuexp_toolkit(lua_State *L)
{
    const gx_toolkit *t = gx_toolkit_get();
    lua_createtable(L, 0, 10);
    if (t->root[0]) {
        l_set_string(L, "root", t->root);
        l_set_string(L, "include", t->include);
        if (t->cccl[0])
            l_set_string(L, "cccl", t->cccl);
        l_set_string(L, "found_by", t->found_by);
        if (t->cuda_version[0])
            l_set_string(L, "cuda_version", t->cuda_version);
        if (t->cccl_version[0])
            l_set_string(L, "cccl_version", t->cccl_version);
    }
    char nvcc[GX_TOOLKIT_PATH];
    gx_error ignored;
    if (gx_toolkit_nvcc(t, nvcc, sizeof nvcc, &ignored) == GX_OK)
        l_set_string(L, "nvcc", nvcc);
    l_set_string(L, "searched", t->searched);
    char missing[2048], packages[512];
    gx_toolkit_missing(t, missing, sizeof missing, packages, sizeof packages);
    l_set_string(L, "missing", missing);
    l_set_string(L, "packages", packages);
    return 1;
}

void l_open_compile(lua_State *L)
{
    static const luaL_Reg functions[] = {{"compile", l_compile},
                                         {"toolkit", gpuexp_toolkit},
                                         {"_compile_seconds", gpuexp_compile_seconds},
                                         {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
