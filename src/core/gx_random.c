#include "gx_random.h"

#include <math.h>
#include <string.h>

static const char *const type_names[GX_TYPE_COUNT] = {"f32", "f64", "i32", "u32", "i64", "u64", "u8", "i8"};
static const size_t type_sizes[GX_TYPE_COUNT] = {4, 8, 4, 4, 8, 8, 1, 1};

int gx_type_parse(const char *name)
{
    for (int i = 0; i < GX_TYPE_COUNT; i++)
        if (strcmp(name, type_names[i]) == 0)
            return i;
    return -1;
}

const char *gx_type_name(gx_type type) { return type_names[type]; }
size_t gx_type_size(gx_type type) { return type_sizes[type]; }
int gx_type_is_float(gx_type type) { return type == GX_F32 || type == GX_F64; }

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
    case GX_TYPE_COUNT: break;
    }
}

/* splitmix64 of (seed, index): counter-based, so element i is the same whatever the count. */
static uint64_t mix(uint64_t seed, uint64_t index)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + index * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void gx_fill_random(void *base, gx_type type, size_t first, size_t count, uint64_t seed, double low, double high)
{
    if (type == GX_F32) {
        float *out = base;
        float span = (float)(high - low), lo = (float)low;
        for (size_t i = 0; i < count; i++)
            out[i] = lo + span * (float)(mix(seed, first + i) >> 40) * 0x1.0p-24f;
        return;
    }
    if (type == GX_F64) {
        double *out = base;
        for (size_t i = 0; i < count; i++)
            out[i] = low + (high - low) * (double)(mix(seed, first + i) >> 11) * 0x1.0p-53;
        return;
    }
    double lo = ceil(low), span = floor(high) - lo + 1;
    if (span < 1)
        span = 1;
    for (size_t i = 0; i < count; i++)
        gx_element_set(base, type, i, lo + floor((double)(mix(seed, first + i) >> 11) * 0x1.0p-53 * span));
}

void gx_fill_value(void *base, gx_type type, size_t count, double value)
{
    if (count == 0)
        return;
    gx_element_set(base, type, 0, value);
    size_t size = type_sizes[type], done = 1;
    while (done < count) { /* doubling memcpy */
        size_t n = done < count - done ? done : count - done;
        memcpy((char *)base + done * size, base, n * size);
        done += n;
    }
}
