/* Buffers of typed elements on the device or the host (pinned or pageable), and copies between them. */
#ifndef GX_MEMORY_H
#define GX_MEMORY_H

#include <cuda.h>
#include <stdint.h>

#include "gx_device.h"
#include "gx_types.h"

typedef enum gx_memory_kind { GX_MEMORY_DEVICE, GX_MEMORY_PINNED, GX_MEMORY_PAGEABLE } gx_memory_kind;

typedef struct gx_buffer {
    gx_memory_kind kind;
    gx_type type;
    size_t count, bytes;
    CUdeviceptr device_pointer; /* device buffers */
    void *host_pointer;         /* host buffers */
    const gx_device *device;    /* NULL for pageable host buffers */
    int borrowed;               /* memory gpuexp did not allocate (a module's global): never freed here */
} gx_buffer;

typedef struct gx_compare_result {
    size_t mismatches;     /* elements outside |a - b| <= atol + rtol |b| (and, with ulps >= 0, more
                              than ulps apart), NaNs included */
    size_t first_mismatch; /* 0-based; valid when mismatches > 0 */
    double first_value, first_expected;
    double max_abs_error, max_rel_error;
    /* for a float `actual`: units in the last place of its type between a and b rounded to that
       type (the largest, and the first mismatch's); -1 for integer types; INFINITY for a NaN */
    double max_ulp_error, first_ulps;
} gx_compare_result;

const char *gx_memory_kind_name(gx_memory_kind kind);

int gx_buffer_alloc(gx_buffer *buffer, const gx_device *device, gx_memory_kind kind, gx_type type, size_t count,
                    gx_error *error);
void gx_buffer_free(gx_buffer *buffer); /* idempotent */

/* Copies count elements (bytes from the source type's size) between any two kinds: synchronously,
   or enqueued on gx_current_stream while a sequence sets one. */
int gx_buffer_copy(gx_buffer *destination, size_t destination_offset, const gx_buffer *source, size_t source_offset,
                   size_t count, gx_error *error);
/* The same enqueued on a stream (asynchronous from pinned memory; pageable memory is staged first). */
int gx_buffer_copy_async(gx_buffer *destination, size_t destination_offset, const gx_buffer *source,
                         size_t source_offset, size_t count, CUstream stream, gx_error *error);
int gx_buffer_write(gx_buffer *destination, size_t offset_bytes, const void *data, size_t bytes, gx_error *error);
int gx_buffer_read(const gx_buffer *source, size_t offset_bytes, void *data, size_t bytes, gx_error *error);

int gx_buffer_fill(gx_buffer *buffer, double value, gx_error *error);
int gx_buffer_random(gx_buffer *buffer, uint64_t seed, double low, double high, gx_error *error);
/* Compares `actual` with `expected` element-wise (same count; any kinds and types): an element
   matches when |a - b| <= atol + rtol |b|, or when ulps >= 0 and a is within ulps units in the last
   place of actual's type from b (rounded to that type). */
int gx_buffer_compare(const gx_buffer *actual, const gx_buffer *expected, double rtol, double atol, double ulps,
                      gx_compare_result *result, gx_error *error);

#endif
