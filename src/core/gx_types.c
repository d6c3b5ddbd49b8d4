#include "gx_types.h"

#include "gx_narrow.h"

#include <stdint.h>
#include <string.h>

static const char *const type_names[GX_TYPE_COUNT] = {"f32", "f64", "i32",  "u32",      "i64",      "u64", "u8",
                                                      "i8",  "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "i16", "u16"};
static const size_t type_sizes[GX_TYPE_COUNT] = {4, 8, 4, 4, 8, 8, 1, 1, 2, 2, 1, 1, 2, 2};

int gx_type_parse(const char *name)
{
    for (int i = 0; i < GX_TYPE_COUNT; i++)
        if (strcmp(name, type_names[i]) == 0)
            return i;
    return -1;
}

int gx_type_parse_c(const char *c_name)
{
    static const struct {
        const char *c_name;
        gx_type type;
    } spellings[] = {
        {"float", GX_F32},
        {"double", GX_F64},
        {"int", GX_I32},
        {"int32_t", GX_I32},
        {"unsigned", GX_U32},
        {"unsigned int", GX_U32},
        {"uint32_t", GX_U32},
        {"long long", GX_I64},
        {"int64_t", GX_I64},
        {"unsigned long long", GX_U64},
        {"uint64_t", GX_U64},
        {"size_t", GX_U64},
        {"char", GX_I8},
        {"signed char", GX_I8},
        {"int8_t", GX_I8},
        {"unsigned char", GX_U8},
        {"uint8_t", GX_U8},
        {"short", GX_I16},
        {"int16_t", GX_I16},
        {"unsigned short", GX_U16},
        {"uint16_t", GX_U16},
        {"half", GX_F16},
        {"__half", GX_F16},
        {"bfloat16", GX_BF16},
        {"__nv_bfloat16", GX_BF16},
        {"__nv_fp8_e4m3", GX_FP8_E4M3},
        {"__nv_fp8_e5m2", GX_FP8_E5M2},
    };
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++)
        if (strcmp(c_name, spellings[i].c_name) == 0)
            return (int)spellings[i].type;
    return -1;
}

const char *gx_type_name(gx_type type)
{
    return type_names[type];
}
size_t gx_type_size(gx_type type)
{
    return type_sizes[type];
}
int gx_type_is_float(gx_type type)
{
    return type == GX_F32 || type == GX_F64 || gx_type_is_narrow_float(type);
}

int gx_type_integer_fits(gx_type type, long long value)
{
    static const long long low[GX_TYPE_COUNT] = {[GX_I32] = INT32_MIN, [GX_I8] = INT8_MIN, [GX_I16] = INT16_MIN};
    static const long long high[GX_TYPE_COUNT] = {[GX_I32] = INT32_MAX, [GX_U32] = UINT32_MAX, [GX_U8] = UINT8_MAX,
                                                  [GX_I8] = INT8_MAX,   [GX_I16] = INT16_MAX,  [GX_U16] = UINT16_MAX};
    return high[type] != 0 && value >= low[type] && value <= high[type];
}

double gx_element_get(const void *base, gx_type type, size_t i)
{
    switch (type) {
    case GX_F32: return ((const float *)base)[i];
    case GX_F64: return ((const double *)base)[i];
    case GX_I32: return ((const int32_t *)base)[i];
    case GX_U32: return ((const uint32_t *)base)[i];
    case GX_I64: return (double)((const int64_t *)base)[i];
    case GX_U64: return (double)((const uint64_t *)base)[i];
    case GX_U8: return ((const uint8_t *)base)[i];
    case GX_I8: return ((const int8_t *)base)[i];
    case GX_F16:
    case GX_BF16: return gx_narrow_decode(type, ((const uint16_t *)base)[i]);
    case GX_FP8_E4M3:
    case GX_FP8_E5M2: return gx_narrow_decode(type, ((const uint8_t *)base)[i]);
    case GX_I16: return ((const int16_t *)base)[i];
    case GX_U16: return ((const uint16_t *)base)[i];
    case GX_TYPE_COUNT: break;
    }
    return 0;
}

void gx_element_set(void *base, gx_type type, size_t i, double v)
{
    switch (type) {
    case GX_F32: ((float *)base)[i] = (float)v; break;
    case GX_F64: ((double *)base)[i] = v; break;
    case GX_I32: ((int32_t *)base)[i] = (int32_t)v; break;
    case GX_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
    case GX_I64: ((int64_t *)base)[i] = (int64_t)v; break;
    case GX_U64: ((uint64_t *)base)[i] = (uint64_t)v; break;
    case GX_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case GX_I8: ((int8_t *)base)[i] = (int8_t)v; break;
    case GX_F16:
    case GX_BF16: ((uint16_t *)base)[i] = (uint16_t)gx_narrow_encode(type, v); break;
    case GX_FP8_E4M3:
    case GX_FP8_E5M2: ((uint8_t *)base)[i] = (uint8_t)gx_narrow_encode(type, v); break;
    case GX_I16: ((int16_t *)base)[i] = (int16_t)v; break;
    case GX_U16: ((uint16_t *)base)[i] = (uint16_t)v; break;
    case GX_TYPE_COUNT: break;
    }
}
