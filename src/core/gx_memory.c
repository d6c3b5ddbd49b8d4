#include "gx_memory.h"
#include "gx_fill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gx_driver.h"
#include "gx_module.h"
#include "gx_narrow.h"

#define STAGING_BYTES ((size_t)32 << 20)

const char *gx_memory_kind_name(gx_memory_kind kind)
{
    return kind == GX_MEMORY_DEVICE ? "device" : kind == GX_MEMORY_PINNED ? "pinned" : "pageable";
}

int gx_buffer_alloc(gx_buffer *buffer, const gx_device *device, gx_memory_kind kind, gx_type type, size_t count,
                    gx_error *error)
{
    memset(buffer, 0, sizeof *buffer);
    buffer->kind = kind;
    buffer->type = type;
    buffer->count = count;
    buffer->bytes = count * gx_type_size(type);
    if (count && buffer->bytes / count != gx_type_size(type))
        return gx_fail(error, GX_ERR_USAGE, "buffer of %zu elements is too large", count);
    size_t bytes = buffer->bytes ? buffer->bytes : 1;
    if (kind == GX_MEMORY_PAGEABLE) {
        if (posix_memalign(&buffer->host_pointer, 4096, bytes) != 0)
            return gx_fail(error, GX_ERR_SYSTEM, "cannot allocate %zu bytes of host memory", bytes);
        return GX_OK;
    }
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(device, error))
        return error->kind;
    buffer->device = device;
    if (kind == GX_MEMORY_DEVICE) {
        if (GX_CU(error, d->cuMemAlloc(&buffer->device_pointer, bytes))) {
            size_t free_bytes = 0, total_bytes = 0;
            if (d->cuMemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS)
                gx_error_append(error, ": asked for %zu bytes, %zu of %zu free", bytes, free_bytes, total_bytes);
            return error->kind;
        }
        return GX_OK;
    }
    return GX_CU(error, d->cuMemHostAlloc(&buffer->host_pointer, bytes, CU_MEMHOSTALLOC_PORTABLE));
}

void gx_buffer_free(gx_buffer *buffer)
{
    gx_error ignored;
    if (buffer->borrowed) {
        /* the module owns it; the buffer only forgets it */
    } else if (buffer->kind == GX_MEMORY_PAGEABLE) {
        free(buffer->host_pointer);
    } else if (buffer->device && (buffer->device_pointer || buffer->host_pointer)) {
        const gx_driver *d = gx_driver_get(&ignored);
        if (d && gx_device_activate(buffer->device, &ignored) == GX_OK) {
            if (buffer->device_pointer)
                d->cuMemFree(buffer->device_pointer);
            else
                d->cuMemFreeHost(buffer->host_pointer);
        }
    }
    buffer->host_pointer = NULL;
    buffer->device_pointer = 0;
    buffer->count = buffer->bytes = 0;
}

/* Synchronous unless given a stream (or, when `deferrable`, a sequence set gx_current_stream):
   then enqueued on it, truly asynchronous from pinned memory (pageable memory is staged first). */
static int bytes_copy(gx_buffer *destination, size_t destination_offset, const gx_buffer *source, size_t source_offset,
                      size_t bytes, CUstream stream, int deferrable, gx_error *error)
{
    if (bytes == 0)
        return GX_OK;
    int to_device = destination->kind == GX_MEMORY_DEVICE, from_device = source->kind == GX_MEMORY_DEVICE;
    if (!to_device && !from_device) {
        memcpy((char *)destination->host_pointer + destination_offset,
               (const char *)source->host_pointer + source_offset, bytes);
        return GX_OK;
    }
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(to_device ? destination->device : source->device, error))
        return error->kind;
    if (!stream && deferrable)
        stream = gx_current_stream;
    CUdeviceptr to = destination->device_pointer + destination_offset, from = source->device_pointer + source_offset;
    void *to_host = (char *)destination->host_pointer + destination_offset;
    const void *from_host = (const char *)source->host_pointer + source_offset;
    if (stream)
        return to_device && from_device ? GX_CU(error, d->cuMemcpyDtoDAsync(to, from, bytes, stream))
               : to_device              ? GX_CU(error, d->cuMemcpyHtoDAsync(to, from_host, bytes, stream))
                                        : GX_CU(error, d->cuMemcpyDtoHAsync(to_host, from, bytes, stream));
    return to_device && from_device ? GX_CU(error, d->cuMemcpyDtoD(to, from, bytes))
           : to_device              ? GX_CU(error, d->cuMemcpyHtoD(to, from_host, bytes))
                                    : GX_CU(error, d->cuMemcpyDtoH(to_host, from, bytes));
}

