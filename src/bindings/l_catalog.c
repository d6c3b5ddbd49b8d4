/* The command catalog for the C side: main.c's dispatch and the C commands' --help come from
   lua/gpuexp/catalog.lua, read here in a small Lua state of its own (a fraction of a
   millisecond), so the commands, their options and their exit codes are listed once. */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "gx_paths.h"
#include "gx_suggest.h"
#include "l_catalog.h"
#include "l_gpuexp.h"

/* Pushes the catalog module's field (a function) in a new state; NULL when it cannot be read. */
static lua_State *catalog_function(const char *field)
{
    lua_State *L = luaL_newstate();
    if (!L)
        return NULL;
    luaL_openlibs(L);
    l_install_searcher(L);
    lua_getglobal(L, "require");
    lua_pushstring(L, "gpuexp.catalog");
    int loaded = lua_pcall(L, 1, 1, 0) == LUA_OK;
    if (!loaded || lua_getfield(L, -1, field) != LUA_TFUNCTION) {
        fprintf(stderr, "gpuexp: the command catalog cannot be read: %s\n",
                loaded ? "no such function" : lua_tostring(L, -1));
        lua_close(L);
        return NULL;
    }
    return L;
}

enum l_command_kind l_catalog_command(const char *name, char *detail, size_t size)
{
    lua_State *L = catalog_function("find");
    if (!L)
        return L_COMMAND_NONE;
    lua_pushstring(L, name);
    enum l_command_kind kind = L_COMMAND_NONE;
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1)) {
        if (lua_getfield(L, -1, "module") == LUA_TSTRING) {
            kind = L_COMMAND_LUA;
            snprintf(detail, size, "%s", lua_tostring(L, -1));
        } else if (lua_getfield(L, -2, "run_option") == LUA_TSTRING) {
            kind = L_COMMAND_RUN_OPTION;
            snprintf(detail, size, "%s", lua_tostring(L, -1));
        } else if (lua_getfield(L, -3, "native") == LUA_TBOOLEAN && lua_toboolean(L, -1)) {
            kind = L_COMMAND_NATIVE;
            snprintf(detail, size, "%s", name);
        }
    }
    lua_close(L);
    return kind;
}

int l_catalog_help(const char *name, FILE *out)
{
    lua_State *L = catalog_function("help");
    if (!L)
        return -1;
    lua_pushstring(L, name);
    int status = -1;
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_isstring(L, -1)) {
        fputs(lua_tostring(L, -1), out);
        status = 0;
    }
    lua_close(L);
    return status;
}

void l_catalog_did_you_mean(const char *command, const char *word, char *out, size_t size)
{
    enum { SLOT = 128, MAX = 256 };
    static char slots[MAX][SLOT];
    const char *names[MAX];
    int count = 0;
    out[0] = 0;
    lua_State *L = catalog_function(command ? "options" : "command_names");
    if (!L)
        return;
    if (command)
        lua_pushstring(L, command);
    if (lua_pcall(L, command ? 1 : 0, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
        lua_close(L);
        return;
    }
    for (lua_Integer i = 1; count < MAX && lua_rawgeti(L, -1, i) == LUA_TSTRING; i++) {
        snprintf(slots[count], SLOT, "%s", lua_tostring(L, -1));
        names[count] = slots[count];
        count++;
        lua_pop(L, 1);
    }
    lua_close(L);
    if (!command) {
        int shipped = gx_experiment_names(&slots[count][0], SLOT, MAX - count);
        for (int i = 0; i < shipped; i++, count++)
            names[count] = slots[count];
    }
    gx_did_you_mean(word, names, (size_t)count, out, size);
}

int l_catalog_option(const char *command, const char *flag, char *field, size_t size)
{
    lua_State *L = catalog_function("option_field");
    if (!L)
        return -1;
    lua_pushstring(L, command);
    lua_pushstring(L, flag);
    int takes = -1;
    if (lua_pcall(L, 2, 2, 0) == LUA_OK && lua_type(L, -2) == LUA_TSTRING) {
        snprintf(field, size, "%s", lua_tostring(L, -2));
        takes = lua_toboolean(L, -1);
    }
    lua_close(L);
    return takes;
}
