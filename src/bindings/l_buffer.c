/* Lua type gpuexp.Buffer: typed elements on the device, or on the host (pinned or pageable). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gx_timing.h"
#include "gx_helper_kernels.h"
#include "gx_narrow.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

static l_buffer *check_buffer(lua_State *L, int index)
{
    l_buffer *buffer = luaL_checkudata(L, index, GX_BUFFER_TYPE);
    if (!buffer->buffer.host_pointer && !buffer->buffer.device_pointer)
        l_raisef(L, GX_ERR_USAGE, "this buffer was freed");
    return buffer;
}

/* Pushes the Buffer for a new allocation; the device's userdata at device_index is kept alive. */
static l_buffer *push_buffer(lua_State *L, int device_index, gx_memory_kind kind, int type, size_t count)
{
    l_buffer *buffer = lua_newuserdatauv(L, sizeof *buffer, 1);
    memset(buffer, 0, sizeof *buffer);
    luaL_setmetatable(L, GX_BUFFER_TYPE);
    const gx_device *device = NULL;
    if (device_index) {
        device = &((l_device *)lua_touserdata(L, device_index))->device;
        lua_pushvalue(L, device_index); /* the buffer keeps its device (and context) alive */
        lua_setiuservalue(L, -2, 1);
    }
    gx_error error;
    if (gx_buffer_alloc(&buffer->buffer, device, kind, (gx_type)type, count, &error)) {
        gx_buffer_free(&buffer->buffer);
        l_raise(L, &error);
    }
    return buffer;
}

l_buffer *l_push_global_buffer(lua_State *L, int device_index, int owner_index, int type, size_t count,
                               CUdeviceptr address)
{
    l_buffer *buffer = lua_newuserdatauv(L, sizeof *buffer, 2);
    memset(buffer, 0, sizeof *buffer);
    luaL_setmetatable(L, GX_BUFFER_TYPE);
    lua_pushvalue(L, device_index);
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, owner_index); /* the program: its module holds the memory */
    lua_setiuservalue(L, -2, 2);
    buffer->buffer = (gx_buffer){.kind = GX_MEMORY_DEVICE,
                                 .type = (gx_type)type,
                                 .count = count,
                                 .bytes = count * gx_type_size((gx_type)type),
                                 .device_pointer = address,
                                 .device = &((l_device *)lua_touserdata(L, device_index))->device,
                                 .borrowed = 1};
    return buffer;
}

static int buffer_release(lua_State *L)
{
    l_buffer *buffer = luaL_checkudata(L, 1, GX_BUFFER_TYPE);
    gx_buffer_free(&buffer->buffer);
    return 0;
}

static int buffer_tostring(lua_State *L)
{
    l_buffer *b = luaL_checkudata(L, 1, GX_BUFFER_TYPE);
    lua_pushfstring(L, "gpuexp.Buffer(%s, %s x %I)", gx_memory_kind_name(b->buffer.kind), gx_type_name(b->buffer.type),
                    (lua_Integer)b->buffer.count);
    return 1;
}

static int buffer_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_buffer(L, 1)->buffer.count);
    return 1;
}

static void push_element(lua_State *L, const void *base, gx_type type, size_t index)
{
    if (gx_type_is_float(type))
        lua_pushnumber(L, gx_element_get(base, type, index));
    else if (type == GX_I64 || type == GX_U64)
        lua_pushinteger(L, ((const int64_t *)base)[index]);
    else
        lua_pushinteger(L, (lua_Integer)gx_element_get(base, type, index));
}

/* Reads a Lua number into one element, refusing values the type cannot hold. */
static void check_element(lua_State *L, int index, gx_type type, void *out, const char *what)
{
    if (lua_type(L, index) != LUA_TNUMBER)
        l_raisef(L, GX_ERR_USAGE, "%s must be a number, got %s", what, luaL_typename(L, index));
    if (gx_type_is_float(type)) {
        gx_element_set(out, type, 0, lua_tonumber(L, index));
        return;
    }
    int is_integer;
    lua_Integer value = lua_tointegerx(L, index, &is_integer);
    if (!is_integer)
        l_raisef(L, GX_ERR_USAGE, "%s must be an integer for a %s buffer, got %s", what, gx_type_name(type),
                 lua_tostring(L, index));
    if (type == GX_I64 || type == GX_U64) {
        memcpy(out, &value, 8);
        return;
    }
    if (!gx_type_integer_fits(type, value))
        l_raisef(L, GX_ERR_USAGE, "%s %lld does not fit in %s", what, (long long)value, gx_type_name(type));
    gx_element_set(out, type, 0, (double)value);
}

