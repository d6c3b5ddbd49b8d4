/* Messages between the supervisor and its workers: plain Lua data (nil, booleans, integers,
   floats, strings, and tables of them) in a compact binary form, decoded without running
   anything. Integers stay integers and floats keep every bit (nan and infinities included). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "l_wire.h"

enum { TAG_NIL, TAG_FALSE, TAG_TRUE, TAG_INTEGER, TAG_FLOAT, TAG_STRING, TAG_TABLE };
#define MAX_DEPTH 64

typedef struct {
    char *data;
    size_t size, capacity;
} wire_buffer;

static void put(lua_State *L, wire_buffer *b, const void *bytes, size_t size)
{
    if (b->size + size > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 256;
        while (capacity < b->size + size)
            capacity *= 2;
        char *grown = realloc(b->data, capacity);
        if (!grown) {
            free(b->data);
            b->data = NULL;
            luaL_error(L, "out of memory for a %zu-byte message", b->size + size);
        }
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, bytes, size);
    b->size += size;
}

static void put_tag(lua_State *L, wire_buffer *b, unsigned char tag)
{
    put(L, b, &tag, 1);
}

static void encode(lua_State *L, wire_buffer *b, int index, int depth)
{
    switch (lua_type(L, index)) {
    case LUA_TNIL: put_tag(L, b, TAG_NIL); return;
    case LUA_TBOOLEAN: put_tag(L, b, lua_toboolean(L, index) ? TAG_TRUE : TAG_FALSE); return;
    case LUA_TNUMBER:
        if (lua_isinteger(L, index)) {
            int64_t value = (int64_t)lua_tointeger(L, index);
            put_tag(L, b, TAG_INTEGER);
            put(L, b, &value, sizeof value);
        } else {
            double value = (double)lua_tonumber(L, index);
            put_tag(L, b, TAG_FLOAT);
            put(L, b, &value, sizeof value);
        }
        return;
    case LUA_TSTRING: {
        size_t size;
        const char *text = lua_tolstring(L, index, &size);
        uint64_t length = size;
        put_tag(L, b, TAG_STRING);
        put(L, b, &length, sizeof length);
        put(L, b, text, size);
        return;
    }
    case LUA_TTABLE: {
        if (depth >= MAX_DEPTH) {
            free(b->data);
            b->data = NULL;
            luaL_error(L, "a message nests tables more than %d deep (a cycle?)", MAX_DEPTH);
        }
        index = lua_absindex(L, index);
        if (!lua_checkstack(L, 3)) {
            free(b->data);
            b->data = NULL;
            luaL_error(L, "no stack room to send a message");
        }
        uint64_t count = 0;
        for (lua_pushnil(L); lua_next(L, index); lua_pop(L, 1))
            count++;
        put_tag(L, b, TAG_TABLE);
        put(L, b, &count, sizeof count);
        for (lua_pushnil(L); lua_next(L, index); lua_pop(L, 1)) {
            encode(L, b, -2, depth + 1);
            encode(L, b, -1, depth + 1);
        }
        return;
    }
    default: {
        const char *type = luaL_typename(L, index);
        free(b->data);
        b->data = NULL;
        luaL_error(L, "a message cannot carry a %s, only data", type);
    }
    }
}

char *l_wire_encode(lua_State *L, int index, size_t *size)
{
    wire_buffer b = {NULL, 0, 0};
    encode(L, &b, lua_absindex(L, index), 0);
    *size = b.size;
    return b.data;
}

typedef struct {
    const unsigned char *at, *end;
} wire_reader;

static int take(wire_reader *r, void *out, size_t size)
{
    if ((size_t)(r->end - r->at) < size)
        return 0;
    memcpy(out, r->at, size);
    r->at += size;
    return 1;
}

/* Pushes the next value; 0 when the bytes are malformed. */
static int decode(lua_State *L, wire_reader *r, int depth)
{
    unsigned char tag;
    if (!take(r, &tag, 1) || depth > MAX_DEPTH || !lua_checkstack(L, 3))
        return 0;
    switch (tag) {
    case TAG_NIL: lua_pushnil(L); return 1;
    case TAG_FALSE: lua_pushboolean(L, 0); return 1;
    case TAG_TRUE: lua_pushboolean(L, 1); return 1;
    case TAG_INTEGER: {
        int64_t value;
        if (!take(r, &value, sizeof value))
            return 0;
        lua_pushinteger(L, (lua_Integer)value);
        return 1;
    }
    case TAG_FLOAT: {
        double value;
        if (!take(r, &value, sizeof value))
            return 0;
        lua_pushnumber(L, (lua_Number)value);
        return 1;
    }
    case TAG_STRING: {
        uint64_t length;
        if (!take(r, &length, sizeof length) || length > (uint64_t)(r->end - r->at))
            return 0;
        lua_pushlstring(L, (const char *)r->at, (size_t)length);
        r->at += length;
        return 1;
    }
    case TAG_TABLE: {
        uint64_t count;
        if (!take(r, &count, sizeof count) || count > (uint64_t)(r->end - r->at) / 2)
            return 0;
        lua_createtable(L, 0, 0);
        for (uint64_t i = 0; i < count; i++) {
            /* on a failure what was pushed stays: l_wire_push resets the stack */
            if (!decode(L, r, depth + 1) || !decode(L, r, depth + 1))
                return 0;
            if (lua_isnil(L, -2) || (lua_type(L, -2) == LUA_TNUMBER && lua_tonumber(L, -2) != lua_tonumber(L, -2)))
                return 0; /* nil and nan are no keys */
            lua_rawset(L, -3);
        }
        return 1;
    }
    default: return 0;
    }
}

int l_wire_push(lua_State *L, const char *data, size_t size)
{
    int top = lua_gettop(L);
    wire_reader r = {(const unsigned char *)data, (const unsigned char *)data + size};
    if (!decode(L, &r, 0) || r.at != r.end) {
        lua_settop(L, top);
        return 0;
    }
    return 1;
}
