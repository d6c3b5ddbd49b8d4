/* Helpers shared by the bindings: the error value, option tables, metatables. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gx_driver.h"
#include "gx_nvrtc.h"
#include "gx_stats.h"
#include "gx_suggest.h"
#include "gx_types.h"
#include "l_gpuexp.h"
#include "l_util.h"

static int error_tostring(lua_State *L)
{
    lua_getfield(L, 1, "message");
    return 1;
}

static int error_concat(lua_State *L)
{
    luaL_tolstring(L, 1, NULL);
    luaL_tolstring(L, 2, NULL);
    lua_concat(L, 2);
    return 1;
}

void l_open_error(lua_State *L)
{
    luaL_newmetatable(L, GX_ERROR_TYPE);
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, error_concat);
    lua_setfield(L, -2, "__concat");
    lua_pop(L, 1);
}

void l_push_error(lua_State *L, enum gx_error_kind kind, const char *message)
{
    lua_createtable(L, 0, 2);
    lua_pushstring(L, message);
    lua_setfield(L, -2, "message");
    lua_pushstring(L, gx_error_kind_name(kind));
    lua_setfield(L, -2, "kind");
    luaL_setmetatable(L, GX_ERROR_TYPE);
}

int l_push_outcome(lua_State *L, int failed, const gx_error *error)
{
    if (!failed) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushnil(L);
    lua_pushstring(L, error->message);
    return 2;
}

/* Pushes "file:line: " of the user's code: the first Lua frame from `level` up that is not in
   gpuexp's own library (lua/gpuexp/), so an error raised for a script names the script's line. */
/* Whether a chunk is one of gpuexp's own Lua modules: embedded ("@lua/gpuexp/x.lua") or loaded
 * from GPUEXP_LUA_DIR ("@DIR/gpuexp/x.lua"). */
static int is_library_source(const char *source)
{
    if (strncmp(source, "@lua/gpuexp/", 12) == 0)
        return 1;
    const char *dir = getenv("GPUEXP_LUA_DIR");
    size_t length = dir ? strlen(dir) : 0;
    return length && source[0] == '@' && strncmp(source + 1, dir, length) == 0 &&
           strncmp(source + 1 + length, "/gpuexp/", 8) == 0;
}

void l_push_where(lua_State *L, int level)
{
    lua_Debug frame;
    for (int at = level; lua_getstack(L, at, &frame); at++) {
        if (!lua_getinfo(L, "Sl", &frame) || frame.currentline <= 0 || is_library_source(frame.source))
            continue;
        lua_pushfstring(L, "%s:%d: ", frame.short_src, frame.currentline);
        return;
    }
    lua_pushliteral(L, ""); /* raised by the library itself (a supervisor, a command): no line of the user's */
}

int l_raise(lua_State *L, const gx_error *error)
{
    l_push_where(L, 1);
    lua_pushstring(L, error->message);
    lua_concat(L, 2);
    const char *message = lua_tostring(L, -1);
    l_push_error(L, error->kind, message);
    return lua_error(L);
}

int l_raisef(lua_State *L, enum gx_error_kind kind, const char *format, ...)
{
    gx_error error;
    va_list args;
    va_start(args, format);
    gx_fail_va(&error, kind, format, args);
    va_end(args);
    return l_raise(L, &error);
}

void l_check_options(lua_State *L, int index, const char *what, const char *const *allowed)
{
    luaL_checktype(L, index, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, index)) {
        lua_pop(L, 1);
        int known = 0;
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *key = lua_tostring(L, -1);
            for (int i = 0; allowed[i] && !known; i++)
                known = strcmp(key, allowed[i]) == 0;
        }
        if (!known) {
            char list[512] = "", hint[256] = "";
            int count = 0;
            for (int i = 0; allowed[i]; i++, count++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
            const char *key = luaL_tolstring(L, -1, NULL);
            gx_did_you_mean(key, allowed, (size_t)count, hint, sizeof hint);
            l_raisef(L, GX_ERR_USAGE, "%s: unknown option '%s'%s (known: %s)", what, key, hint, list);
        }
    }
}

int l_opt_integer_field(lua_State *L, int index, const char *key, lua_Integer fallback, lua_Integer *out)
{
    int type = lua_getfield(L, index, key);
    *out = fallback;
    if (type == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    int is_integer = 0;
    lua_Integer value = lua_tointegerx(L, -1, &is_integer);
    if (!is_integer)
        l_raisef(L, GX_ERR_USAGE, "option '%s' must be an integer, got %s", key, luaL_typename(L, -1));
    lua_pop(L, 1);
    *out = value;
    return 1;
}

double l_opt_number_field(lua_State *L, int index, const char *key, double fallback)
{
    int type = lua_getfield(L, index, key);
    double value = fallback;
    if (type != LUA_TNIL) {
        if (type != LUA_TNUMBER)
            l_raisef(L, GX_ERR_USAGE, "option '%s' must be a number, got %s", key, luaL_typename(L, -1));
        value = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return value;
}

const char *l_opt_string_field(lua_State *L, int index, const char *key, const char *fallback)
{
    int type = lua_getfield(L, index, key);
    const char *value = fallback;
    if (type != LUA_TNIL) {
        if (type != LUA_TSTRING)
            l_raisef(L, GX_ERR_USAGE, "option '%s' must be a string, got %s", key, luaL_typename(L, -1));
        value = lua_tostring(L, -1); /* kept alive by the table */
    }
    lua_pop(L, 1);
    return value;
}

void l_set_integer(lua_State *L, const char *key, lua_Integer value)
{
    lua_pushinteger(L, value);
    lua_setfield(L, -2, key);
}

void l_set_number(lua_State *L, const char *key, double value)
{
    lua_pushnumber(L, value);
    lua_setfield(L, -2, key);
}

void l_set_string(lua_State *L, const char *key, const char *value)
{
    lua_pushstring(L, value);
    lua_setfield(L, -2, key);
}

void l_new_class(lua_State *L, const char *name, const luaL_Reg *methods, const luaL_Reg *metamethods)
{
    luaL_newmetatable(L, name);
    luaL_setfuncs(L, metamethods, 0);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    if (lua_getfield(L, -2, "__index") == LUA_TNIL) { /* no __index of its own: the methods are it */
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "__index");
    } else {
        lua_pop(L, 1);
    }
    lua_setfield(L, -2, "methods");
    lua_pop(L, 1);
}

const char *l_offline_arch(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_OFFLINE_ARCH);
    const char *arch = lua_tostring(L, -1); /* registry strings stay alive */
    lua_pop(L, 1);
    return arch;
}

