/* Lua type gpuexp.Bytes: raw bytes passed by value as one kernel parameter (a struct with its C
   layout, made by gpuexp.struct in lua/gpuexp/api/struct.lua, or any bytes a parameter needs). */
#include <stdint.h>
#include <string.h>

#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

l_bytes *l_push_bytes(lua_State *L, const void *data, size_t size, size_t align, int tensor_maps)
{
    if (align < 1 || align > 4096 || (align & (align - 1)))
        return l_raisef(L, GX_ERR_USAGE, "bytes: align must be a power of two from 1 to 4096, got %zu", align), NULL;
    if (size == 0 || size > 32764)
        return l_raisef(L, GX_ERR_USAGE, "bytes: a parameter has 1 to 32764 bytes, got %zu", size), NULL;
    l_bytes *bytes = lua_newuserdatauv(L, sizeof *bytes + size + 63, 1);
    bytes->size = size;
    bytes->align = align;
    bytes->tensor_maps = tensor_maps;
    /* Lua's userdata never move: a pointer into their memory stays valid */
    bytes->data = bytes->storage + ((64 - (uintptr_t)bytes->storage % 64) % 64);
    memcpy(bytes->data, data, size);
    luaL_setmetatable(L, GX_BYTES_TYPE);
    return bytes;
}

/* gpuexp.bytes(data [, {align = N, keep = {values}, tensor_maps = N}]) -> Bytes. keep: values whose
   lifetime the bytes depend on (the buffers whose addresses a struct holds); tensor_maps: the TMA
   descriptors it holds (a layout with tensor_map fields says so). */
static int gpuexp_bytes(lua_State *L)
{
    size_t size;
    const char *data = luaL_checklstring(L, 1, &size);
    lua_Integer align = 1, tensor_maps = 0;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const allowed[] = {"align", "keep", "tensor_maps", NULL};
        l_check_options(L, 2, "bytes", allowed);
        l_opt_integer_field(L, 2, "align", 1, &align);
        l_opt_integer_field(L, 2, "tensor_maps", 0, &tensor_maps);
    }
    if (align < 1 || align > 4096 || (align & (align - 1)))
        return l_raisef(L, GX_ERR_USAGE, "bytes: align must be a power of two from 1 to 4096, got %lld",
                        (long long)align);
    if (tensor_maps < 0 || tensor_maps > 256)
        return l_raisef(L, GX_ERR_USAGE, "bytes: tensor_maps must be 0 to 256, got %lld", (long long)tensor_maps);
    l_push_bytes(L, data, size, (size_t)align, (int)tensor_maps);
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
    else if (strcmp(key, "tensor_maps") == 0)
        lua_pushinteger(L, bytes->tensor_maps);
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
    if (bytes->tensor_maps == 1 && bytes->size == 128)
        lua_pushstring(L, "gpuexp.TensorMap(128 bytes, aligned to 64)");
    else
        lua_pushfstring(L, "gpuexp.Bytes(%d bytes, aligned to %d)", (int)bytes->size, (int)bytes->align);
    return 1;
}

void l_open_bytes(lua_State *L)
{
    static const luaL_Reg metamethods[] = {
        {"__index", bytes_index}, {"__len", bytes_len}, {"__tostring", bytes_tostring}, {NULL, NULL}};
    static const luaL_Reg no_methods[] = {{NULL, NULL}};
    l_new_class(L, GX_BYTES_TYPE, no_methods, metamethods);
    lua_pushcfunction(L, gpuexp_bytes);
    lua_setfield(L, -2, "bytes");
}
