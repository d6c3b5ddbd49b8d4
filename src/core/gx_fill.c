#include "gx_fill.h"

#include <math.h>
#include <string.h>

#include "gx_narrow.h"

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
    if (gx_type_is_narrow_float(type)) { /* the f32 values, rounded to the type */
        float span = (float)(high - low), lo = (float)low;
        for (size_t i = 0; i < count; i++)
            gx_element_set(base, type, i, lo + span * (float)(mix(seed, first + i) >> 40) * 0x1.0p-24f);
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
    size_t size = gx_type_size(type), done = 1;
    while (done < count) { /* doubling memcpy */
        size_t n = done < count - done ? done : count - done;
        memcpy((char *)base + done * size, base, n * size);
        done += n;
    }
}
