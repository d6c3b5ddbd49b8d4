// gpuexp's f16, bf16 and fp8 conversions (gx_narrow.c) against the CUDA headers' own host code as an
// oracle (cuda_fp16.hpp, cuda_bf16.hpp, cuda_fp8.hpp compiled by the host compiler): every bit
// pattern decoded (65536 f16 and bf16, 256 of each fp8), every pattern's value and its neighbours'
// midpoints encoded, and a dense sweep of floats (every 4099th pattern, plus all the patterns around
// each format's overflow and subnormal limits) and of doubles through the headers' float and double
// conversions; fp8 with __NV_SATFINITE.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

extern "C" {
#include "gx_narrow.h"
}

static long failures;

static void check(bool ok, const char *what, gx_type type, double input, unsigned got, unsigned want)
{
    if (ok)
        return;
    if (failures++ < 20)
        std::printf("FAIL %s %s(%.17g): gpuexp 0x%x, CUDA headers 0x%x\n", what, gx_type_name(type), input, got, want);
}

static unsigned header_from_float(gx_type type, float x)
{
    switch (type) {
    case GX_F16: return __half_as_ushort(__float2half(x));
    case GX_BF16: return __bfloat16_as_ushort(__float2bfloat16(x));
    case GX_FP8_E4M3: return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    default: return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
    }
}

static unsigned header_from_double(gx_type type, double x)
{
    switch (type) {
    case GX_F16: return __half_as_ushort(__double2half(x));
    case GX_BF16: return __bfloat16_as_ushort(__double2bfloat16(x));
    case GX_FP8_E4M3: return __nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    default: return __nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
    }
}

static float header_to_float(gx_type type, unsigned bits)
{
    switch (type) {
    case GX_F16: return __half2float(__ushort_as_half((unsigned short)bits));
    case GX_BF16: return __bfloat162float(__ushort_as_bfloat16((unsigned short)bits));
    case GX_FP8_E4M3: return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)bits, __NV_E4M3)));
    default: return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)bits, __NV_E5M2)));
    }
}

static bool same_value(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

/* A float through both: the float conversion, and (non-NaN) the double conversion of the same value. */
static void check_float(gx_type type, float x)
{
    unsigned ours = gx_narrow_encode(type, x), theirs = header_from_float(type, x);
    check(ours == theirs, "float ->", type, x, ours, theirs);
    if (!std::isnan(x)) {
        unsigned from_double = header_from_double(type, x);
        check(ours == from_double, "double ->", type, x, ours, from_double);
    }
}

int main()
{
    const gx_type types[] = {GX_F16, GX_BF16, GX_FP8_E4M3, GX_FP8_E5M2};
    long checked = 0;
    for (gx_type type : types) {
        unsigned patterns = gx_type_size(type) == 2 ? 65536 : 256;
        for (unsigned bits = 0; bits < patterns; bits++) {
            /* decode, exactly */
            double ours = gx_narrow_decode(type, bits);
            float theirs = header_to_float(type, bits);
            check(same_value(ours, theirs), "decode", type, bits, (unsigned)(float)ours, bits);
            /* the value itself encodes back (NaNs to the canonical one) */
            check_float(type, theirs);
            /* midpoints to the next pattern up and a hair either side: the rounding ties */
            if (!std::isnan(theirs) && bits + 1 < patterns) {
                double next = gx_narrow_decode(type, bits + 1);
                if (!std::isnan(next) && !std::isinf(next) && !std::isinf(ours)) {
                    double middle = (ours + next) / 2;
                    for (double x : {middle, std::nextafter(middle, -INFINITY), std::nextafter(middle, INFINITY)}) {
                        unsigned a = gx_narrow_encode(type, x), b = header_from_double(type, x);
                        check(a == b, "double midpoint ->", type, x, a, b);
                        if ((double)(float)x == x)
                            check_float(type, (float)x);
                    }
                    float fmiddle = (float)middle;
                    for (float x : {fmiddle, std::nextafterf(fmiddle, -INFINITY), std::nextafterf(fmiddle, INFINITY)})
                        check_float(type, x);
                }
            }
            checked += 1;
        }
        /* a sweep of all float patterns, every 4099th (co-prime with every field width) */
        for (uint64_t u = 0; u < (1ull << 32); u += 4099) {
            uint32_t b = (uint32_t)u;
            float x;
            std::memcpy(&x, &b, 4);
            check_float(type, x);
            checked++;
        }
        /* and doubles between floats, around every power of two the formats reach */
        for (int exponent = -30; exponent <= 20; exponent++)
            for (int step = -64; step <= 64; step++) {
                double x = std::ldexp(1.0 + step / 256.0 + 1e-12 * step, exponent);
                for (double y : {x, -x}) {
                    unsigned a = gx_narrow_encode(type, y), b2 = header_from_double(type, y);
                    check(a == b2, "double ->", type, y, a, b2);
                    checked++;
                }
            }
        for (double special :
             {(double)INFINITY, -(double)INFINITY, (double)NAN, -(double)NAN, 0.0, -0.0, 1e300, -1e300, 1e-300})
            check_float(type, (float)special);
    }
    std::printf("%ld conversions checked, %ld differ from the CUDA headers\n", checked, failures);
    return failures ? 1 : 0;
}
