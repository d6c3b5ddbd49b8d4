/* Lua type gpuexp.Program: kernels compiled from source (gpuexp.compile, l_compile.c) or loaded
   from another compiler's binary (gpuexp.load: cubin, fat binary, PTX, or a host ELF that embeds
   fat binaries), and program:kernel, which finds a kernel by its C++ name. Modules are loaded on
   the program's device on first use. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "gx_clock.h"
#include "gx_files.h"
#include "gx_symbols.h"
#include "gx_signature.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

#define COMPILED_SOURCES "gpuexp.compiled_sources"

static double load_seconds; /* time spent in module loads (gpuexp._load_seconds) */

static l_program *check_program(lua_State *L, int index)
{
    return luaL_checkudata(L, index, GX_PROGRAM_TYPE);
}

/* Resolves a path named by a script: absolute as is, else against the script's folder, then its
   parent (so experiments/x.lua can name "kernels/y.cu"). Pushes the path found, or raises. */
const char *l_push_script_path(lua_State *L, const char *path, const char *what)
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
    l_push_script_path(L, luaL_checkstring(L, 1), "file");
    return 1;
}

static int program_gc(lua_State *L)
{
    l_program *program = luaL_checkudata(L, 1, GX_PROGRAM_TYPE);
    for (int i = 0; i < program->module_count; i++)
        gx_module_unload(&program->modules[i]);
    program->module_count = 0;
    program->loaded = 0;
    gx_compile_result_free(&program->compiled);
    free(program->image);
    program->image = NULL;
    gx_image_kernels_free(&program->offline_kernels);
    free(program->source);
    program->source = NULL;
    return 0;
}

/* A new Program userdata on the stack, with the device at device_index (0: none yet) as its uservalue. */
l_program *l_push_program(lua_State *L, int device_index, const char *source_name, const char *compiler)
{
    l_program *program = lua_newuserdatauv(L, sizeof *program, 2); /* 1: the device, 2: the compile spec */
    memset(program, 0, sizeof *program);
    luaL_setmetatable(L, GX_PROGRAM_TYPE);
    snprintf(program->source_name, sizeof program->source_name, "%s", source_name);
    snprintf(program->compiler, sizeof program->compiler, "%s", compiler);
    if (device_index) {
        lua_pushvalue(L, device_index);
        lua_setiuservalue(L, -2, 1);
    }
    return program;
}

