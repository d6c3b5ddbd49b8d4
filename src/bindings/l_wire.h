/* The supervisor-worker messages (l_wire.c): a Lua value as bytes and back. */
#ifndef L_WIRE_H
#define L_WIRE_H

#include <stddef.h>

#include <lua.h>

/* The value at index as bytes (malloc'ed; raises on a value that is not data), and bytes pushed
   back as a value (0, nothing pushed, when malformed). */
char *l_wire_encode(lua_State *L, int index, size_t *size);
int l_wire_push(lua_State *L, const char *data, size_t size);

#endif
