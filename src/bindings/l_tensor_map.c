/* gpuexp.tensor_map{...}: a TMA descriptor (CUtensorMap, from cuTensorMapEncodeTiled) over a device
   buffer, as a gpuexp.Bytes of 128 bytes aligned to 64 that a kernel takes by value (a
   `const __grid_constant__ CUtensorMap` parameter) or inside a gpuexp.layout struct (a
   "tensor_map" field). Checked against cuTensorMapEncodeTiled's documented constraints first; in
   an offline plan it is checked and its bytes are zeros (nothing runs). */
#include <string.h>

#include "gx_occupancy.h"
#include "gx_tensor_map.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

/* A list of 1..5 positive integers at t[key]; returns its length (0 when absent and not required). */
static int integer_list(lua_State *L, int table, const char *key, unsigned long long *out, int required)
{
    int type = lua_getfield(L, table, key);
    if (type == LUA_TNIL && !required) {
        lua_pop(L, 1);
        return 0;
    }
    if (type != LUA_TTABLE || lua_rawlen(L, -1) < 1 || lua_rawlen(L, -1) > GX_TENSOR_MAP_MAX_RANK)
        return l_raisef(L, GX_ERR_USAGE,
                        "tensor_map: '%s' must be a list of 1 to %d integers (innermost dimension first)", key,
                        GX_TENSOR_MAP_MAX_RANK);
    int count = (int)lua_rawlen(L, -1);
    for (int i = 0; i < count; i++) {
        lua_rawgeti(L, -1, i + 1);
        int is_integer;
        lua_Integer value = lua_tointegerx(L, -1, &is_integer);
        if (!is_integer || value < 0)
            return l_raisef(L, GX_ERR_USAGE, "tensor_map: %s[%d] must be an integer >= 0, got %s", key, i + 1,
                            luaL_tolstring(L, -1, NULL));
        out[i] = (unsigned long long)value;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return count;
}

/* One of a named mode's names at t[key] (default fallback), as its enum value. */
static int named_mode(lua_State *L, int table, const char *key, const char *fallback, int (*parse)(const char *))
{
    const char *name = l_opt_string_field(L, table, key, fallback);
    int value = parse(name);
    if (value < 0)
        return l_raisef(L, GX_ERR_USAGE, "tensor_map: %s = \"%s\" is not one of %s", key, name,
                        gx_tensor_map_names(key));
    return value;
}

/* The buffer at t.buffer: a device buffer (address, size, element type) or a plan's (size, type). */
static void read_buffer(lua_State *L, int table, gx_tensor_map_spec *spec, const char **type, int *planned)
{
    lua_getfield(L, table, "buffer");
    int index = lua_gettop(L);
    *planned = l_is_planned_buffer(L, index);
    if (*planned) {
        lua_getfield(L, index, "bytes");
        spec->buffer_bytes = (size_t)lua_tointeger(L, -1);
        lua_getfield(L, index, "type");
        *type = lua_tostring(L, -1);
        lua_pop(L, 2); /* the strings stay alive in the buffer's table, on the stack */
        return;
    }
    l_buffer *buffer = luaL_testudata(L, index, GX_BUFFER_TYPE);
    if (!buffer)
        l_raisef(L, GX_ERR_USAGE, "tensor_map: 'buffer' must be a device buffer, got %s", luaL_typename(L, index));
    if (buffer->buffer.kind != GX_MEMORY_DEVICE || !buffer->buffer.device_pointer)
        l_raisef(L, GX_ERR_USAGE, "tensor_map: 'buffer' must be a device buffer that is not freed, got a %s buffer",
                 buffer->buffer.device_pointer ? gx_memory_kind_name(buffer->buffer.kind) : "freed");
    spec->buffer_bytes = buffer->buffer.bytes;
    spec->address = buffer->buffer.device_pointer;
    *type = gx_type_name(buffer->buffer.type);
}

/* gpuexp.tensor_map{buffer =, dims =, box =, type =, strides =, element_strides =, offset =,
   interleave =, swizzle =, l2_promotion =, oob_fill =} -> Bytes (128 bytes, aligned to 64) */
static int gpuexp_tensor_map(lua_State *L)
{
    static const char *const allowed[] = {"buffer",          "dims",   "box",        "type",    "strides",
                                          "element_strides", "offset", "interleave", "swizzle", "l2_promotion",
                                          "oob_fill",        NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    l_check_options(L, 1, "tensor_map", allowed);
    lua_settop(L, 1);
    gx_tensor_map_spec spec;
    memset(&spec, 0, sizeof spec);
    const char *buffer_type;
    int planned;
    read_buffer(L, 1, &spec, &buffer_type, &planned); /* 2: the buffer */
    gx_error error;
    if (gx_tensor_map_element(l_opt_string_field(L, 1, "type", buffer_type), &spec, &error))
        return l_raise(L, &error);
    spec.rank = integer_list(L, 1, "dims", spec.dims, 1);
    unsigned long long values[GX_TENSOR_MAP_MAX_RANK];
    if (integer_list(L, 1, "box", values, 1) != spec.rank)
        return l_raisef(L, GX_ERR_USAGE, "tensor_map: 'box' must have as many entries as 'dims' (%d)", spec.rank);
    for (int i = 0; i < spec.rank; i++)
        spec.box[i] = values[i] > 0xffffffffULL ? 0xffffffffU : (unsigned)values[i];
    int strides = integer_list(L, 1, "strides", spec.strides, 0);
    if (strides && strides != spec.rank - 1)
        return l_raisef(L, GX_ERR_USAGE,
                        "tensor_map: 'strides' gives the bytes between steps of dimensions 2 to %d: "
                        "%d entries, got %d",
                        spec.rank, spec.rank - 1, strides);
    for (int i = 0; !strides && i + 1 < spec.rank; i++) /* packed: each dimension right after the previous */
        spec.strides[i] = (i ? spec.strides[i - 1] : (unsigned long long)spec.element_bytes) * spec.dims[i];
    int element_strides = integer_list(L, 1, "element_strides", values, 0);
    if (element_strides && element_strides != spec.rank)
        return l_raisef(L, GX_ERR_USAGE, "tensor_map: 'element_strides' must have as many entries as 'dims' (%d)",
                        spec.rank);
    for (int i = 0; i < spec.rank; i++)
        spec.element_strides[i] = element_strides ? (values[i] > 8 ? 9 : (unsigned)values[i]) : 1;
    lua_Integer offset = 0;
    l_opt_integer_field(L, 1, "offset", 0, &offset);
    if (offset < 0)
        return l_raisef(L, GX_ERR_USAGE, "tensor_map: 'offset' is a byte count >= 0, got %lld", (long long)offset);
    spec.offset = (unsigned long long)offset;
    if (spec.address)
        spec.address += spec.offset;
    spec.interleave = (CUtensorMapInterleave)named_mode(L, 1, "interleave", "none", gx_tensor_map_interleave);
    spec.swizzle = (CUtensorMapSwizzle)named_mode(L, 1, "swizzle", "none", gx_tensor_map_swizzle);
    spec.l2_promotion = (CUtensorMapL2promotion)named_mode(L, 1, "l2_promotion", "none", gx_tensor_map_l2_promotion);
    spec.oob_fill = (CUtensorMapFloatOOBfill)named_mode(L, 1, "oob_fill", "zero", gx_tensor_map_oob_fill);
    unsigned char encoded[GX_TENSOR_MAP_BYTES];
    memset(encoded, 0, sizeof encoded);
    if (planned) {
        const char *arch = l_offline_arch(L);
        const gx_arch_limits *limits = arch ? l_check_arch(L, arch) : NULL;
        if (gx_tensor_map_check(&spec, &error))
            return l_raise(L, &error);
        if (limits && limits->cc_major < 9)
            return l_raisef(L, GX_ERR_USAGE,
                            "tensor_map: TMA descriptors need compute capability 9.0 (Hopper) or newer, "
                            "and this plan is for %s",
                            arch);
    } else {
        l_buffer *buffer = lua_touserdata(L, 2);
        if (gx_tensor_map_encode(&spec, buffer->buffer.device, encoded, &error))
            return l_raise(L, &error);
    }
    l_push_bytes(L, encoded, sizeof encoded, 64, 1);
    lua_createtable(L, 1, 0); /* the descriptor holds the buffer's address: it keeps the buffer alive */
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

void l_open_tensor_map(lua_State *L)
{
    lua_pushcfunction(L, gpuexp_tensor_map);
    lua_setfield(L, -2, "tensor_map");
}