static size_t check_index(lua_State *L, int index, const gx_buffer *buffer)
{
    lua_Integer i = luaL_checkinteger(L, index);
    if (i < 1 || (size_t)i > buffer->count)
        l_raisef(L, GX_ERR_USAGE, "index %lld out of range 1..%zu", (long long)i, buffer->count);
    return (size_t)(i - 1);
}

static int buffer_get(lua_State *L)
{
    l_buffer *b = check_buffer(L, 1);
    size_t i = check_index(L, 2, &b->buffer);
    size_t size = gx_type_size(b->buffer.type);
    unsigned char element[8];
    gx_error error;
    if (gx_buffer_read(&b->buffer, i * size, element, size, &error))
        return l_raise(L, &error);
    push_element(L, element, b->buffer.type, 0);
    return 1;
}

static int buffer_set(lua_State *L)
{
    l_buffer *b = check_buffer(L, 1);
    size_t i = check_index(L, 2, &b->buffer);
    unsigned char element[8];
    check_element(L, 3, b->buffer.type, element, "value");
    gx_error error;
    size_t size = gx_type_size(b->buffer.type);
    if (gx_buffer_write(&b->buffer, i * size, element, size, &error))
        return l_raise(L, &error);
    return 0;
}

static int buffer_fill(lua_State *L)
{
    l_buffer *b = check_buffer(L, 1);
    unsigned char element[8];
    check_element(L, 2, b->buffer.type, element, "fill value");
    gx_error error;
    if (gx_buffer_fill(&b->buffer, gx_element_get(element, b->buffer.type, 0), &error))
        return l_raise(L, &error);
    lua_settop(L, 1);
    return 1;
}

static int buffer_random(lua_State *L)
{
    l_buffer *b = check_buffer(L, 1);
    double low = 0, high = 1;
    lua_Integer seed = 1;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const allowed[] = {"seed", "min", "max", NULL};
        l_check_options(L, 2, "random", allowed);
        l_opt_integer_field(L, 2, "seed", 1, &seed);
        low = l_opt_number_field(L, 2, "min", gx_type_is_float(b->buffer.type) ? 0 : 0);
        high = l_opt_number_field(L, 2, "max", gx_type_is_float(b->buffer.type) ? 1 : 100);
    } else if (!gx_type_is_float(b->buffer.type)) {
        high = 100;
    }
    if (!(low <= high))
        return l_raisef(L, GX_ERR_USAGE, "random: min (%g) must not exceed max (%g)", low, high);
    gx_error error;
    /* the device generator knows the first eight types; f16, bf16, fp8, i16 and u16 are made on the host */
    if (b->buffer.kind == GX_MEMORY_DEVICE && b->buffer.count && b->buffer.type < GX_F16 &&
        lua_getiuservalue(L, 1, 1) == LUA_TUSERDATA) {
        /* on the GPU: the same values as the host's generator, without the upload (768 MB took
           seconds through the host) */
        struct gx_helper_kernels *helper_kernels = l_device_helper_kernels(L, l_check_device(L, -1));
        if (gx_helper_kernels_random(helper_kernels, &b->buffer, (uint64_t)seed, low, high, &error))
            return l_raise(L, &error);
    } else if (gx_buffer_random(&b->buffer, (uint64_t)seed, low, high, &error)) {
        return l_raise(L, &error);
    }
    lua_settop(L, 1);
    return 1;
}

/* buffer:copy_from(source [, {offset=, source_offset=, count=, stream=}]): source is a Buffer or a
   table; with a stream, a buffer's copy is enqueued on it (a table's is made at once). */
