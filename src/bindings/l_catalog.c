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
#include "l_searcher.h"

/* gpuexp._did_you_mean(word, names) -> " (did you mean 'x'?)" naming the names closest to word
   (up to 3, only plausible ones), or "": every suggestion of the Lua side, with gx_suggest (the
   catalog's state has it too, for engine/args.lua's refusals). */
int l_catalog_suggest(lua_State *L)
{
    const char *word = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    const char *names[512];
    size_t count = 0;
    lua_Integer n = luaL_len(L, 2);
    for (lua_Integer i = 1; i <= n && count < sizeof names / sizeof names[0]; i++) {
        lua_rawgeti(L, 2, i);
        if (lua_type(L, -1) == LUA_TSTRING)
            names[count++] = lua_tostring(L, -1); /* kept alive by the table */
        lua_pop(L, 1);
    }
    char hint[1024];
    gx_did_you_mean(word, names, count, hint, sizeof hint);
    lua_pushstring(L, hint);
    return 1;
}

/* Pushes a field (a function) of the catalog module, or of its parser (engine/args.lua), in a new
   state that has gpuexp._did_you_mean; NULL when it cannot be read. */
static lua_State *module_function(const char *module, const char *field)
{
    lua_State *L = luaL_newstate();
    if (!L)
        return NULL;
    luaL_openlibs(L);
    l_install_searcher(L);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, l_catalog_suggest);
    lua_setfield(L, -2, "_did_you_mean");
    lua_setglobal(L, "gpuexp");
    lua_getglobal(L, "require");
    lua_pushstring(L, module);
    int loaded = lua_pcall(L, 1, 1, 0) == LUA_OK;
    if (!loaded || lua_getfield(L, -1, field) != LUA_TFUNCTION) {
        fprintf(stderr, "gpuexp: the command catalog cannot be read: %s\n",
                loaded ? "no such function" : lua_tostring(L, -1));
        lua_close(L);
        return NULL;
    }
    return L;
}

static lua_State *catalog_function(const char *field) { return module_function("gpuexp.catalog", field); }

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

/* One option given, from engine/args.lua's list: its field and value (as typed, in argv; a flag's
   own text; or none, with on saying true or false). */
static void read_given(lua_State *L, char **argv, struct l_parsed_option *option)
{
    lua_getfield(L, -1, "field");
    snprintf(option->field, sizeof option->field, "%s", lua_tostring(L, -1));
    lua_getfield(L, -2, "index");
    lua_getfield(L, -3, "value");
    option->value = NULL;
    option->on = 1;
    if (lua_isinteger(L, -2)) {
        option->value = argv[lua_tointeger(L, -2)];
    } else if (lua_type(L, -1) == LUA_TSTRING) {
        snprintf(option->text, sizeof option->text, "%s", lua_tostring(L, -1));
        option->value = option->text;
    } else {
        option->on = lua_toboolean(L, -1);
    }
    lua_pop(L, 3);
}

int l_catalog_parse(const char *command, int argc, char **argv, struct l_parsed *parsed)
{
    parsed->count = 0;
    parsed->script_index = argc;
    parsed->error[0] = 0;
    lua_State *L = module_function("gpuexp.engine.args", "parse");
    if (!L) {
        snprintf(parsed->error, sizeof parsed->error, "the command catalog cannot be read");
        return -2;
    }
    lua_pushstring(L, command);
    lua_createtable(L, argc, 0);
    for (int i = 1; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i);
    }
    int status = lua_pcall(L, 2, 3, 0);
    if (status != LUA_OK || !lua_istable(L, -3)) { /* a bug (the error) or a usage error (fields nil, why) */
        const char *why = lua_tostring(L, status != LUA_OK ? -1 : -2);
        snprintf(parsed->error, sizeof parsed->error, "%s", why ? why : "the command line cannot be parsed");
        lua_close(L);
        return status != LUA_OK ? -2 : -1;
    }
    if (lua_getfield(L, -3, "script_index") == LUA_TNUMBER)
        parsed->script_index = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    int total = (int)luaL_len(L, -1);
    if (total > L_PARSED_MAX) {
        snprintf(parsed->error, sizeof parsed->error, "more than %d options given", L_PARSED_MAX);
        lua_close(L);
        return -1;
    }
    for (int i = 1; i <= total; i++) {
        lua_rawgeti(L, -1, i);
        read_given(L, argv, &parsed->given[parsed->count++]);
        lua_pop(L, 1);
    }
    lua_close(L);
    return 0;
}

const struct l_parsed_option *l_parsed_find(const struct l_parsed *parsed, const char *field)
{
    for (int i = parsed->count - 1; i >= 0; i--)
        if (strcmp(parsed->given[i].field, field) == 0)
            return &parsed->given[i];
    return NULL;
}
