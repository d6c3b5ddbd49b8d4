/* program:global(name [, type]) and program:globals(): a module's __constant__ and __device__
   variables as Buffers with a name (cuModuleGetGlobal), for programs from NVRTC, nvcc, cubins, fat
   binaries and host binaries; in an offline plan a planned buffer of the size the binary (or the
   PTX) gives. A missing name gets did-you-mean from the module's globals. */
#include <stdlib.h>
#include <string.h>

#include "gx_binary.h"
#include "gx_ptx.h"
#include "gx_suggest.h"
#include "gx_symbols.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

/* The program's globals, read without the driver: from its cubin or binary, else its PTX. Each
   {symbol, bytes, constant, ptx_type}; the list is malloc'ed (free with globals_free). */
typedef struct global_list {
    gx_image_globals image;
    gx_ptx_global *ptx;
    int count;
} global_list;

static void globals_free(global_list *list)
{
    gx_image_globals_free(&list->image);
    free(list->ptx);
}

static const char *global_symbol(const global_list *list, int i)
{
    return list->ptx ? list->ptx[i].name : list->image.globals[i].symbol;
}

static size_t global_bytes(const global_list *list, int i)
{
    return list->ptx ? list->ptx[i].bytes : list->image.globals[i].bytes;
}

static int global_constant(const global_list *list, int i)
{
    return list->ptx ? list->ptx[i].constant : list->image.globals[i].constant;
}

static int read_all_globals(const l_program *program, global_list *list, gx_error *error);

/* Not the program's own: the variables gpuexp's nvcc name expressions add (gx_nvcc.c), and the
   toolkit headers' static members that NVRTC emits as module variables (cuda::std::..., cooperative
   groups' constants: hundreds of them). */
