/* The outputs' file functions (gx_output.h): gpuexp._write_file, _open_output, _output_check,
   _output_folder, _check_stdout_at_exit. Their "named" argument: the output is a name the user gave (compare -o, a
   sweep's -o), where a device or a FIFO is written in place; without it only a file is written. */
#include <stdio.h>
#include <unistd.h>

#include <lauxlib.h>

#include "gx_output.h"
#include "l_gpuexp.h"
#include "l_util.h"

/* gpuexp._write_file(path, text [, named]) -> true, or nil and why: path's whole content, replaced
   safely */
static int files_write(lua_State *L)
{
    size_t size;
    const char *path = luaL_checkstring(L, 1);
    const char *text = luaL_checklstring(L, 2, &size);
    gx_error error;
    int flags = lua_toboolean(L, 3) ? GX_OUTPUT_NAMED : 0;
    return l_push_outcome(L, gx_output_write(path, text, size, flags, &error), &error);
}

/* gpuexp._output_check(path [, named]) -> true, or nil and why: path could be written (its links,
   its folder, what is there) */
static int files_check(lua_State *L)
{
    gx_error error;
    int flags = lua_toboolean(L, 2) ? GX_OUTPUT_NAMED : 0;
    return l_push_outcome(L, gx_output_check(luaL_checkstring(L, 1), flags, &error), &error);
}

/* gpuexp._output_folder(path [, parents]) -> true, or nil and why: the folder (and its parents) */
static int files_folder(lua_State *L)
{
    gx_error error;
    return l_push_outcome(L, gx_output_folder(luaL_checkstring(L, 1), lua_toboolean(L, 2), &error), &error);
}

/* gpuexp._check_stdout_at_exit(code): the standard output checked as the process exits, which
   then ends with code (the catalog's, main.lua's first call) when a write to it was lost */
static int files_check_stdout_at_exit(lua_State *L)
{
    gx_output_check_stdout_at_exit((int)luaL_checkinteger(L, 1));
    return 0;
}

static int close_stream(lua_State *L)
{
    luaL_Stream *stream = luaL_checkudata(L, 1, LUA_FILEHANDLE);
    int closed = fclose(stream->f) == 0;
    return luaL_fileresult(L, closed, NULL);
}

/* gpuexp._open_output(path, append [, named]) -> a Lua file open for writing, or nil and why */
static int files_open(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int append = lua_toboolean(L, 2);
    int flags = lua_toboolean(L, 3) ? GX_OUTPUT_NAMED : 0;
    luaL_Stream *stream = lua_newuserdatauv(L, sizeof *stream, 0);
    stream->closef = NULL; /* a closed handle until the file is open */
    luaL_setmetatable(L, LUA_FILEHANDLE);
    gx_error error;
    int fd = gx_output_open(path, append, flags, &error);
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
    static const luaL_Reg functions[] = {{"_write_file", files_write},
                                         {"_open_output", files_open},
                                         {"_output_folder", files_folder},
                                         {"_output_check", files_check},
                                         {"_check_stdout_at_exit", files_check_stdout_at_exit},
                                         {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
