/* require("gpuexp.x"): the Lua library compiled into the binary (or GPUEXP_LUA_DIR's copy), found
   by a searcher put first in package.searchers. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "gx_embedded.h"
#include "l_searcher.h"

/* Searcher for require("gpuexp.x"): from GPUEXP_LUA_DIR when set (development), else embedded. */
static int embedded_searcher(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    for (const struct gx_embedded_module *m = gx_embedded_modules; m->name; m++) {
        if (strcmp(m->name, name) != 0)
            continue;
        const char *dir = getenv("GPUEXP_LUA_DIR");
        if (dir && *dir) {
            lua_pushfstring(L, "%s/%s", dir, m->path + strlen("lua/"));
            if (luaL_loadfile(L, lua_tostring(L, -1)) != LUA_OK)
                return lua_error(L);
        } else {
            lua_pushfstring(L, "@%s", m->path);
            if (luaL_loadbuffer(L, m->code, m->size, lua_tostring(L, -1)) != LUA_OK)
                return lua_error(L);
        }
        lua_pushstring(L, name);
        return 2;
    }
    lua_pushfstring(L, "\n\tno embedded module '%s'", name);
    return 1;
}

/* Puts the embedded modules' searcher first in package.searchers. */
void l_install_searcher(lua_State *L)
{
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "searchers");
    int n = (int)lua_rawlen(L, -1);
    for (int i = n; i >= 1; i--) {
        lua_rawgeti(L, -1, i);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushcfunction(L, embedded_searcher);
    lua_rawseti(L, -2, 1);
    lua_pop(L, 2);
}