/* What this run compiled or loaded, by name: a resumed run refuses when a kernel changed. */
void l_note_source(lua_State *L, const char *name, const char *key)
{
    lua_getfield(L, LUA_REGISTRYINDEX, COMPILED_SOURCES);
    lua_pushstring(L, key);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

/* The device option at t.device, else the default device unless planning offline; its stack
   index or 0. With need_arch, the default device is opened only when no explicit arch is given.
   The plan's own device (gpuexp.device() in a plan) is no GPU: 0, as when none is named. */
int l_device_option(lua_State *L, int table, int open_default)
{
    if (lua_getfield(L, table, "device") != LUA_TNIL && !l_is_planned_device(L, -1)) {
        l_check_device(L, -1);
        return lua_gettop(L);
    }
    lua_pop(L, 1);
    int index = 0;
    if (open_default && !l_offline_arch(L))
        l_default_device(L, &index);
    return index;
}

void l_device_arch(lua_State *L, int device_index, char *out, size_t size)
{
    if (device_index) {
        l_device *device = lua_touserdata(L, device_index);
        snprintf(out, size, "sm_%d%d", device->device.cc_major, device->device.cc_minor);
    } else {
        snprintf(out, size, "%s", l_offline_arch(L) ? l_offline_arch(L) : "sm_90");
    }
}

/* gpuexp.load{file=, name=, device=}: another compiler's binary, loaded by the driver. */
static int gpuexp_load(lua_State *L)
{
    static const char *const allowed[] = {"file", "name", "device", NULL};
    l_check_options(L, 1, "load", allowed);
    lua_settop(L, 1);
    const char *file = l_opt_string_field(L, 1, "file", NULL);
    if (!file)
        return l_raisef(L, GX_ERR_USAGE,
                        "load: 'file' (a cubin, fat binary, PTX, or an object or executable from nvcc) is required");
    const char *path = l_push_script_path(L, file, "binary"); /* 2 */
    const char *name = l_opt_string_field(L, 1, "name", file);
    int device_index = l_device_option(L, 1, 1);
    char *data;
    size_t size;
    gx_error error;
    if (gx_read_file(path, &data, &size, &error))
        return l_raise(L, &error);
    l_program *program = l_push_program(L, device_index, name, "binary");
    program->image = (unsigned char *)data; /* freed with the program */
    program->image_size = size;
    program->image_kind = gx_image_detect(data, size);
    l_device_arch(L, device_index, program->arch, sizeof program->arch);
    if (program->image_kind == GX_IMAGE_UNKNOWN)
        return l_raisef(L, GX_ERR_USAGE,
                        "load: %s is not a cubin, a fat binary, PTX, or an object, library or "
                        "executable with GPU code",
                        path);
    if (program->image_kind == GX_IMAGE_HOST_ELF) {
        size_t offsets[GX_MAX_IMAGES], sizes[GX_MAX_IMAGES];
        int count;
        if (gx_host_fatbins(data, size, offsets, sizes, &count, &error)) {
            gx_error_append(&error, " (%s)", path);
            return l_raise(L, &error);
        }
    }
    if (program->image_kind == GX_IMAGE_PTX) { /* its kernels and parameters are readable offline too */
        program->compiled.ptx = strdup(data);
        program->compiled.log = strdup("");
        if (!program->compiled.ptx || !program->compiled.log)
            return l_raisef(L, GX_ERR_SYSTEM, "out of memory");
    } else if (!device_index) { /* an offline plan: the kernels and their parameter sizes from the ELF */
        if (gx_image_list_kernels(data, size, &program->offline_kernels, &error))
            return l_raisef(L, error.kind, "load: %s: %s (an offline plan for %s reads its kernels from the file)",
                            path, error.message, l_offline_arch(L));
    }
    XXH128_hash_t hash = XXH3_128bits(data, size);
    char key[33];
    snprintf(key, sizeof key, "%016llx%016llx", (unsigned long long)hash.high64, (unsigned long long)hash.low64);
    l_note_source(L, name, key);
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

/* Loads the program's modules on its device on first use; returns how many (0 in an offline plan,
   where only PTX-bearing programs get this far). */
int l_program_modules(lua_State *L, int program_index)
{
    l_program *program = check_program(L, program_index);
    if (program->loaded)
        return program->module_count;
    if (lua_getiuservalue(L, program_index, 1) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        if (l_offline_arch(L))
            return 0;
        int device_index;
        l_default_device(L, &device_index); /* compiled with an explicit arch: run on the default GPU */
        lua_pushvalue(L, device_index);
        lua_setiuservalue(L, program_index, 1);
        lua_getiuservalue(L, program_index, 1);
    }
    l_device *device = l_check_device(L, -1);
    lua_pop(L, 1); /* the program's uservalue keeps it alive */
    const void *images[GX_MAX_IMAGES];
    int count = 1;
    if (strcmp(program->compiler, "binary") != 0)
        images[0] = program->compiled.cubin_size ? (const void *)program->compiled.cubin : program->compiled.ptx;
    else if (program->image_kind == GX_IMAGE_HOST_ELF) {
        size_t offsets[GX_MAX_IMAGES], sizes[GX_MAX_IMAGES];
        gx_error error;
        if (gx_host_fatbins(program->image, program->image_size, offsets, sizes, &count, &error))
            return l_raise(L, &error);
        for (int i = 0; i < count; i++)
            images[i] = program->image + offsets[i];
    } else
        images[0] = program->image;
    int is_ptx = program->compiled.ptx && !program->compiled.cubin_size;
    size_t log_size = is_ptx ? 65536 : 0;
    char *log = is_ptx ? calloc(1, log_size) : NULL;
    gx_error error;
    double started = gx_clock_s();
    for (int i = 0; i < count; i++) {
        int failed = gx_module_load(&program->modules[i], &device->device, images[i], log, log_size, &error);
        load_seconds += gx_clock_s() - started;
        started = gx_clock_s();
        if (failed) {
            free(log);
            for (int j = 0; j < i; j++)
                gx_module_unload(&program->modules[j]);
            if (error.kind == GX_ERR_DRIVER)
                gx_error_append(
                    &error, " (loading %s, %s %s, on %s sm_%d%d)%s", program->source_name,
                    strcmp(program->compiler, "binary") == 0 ? "a" : "compiled for",
                    strcmp(program->compiler, "binary") == 0 ? gx_image_kind_name(program->image_kind) : program->arch,
                    device->device.name, device->device.cc_major, device->device.cc_minor,
                    strstr(error.message, "NO_BINARY_FOR_GPU")
                        ? "; it has no code this GPU can run (cuobjdump --list-elf --list-ptx FILE lists what it has)"
                        : "");
            return l_raise(L, &error);
        }
    }
    if (log && log[0]) { /* the JIT's report of PTX it compiled: registers, shared memory, spills */
        char *joined;
        if (asprintf(&joined, "%s%s%s", program->compiled.log ? program->compiled.log : "",
                     program->compiled.log && program->compiled.log[0] ? "\n" : "", log) >= 0) {
            free(program->compiled.log);
            program->compiled.log = joined;
        }
    }
    free(log);
    program->module_count = count;
    program->loaded = 1;
    return count;
}

/* The program's kernel symbols, in the order the program has them: from its PTX when it has some,
   else from its loaded modules. Pushes a table {symbol = module index (0-based)} and a userdata
   array of the symbols (its strings anchored in the table). */
static const char **kernel_symbols(lua_State *L, int program_index, int *count)
{
    l_program *program = check_program(L, program_index);
    lua_newtable(L);
    int table = lua_gettop(L);
    lua_newtable(L); /* the order found */
    int order = lua_gettop(L);
    int found = 0;
#define ADD_SYMBOL(symbol, module)                                                                                     \
    do {                                                                                                               \
        if (lua_getfield(L, table, symbol) == LUA_TNIL) {                                                              \
            lua_pushinteger(L, module);                                                                                \
            lua_setfield(L, table, symbol);                                                                            \
            lua_pushstring(L, symbol);                                                                                 \
            lua_rawseti(L, order, ++found);                                                                            \
        }                                                                                                              \
        lua_pop(L, 1);                                                                                                 \
    } while (0)
    if (program->compiled.ptx && program->compiled.ptx[0]) {
        size_t size = strlen(program->compiled.ptx) + 1;
        char *entries = malloc(size);
        if (!entries)
            return l_raisef(L, GX_ERR_SYSTEM, "out of memory"), NULL;
        gx_ptx_entries(program->compiled.ptx, entries, size);
        for (char *saveptr = NULL, *token = strtok_r(entries, ", ", &saveptr); token;
             token = strtok_r(NULL, ", ", &saveptr))
            ADD_SYMBOL(token, 0);
        free(entries);
    } else if (program->offline_kernels.count) {
        for (int i = 0; i < program->offline_kernels.count; i++)
            ADD_SYMBOL(program->offline_kernels.kernels[i].symbol, 0);
    } else {
        int modules = l_program_modules(L, program_index);
        for (int m = 0; m < modules; m++) {
            char **symbols;
            int n;
            gx_error error;
            if (gx_module_functions(&program->modules[m], &symbols, &n, &error))
                return l_raise(L, &error), NULL;
            for (int i = 0; i < n; i++)
                ADD_SYMBOL(symbols[i], m);
            gx_module_functions_free(symbols, n);
        }
    }
#undef ADD_SYMBOL
    const char **list = lua_newuserdatauv(L, sizeof(char *) * (size_t)(found + 1), 0);
    for (int i = 0; i < found; i++) {
        lua_rawgeti(L, order, i + 1);
        list[i] = lua_tostring(L, -1);
        lua_rawseti(L, table, -(i + 1)); /* anchored in the table, which stays: the order table goes */
    }
    lua_remove(L, order);
    *count = found;
    return list;
}

/* A name with template arguments that no canonical form matched (an enumerator, or an
   instantiation a header-only program lacks): where the program has its source, the compiler
   lowers it exactly, as compile{names = {name}} would (the program's compile spec again with the
   name added; cached like any compile). Returns 1 when this program has the symbol (symbol set),
   2 when only the new compile has it (that Program left on the stack), else 0. */
static int lower_from_source(lua_State *L, int program_index, int symbol_table, const char *name, char *symbol,
                             size_t size)
{
    if (!strchr(name, '<') || lua_getiuservalue(L, program_index, 2) != LUA_TTABLE) {
        lua_pop(L, 1);
        return 0;
    }
    int spec = lua_gettop(L);
    lua_pushcfunction(L, l_compile);
    lua_newtable(L);
    for (lua_pushnil(L); lua_next(L, spec);) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -4);
    }
    lua_createtable(L, 1, 0);
    lua_pushstring(L, name);
    lua_rawseti(L, -2, 1);
    lua_setfield(L, -2, "names");
    int found = 0;
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
        l_program *lowered = luaL_testudata(L, -1, GX_PROGRAM_TYPE);
        if (lowered && gx_compile_lowered_name(&lowered->compiled, name, symbol, size)) {
            found = lua_getfield(L, symbol_table, symbol) != LUA_TNIL ? 1 : 2;
            lua_pop(L, 1);
        }
    }
    if (found == 2) { /* keep the new program */
        lua_replace(L, spec);
        lua_settop(L, spec);
    } else {
        lua_settop(L, spec - 1);
    }
    return found;
}

