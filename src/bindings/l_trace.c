/* The timeline of --trace (gx_trace.h): gpuexp._trace_start and _trace_stop, around the script the
   run command runs. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "gx_trace.h"
#include "l_gpuexp.h"
#include "l_util.h"

/* gpuexp._trace_start(path, exclusive) -> the path written, or nil, why and the error's kind
   ("usage": a bad path, "system": it cannot be written, "driver": no CUPTI). exclusive (a worker
   of a supervised run): when PATH.tmp is taken by another worker of the run, this one writes
   PATH with its pid before the extension instead. */
static int trace_start(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int exclusive = lua_toboolean(L, 2);
    gx_error error;
    int status = gx_trace_start(path, exclusive, &error);
    char other[PATH_MAX];
    if (status == GX_ERR_SYSTEM && errno == EEXIST) {
        const char *dot = strrchr(path, '.');
        int has_extension = dot && !strchr(dot, '/');
        int stem = has_extension ? (int)(dot - path) : (int)strlen(path);
        snprintf(other, sizeof other, "%.*s.%d%s", stem, path, (int)getpid(), has_extension ? dot : "");
        path = other;
        status = gx_trace_start(path, 0, &error);
    }
    if (status != GX_OK) {
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        lua_pushstring(L, gx_error_kind_name(error.kind));
        return 3;
    }
    lua_pushstring(L, path);
    return 1;
}

/* gpuexp._trace_stop() -> true, or nil and why (the file could not be written whole) */
static int trace_stop(lua_State *L)
{
    gx_error error;
    return l_push_outcome(L, gx_trace_stop(&error), &error);
}

void l_open_trace(lua_State *L)
{
    static const luaL_Reg functions[] = {{"_trace_start", trace_start}, {"_trace_stop", trace_stop}, {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
