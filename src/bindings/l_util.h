/* The binding files' shared helpers (l_util.c): errors raised as gpuexp error values at the user's
   line, strict option tables, table setters, metatables built once, and the registry keys main sets
   before the script runs. */
#ifndef L_UTIL_H
#define L_UTIL_H

#include <stddef.h>

#include <lauxlib.h>
#include <lua.h>

#include "gx_error.h"

#define GX_ERROR_TYPE "gpuexp.Error"

/* Registry keys of process settings, set by main before the script runs. */
#define GX_REGISTRY_DEFAULT_DEVICE "gpuexp.default_device" /* integer ordinal */
#define GX_REGISTRY_OFFLINE_ARCH "gpuexp.offline_arch"     /* string, when planning without a GPU */
#define GX_REGISTRY_SCRIPT_DIR "gpuexp.script_dir"

/* Pushes "file:line: " of the first frame from level up that is the user's (not lua/gpuexp/). */
void l_push_where(lua_State *L, int level);
/* Raises a gpuexp error value: message "where: text" (the user's line), fields kind and message. */
int l_raise(lua_State *L, const gx_error *error);
int l_raisef(lua_State *L, enum gx_error_kind kind, const char *format, ...);
/* Pushes a new error value without raising it. */
void l_push_error(lua_State *L, enum gx_error_kind kind, const char *message);
/* The Lua idiom of a call that may fail without raising: pushes true, or nil and error's message
   when failed; returns the number of values pushed. */
int l_push_outcome(lua_State *L, int failed, const gx_error *error);

/* Option tables: raise on keys not in `allowed` (NULL-terminated). */
void l_check_options(lua_State *L, int index, const char *what, const char *const *allowed);
int l_opt_integer_field(lua_State *L, int index, const char *key, lua_Integer fallback, lua_Integer *out);
double l_opt_number_field(lua_State *L, int index, const char *key, double fallback);
const char *l_opt_string_field(lua_State *L, int index, const char *key, const char *fallback);

/* Sets t[key] = value on the table at the top of the stack. */
void l_set_integer(lua_State *L, const char *key, lua_Integer value);
void l_set_number(lua_State *L, const char *key, double value);
void l_set_string(lua_State *L, const char *key, const char *value);

/* Builds a type's metatable once: the metamethods, and the methods in its "methods" field, which
   is also __index unless the metamethods have their own (which then look methods up there). */
void l_new_class(lua_State *L, const char *name, const luaL_Reg *methods, const luaL_Reg *metamethods);

const char *l_offline_arch(lua_State *L); /* NULL when a GPU is used */
/* 1 for a buffer of an offline plan: a table with kind = "planned" (made by the Lua library). */
int l_is_planned_buffer(lua_State *L, int index);
/* 1 for the device of an offline plan: gpuexp.device() there, a table with plan = true. */
int l_is_planned_device(lua_State *L, int index);
/* Pushes what gpuexp.<name>() returns (the plan's device or stream, which the Lua library makes). */
void l_call_gpuexp(lua_State *L, const char *name);
/* An element type name at index and a count at index + 1 (a buffer's shape); raises when bad. */
void l_check_element_spec(lua_State *L, int index, int *type, size_t *count);
/* Sets built_with_cuda, driver_cuda and nvrtc ("13.0") in the table on top; absent when not found
   (loaded_only: nvrtc only when this process has loaded NVRTC already). */
void l_set_cuda_versions(lua_State *L, int loaded_only);
/* Pushes a table of statistics (min_ms, median_ms, ...) computed from samples (sorted in place). */
void l_push_stats(lua_State *L, double *samples, size_t count, const char *unit_suffix);

#endif