/* program:kernel(name): an extern "C" name, a C++ name ("ns::k<float, 128>", with or without its
   parameter list), a name expression given at compile, or the mangled name. Works offline for
   programs with PTX: the resources then come from the ptxas report alone. */
static int program_kernel(lua_State *L)
{
    l_program *program = check_program(L, 1);
    size_t length;
    const char *name = luaL_checklstring(L, 2, &length);
    if (length >= GX_NAME_BYTES)
        return l_raisef(L, GX_ERR_USAGE, "a kernel name of %zu characters is longer than gpuexp takes (%d)", length,
                        GX_NAME_BYTES - 1);
    lua_settop(L, 2);
    char lowered[GX_NAME_BYTES];
    const char *symbol = gx_compile_lowered_name(&program->compiled, name, lowered, sizeof lowered);
    int count;
    const char **symbols = kernel_symbols(L, 1, &count); /* 3: symbol -> module, 4: the list */
    if (!symbol) {
        int first, second;
        int found = gx_symbol_find(symbols, count, name, &first, &second);
        if (found == -2) {
            char a[GX_NAME_BYTES], b[GX_NAME_BYTES];
            gx_symbol_name(symbols[first], a, sizeof a);
            gx_symbol_name(symbols[second], b, sizeof b);
            return l_raisef(L, GX_ERR_USAGE,
                            "'%s' names several kernels in %s, %s and %s among them: give the template "
                            "arguments or the parameter list (\"%s(...)\"), or the mangled name (%s)",
                            name, program->source_name, a, b, name, symbols[first]);
        }
        int lowered_in = found < 0 ? lower_from_source(L, 1, 3, name, lowered, sizeof lowered) : 0;
        if (lowered_in == 2) { /* the kernel of the compile that instantiated it */
            lua_replace(L, 1);
            lua_settop(L, 1);
            lua_pushstring(L, lowered);
            return program_kernel(L);
        }
        if (lowered_in == 1)
            symbol = lowered;
        else if (found < 0)
            return l_raise_kernel_not_found(L, program, symbols, count, name);
        else
            symbol = symbols[first];
    }
    lua_getfield(L, 3, symbol);
    int module_index = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    l_kernel *kernel = l_push_kernel(L, 1);
    int kernel_index = lua_gettop(L);
    snprintf(kernel->symbol, sizeof kernel->symbol, "%s", symbol);
    snprintf(kernel->arch, sizeof kernel->arch, "%s", program->arch);
    if (program->compiled.ptx && program->compiled.ptx[0]) {
        kernel->param_count = gx_ptx_params(program->compiled.ptx, symbol, kernel->params, GX_MAX_PARAMS);
        if (kernel->param_count == -2) /* never some of them: a launch would be checked against the wrong list */
            return l_raisef(L, GX_ERR_USAGE,
                            "kernel '%s' has more than %d parameters, more than gpuexp takes: pass "
                            "them in a struct (by value or behind a pointer)",
                            name, GX_MAX_PARAMS);
        if (kernel->param_count < 0)
            kernel->param_count = 0;
        gx_ptx_required_cluster(program->compiled.ptx, symbol, kernel->required_cluster);
    }
    for (int i = 0; i < program->offline_kernels.count; i++) { /* a binary in a plan: sizes from its ELF */
        const gx_image_kernel *k = &program->offline_kernels.kernels[i];
        if (strcmp(k->symbol, symbol) != 0)
            continue;
        kernel->param_count = k->param_count;
        for (int p = 0; p < k->param_count; p++) {
            gx_param *param = &kernel->params[p];
            param->type_class = GX_PARAM_SIZED;
            param->size_bytes = k->param_sizes[p];
            snprintf(param->ptx_type, sizeof param->ptx_type, "%d bytes", param->size_bytes);
        }
    }
    if (program->source && kernel->param_count > 0) { /* the C types, when the source says them plainly */
        char types[GX_MAX_PARAMS][48], plain[GX_NAME_BYTES];
        gx_symbol_name(symbol, plain, sizeof plain);
        char *unqualified = strrchr(plain, ':') ? strrchr(plain, ':') + 1 : plain;
        /* a template's source says T, not the instance's type: PTX's types then */
        if (!strchr(plain, '<') && gx_signature_types(program->source, unqualified, &types[0][0], sizeof types[0],
                                                      GX_MAX_PARAMS) == kernel->param_count)
            for (int i = 0; i < kernel->param_count; i++)
                snprintf(kernel->params[i].c_type, sizeof kernel->params[i].c_type, "%.47s", types[i]);
    }
    int modules = l_program_modules(L, 1);
    kernel->has_ptxas = program->compiled.log && gx_ptxas_find(program->compiled.log, symbol, &kernel->ptxas) == 0;
    if (modules) {
        gx_error error;
        if (gx_kernel_get(&kernel->kernel, &program->modules[module_index], symbol, &error)) {
            char plain[512];
            gx_symbol_name(symbol, plain, sizeof plain);
            gx_error_append(
                &error, " looking up kernel '%s' (symbol %s) in the module loaded from %s (%s%s)", plain, symbol,
                program->source_name, strcmp(program->compiler, "binary") == 0 ? "a " : "compiled by ",
                strcmp(program->compiler, "binary") == 0 ? gx_image_kind_name(program->image_kind) : program->compiler);
            return l_raise(L, &error);
        }
        if (!(program->compiled.ptx && program->compiled.ptx[0])) { /* a binary: sizes from the driver */
            kernel->param_count = kernel->kernel.param_count;
            for (int i = 0; i < kernel->param_count; i++) {
                gx_param *param = &kernel->params[i];
                param->type_class = GX_PARAM_SIZED;
                param->size_bytes = (int)kernel->kernel.param_sizes[i];
                snprintf(param->ptx_type, sizeof param->ptx_type, "%d bytes", param->size_bytes);
            }
        }
    }
    gx_symbol_name(symbol, kernel->kernel.name, sizeof kernel->kernel.name);
    lua_pushvalue(L, kernel_index);
    return 1;
}