int gx_buffer_copy(gx_buffer *destination, size_t destination_offset, const gx_buffer *source, size_t source_offset,
                   size_t count, gx_error *error)
{
    return gx_buffer_copy_async(destination, destination_offset, source, source_offset, count, NULL, error);
}

int gx_buffer_copy_async(gx_buffer *destination, size_t destination_offset, const gx_buffer *source,
                         size_t source_offset, size_t count, CUstream stream, gx_error *error)
{
    size_t size = gx_type_size(source->type);
    if (destination->type != source->type)
        return gx_fail(error, GX_ERR_USAGE, "cannot copy %s elements into a %s buffer (the element types differ)",
                       gx_type_name(source->type), gx_type_name(destination->type));
    if (source_offset > source->count || count > source->count - source_offset ||
        destination_offset > destination->count || count > destination->count - destination_offset)
        return gx_fail(
            error, GX_ERR_USAGE,
            "copy of %zu elements out of range (source has %zu from offset %zu, destination %zu from offset %zu)",
            count, source->count, source_offset, destination->count, destination_offset);
    return bytes_copy(destination, destination_offset * size, source, source_offset * size, count * size, stream, 1,
                      error);
}

int gx_buffer_write(gx_buffer *destination, size_t offset, const void *data, size_t bytes, gx_error *error)
{
    gx_buffer host = {.kind = GX_MEMORY_PAGEABLE, .host_pointer = (void *)data, .bytes = bytes};
    if (offset > destination->bytes || bytes > destination->bytes - offset)
        return gx_fail(error, GX_ERR_USAGE, "write of %zu bytes at %zu is outside the buffer (%zu bytes)", bytes,
                       offset, destination->bytes);
    return bytes_copy(destination, offset, &host, 0, bytes, NULL, 0, error); /* from staging memory: now */
}

int gx_buffer_read(const gx_buffer *source, size_t offset, void *data, size_t bytes, gx_error *error)
{
    gx_buffer host = {.kind = GX_MEMORY_PAGEABLE, .host_pointer = data, .bytes = bytes};
    if (offset > source->bytes || bytes > source->bytes - offset)
        return gx_fail(error, GX_ERR_USAGE, "read of %zu bytes at %zu is outside the buffer (%zu bytes)", bytes, offset,
                       source->bytes);
    return bytes_copy(&host, 0, source, offset, bytes, NULL, 0, error); /* read back now */
}

/* Runs fn over the buffer's elements chunk by chunk in host memory, writing each chunk back. */
typedef void (*chunk_fn)(void *chunk, gx_type type, size_t first, size_t count, const void *user);

static int fill_chunks(gx_buffer *buffer, chunk_fn fn, const void *user, gx_error *error)
{
    if (buffer->kind != GX_MEMORY_DEVICE) {
        fn(buffer->host_pointer, buffer->type, 0, buffer->count, user);
        return GX_OK;
    }
    size_t size = gx_type_size(buffer->type);
    size_t per_chunk = STAGING_BYTES / size;
    size_t chunk_count = buffer->count < per_chunk ? buffer->count : per_chunk;
    void *staging = malloc(chunk_count ? chunk_count * size : 1);
    if (!staging)
        return gx_fail(error, GX_ERR_SYSTEM, "out of host memory");
    for (size_t first = 0; first < buffer->count; first += per_chunk) {
        size_t n = buffer->count - first < per_chunk ? buffer->count - first : per_chunk;
        fn(staging, buffer->type, first, n, user);
        if (gx_buffer_write(buffer, first * size, staging, n * size, error)) {
            free(staging);
            return error->kind;
        }
    }
    free(staging);
    return GX_OK;
}

struct random_spec {
    uint64_t seed;
    double low, high;
};

static void random_chunk(void *chunk, gx_type type, size_t first, size_t count, const void *user)
{
    const struct random_spec *spec = user;
    gx_fill_random(chunk, type, first, count, spec->seed, spec->low, spec->high);
}

static void value_chunk(void *chunk, gx_type type, size_t first, size_t count, const void *user)
{
    (void)first;
    gx_fill_value(chunk, type, count, *(const double *)user);
}

