#include "gx_tensor_map.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gx_driver.h"

static const struct {
    const char *name;
    CUtensorMapDataType type;
    int bytes, is_float;
} elements[] = {
    {"u8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, 0},
    {"i8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, 0},
    {"fp8_e4m3", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, 0}, /* TMA copies fp8 as bytes: no NaN fill */
    {"fp8_e5m2", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, 0},
    {"u16", CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, 0},
    {"i16", CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, 0},
    {"f16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, 1},
    {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 1},
    {"u32", CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, 0},
    {"i32", CU_TENSOR_MAP_DATA_TYPE_INT32, 4, 0},
    {"f32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, 1},
    {"f32_ftz", CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, 4, 1},
    {"tf32", CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 4, 1},
    {"tf32_ftz", CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ, 4, 1},
    {"u64", CU_TENSOR_MAP_DATA_TYPE_UINT64, 8, 0},
    {"i64", CU_TENSOR_MAP_DATA_TYPE_INT64, 8, 0},
    {"f64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8, 1},
};
#define ELEMENT_COUNT (sizeof elements / sizeof elements[0])

int gx_tensor_map_element(const char *name, gx_tensor_map_spec *spec, gx_error *error)
{
    for (size_t i = 0; i < ELEMENT_COUNT; i++)
        if (strcmp(elements[i].name, name) == 0) {
            spec->element = elements[i].name;
            spec->data_type = elements[i].type;
            spec->element_bytes = elements[i].bytes;
            spec->is_float = elements[i].is_float;
            return GX_OK;
        }
    char known[256] = "";
    for (size_t i = 0; i < ELEMENT_COUNT; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", elements[i].name);
    return gx_fail(error, GX_ERR_USAGE, "tensor_map: unknown element type '%s' (one of %s)", name, known);
}

struct named {
    const char *name;
    int value;
};
static const struct named swizzles[] = {{"none", CU_TENSOR_MAP_SWIZZLE_NONE},
                                        {"32B", CU_TENSOR_MAP_SWIZZLE_32B},
                                        {"64B", CU_TENSOR_MAP_SWIZZLE_64B},
                                        {"128B", CU_TENSOR_MAP_SWIZZLE_128B},
                                        {NULL, 0}};
static const struct named interleaves[] = {{"none", CU_TENSOR_MAP_INTERLEAVE_NONE},
                                           {"16B", CU_TENSOR_MAP_INTERLEAVE_16B},
                                           {"32B", CU_TENSOR_MAP_INTERLEAVE_32B},
                                           {NULL, 0}};
static const struct named promotions[] = {{"none", CU_TENSOR_MAP_L2_PROMOTION_NONE},
                                          {"64B", CU_TENSOR_MAP_L2_PROMOTION_L2_64B},
                                          {"128B", CU_TENSOR_MAP_L2_PROMOTION_L2_128B},
                                          {"256B", CU_TENSOR_MAP_L2_PROMOTION_L2_256B},
                                          {NULL, 0}};
static const struct named fills[] = {
    {"zero", CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE}, {"nan", CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA}, {NULL, 0}};

static int lookup(const struct named *table, const char *name)
{
    for (int i = 0; table[i].name; i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].value;
    return -1;
}

int gx_tensor_map_swizzle(const char *name)
{
    return lookup(swizzles, name);
}
int gx_tensor_map_interleave(const char *name)
{
    return lookup(interleaves, name);
}
int gx_tensor_map_l2_promotion(const char *name)
{
    return lookup(promotions, name);
}
int gx_tensor_map_oob_fill(const char *name)
{
    return lookup(fills, name);
}

const char *gx_tensor_map_names(const char *what)
{
    if (strcmp(what, "swizzle") == 0)
        return "none, 32B, 64B, 128B";
    if (strcmp(what, "interleave") == 0)
        return "none, 16B, 32B";
    if (strcmp(what, "l2_promotion") == 0)
        return "none, 64B, 128B, 256B";
    return "zero, nan";
}

static const char *name_of(const struct named *table, int value)
{
    for (int i = 0; table[i].name; i++)
        if (table[i].value == value)
            return table[i].name;
    return "?";
}

unsigned long long gx_tensor_map_span_bytes(const gx_tensor_map_spec *s)
{
    unsigned long long last = (s->dims[0] - 1) * (unsigned long long)s->element_bytes;
    for (int i = 1; i < s->rank; i++)
        last += (s->dims[i] - 1) * s->strides[i - 1];
    return last + (unsigned long long)s->element_bytes;
}

static int check_sizes(const gx_tensor_map_spec *s, gx_error *error)
{
    int interleaved = s->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE;
    if (s->rank < 1 || s->rank > GX_TENSOR_MAP_MAX_RANK)
        return gx_fail(error, GX_ERR_USAGE, "tensor_map: rank %d: a tensor map has 1 to 5 dimensions", s->rank);
    if (interleaved && s->rank < 3)
        return gx_fail(error, GX_ERR_USAGE, "tensor_map: interleave = \"%s\" needs a rank of at least 3, got %d",
                       name_of(interleaves, s->interleave), s->rank);
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 1 || s->dims[i] > (1ULL << 32))
            return gx_fail(error, GX_ERR_USAGE, "tensor_map: dims[%d] = %llu: each dimension has 1 to 2^32 elements",
                           i + 1, s->dims[i]);
        if (s->box[i] < 1 || s->box[i] > 256)
            return gx_fail(error, GX_ERR_USAGE, "tensor_map: box[%d] = %u: a box has 1 to 256 elements per dimension",
                           i + 1, s->box[i]);
        if (s->element_strides[i] < 1 || s->element_strides[i] > 8)
            return gx_fail(error, GX_ERR_USAGE, "tensor_map: element_strides[%d] = %u: each is 1 to 8", i + 1,
                           s->element_strides[i]);
    }
    unsigned stride_unit = s->interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
    for (int i = 0; i + 1 < s->rank; i++) {
        if (s->strides[i] % stride_unit != 0 || s->strides[i] >= (1ULL << 40))
            return gx_fail(error, GX_ERR_USAGE,
                           "tensor_map: strides[%d] = %llu bytes: a stride is a multiple of %u bytes%s "
                           "below 2^40 (pad the rows to a multiple of %u bytes)",
                           i + 1, s->strides[i], stride_unit, stride_unit == 32 ? " (interleave = \"32B\")" : "",
                           stride_unit);
    }
    unsigned long long inner = (unsigned long long)s->box[0] * (unsigned long long)s->element_bytes;
    if (!interleaved && inner % 16 != 0)
        return gx_fail(error, GX_ERR_USAGE,
                       "tensor_map: box[1] = %u %s elements = %llu bytes: the box's inner dimension "
                       "must be a multiple of 16 bytes",
                       s->box[0], s->element, inner);
    return GX_OK;
}

static int check_modes(const gx_tensor_map_spec *s, gx_error *error)
{
    unsigned long long inner = (unsigned long long)s->box[0] * (unsigned long long)s->element_bytes;
    static const unsigned span[] = {0, 32, 64, 128};
    if (s->interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && s->swizzle != CU_TENSOR_MAP_SWIZZLE_NONE &&
        (int)s->swizzle < 4 && inner > span[s->swizzle])
        return gx_fail(error, GX_ERR_USAGE,
                       "tensor_map: swizzle = \"%s\" takes a box whose inner dimension is at most %u "
                       "bytes, and box[1] = %u %s elements is %llu bytes",
                       name_of(swizzles, s->swizzle), span[s->swizzle], s->box[0], s->element, inner);
    if (s->interleave == CU_TENSOR_MAP_INTERLEAVE_32B && s->swizzle != CU_TENSOR_MAP_SWIZZLE_32B)
        return gx_fail(error, GX_ERR_USAGE, "tensor_map: interleave = \"32B\" needs swizzle = \"32B\", got \"%s\"",
                       name_of(swizzles, s->swizzle));
    if (s->oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !s->is_float)
        return gx_fail(error, GX_ERR_USAGE,
                       "tensor_map: oob_fill = \"nan\" is for floating-point elements, and %s is "
                       "not one%s",
                       s->element, s->element_bytes == 1 ? " (TMA copies fp8 as bytes)" : "");
    return GX_OK;
}

static int check_buffer(const gx_tensor_map_spec *s, gx_error *error)
{
    unsigned alignment = s->interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
    if (s->offset % alignment != 0 || s->address % alignment != 0)
        return gx_fail(error, GX_ERR_USAGE,
                       "tensor_map: the tensor's start (offset %llu bytes) must be %u-byte aligned", s->offset,
                       alignment);
    unsigned long long span = gx_tensor_map_span_bytes(s);
    if (s->offset > s->buffer_bytes || span > s->buffer_bytes - s->offset)
        return gx_fail(error, GX_ERR_USAGE,
                       "tensor_map: the tensor spans %llu bytes from offset %llu, but the buffer "
                       "has %zu bytes: check dims and strides",
                       span, s->offset, s->buffer_bytes);
    return GX_OK;
}

int gx_tensor_map_check(const gx_tensor_map_spec *spec, gx_error *error)
{
    if (check_sizes(spec, error) || check_modes(spec, error) || check_buffer(spec, error))
        return error->kind;
    return GX_OK;
}

int gx_tensor_map_encode(const gx_tensor_map_spec *spec, const gx_device *device,
                         unsigned char out[GX_TENSOR_MAP_BYTES], gx_error *error)
{
    if (gx_tensor_map_check(spec, error))
        return error->kind;
    if (device->cc_major < 9)
        return gx_fail(error, GX_ERR_USAGE,
                       "tensor_map: TMA descriptors need compute capability 9.0 (Hopper) or newer, "
                       "and %s is %d.%d",
                       device->name, device->cc_major, device->cc_minor);
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(device, error))
        return error->kind;
    CUtensorMap map; /* aligned to 64 bytes by its declaration, as the driver requires */
    cuuint64_t dims[GX_TENSOR_MAP_MAX_RANK], strides[GX_TENSOR_MAP_MAX_RANK];
    cuuint32_t box[GX_TENSOR_MAP_MAX_RANK], element_strides[GX_TENSOR_MAP_MAX_RANK];
    for (int i = 0; i < spec->rank; i++) {
        dims[i] = spec->dims[i];
        box[i] = spec->box[i];
        element_strides[i] = spec->element_strides[i];
        if (i + 1 < spec->rank)
            strides[i] = spec->strides[i];
    }
    if (GX_CU(error, d->cuTensorMapEncodeTiled(&map, spec->data_type, (cuuint32_t)spec->rank,
                                               (void *)(uintptr_t)spec->address, dims, strides, box, element_strides,
                                               spec->interleave, spec->swizzle, spec->l2_promotion, spec->oob_fill)))
        return error->kind;
    memcpy(out, &map, GX_TENSOR_MAP_BYTES);
    return GX_OK;
}