/* program:kernels([{details = true}]) -> the kernels' names as C++ writes them, or with details a
   table per kernel: name, symbol, base, template_args, params */
static int program_kernels(lua_State *L)
{
    check_program(L, 1);
    int details = 0;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const allowed[] = {"details", NULL};
        l_check_options(L, 2, "kernels", allowed);
        lua_getfield(L, 2, "details");
        details = lua_toboolean(L, -1);
    }
    lua_settop(L, 1);
    int count;
    const char **symbols = kernel_symbols(L, 1, &count);
    lua_createtable(L, count, 0);
    for (int i = 0; i < count; i++) {
        if (details) {
            l_push_kernel_details(L, symbols[i]);
        } else {
            char name[GX_NAME_BYTES];
            gx_symbol_name(symbols[i], name, sizeof name);
            lua_pushstring(L, name);
        }
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static void push_resources(lua_State *L, const gx_resources *r)
{
    char name[GX_NAME_BYTES];
    gx_symbol_name(r->name, name, sizeof name);
    lua_createtable(L, 0, 8);
    l_set_string(L, "name", name);
    l_set_string(L, "symbol", r->name);
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
    l_program *program = check_program(L, 1);
    enum { MAX_FUNCTIONS = 256 };
    /* names are long: the report's entries live in a userdata (freed by the collector), not on the stack */
    gx_resources *all = lua_newuserdatauv(L, MAX_FUNCTIONS * sizeof *all, 0);
    lua_insert(L, 1); /* below the arguments, which move up by one */
    int count = program->compiled.log ? gx_ptxas_parse(program->compiled.log, all, MAX_FUNCTIONS) : 0;
    if (lua_isnoneornil(L, 3)) {
        lua_createtable(L, 0, count);
        for (int i = 0; i < count; i++) {
            push_resources(L, &all[i]);
            char name[GX_NAME_BYTES];
            gx_symbol_name(all[i].name, name, sizeof name);
            lua_setfield(L, -2, name);
        }
        return 1;
    }
    const char *name = luaL_checkstring(L, 3);
    char lowered[GX_NAME_BYTES];
    const char *symbol = gx_compile_lowered_name(&program->compiled, name, lowered, sizeof lowered);
    for (int i = 0; i < count; i++)
        if (symbol ? strcmp(all[i].name, symbol) == 0 : gx_symbol_matches(all[i].name, name)) {
            push_resources(L, &all[i]);
            return 1;
        }
    return l_raisef(
        L, GX_ERR_USAGE, "no kernel '%s' in the ptxas report of %s%s", name, program->source_name,
        strcmp(program->compiler, "binary") == 0 ? " (a cubin or fat binary has none: use kernel:resources())" : "");
}

static int program_index(lua_State *L)
{
    l_program *program = check_program(L, 1);
    const char *key = luaL_checkstring(L, 2);
    luaL_getmetafield(L, 1, "methods");
    if (lua_getfield(L, -1, key) != LUA_TNIL)
        return 1;
    if (strcmp(key, "log") == 0)
        lua_pushstring(L, program->compiled.log ? program->compiled.log : "");
    else if (strcmp(key, "ptx") == 0)
        lua_pushstring(L, program->compiled.ptx ? program->compiled.ptx : "");
    else if (strcmp(key, "arch") == 0)
        lua_pushstring(L, program->arch);
    else if (strcmp(key, "name") == 0)
        lua_pushstring(L, program->source_name);
    else if (strcmp(key, "compiler") == 0)
        lua_pushstring(L, program->compiler);
    else if (strcmp(key, "kind") == 0)
        lua_pushstring(L,
                       strcmp(program->compiler, "binary") == 0 ? gx_image_kind_name(program->image_kind) : "source");
    else if (strcmp(key, "notes") == 0)
        lua_pushstring(L, program->notes);
    else if (strcmp(key, "cache_key") == 0)
        lua_pushstring(L, program->compiled.key);
    else if (strcmp(key, "source_key") == 0)
        lua_pushstring(L, program->compiled.source_key);
    else if (strcmp(key, "cache_hit") == 0)
        lua_pushboolean(L, program->compiled.from_cache);
    else if (strcmp(key, "compile_seconds") == 0)
        lua_pushnumber(L, program->compiled.compile_seconds);
    else if (strcmp(key, "cubin_bytes") == 0)
        lua_pushinteger(L, (lua_Integer)(program->image ? program->image_size : program->compiled.cubin_size));
    else if (strcmp(key, "modules") == 0)
        lua_pushinteger(L, program->module_count);
    else
        lua_pushnil(L);
    return 1;
}

/* gpuexp._load_seconds() -> the seconds this process has spent loading modules (gpuexp.tune's
   wall-time breakdown: the difference over a configuration is its module loads). */
static int gpuexp_load_seconds(lua_State *L)
{
    lua_pushnumber(L, load_seconds);
    return 1;
}

void l_open_program(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"kernel", program_kernel}, {"kernels", program_kernels}, {"resources", program_resources}, {NULL, NULL}};
    static const luaL_Reg metamethods[] = {{"__index", program_index}, {"__gc", program_gc}, {NULL, NULL}};
    l_new_class(L, GX_PROGRAM_TYPE, methods, metamethods);
    static const luaL_Reg functions[] = {{"load", gpuexp_load},
                                         {"resolve", gpuexp_resolve},
                                         {"_compiled_sources", gpuexp_compiled_sources},
                                         {"_load_seconds", gpuexp_load_seconds},
                                         {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, COMPILED_SOURCES);
}