int gx_buffer_fill(gx_buffer *buffer, double value, gx_error *error)
{
    if (buffer->kind == GX_MEMORY_DEVICE && buffer->count) {
        unsigned char pattern[8];
        gx_element_set(pattern, buffer->type, 0, value);
        size_t size = gx_type_size(buffer->type);
        const gx_driver *d = gx_driver_get(error);
        if (!d || gx_device_activate(buffer->device, error))
            return error->kind;
        if (size == 1)
            return GX_CU(error, d->cuMemsetD8(buffer->device_pointer, pattern[0], buffer->count));
        if (size == 4) {
            uint32_t word;
            memcpy(&word, pattern, 4);
            return GX_CU(error, d->cuMemsetD32(buffer->device_pointer, word, buffer->count));
        }
    }
    return fill_chunks(buffer, value_chunk, &value, error);
}

int gx_buffer_random(gx_buffer *buffer, uint64_t seed, double low, double high, gx_error *error)
{
    struct random_spec spec = {seed, low, high};
    return fill_chunks(buffer, random_chunk, &spec, error);
}

/* Gives a host view of [first, first + n) elements: the buffer itself, or a staging copy. */
static int host_view(const gx_buffer *buffer, size_t first, size_t n, void *staging, const void **view, gx_error *error)
{
    size_t size = gx_type_size(buffer->type);
    if (buffer->kind != GX_MEMORY_DEVICE) {
        *view = (const char *)buffer->host_pointer + first * size;
        return GX_OK;
    }
    *view = staging;
    return gx_buffer_read(buffer, first * size, staging, n * size, error);
}

/* Units in the last place of type between a and b (b rounded to type first); INFINITY when either is
   NaN (a NaN never matches, as in the tolerance test). */
static double ulp_distance(gx_type type, double a, double b)
{
    int64_t x = gx_float_ordinal(type, a), y = gx_float_ordinal(type, b);
    if (x == INT64_MIN || y == INT64_MIN)
        return INFINITY;
    return x > y ? (double)(uint64_t)(x - y) : (double)(uint64_t)(y - x);
}

int gx_buffer_compare(const gx_buffer *actual, const gx_buffer *expected, double rtol, double atol, double ulps,
                      gx_compare_result *result, gx_error *error)
{
    memset(result, 0, sizeof *result);
    int in_ulps = gx_type_is_float(actual->type);
    result->max_ulp_error = in_ulps ? 0 : -1;
    if (actual->count != expected->count)
        return gx_fail(error, GX_ERR_USAGE, "cannot compare buffers of %zu and %zu elements", actual->count,
                       expected->count);
    size_t per_chunk = STAGING_BYTES / 8;
    void *staging_a = malloc(STAGING_BYTES), *staging_b = malloc(STAGING_BYTES);
    int status = GX_OK;
    if (!staging_a || !staging_b)
        status = gx_fail(error, GX_ERR_SYSTEM, "out of host memory");
    for (size_t first = 0; status == GX_OK && first < actual->count; first += per_chunk) {
        size_t n = actual->count - first < per_chunk ? actual->count - first : per_chunk;
        const void *a, *b;
        if ((status = host_view(actual, first, n, staging_a, &a, error)) ||
            (status = host_view(expected, first, n, staging_b, &b, error)))
            break;
        for (size_t i = 0; i < n; i++) {
            double x = gx_element_get(a, actual->type, i), y = gx_element_get(b, expected->type, i);
            double difference = fabs(x - y);
            double relative = y != 0 ? difference / fabs(y) : (difference ? INFINITY : 0);
            if (difference > result->max_abs_error || isnan(difference))
                result->max_abs_error = isnan(difference) ? NAN : difference;
            if (relative > result->max_rel_error)
                result->max_rel_error = relative;
            double distance = in_ulps ? ulp_distance(actual->type, x, y) : -1;
            if (distance > result->max_ulp_error)
                result->max_ulp_error = distance;
            if (!(difference <= atol + rtol * fabs(y)) && !(ulps >= 0 && distance >= 0 && distance <= ulps)) {
                if (result->mismatches++ == 0) {
                    result->first_mismatch = first + i;
                    result->first_value = x;
                    result->first_expected = y;
                    result->first_ulps = distance;
                }
            }
        }
    }
    free(staging_a);
    free(staging_b);
    return status;
}