static int buffer_copy_from(lua_State *L)
{
    l_buffer *b = check_buffer(L, 1);
    lua_Integer offset = 0, source_offset = 0, count = -1;
    const gx_stream *stream = NULL;
    if (!lua_isnoneornil(L, 3)) {
        static const char *const allowed[] = {"offset", "source_offset", "count", "stream", NULL};
        l_check_options(L, 3, "copy_from", allowed);
        l_opt_integer_field(L, 3, "offset", 0, &offset);
        l_opt_integer_field(L, 3, "source_offset", 0, &source_offset);
        l_opt_integer_field(L, 3, "count", -1, &count);
        stream = l_opt_stream(L, 3, "copy_from", NULL);
    }
    if (offset < 0 || source_offset < 0)
        return l_raisef(L, GX_ERR_USAGE, "copy_from: offsets must be >= 0");
    gx_error error;
    if (l_is_planned_buffer(L, 2)) { /* from a plan's buffer: checked, no data to copy */
        lua_getfield(L, 2, "count");
        size_t source_count = (size_t)lua_tointeger(L, -1);
        lua_getfield(L, 2, "type");
        const char *source_type = lua_tostring(L, -1);
        if (!source_type || strcmp(source_type, gx_type_name(b->buffer.type)) != 0)
            return l_raisef(L, GX_ERR_USAGE, "copy_from: cannot copy %s elements into a %s buffer",
                            source_type ? source_type : "?", gx_type_name(b->buffer.type));
        lua_pop(L, 2);
        size_t n = count >= 0 ? (size_t)count
                              : ((size_t)source_offset <= source_count ? source_count - (size_t)source_offset : 0);
        if ((size_t)source_offset + n > source_count || (size_t)offset > b->buffer.count ||
            n > b->buffer.count - (size_t)offset)
            return l_raisef(L, GX_ERR_USAGE,
                            "copy_from: %zu elements at %lld from a buffer of %zu do not fit in %zu at %lld", n,
                            (long long)source_offset, source_count, b->buffer.count, (long long)offset);
    } else if (lua_type(L, 2) == LUA_TTABLE) {
        size_t n = (size_t)lua_rawlen(L, 2);
        if (count >= 0 && (size_t)count < n)
            n = (size_t)count;
        if ((size_t)offset > b->buffer.count || n > b->buffer.count - (size_t)offset)
            return l_raisef(L, GX_ERR_USAGE, "copy_from: %zu values at offset %lld do not fit in %zu elements", n,
                            (long long)offset, b->buffer.count);
        size_t size = gx_type_size(b->buffer.type);
        /* the staging memory lives in a userdata, so a raised error cannot leak it */
        unsigned char *staging = lua_newuserdatauv(L, n * size + 1, 0);
        char what[64];
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, 2, (lua_Integer)(i + 1 + (size_t)source_offset));
            snprintf(what, sizeof what, "element %zu", i + 1);
            check_element(L, -1, b->buffer.type, staging + i * size, what);
            lua_pop(L, 1);
        }
        if (gx_buffer_write(&b->buffer, (size_t)offset * size, staging, n * size, &error))
            return l_raise(L, &error);
    } else {
        l_buffer *source = check_buffer(L, 2);
        size_t n =
            count >= 0
                ? (size_t)count
                : ((size_t)source_offset <= source->buffer.count ? source->buffer.count - (size_t)source_offset : 0);
        const gx_device *device = b->buffer.device ? b->buffer.device : source->buffer.device;
        if (stream && device && stream->device != device)
            return l_raisef(L, GX_ERR_USAGE, "copy_from: the stream belongs to another GPU than the buffers");
        if (gx_buffer_copy_async(&b->buffer, (size_t)offset, &source->buffer, (size_t)source_offset, n,
                                 stream ? stream->handle : NULL, &error))
            return l_raise(L, &error);
    }
    lua_settop(L, 1);
    return 1;
}