void l_push_stats(lua_State *L, double *samples, size_t count, const char *unit)
{
    gx_stats stats;
    gx_stats_compute(samples, count, &stats);
    char key[64];
    lua_createtable(L, 0, 10);
#define STAT(name, value)                                                                                              \
    snprintf(key, sizeof key, "%s%s", name, unit);                                                                     \
    l_set_number(L, key, value);
    STAT("min", stats.min)
    STAT("max", stats.max)
    STAT("median", stats.median)
    STAT("mean", stats.mean)
    STAT("stddev", stats.stddev)
    STAT("p10", stats.p10)
    STAT("p90", stats.p90)
#undef STAT
    l_set_number(L, "noise_pct", stats.noise_pct);
    l_set_integer(L, "samples", (lua_Integer)stats.count);
}

void l_set_cuda_versions(lua_State *L, int loaded_only)
{
    lua_pushfstring(L, "%d.%d", CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
    lua_setfield(L, -2, "built_with_cuda");
    gx_error error;
    const gx_driver *d = gx_driver_get(&error);
    if (d) {
        lua_pushfstring(L, "%d.%d", d->version / 1000, (d->version % 1000) / 10);
        lua_setfield(L, -2, "driver_cuda");
    }
    int major, minor;
    if ((!loaded_only || gx_nvrtc_loaded()) && gx_nvrtc_version(&major, &minor, &error) == GX_OK) {
        lua_pushfstring(L, "%d.%d", major, minor);
        lua_setfield(L, -2, "nvrtc");
    }
}

void l_check_element_spec(lua_State *L, int index, int *type, size_t *count)
{
    const char *type_name = lua_isstring(L, index) ? lua_tostring(L, index) : NULL;
    *type = type_name ? gx_type_parse(type_name) : -1;
    if (*type < 0) {
        /* the types from their table; a C spelling ("float") named as gpuexp spells it */
        const char *names[GX_TYPE_COUNT];
        char list[256] = "", hint[128] = "";
        for (int i = 0; i < GX_TYPE_COUNT; i++) {
            names[i] = gx_type_name((gx_type)i);
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
        }
        if (!type_name) /* raised as the count's errors are: at the script's line, in a plan too */
            l_raisef(L, GX_ERR_USAGE, "element type must be a type's name, got %s; the types: %s",
                     luaL_typename(L, index), list);
        int c_type = gx_type_parse_c(type_name);
        if (c_type >= 0)
            snprintf(hint, sizeof hint, " (C's %s is '%s')", type_name, gx_type_name((gx_type)c_type));
        else
            gx_did_you_mean(type_name, names, GX_TYPE_COUNT, hint, sizeof hint);
        l_raisef(L, GX_ERR_USAGE, "unknown element type '%s'%s; the types: %s", type_name, hint, list);
    }
    int whole = 0;
    lua_Integer n = lua_tointegerx(L, index + 1, &whole);
    if (!whole)
        l_raisef(L, GX_ERR_USAGE, "element count must be a whole number >= 0, got %s",
                 luaL_tolstring(L, index + 1, NULL));
    if (n < 0)
        l_raisef(L, GX_ERR_USAGE, "element count must be >= 0, got %lld", (long long)n);
    if ((unsigned long long)n > SIZE_MAX / gx_type_size((gx_type)*type))
        l_raisef(L, GX_ERR_USAGE, "buffer of %lld elements is too large", (long long)n);
    *count = (size_t)n;
}

int l_is_planned_buffer(lua_State *L, int index)
{
    if (!l_offline_arch(L) || !lua_istable(L, index))
        return 0;
    lua_getfield(L, index, "kind");
    int planned = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "planned") == 0;
    lua_pop(L, 1);
    return planned;
}

int l_is_planned_device(lua_State *L, int index)
{
    if (!l_offline_arch(L) || !lua_istable(L, index))
        return 0;
    lua_getfield(L, index, "plan");
    int planned = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return planned;
}

void l_call_gpuexp(lua_State *L, const char *name)
{
    lua_getglobal(L, "gpuexp");
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
    lua_call(L, 0, 1);
}
