/* Lua type gpuexp.Bytes: raw bytes passed by value as one kernel parameter (a struct with its C
   layout, made by gpuexp.struct in lua/gpuexp/api/struct.lua, or any bytes a parameter needs). */
#include <string.h>

#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

/* gpuexp.bytes(data [, {align = N, keep = {values}}]) -> Bytes. keep: values whose lifetime the
   bytes depend on (the buffers whose addresses a struct holds). */
static int gpuexp_bytes(lua_State *L)
{
    size_t size;
    const char *data = luaL_checklstring(L, 1, &size);
    lua_Integer align = 1;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const allowed[] = {"align", "keep", NULL};
        l_check_options(L, 2, "bytes", allowed);
        l_opt_integer_field(L, 2, "align", 1, &align);
    }
    if (align < 1 || align > 4096 || (align & (align - 1)))
        return l_raisef(L, GX_ERR_USAGE, "bytes: align must be a power of two from 1 to 4096, got %lld", (long long)align);
    if (size == 0 || size > 32764)
        return l_raisef(L, GX_ERR_USAGE, "bytes: a parameter has 1 to 32764 bytes, got %zu", size);
    l_bytes *bytes = lua_newuserdatauv(L, sizeof *bytes + size, 1);
    bytes->size = size;
    bytes->align = (size_t)align;
    memcpy(bytes->data, data, size);
    luaL_setmetatable(L, GX_BYTES_TYPE);
    if (!lua_isnoneornil(L, 2)) {
        int type = lua_getfield(L, 2, "keep");
        if (type == LUA_TTABLE)
            lua_setiuservalue(L, -2, 1);
        else if (type == LUA_TNIL)
            lua_pop(L, 1);
        else
            return l_raisef(L, GX_ERR_USAGE, "bytes: keep must be a table, got %s", luaL_typename(L, -1));
    }
    return 1;
}

static int bytes_index(lua_State *L)
{
    l_bytes *bytes = luaL_checkudata(L, 1, GX_BYTES_TYPE);
    const char *key = luaL_checkstring(L, 2);
    if (strcmp(key, "size") == 0)
        lua_pushinteger(L, (lua_Integer)bytes->size);
    else if (strcmp(key, "align") == 0)
        lua_pushinteger(L, (lua_Integer)bytes->align);
    else if (strcmp(key, "data") == 0)
        lua_pushlstring(L, (const char *)bytes->data, bytes->size);
    else
        lua_pushnil(L);
    return 1;
}

static int bytes_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)((l_bytes *)luaL_checkudata(L, 1, GX_BYTES_TYPE))->size);
    return 1;
}

static int bytes_tostring(lua_State *L)
{
    l_bytes *bytes = luaL_checkudata(L, 1, GX_BYTES_TYPE);
    lua_pushfstring(L, "gpuexp.Bytes(%d bytes, aligned to %d)", (int)bytes->size, (int)bytes->align);
    return 1;
}

void l_open_bytes(lua_State *L)
{
    static const luaL_Reg metamethods[] = {{"__index", bytes_index}, {"__len", bytes_len}, {"__tostring", bytes_tostring},
                                           {NULL, NULL}};
    static const luaL_Reg no_methods[] = {{NULL, NULL}};
    l_new_class(L, GX_BYTES_TYPE, no_methods, metamethods);
    lua_pushcfunction(L, gpuexp_bytes);
    lua_setfield(L, -2, "bytes");
}
