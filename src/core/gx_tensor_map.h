/* TMA descriptors (CUtensorMap) over a device buffer: the constraints cuTensorMapEncodeTiled
   documents, checked before the driver sees them (and in offline plans, where nothing is encoded),
   plus the one the driver cannot know: the tensor lies inside the buffer. */
#ifndef GX_TENSOR_MAP_H
#define GX_TENSOR_MAP_H

#include <cuda.h>
#include <stddef.h>

#include "gx_device.h"
#include "gx_error.h"

#define GX_TENSOR_MAP_BYTES 128 /* sizeof(CUtensorMap), aligned to 64 */
#define GX_TENSOR_MAP_MAX_RANK 5

typedef struct gx_tensor_map_spec {
    const char *element; /* the element type's name, for messages ("bf16") */
    CUtensorMapDataType data_type;
    int element_bytes;
    int is_float; /* a floating-point type: the NaN out-of-bounds fill is allowed */
    int rank;
    unsigned long long dims[GX_TENSOR_MAP_MAX_RANK];        /* elements per dimension, innermost first */
    unsigned long long strides[GX_TENSOR_MAP_MAX_RANK - 1]; /* bytes between steps of dimensions 1..rank-1 */
    unsigned box[GX_TENSOR_MAP_MAX_RANK];                   /* elements of one copy per dimension */
    unsigned element_strides[GX_TENSOR_MAP_MAX_RANK];       /* 1 (every element) unless asked */
    CUtensorMapInterleave interleave;
    CUtensorMapSwizzle swizzle;
    CUtensorMapL2promotion l2_promotion;
    CUtensorMapFloatOOBfill oob_fill;
    unsigned long long address; /* the buffer's device address + offset; 0 in an offline plan */
    unsigned long long offset;  /* bytes from the buffer's start */
    size_t buffer_bytes;        /* the whole buffer's size */
} gx_tensor_map_spec;

/* Element type names and their CUtensorMapDataType (f16, bf16, fp8 as bytes, tf32, ...): fills
   data_type, element_bytes and is_float; GX_ERR_USAGE with the known names otherwise. */
int gx_tensor_map_element(const char *name, gx_tensor_map_spec *spec, gx_error *error);
/* Swizzle, interleave, L2 promotion and out-of-bounds fill by name ("128B", "none", "nan"); -1 when unknown. */
int gx_tensor_map_swizzle(const char *name);
int gx_tensor_map_interleave(const char *name);
int gx_tensor_map_l2_promotion(const char *name);
int gx_tensor_map_oob_fill(const char *name);
/* The names each of the four takes, for messages: "none, 32B, 64B, 128B". */
const char *gx_tensor_map_names(const char *what);

/* The bytes of the buffer the tensor spans from its first element to past its last. */
unsigned long long gx_tensor_map_span_bytes(const gx_tensor_map_spec *spec);

/* Every documented constraint of cuTensorMapEncodeTiled (rank, alignment of the address and the
   strides, sizes of dims, box and element strides, swizzle against the box's inner bytes, interleave
   with rank and swizzle, NaN fill with float types) and the tensor inside its buffer. */
int gx_tensor_map_check(const gx_tensor_map_spec *spec, gx_error *error);

/* Checks, then encodes on the device (compute capability 9.0 or newer) into out (128 bytes). */
int gx_tensor_map_encode(const gx_tensor_map_spec *spec, const gx_device *device,
                         unsigned char out[GX_TENSOR_MAP_BYTES], gx_error *error);

#endif
