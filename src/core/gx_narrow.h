/* Half precision and 8-bit floats (f16, bf16, fp8_e4m3, fp8_e5m2) to and from double, rounded as
   the CUDA headers round them (cuda_fp16.hpp, cuda_bf16.hpp, cuda_fp8.hpp): round to nearest even
   from the double itself (one rounding, as __double2half, __double2bfloat16 and
   __nv_cvt_double_to_fp8 do), f16 and bf16 overflowing to infinity, fp8 saturating to its largest
   finite value (__NV_SATFINITE, infinities included), every NaN to the canonical positive NaN the
   float conversions give (f16 and bf16 0x7fff, fp8 0x7f). */
#ifndef GX_NARROW_H
#define GX_NARROW_H

#include <stdint.h>

#include "gx_types.h"

/* The bit pattern of value in type (GX_F16, GX_BF16, GX_FP8_E4M3, GX_FP8_E5M2). */
uint32_t gx_narrow_encode(gx_type type, double value);
/* The exact value of a bit pattern of type (NaN for NaN patterns). */
double gx_narrow_decode(gx_type type, uint32_t bits);
/* 1 for the four narrow float types. */
int gx_type_is_narrow_float(gx_type type);
/* The type's machine epsilon (distance from 1 to the next value): 2^-10, 2^-7, 2^-3, 2^-2, and
   FLT_EPSILON, DBL_EPSILON for f32 and f64; 0 for integers. */
double gx_type_epsilon(gx_type type);
/* value rounded to the float type, as an ordinal: consecutive values of the type have consecutive
   ordinals (-0 and +0 both 0), so |a - b| is a distance in units in the last place. NaN -> INT64_MIN. */
int64_t gx_float_ordinal(gx_type type, double value);

#endif
