/* Lua type gpuexp.Scalar: a number with its C type, for kernel arguments (gpuexp.f32(2.5), ...). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

static int make_scalar(lua_State *L, int type)
{
    l_scalar *scalar = lua_newuserdatauv(L, sizeof *scalar, 0);
    memset(scalar, 0, sizeof *scalar);
    scalar->type = type;
    if (lua_type(L, 1) != LUA_TNUMBER)
        return l_raisef(L, GX_ERR_USAGE, "gpuexp.%s: expected a number, got %s", gx_type_name((gx_type)type),
                        luaL_typename(L, 1));
    if (gx_type_is_float((gx_type)type)) {
        gx_element_set(&scalar->value, (gx_type)type, 0, lua_tonumber(L, 1));
    } else {
        int is_integer;
        lua_Integer v = lua_tointegerx(L, 1, &is_integer);
        if (!is_integer)
            return l_raisef(L, GX_ERR_USAGE, "gpuexp.%s: expected an integer, got %s", gx_type_name((gx_type)type),
                            lua_tostring(L, 1));
        /* a 64-bit type holds any lua_Integer (u64: not a negative one); the others their range */
        int ok = type == GX_I64 || (type == GX_U64 ? v >= 0 : gx_type_integer_fits((gx_type)type, v));
        if (!ok)
            return l_raisef(L, GX_ERR_USAGE, "gpuexp.%s: %lld is out of range", gx_type_name((gx_type)type),
                            (long long)v);
        if (type == GX_I64 || type == GX_U64)
            memcpy(&scalar->value, &v, sizeof v);
        else
            gx_element_set(&scalar->value, (gx_type)type, 0, (double)v); /* exact: 32 bits or fewer */
    }
    luaL_setmetatable(L, GX_SCALAR_TYPE);
    return 1;
}

#define SCALAR_CONSTRUCTOR(name, type)                                                                                 \
    static int scalar_##name(lua_State *L)                                                                             \
    {                                                                                                                  \
        return make_scalar(L, type);                                                                                   \
    }
SCALAR_CONSTRUCTOR(f32, GX_F32)
SCALAR_CONSTRUCTOR(f64, GX_F64)
SCALAR_CONSTRUCTOR(i32, GX_I32)
SCALAR_CONSTRUCTOR(u32, GX_U32)
SCALAR_CONSTRUCTOR(i64, GX_I64)
SCALAR_CONSTRUCTOR(u64, GX_U64)
SCALAR_CONSTRUCTOR(u8, GX_U8)
SCALAR_CONSTRUCTOR(i8, GX_I8)
SCALAR_CONSTRUCTOR(i16, GX_I16)
SCALAR_CONSTRUCTOR(u16, GX_U16)
SCALAR_CONSTRUCTOR(f16, GX_F16)
SCALAR_CONSTRUCTOR(bf16, GX_BF16)
SCALAR_CONSTRUCTOR(fp8_e4m3, GX_FP8_E4M3)
SCALAR_CONSTRUCTOR(fp8_e5m2, GX_FP8_E5M2)

/* gpuexp.from_bits(type, pattern) -> Scalar: a value given by its bit pattern ("f16", 0x3c00 is 1.0),
   for NaN payloads and exact test values. */
static int scalar_from_bits(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    int type = gx_type_parse(name);
    if (type < 0)
        return l_raisef(L, GX_ERR_USAGE, "gpuexp.from_bits: unknown type '%s'", name);
    int is_integer;
    lua_Integer pattern = lua_tointegerx(L, 2, &is_integer);
    size_t size = gx_type_size((gx_type)type);
    if (!is_integer || (size < 8 && (pattern < 0 || (uint64_t)pattern >> (8 * size))))
        return l_raisef(L, GX_ERR_USAGE, "gpuexp.from_bits: %s takes a pattern of %zu bits, got %s", name, 8 * size,
                        luaL_tolstring(L, 2, NULL));
    l_scalar *scalar = lua_newuserdatauv(L, sizeof *scalar, 0);
    memset(scalar, 0, sizeof *scalar);
    scalar->type = type;
    memcpy(&scalar->value, &pattern, size); /* little-endian, as every CUDA host */
    luaL_setmetatable(L, GX_SCALAR_TYPE);
    return 1;
}

static int scalar_tostring(lua_State *L)
{
    l_scalar *s = luaL_checkudata(L, 1, GX_SCALAR_TYPE);
    if (gx_type_is_float((gx_type)s->type))
        lua_pushfstring(L, "gpuexp.%s(%f)", gx_type_name((gx_type)s->type),
                        gx_element_get(&s->value, (gx_type)s->type, 0));
    else if (s->type == GX_U64 || s->type == GX_I64)
        lua_pushfstring(L, "gpuexp.%s(%I)", gx_type_name((gx_type)s->type), (lua_Integer)s->value.i64);
    else
        lua_pushfstring(L, "gpuexp.%s(%I)", gx_type_name((gx_type)s->type),
                        (lua_Integer)gx_element_get(&s->value, (gx_type)s->type, 0));
    return 1;
}

static int scalar_index(lua_State *L)
{
    l_scalar *s = luaL_checkudata(L, 1, GX_SCALAR_TYPE);
    const char *key = luaL_checkstring(L, 2);
    if (strcmp(key, "type") == 0)
        lua_pushstring(L, gx_type_name((gx_type)s->type));
    else if (strcmp(key, "value") == 0) {
        if (gx_type_is_float((gx_type)s->type))
            lua_pushnumber(L, gx_element_get(&s->value, (gx_type)s->type, 0));
        else if (s->type == GX_U64 || s->type == GX_I64)
            lua_pushinteger(L, (lua_Integer)s->value.i64);
        else
            lua_pushinteger(L, (lua_Integer)gx_element_get(&s->value, (gx_type)s->type, 0));
    } else if (strcmp(key, "bits") == 0) { /* the bit pattern, as an unsigned integer of the type's size */
        lua_Integer pattern = 0;
        memcpy(&pattern, &s->value, gx_type_size((gx_type)s->type));
        lua_pushinteger(L, pattern);
    } else
        lua_pushnil(L);
    return 1;
}

void l_open_scalar(lua_State *L)
{
    static const luaL_Reg no_methods[] = {{NULL, NULL}};
    static const luaL_Reg metamethods[] = {{"__tostring", scalar_tostring}, {"__index", scalar_index}, {NULL, NULL}};
    l_new_class(L, GX_SCALAR_TYPE, no_methods, metamethods);
    static const luaL_Reg scalars[] = {{"f32", scalar_f32},
                                       {"f64", scalar_f64},
                                       {"i32", scalar_i32},
                                       {"u32", scalar_u32},
                                       {"i64", scalar_i64},
                                       {"u64", scalar_u64},
                                       {"u8", scalar_u8},
                                       {"i8", scalar_i8},
                                       {"i16", scalar_i16},
                                       {"u16", scalar_u16},
                                       {"f16", scalar_f16},
                                       {"bf16", scalar_bf16},
                                       {"fp8_e4m3", scalar_fp8_e4m3},
                                       {"fp8_e5m2", scalar_fp8_e5m2},
                                       {"from_bits", scalar_from_bits},
                                       {NULL, NULL}};
    luaL_setfuncs(L, scalars, 0);
}
