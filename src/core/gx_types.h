/* Element types of buffers: their names, sizes, and one element read or written as a double. */
#ifndef GX_TYPES_H
#define GX_TYPES_H

#include <stddef.h>

/* New types go at the end: the device random kernel (gx_helper_kernels.c) knows the first eight by number. */
typedef enum gx_type {
    GX_F32,
    GX_F64,
    GX_I32,
    GX_U32,
    GX_I64,
    GX_U64,
    GX_U8,
    GX_I8,
    GX_F16,
    GX_BF16,
    GX_FP8_E4M3,
    GX_FP8_E5M2,
    GX_I16,
    GX_U16,
    GX_TYPE_COUNT
} gx_type;

/* "f32" -> GX_F32; -1 when unknown. */
int gx_type_parse(const char *name);
/* The type C or CUDA spells so ("float", "__half", "uint8_t") -> GX_F32, GX_F16, GX_U8; -1 when
   none: the hint for a name written as in a kernel. */
int gx_type_parse_c(const char *c_name);
const char *gx_type_name(gx_type type);
size_t gx_type_size(gx_type type);
int gx_type_is_float(gx_type type);
/* Whether an integer value fits an integer type of 32 bits or fewer (i32, u32, i16, u16, i8, u8);
   0 for the other types, whose callers decide (a 64-bit type holds any lua_Integer's bits). */
int gx_type_integer_fits(gx_type type, long long value);

/* Reads/writes one element as a double (integers beyond 2^53 lose precision); f16, bf16 and fp8
   are rounded as the CUDA headers round (gx_narrow.h). */
double gx_element_get(const void *base, gx_type type, size_t index);
void gx_element_set(void *base, gx_type type, size_t index, double value);

#endif
