/* Lua types gpuexp.Stream and gpuexp.Event: streams with priorities, where launches and copies
   are enqueued ({stream = s}), and events to order streams and time what runs between them. */
#include <string.h>

#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

static int device_argument(lua_State *L, int options)
{
    int index = 0;
    if (options && lua_getfield(L, options, "device") != LUA_TNIL) {
        l_check_device(L, -1);
        return lua_gettop(L);
    }
    if (options)
        lua_pop(L, 1);
    l_default_device(L, &index);
    return index;
}

/* gpuexp.stream{device =, priority = 0, blocking = true} -> Stream */
static int gpuexp_stream(lua_State *L)
{
    static const char *const allowed[] = {"device", "priority", "blocking", NULL};
    int options = lua_isnoneornil(L, 1) ? 0 : 1;
    if (options)
        l_check_options(L, 1, "stream", allowed);
    lua_Integer priority = 0;
    int blocking = 1;
    if (options) {
        l_opt_integer_field(L, 1, "priority", 0, &priority);
        if (lua_getfield(L, 1, "blocking") != LUA_TNIL)
            blocking = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    int device_index = device_argument(L, options);
    l_device *device = lua_touserdata(L, device_index);
    l_stream *stream = lua_newuserdatauv(L, sizeof *stream, 1);
    memset(stream, 0, sizeof *stream);
    luaL_setmetatable(L, GX_STREAM_TYPE);
    lua_pushvalue(L, device_index);
    lua_setiuservalue(L, -2, 1);
    gx_error error;
    if (gx_stream_create(&stream->stream, &device->device, (int)priority, blocking, &error))
        return l_raise(L, &error);
    return 1;
}

/* gpuexp.stream_priorities([device]) -> least, greatest (lower numbers are more urgent) */
static int gpuexp_stream_priorities(lua_State *L)
{
    int device_index;
    l_device *device = lua_isnoneornil(L, 1) ? l_default_device(L, &device_index) : l_check_device(L, 1);
    int least, greatest;
    gx_error error;
    if (gx_stream_priority_range(&device->device, &least, &greatest, &error))
        return l_raise(L, &error);
    lua_pushinteger(L, least);
    lua_pushinteger(L, greatest);
    return 2;
}

static l_stream *check_stream(lua_State *L, int index)
{
    l_stream *stream = luaL_checkudata(L, index, GX_STREAM_TYPE);
    if (!stream->stream.handle)
        l_raisef(L, GX_ERR_USAGE, "the stream was destroyed");
    return stream;
}

const gx_stream *l_opt_stream(lua_State *L, int index, const char *what, const gx_device *device)
{
    if (lua_getfield(L, index, "stream") == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    l_stream *stream = luaL_testudata(L, -1, GX_STREAM_TYPE);
    if (!stream && l_offline_arch(L) && lua_istable(L, -1)) { /* a plan's stream: nothing is enqueued */
        lua_getfield(L, -1, "kind");
        int planned = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "planned_stream") == 0;
        lua_pop(L, 2);
        if (planned)
            return NULL;
        lua_getfield(L, index, "stream");
    }
    if (!stream)
        l_raisef(L, GX_ERR_USAGE, "%s: 'stream' must be a gpuexp.stream{}, got %s", what, luaL_typename(L, -1));
    if (!stream->stream.handle)
        l_raisef(L, GX_ERR_USAGE, "%s: the stream was destroyed", what);
    if (device && stream->stream.device != device)
        l_raisef(L, GX_ERR_USAGE, "%s: the stream belongs to %s (GPU %d), not to GPU %d", what,
                 stream->stream.device->name, stream->stream.device->ordinal, device->ordinal);
    lua_pop(L, 1); /* the caller's table keeps it alive */
    return &stream->stream;
}

static int stream_synchronize(lua_State *L)
{
    gx_error error;
    if (gx_stream_synchronize(&check_stream(L, 1)->stream, &error))
        return l_raise(L, &error);
    return 0;
}

static int stream_query(lua_State *L)
{
    int done;
    gx_error error;
    if (gx_stream_query(&check_stream(L, 1)->stream, &done, &error))
        return l_raise(L, &error);
    lua_pushboolean(L, done);
    return 1;
}

static l_event *check_event(lua_State *L, int index)
{
    l_event *event = luaL_checkudata(L, index, GX_EVENT_TYPE);
    if (!event->event.handle)
        l_raisef(L, GX_ERR_USAGE, "the event was destroyed");
    return event;
}

/* stream:wait(event): work enqueued later on the stream waits until the event has happened */
static int stream_wait(lua_State *L)
{
    l_stream *stream = check_stream(L, 1);
    gx_error error;
    if (gx_stream_wait_event(&stream->stream, &check_event(L, 2)->event, &error))
        return l_raise(L, &error);
    return 0;
}

static int stream_release(lua_State *L)
{
    l_stream *stream = luaL_checkudata(L, 1, GX_STREAM_TYPE);
    if (stream->borrowed)
        stream->stream.handle = NULL;
    else
        gx_stream_destroy(&stream->stream);
    return 0;
}

static int stream_index(lua_State *L)
{
    l_stream *stream = luaL_checkudata(L, 1, GX_STREAM_TYPE);
    const char *key = luaL_checkstring(L, 2);
    luaL_getmetafield(L, 1, "methods");
    if (lua_getfield(L, -1, key) != LUA_TNIL)
        return 1;
    if (strcmp(key, "priority") == 0)
        lua_pushinteger(L, stream->stream.priority);
    else if (strcmp(key, "device") == 0)
        lua_getiuservalue(L, 1, 1);
    else
        lua_pushnil(L);
    return 1;
}

/* gpuexp.event{device =, timing = true} -> Event */
static int gpuexp_event(lua_State *L)
{
    static const char *const allowed[] = {"device", "timing", NULL};
    int options = lua_isnoneornil(L, 1) ? 0 : 1;
    int timing = 1;
    if (options) {
        l_check_options(L, 1, "event", allowed);
        if (lua_getfield(L, 1, "timing") != LUA_TNIL)
            timing = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    int device_index = device_argument(L, options);
    l_device *device = lua_touserdata(L, device_index);
    l_event *event = lua_newuserdatauv(L, sizeof *event, 1);
    memset(event, 0, sizeof *event);
    luaL_setmetatable(L, GX_EVENT_TYPE);
    lua_pushvalue(L, device_index);
    lua_setiuservalue(L, -2, 1);
    gx_error error;
    if (gx_event_create(&event->event, &device->device, timing, &error))
        return l_raise(L, &error);
    return 1;
}

/* event:record([stream]): on the stream, else where work without a stream goes */
static int event_record(lua_State *L)
{
    l_event *event = check_event(L, 1);
    CUstream stream = gx_current_stream;
    if (!lua_isnoneornil(L, 2)) {
        l_stream *s = check_stream(L, 2);
        if (s->stream.device != event->event.device)
            return l_raisef(L, GX_ERR_USAGE, "event:record: the stream and the event belong to different GPUs");
        stream = s->stream.handle;
    }
    gx_error error;
    if (gx_event_record(&event->event, stream, &error))
        return l_raise(L, &error);
    return 0;
}

static int event_synchronize(lua_State *L)
{
    gx_error error;
    if (gx_event_synchronize(&check_event(L, 1)->event, &error))
        return l_raise(L, &error);
    return 0;
}

static int event_query(lua_State *L)
{
    int done;
    gx_error error;
    if (gx_event_query(&check_event(L, 1)->event, &done, &error))
        return l_raise(L, &error);
    lua_pushboolean(L, done);
    return 1;
}

/* start:elapsed_ms(end) -> milliseconds between the two recorded events */
static int event_elapsed_ms(lua_State *L)
{
    float ms = 0;
    gx_error error;
    if (gx_event_elapsed(&check_event(L, 1)->event, &check_event(L, 2)->event, &ms, &error))
        return l_raise(L, &error);
    lua_pushnumber(L, ms);
    return 1;
}

static int event_release(lua_State *L)
{
    gx_event_destroy(&((l_event *)luaL_checkudata(L, 1, GX_EVENT_TYPE))->event);
    return 0;
}

static int event_index(lua_State *L)
{
    l_event *event = luaL_checkudata(L, 1, GX_EVENT_TYPE);
    const char *key = luaL_checkstring(L, 2);
    luaL_getmetafield(L, 1, "methods");
    if (lua_getfield(L, -1, key) != LUA_TNIL)
        return 1;
    if (strcmp(key, "timing") == 0)
        lua_pushboolean(L, event->event.timing);
    else if (strcmp(key, "device") == 0)
        lua_getiuservalue(L, 1, 1);
    else
        lua_pushnil(L);
    return 1;
}

void l_open_stream(lua_State *L)
{
    static const luaL_Reg stream_methods[] = {{"synchronize", stream_synchronize},
                                              {"query", stream_query},
                                              {"wait", stream_wait},
                                              {"destroy", stream_release},
                                              {NULL, NULL}};
    static const luaL_Reg event_methods[] = {{"record", event_record},   {"synchronize", event_synchronize},
                                             {"query", event_query},     {"elapsed_ms", event_elapsed_ms},
                                             {"destroy", event_release}, {NULL, NULL}};
    static const luaL_Reg stream_meta[] = {
        {"__index", stream_index}, {"__gc", stream_release}, {"__close", stream_release}, {NULL, NULL}};
    static const luaL_Reg event_meta[] = {
        {"__index", event_index}, {"__gc", event_release}, {"__close", event_release}, {NULL, NULL}};
    l_new_class(L, GX_STREAM_TYPE, stream_methods, stream_meta);
    l_new_class(L, GX_EVENT_TYPE, event_methods, event_meta);
    static const luaL_Reg functions[] = {{"stream", gpuexp_stream},
                                         {"event", gpuexp_event},
                                         {"stream_priorities", gpuexp_stream_priorities},
                                         {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
