/* gpuexp._db: the history database (gx_db.c) for lua/gpuexp/store/history.lua.
 *   gpuexp._db.open(path) -> Database; db:exec(sql); db:rows(sql, ...) -> {{column = value}...};
 *   db:run(sql, ...) -> changes, last_insert_id; db:close(). Failures raise error values (kind
 *   "system") whose message names the SQLite call, the file and SQLite's message. */
#include <string.h>

#include "gx_db.h"
#include "l_util.h"
#include "l_gpuexp.h"

#define GX_DB_TYPE "gpuexp.Database"

typedef struct l_db {
    gx_db *db;
} l_db;

static int raise_plain(lua_State *L, const gx_error *error)
{
    l_push_error(L, error->kind, error->message);
    return lua_error(L);
}

static gx_db *check_open(lua_State *L)
{
    l_db *handle = luaL_checkudata(L, 1, GX_DB_TYPE);
    if (!handle->db)
        luaL_error(L, "the history database is closed");
    return handle->db;
}

/* gpuexp._db.open(path [, readonly]) */
static int db_open(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int readonly = lua_toboolean(L, 2);
    l_db *handle = lua_newuserdatauv(L, sizeof *handle, 0);
    handle->db = NULL;
    luaL_setmetatable(L, GX_DB_TYPE);
    gx_error error;
    if (gx_db_open(path, readonly, &handle->db, &error))
        return raise_plain(L, &error);
    return 1;
}

static int db_close(lua_State *L)
{
    l_db *handle = luaL_checkudata(L, 1, GX_DB_TYPE);
    gx_db_close(handle->db);
    handle->db = NULL;
    return 0;
}

static int db_exec(lua_State *L)
{
    gx_db *db = check_open(L);
    gx_error error;
    if (gx_db_exec(db, luaL_checkstring(L, 2), &error))
        return raise_plain(L, &error);
    return 0;
}

#define GX_DB_MAX_PARAMS 64

/* The statement's parameters from the arguments after the SQL text. */
static int read_params(lua_State *L, gx_db_value *params)
{
    int count = lua_gettop(L) - 2;
    if (count > GX_DB_MAX_PARAMS)
        luaL_error(L, "at most %d parameters per statement", GX_DB_MAX_PARAMS);
    for (int i = 0; i < count; i++) {
        int index = i + 3;
        gx_db_value *v = &params[i];
        memset(v, 0, sizeof *v);
        switch (lua_type(L, index)) {
        case LUA_TNIL: v->type = GX_DB_NULL; break;
        case LUA_TBOOLEAN:
            v->type = GX_DB_INTEGER;
            v->integer = lua_toboolean(L, index);
            break;
        case LUA_TNUMBER:
            if (lua_isinteger(L, index)) {
                v->type = GX_DB_INTEGER;
                v->integer = lua_tointeger(L, index);
            } else {
                v->type = GX_DB_REAL;
                v->real = lua_tonumber(L, index);
            }
            break;
        case LUA_TSTRING:
            v->type = GX_DB_TEXT;
            v->text = lua_tolstring(L, index, &v->length);
            break;
        default: luaL_argerror(L, index, "a statement parameter must be nil, a boolean, a number or a string");
        }
    }
    return count;
}

struct row_sink {
    lua_State *L;
    int list;
    lua_Integer count;
};

static int push_row(void *user, int count, const char *const *names, const gx_db_value *values, gx_error *error)
{
    (void)error;
    struct row_sink *sink = user;
    lua_State *L = sink->L;
    lua_createtable(L, 0, count);
    for (int c = 0; c < count; c++) {
        const gx_db_value *v = &values[c];
        if (v->type == GX_DB_INTEGER)
            lua_pushinteger(L, v->integer);
        else if (v->type == GX_DB_REAL)
            lua_pushnumber(L, v->real);
        else if (v->type == GX_DB_TEXT)
            lua_pushlstring(L, v->text ? v->text : "", v->length);
        else
            continue; /* NULL: the field stays nil */
        lua_setfield(L, -2, names[c]);
    }
    lua_rawseti(L, sink->list, ++sink->count);
    return GX_OK;
}

static int db_rows(lua_State *L)
{
    gx_db *db = check_open(L);
    const char *sql = luaL_checkstring(L, 2);
    gx_db_value params[GX_DB_MAX_PARAMS];
    int count = read_params(L, params);
    lua_newtable(L);
    struct row_sink sink = {L, lua_gettop(L), 0};
    luaL_checkstack(L, 8, "history rows");
    gx_error error;
    if (gx_db_run(db, sql, params, count, push_row, &sink, &error))
        return raise_plain(L, &error);
    return 1;
}

static int db_run(lua_State *L)
{
    gx_db *db = check_open(L);
    const char *sql = luaL_checkstring(L, 2);
    gx_db_value params[GX_DB_MAX_PARAMS];
    int count = read_params(L, params);
    gx_error error;
    if (gx_db_run(db, sql, params, count, NULL, NULL, &error))
        return raise_plain(L, &error);
    lua_pushinteger(L, gx_db_changes(db));
    lua_pushinteger(L, gx_db_last_insert_id(db));
    return 2;
}

void l_open_db(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"exec", db_exec}, {"rows", db_rows}, {"run", db_run}, {"close", db_close}, {NULL, NULL}};
    static const luaL_Reg metamethods[] = {{"__gc", db_close}, {NULL, NULL}};
    l_new_class(L, GX_DB_TYPE, methods, metamethods);
    lua_newtable(L);
    lua_pushcfunction(L, db_open);
    lua_setfield(L, -2, "open");
    lua_pushstring(L, gx_db_sqlite_version());
    lua_setfield(L, -2, "sqlite_version");
    lua_setfield(L, -2, "_db");
}
