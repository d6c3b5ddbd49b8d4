/* The outputs' file functions (gx_output.h): gpuexp._write_file, _open_output, _output_folder. */
#include <stdio.h>
#include <unistd.h>

#include <lauxlib.h>

#include "gx_output.h"
#include "l_gpuexp.h"
#include "l_util.h"

/* gpuexp._write_file(path, text) -> true, or nil and why: path's whole content, replaced safely */
static int files_write(lua_State *L)
{
    size_t size;
    const char *path = luaL_checkstring(L, 1);
    const char *text = luaL_checklstring(L, 2, &size);
    gx_error error;
    return l_push_outcome(L, gx_output_write(path, text, size, &error), &error);
}

/* gpuexp._output_folder(path) -> true, or nil and why: the folder, not its parents */
static int files_folder(lua_State *L)
{
    gx_error error;
    return l_push_outcome(L, gx_output_folder(luaL_checkstring(L, 1), &error), &error);
}

static int close_stream(lua_State *L)
{
    luaL_Stream *stream = luaL_checkudata(L, 1, LUA_FILEHANDLE);
    int closed = fclose(stream->f) == 0;
    return luaL_fileresult(L, closed, NULL);
}

/* gpuexp._open_output(path, append) -> a Lua file open for writing, or nil and why */
static int files_open(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int append = lua_toboolean(L, 2);
    luaL_Stream *stream = lua_newuserdatauv(L, sizeof *stream, 0);
    stream->closef = NULL; /* a closed handle until the file is open */
    luaL_setmetatable(L, LUA_FILEHANDLE);
    gx_error error;
    int fd = gx_output_open(path, append, &error);
    if (fd < 0) {
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        return 2;
    }
    stream->f = fdopen(fd, append ? "ab" : "wb");
    if (!stream->f) {
        close(fd);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot write %s: out of memory", path);
        return 2;
    }
    stream->closef = close_stream;
    return 1;
}

void l_open_files(lua_State *L)
{
    static const luaL_Reg functions[] = {{"_write_file", files_write}, {"_open_output", files_open},
                                         {"_output_folder", files_folder}, {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
