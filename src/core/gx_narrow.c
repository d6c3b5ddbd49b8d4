#include "gx_narrow.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef struct narrow_format {
    int mantissa_bits, exponent_bits, bias;
    uint32_t max_finite; /* the largest finite pattern */
    uint32_t overflow;   /* what a value beyond it becomes: infinity, or max_finite when saturating */
    uint32_t nan;        /* the canonical NaN */
    int has_infinity;
} narrow_format;

static const narrow_format formats[] = {
    [GX_F16] = {10, 5, 15, 0x7bff, 0x7c00, 0x7fff, 1},
    [GX_BF16] = {7, 8, 127, 0x7f7f, 0x7f80, 0x7fff, 1},
    [GX_FP8_E4M3] = {3, 4, 7, 0x7e, 0x7e, 0x7f, 0},
    [GX_FP8_E5M2] = {2, 5, 15, 0x7b, 0x7b, 0x7f, 1},
};

int gx_type_is_narrow_float(gx_type type)
{
    return type == GX_F16 || type == GX_BF16 || type == GX_FP8_E4M3 || type == GX_FP8_E5M2;
}

/* One rounding from the double's 53-bit significand to the format's: with q the spacing of the
   format's values at |value| (its normal spacing, or the subnormal spacing below the smallest
   normal), n = |value| / q rounded to nearest even, and the pattern is n plus the exponent field
   above the smallest normal shifted into place; a carry out of the significand moves into the
   exponent by itself, and a result past the largest finite pattern overflows. */
uint32_t gx_narrow_encode(gx_type type, double value)
{
    const narrow_format *f = &formats[type];
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint32_t sign = (uint32_t)(bits >> 63) << (f->mantissa_bits + f->exponent_bits);
    int exponent_field = (int)((bits >> 52) & 0x7ff);
    uint64_t significand = bits & 0xfffffffffffffull;
    if (exponent_field == 0x7ff)
        return significand ? f->nan : sign | f->overflow;
    if (exponent_field == 0 && significand == 0)
        return sign;
    int exponent = exponent_field ? exponent_field - 1023 : -1022; /* of the leading bit's place */
    if (exponent_field)
        significand |= 1ull << 52;
    else
        while (!(significand & (1ull << 52))) /* a double subnormal: normalise (far below any format's) */
            significand <<= 1, exponent--;
    int min_exponent = 1 - f->bias;
    int scale = exponent > min_exponent ? exponent : min_exponent;
    int shift = 52 - f->mantissa_bits + (scale - exponent);
    uint64_t n;
    if (shift >= 64) {
        n = 0; /* below a quarter of the smallest subnormal */
    } else {
        n = significand >> shift;
        uint64_t rest = significand & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        if (rest > half || (rest == half && (n & 1)))
            n++;
    }
    uint64_t pattern = ((uint64_t)(scale - min_exponent) << f->mantissa_bits) + n;
    if (pattern > f->max_finite)
        pattern = f->overflow;
    return sign | (uint32_t)pattern;
}

double gx_narrow_decode(gx_type type, uint32_t bits)
{
    const narrow_format *f = &formats[type];
    int width = f->mantissa_bits + f->exponent_bits;
    uint32_t magnitude = bits & ((1u << width) - 1);
    double sign = (bits >> width) & 1 ? -1.0 : 1.0;
    uint32_t exponent_field = magnitude >> f->mantissa_bits, mantissa = magnitude & ((1u << f->mantissa_bits) - 1);
    if (f->has_infinity && exponent_field == (1u << f->exponent_bits) - 1)
        return mantissa ? NAN : sign * INFINITY;
    if (!f->has_infinity && magnitude == f->nan)
        return NAN;
    if (exponent_field == 0)
        return sign * ldexp(mantissa, 1 - f->bias - f->mantissa_bits);
    return sign * ldexp(mantissa | (1u << f->mantissa_bits), (int)exponent_field - f->bias - f->mantissa_bits);
}

double gx_type_epsilon(gx_type type)
{
    if (gx_type_is_narrow_float(type))
        return ldexp(1, -formats[type].mantissa_bits);
    return type == GX_F32 ? FLT_EPSILON : type == GX_F64 ? DBL_EPSILON : 0;
}

int64_t gx_float_ordinal(gx_type type, double value)
{
    if (isnan(value))
        return INT64_MIN;
    uint64_t bits, sign_bit;
    if (type == GX_F64) {
        memcpy(&bits, &value, 8);
        sign_bit = 1ull << 63;
    } else if (type == GX_F32) {
        float single = (float)value;
        uint32_t b;
        memcpy(&b, &single, 4);
        bits = b;
        sign_bit = 1ull << 31;
    } else {
        bits = gx_narrow_encode(type, value);
        sign_bit = 1ull << (formats[type].mantissa_bits + formats[type].exponent_bits);
    }
    int64_t magnitude = (int64_t)(bits & (sign_bit - 1));
    return bits & sign_bit ? -magnitude : magnitude;
}