/* buffer:to_table([first [, count]]): 1-based first. */
static int buffer_to_table(lua_State *L)
{
    l_buffer *b = check_buffer(L, 1);
    lua_Integer first = luaL_optinteger(L, 2, 1);
    if (first < 1 || (size_t)(first - 1) > b->buffer.count) /* before first is used in arithmetic */
        return l_raisef(L, GX_ERR_USAGE, "to_table: first %lld outside 1..%zu", (long long)first, b->buffer.count);
    lua_Integer count = luaL_optinteger(L, 3, (lua_Integer)b->buffer.count - first + 1);
    if (count < 0 || (size_t)(first - 1) > b->buffer.count || (size_t)count > b->buffer.count - (size_t)(first - 1))
        return l_raisef(L, GX_ERR_USAGE, "to_table: %lld elements from %lld run past the end (%zu)", (long long)count,
                        (long long)first, b->buffer.count);
    if (count > (1 << 26))
        return l_raisef(L, GX_ERR_USAGE, "to_table: %lld elements is too many for a Lua table; copy a range",
                        (long long)count);
    size_t size = gx_type_size(b->buffer.type);
    void *staging = lua_newuserdatauv(L, (size_t)count * size + 1, 0);
    gx_error error;
    if (gx_buffer_read(&b->buffer, (size_t)(first - 1) * size, staging, (size_t)count * size, &error))
        return l_raise(L, &error);
    lua_createtable(L, (int)count, 0);
    for (lua_Integer i = 0; i < count; i++) {
        push_element(L, staging, b->buffer.type, (size_t)i);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* buffer:compare(expected [, {rtol=, atol=, ulps=}]) -> ok, {mismatches, first_mismatch, max_abs_error,
   max_ulp_error, ...}. Defaults suit the buffer's type: f32/f64 rtol 1e-5, atol 1e-8; f16, bf16 and fp8
   rtol = the type's epsilon and ulps = 1 (a result one rounding away from the reference matches). */
static int buffer_compare(lua_State *L)
{
    l_buffer *a = check_buffer(L, 1);
    l_buffer *b = check_buffer(L, 2);
    gx_type type = a->buffer.type;
    int narrow = gx_type_is_narrow_float(type);
    double rtol = narrow ? gx_type_epsilon(type) : gx_type_is_float(type) ? 1e-5 : 0;
    double atol = gx_type_is_float(type) && !narrow ? 1e-8 : 0, ulps = narrow ? 1 : -1;
    if (!lua_isnoneornil(L, 3)) {
        static const char *const allowed[] = {"rtol", "atol", "ulps", NULL};
        l_check_options(L, 3, "compare", allowed);
        rtol = l_opt_number_field(L, 3, "rtol", rtol);
        atol = l_opt_number_field(L, 3, "atol", atol);
        ulps = l_opt_number_field(L, 3, "ulps", ulps);
    }
    if (ulps >= 0 && !gx_type_is_float(type))
        return l_raisef(L, GX_ERR_USAGE, "compare: ulps applies to float buffers, not %s", gx_type_name(type));
    gx_compare_result result;
    gx_error error;
    if (gx_buffer_compare(&a->buffer, &b->buffer, rtol, atol, ulps, &result, &error))
        return l_raise(L, &error);
    lua_pushboolean(L, result.mismatches == 0);
    lua_createtable(L, 0, 10);
    l_set_integer(L, "mismatches", (lua_Integer)result.mismatches);
    if (result.mismatches) {
        l_set_integer(L, "first_mismatch", (lua_Integer)result.first_mismatch + 1);
        l_set_number(L, "first_value", result.first_value);
        l_set_number(L, "first_expected", result.first_expected);
        if (gx_type_is_float(type))
            l_set_number(L, "first_ulps", result.first_ulps);
    }
    l_set_number(L, "max_abs_error", result.max_abs_error);
    l_set_number(L, "max_rel_error", result.max_rel_error);
    if (gx_type_is_float(type)) {
        l_set_number(L, "max_ulp_error", result.max_ulp_error);
        l_set_number(L, "epsilon", gx_type_epsilon(type));
    }
    l_set_string(L, "type", gx_type_name(type));
    return 2;
}

struct copy_work {
    gx_buffer *destination;
    const gx_buffer *source;
};

static int copy_work(void *user, gx_error *error)
{
    struct copy_work *work = user;
    return gx_buffer_copy(work->destination, 0, work->source, 0, work->source->count, error);
}

/* buffer:time_copy_from(source [, {warmup=, reps=}]) -> statistics of the copy in ms, timed with
   CUDA events on the default stream, plus bytes and gbps (bytes / median). One side must be on
   the device. */
static int buffer_time_copy_from(lua_State *L)
{
    l_buffer *destination = check_buffer(L, 1);
    l_buffer *source = check_buffer(L, 2);
    lua_Integer warmup = 3, reps = 20;
    if (!lua_isnoneornil(L, 3)) {
        static const char *const allowed[] = {"warmup", "reps", NULL};
        l_check_options(L, 3, "time_copy_from", allowed);
        l_opt_integer_field(L, 3, "warmup", 3, &warmup);
        l_opt_integer_field(L, 3, "reps", 20, &reps);
    }
    if (warmup < 0 || reps < 1 || reps > 100000)
        return l_raisef(L, GX_ERR_USAGE, "time_copy_from: warmup >= 0 and reps from 1 to 100000");
    const gx_device *device =
        destination->buffer.kind == GX_MEMORY_DEVICE ? destination->buffer.device : source->buffer.device;
    if (destination->buffer.kind != GX_MEMORY_DEVICE && source->buffer.kind != GX_MEMORY_DEVICE)
        return l_raisef(L, GX_ERR_USAGE, "time_copy_from: one of the buffers must be on the device");
    if (destination->buffer.type != source->buffer.type || destination->buffer.count != source->buffer.count)
        return l_raisef(L, GX_ERR_USAGE, "time_copy_from: the buffers must have the same type and count");
    struct copy_work work = {&destination->buffer, &source->buffer};
    double *samples = lua_newuserdatauv(L, sizeof(double) * (size_t)reps, 0);
    gx_timing_request request = {.work = copy_work, .user = &work, .warmup = (int)warmup, .samples = (size_t)reps};
    gx_error error;
    if (gx_time_events(device, &request, samples, &error))
        return l_raise(L, &error);
    l_push_stats(L, samples, (size_t)reps, "_ms");
    lua_getfield(L, -1, "median_ms");
    double median = lua_tonumber(L, -1);
    lua_pop(L, 1);
    l_set_integer(L, "bytes", (lua_Integer)source->buffer.bytes);
    l_set_number(L, "gbps", median > 0 ? source->buffer.bytes / (median * 1e-3) / 1e9 : 0);
    lua_pushfstring(L, "%s_to_%s", gx_memory_kind_name(source->buffer.kind),
                    gx_memory_kind_name(destination->buffer.kind));
    lua_setfield(L, -2, "direction");
    return 1;
}

/* buffer:write(data [, offset_bytes]): a string's bytes into the buffer (structs packed by a layout) */
static int buffer_write(lua_State *L)
{
    l_buffer *b = check_buffer(L, 1);
    size_t size;
    const char *data = luaL_checklstring(L, 2, &size);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    if (offset < 0)
        return l_raisef(L, GX_ERR_USAGE, "write: offset must be >= 0");
    gx_error error;
    if (gx_buffer_write(&b->buffer, (size_t)offset, data, size, &error))
        return l_raise(L, &error);
    lua_settop(L, 1);
    return 1;
}

/* buffer:read([offset_bytes [, bytes]]) -> a string of the buffer's bytes (to the end by default) */
static int buffer_read(lua_State *L)
{
    l_buffer *b = check_buffer(L, 1);
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    if (offset < 0 || (size_t)offset > b->buffer.bytes)
        return l_raisef(L, GX_ERR_USAGE, "read: offset %lld is outside the buffer (%zu bytes)", (long long)offset,
                        b->buffer.bytes);
    lua_Integer bytes = luaL_optinteger(L, 3, (lua_Integer)(b->buffer.bytes - (size_t)offset));
    if (bytes < 0)
        return l_raisef(L, GX_ERR_USAGE, "read: a byte count must be >= 0");
    luaL_Buffer out;
    char *data = luaL_buffinitsize(L, &out, (size_t)bytes);
    gx_error error;
    if (gx_buffer_read(&b->buffer, (size_t)offset, data, (size_t)bytes, &error))
        return l_raise(L, &error);
    luaL_pushresultsize(&out, (size_t)bytes);
    return 1;
}

static int buffer_index(lua_State *L)
{
    l_buffer *b = luaL_checkudata(L, 1, GX_BUFFER_TYPE);
    if (lua_type(L, 2) == LUA_TNUMBER) {
        lua_settop(L, 2);
        return buffer_get(L);
    }
    const char *key = luaL_checkstring(L, 2);
    luaL_getmetafield(L, 1, "methods");
    if (lua_getfield(L, -1, key) != LUA_TNIL)
        return 1;
    if (strcmp(key, "count") == 0)
        lua_pushinteger(L, (lua_Integer)b->buffer.count);
    else if (strcmp(key, "bytes") == 0)
        lua_pushinteger(L, (lua_Integer)b->buffer.bytes);
    else if (strcmp(key, "type") == 0)
        lua_pushstring(L, gx_type_name(b->buffer.type));
    else if (strcmp(key, "kind") == 0)
        lua_pushstring(L, gx_memory_kind_name(b->buffer.kind));
    else if (strcmp(key, "address") == 0 && b->buffer.kind == GX_MEMORY_DEVICE && b->buffer.device_pointer)
        lua_pushinteger(L, (lua_Integer)b->buffer.device_pointer);
    else if (strcmp(key, "global") == 0)
        lua_pushboolean(L, b->buffer.borrowed);
    else
        lua_pushnil(L);
    return 1;
}

static int buffer_newindex(lua_State *L)
{
    if (lua_type(L, 2) != LUA_TNUMBER)
        return l_raisef(L, GX_ERR_USAGE, "buffers have no field '%s' to set", luaL_tolstring(L, 2, NULL));
    return buffer_set(L);
}

static int gpuexp_host(lua_State *L)
{
    int type;
    size_t count;
    l_check_element_spec(L, 1, &type, &count);
    int pinned = 0;
    if (!lua_isnoneornil(L, 3)) {
        static const char *const allowed[] = {"pinned", NULL};
        l_check_options(L, 3, "host", allowed);
        lua_getfield(L, 3, "pinned");
        pinned = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    int device_index = 0;
    if (pinned)
        l_default_device(L, &device_index);
    push_buffer(L, device_index, pinned ? GX_MEMORY_PINNED : GX_MEMORY_PAGEABLE, type, count);
    return 1;
}

/* gpuexp._element_bytes(type, count) -> the bytes of count elements of type, checked as
   device:alloc checks them: an offline plan's buffers (api/plan.lua) have a size and no memory. */
static int gpuexp_element_bytes(lua_State *L)
{
    int type;
    size_t count;
    l_check_element_spec(L, 1, &type, &count);
    lua_pushinteger(L, (lua_Integer)(count * gx_type_size((gx_type)type)));
    return 1;
}

/* device:alloc(type, count): a Buffer on the device. Registered here, as a Device method, so that
   l_device.c never calls into this file (buffers depend on devices, not the other way round). */
static int device_alloc(lua_State *L)
{
    l_check_device(L, 1);
    int type;
    size_t count;
    l_check_element_spec(L, 2, &type, &count);
    push_buffer(L, 1, GX_MEMORY_DEVICE, type, count);
    return 1;
}

void l_open_buffer(lua_State *L)
{
    static const luaL_Reg methods[] = {{"get", buffer_get},
                                       {"set", buffer_set},
                                       {"fill", buffer_fill},
                                       {"random", buffer_random},
                                       {"copy_from", buffer_copy_from},
                                       {"to_table", buffer_to_table},
                                       {"compare", buffer_compare},
                                       {"free", buffer_release},
                                       {"time_copy_from", buffer_time_copy_from},
                                       {"write", buffer_write},
                                       {"read", buffer_read},
                                       {NULL, NULL}};
    static const luaL_Reg metamethods[] = {{"__index", buffer_index},
                                           {"__newindex", buffer_newindex},
                                           {"__gc", buffer_release},
                                           {"__close", buffer_release},
                                           {"__len", buffer_len},
                                           {"__tostring", buffer_tostring},
                                           {NULL, NULL}};
    l_new_class(L, GX_BUFFER_TYPE, methods, metamethods);
    lua_pushcfunction(L, gpuexp_host);
    lua_setfield(L, -2, "host");
    lua_pushcfunction(L, gpuexp_element_bytes);
    lua_setfield(L, -2, "_element_bytes");
    luaL_getmetatable(L, GX_DEVICE_TYPE); /* l_open_device ran first */
    lua_getfield(L, -1, "methods");
    lua_pushcfunction(L, device_alloc);
    lua_setfield(L, -2, "alloc");
    lua_pop(L, 2);
}