static int foreign(const char *symbol)
{
    static const char *const prefixes[] = {
        "gpuexp_name_", "cuda::", "cooperative_groups::", "_INTERNAL_", "cub::", "thrust::", "std::", "nvcuda::",
        "__nv_",        NULL};
    char plain[512];
    gx_symbol_name(symbol, plain, sizeof plain);
    for (int i = 0; prefixes[i]; i++)
        if (strncmp(plain, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

static void drop_name_expressions(global_list *list)
{
    int kept = 0;
    for (int i = 0; i < list->count; i++) {
        if (foreign(global_symbol(list, i))) {
            if (!list->ptx)
                free(list->image.globals[i].symbol);
            continue;
        }
        if (list->ptx)
            list->ptx[kept++] = list->ptx[i];
        else
            list->image.globals[kept++] = list->image.globals[i];
    }
    list->count = kept;
    if (!list->ptx)
        list->image.count = kept;
}

static int read_globals(const l_program *program, global_list *list, gx_error *error)
{
    int status = read_all_globals(program, list, error);
    if (status == GX_OK)
        drop_name_expressions(list);
    return status;
}

static int read_all_globals(const l_program *program, global_list *list, gx_error *error)
{
    memset(list, 0, sizeof *list);
    const void *image = program->image ? (const void *)program->image : (const void *)program->compiled.cubin;
    size_t size = program->image ? program->image_size : program->compiled.cubin_size;
    if (image && size && program->image_kind != GX_IMAGE_PTX) {
        if (gx_image_list_globals(image, size, &list->image, error))
            return error->kind;
        list->count = list->image.count;
        return GX_OK;
    }
    const char *ptx = program->compiled.ptx;
    if (!ptx)
        return GX_OK;
    list->ptx = calloc(1024, sizeof *list->ptx);
    if (!list->ptx)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    list->count = gx_ptx_globals(ptx, list->ptx, 1024);
    return GX_OK;
}

/* The index of the global `name` names: its symbol, or its C++ name ("ns::scale"); -1 when none. */
static int find_global(const global_list *list, const char *name)
{
    for (int i = 0; i < list->count; i++)
        if (strcmp(global_symbol(list, i), name) == 0)
            return i;
    for (int i = 0; i < list->count; i++) {
        char plain[512];
        gx_symbol_name(global_symbol(list, i), plain, sizeof plain);
        if (strcmp(plain, name) == 0)
            return i;
    }
    return -1;
}

static int raise_not_found(lua_State *L, const l_program *program, global_list *list, const char *name)
{
    char(*plain)[256] = calloc((size_t)(list->count ? list->count : 1), sizeof *plain);
    const char **names = calloc((size_t)(list->count ? list->count : 1), sizeof *names);
    char message[2048], suggestion[600] = "", known[1024] = "";
    for (int i = 0; plain && names && i < list->count; i++) {
        gx_symbol_name(global_symbol(list, i), plain[i], sizeof plain[i]);
        names[i] = plain[i];
        if (strlen(known) + strlen(plain[i]) + 8 < sizeof known)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", plain[i]);
    }
    if (plain && names)
        gx_did_you_mean(name, names, (size_t)list->count, suggestion, sizeof suggestion);
    snprintf(message, sizeof message, "no __constant__ or __device__ variable '%s' in %s%s; %s%s", name,
             program->source_name, suggestion, list->count ? "it has: " : "it has none",
             list->count ? known : (program->compiled.ptx || program->image ? "" : " that can be read here"));
    free(plain);
    free(names);
    globals_free(list);
    return l_raisef(L, GX_ERR_USAGE, "%s", message);
}

/* The element type: given, else the type PTX declares (u8 for the .b8 arrays it writes for most). */
static int element_type(lua_State *L, const l_program *program, const char *symbol, const char *given)
{
    const char *name = given;
    gx_ptx_global *declared = NULL;
    int count = 0;
    if (!name && program->compiled.ptx && (declared = calloc(1024, sizeof *declared)))
        count = gx_ptx_globals(program->compiled.ptx, declared, 1024);
    for (int d = 0; d < count && !name; d++) {
        if (strcmp(declared[d].name, symbol) != 0)
            continue;
        static const char *const ptx_types[][2] = {{"f32", "f32"}, {"f64", "f64"}, {"u32", "u32"}, {"b32", "u32"},
                                                   {"s32", "i32"}, {"u64", "u64"}, {"b64", "u64"}, {"s64", "i64"},
                                                   {"u16", "u16"}, {"b16", "u16"}, {"s16", "i16"}, {"f16", "f16"},
                                                   {"s8", "i8"}};
        for (size_t i = 0; i < sizeof ptx_types / sizeof ptx_types[0]; i++)
            if (strcmp(declared[d].ptx_type, ptx_types[i][0]) == 0)
                name = ptx_types[i][1];
    }
    free(declared);
    int type = gx_type_parse(name ? name : "u8");
    if (type < 0)
        return l_raisef(L, GX_ERR_USAGE, "global: unknown element type '%s'", name);
    return type;
}

/* program:global(name [, type]) -> Buffer (device memory of the module, never freed by it) */
static int program_global(lua_State *L)
{
    l_program *program = luaL_checkudata(L, 1, GX_PROGRAM_TYPE);
    const char *name = luaL_checkstring(L, 2);
    const char *type_name = luaL_optstring(L, 3, NULL);
    lua_settop(L, 3);
    global_list list;
    gx_error error;
    /* a binary's compressed code cannot be listed here; on a GPU the driver still finds the name */
    if (read_globals(program, &list, &error) && (l_offline_arch(L) || error.kind != GX_ERR_USAGE))
        return l_raise(L, &error);
    int index = find_global(&list, name);
    const char *symbol = index >= 0 ? global_symbol(&list, index) : name;
    char symbol_copy[512];
    snprintf(symbol_copy, sizeof symbol_copy, "%s", symbol);
    size_t bytes = index >= 0 ? global_bytes(&list, index) : 0;
    int type = element_type(L, program, symbol_copy, type_name);
    int modules = l_program_modules(L, 1);
    CUdeviceptr address = 0;
    int found = index >= 0 && !modules; /* a plan: the list is all there is */
    for (int m = 0; m < modules && !found; m++) {
        size_t module_bytes = 0;
        if (gx_module_global(&program->modules[m], symbol_copy, &address, &module_bytes, &error) == GX_OK) {
            found = 1;
            bytes = module_bytes;
        } else if (!strstr(error.message, "CUDA_ERROR_NOT_FOUND")) {
            globals_free(&list);
            return l_raise(L, &error);
        }
    }
    if (!found)
        return raise_not_found(L, program, &list, name);
    globals_free(&list);
    size_t element = gx_type_size((gx_type)type);
    if (bytes % element != 0)
        return l_raisef(L, GX_ERR_USAGE,
                        "global '%s' has %zu bytes, not a whole number of %s elements (%zu bytes each)", name, bytes,
                        gx_type_name((gx_type)type), element);
    if (!modules) { /* an offline plan: a planned buffer of that size */
        l_call_gpuexp(L, "device");
        lua_getfield(L, -1, "alloc");
        lua_insert(L, -2);
        lua_pushstring(L, gx_type_name((gx_type)type));
        lua_pushinteger(L, (lua_Integer)(bytes / element));
        lua_call(L, 3, 1);
        const char *fields[][2] = {{"symbol", symbol_copy}, {"name", name}};
        for (int i = 0; i < 2; i++) { /* rawset: a planned buffer refuses new fields */
            lua_pushstring(L, fields[i][0]);
            lua_pushstring(L, fields[i][1]);
            lua_rawset(L, -3);
        }
        return 1;
    }
    lua_getiuservalue(L, 1, 1);
    int device_index = lua_gettop(L);
    l_push_global_buffer(L, device_index, 1, type, bytes / element, address);
    return 1;
}

/* program:globals() -> {{name, symbol, bytes, space = "constant" | "device"}, ...} */
static int program_globals(lua_State *L)
{
    l_program *program = luaL_checkudata(L, 1, GX_PROGRAM_TYPE);
    global_list list;
    gx_error error;
    if (read_globals(program, &list, &error))
        return l_raise(L, &error);
    lua_createtable(L, list.count, 0);
    for (int i = 0; i < list.count; i++) {
        char plain[512];
        gx_symbol_name(global_symbol(&list, i), plain, sizeof plain);
        lua_createtable(L, 0, 4);
        l_set_string(L, "name", plain);
        l_set_string(L, "symbol", global_symbol(&list, i));
        l_set_integer(L, "bytes", (lua_Integer)global_bytes(&list, i));
        l_set_string(L, "space", global_constant(&list, i) ? "constant" : "device");
        lua_rawseti(L, -2, i + 1);
    }
    globals_free(&list);
    return 1;
}

/* Adds program:global and program:globals to the Program type's methods: registered here, so that
   l_program.c never calls into this file (globals depend on programs, not the other way round). */
void l_open_global(lua_State *L)
{
    static const luaL_Reg methods[] = {{"global", program_global}, {"globals", program_globals}, {NULL, NULL}};
    luaL_getmetatable(L, GX_PROGRAM_TYPE);
    lua_getfield(L, -1, "methods");
    luaL_setfuncs(L, methods, 0);
    lua_pop(L, 2);
}
