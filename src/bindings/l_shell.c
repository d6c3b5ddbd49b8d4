/* os.execute and io.popen, as Lua's own but started like every other child of gpuexp
   (gx_process_start: a guard, a process group of its own, default signals, standard input
   /dev/null for os.execute). Lua's own use system() and popen(): system() ignores SIGINT while
   it waits, so a Ctrl-C during a script's command was lost, and neither ended with gpuexp when it
   was killed. Here a stop signal reaches the command's whole group and the run stops after it
   returns, and the command never outlives gpuexp. The results are Lua's: true or nil, "exit" or
   "signal", and the code. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gx_process.h"
#include "l_gpuexp.h"
#include "l_util.h"

/* A popen'ed file: Lua's luaL_Stream first (io's functions see a file), then its command. */
typedef struct shell_stream {
    luaL_Stream stream;
    gx_guarded started;
} shell_stream;

static const gx_run_options shell_options = {.error_sink = -1, .grace_s = 5};

/* Pushes Lua's results of a command that ended (as luaL_execresult does for a wait status). */
static int push_ended(lua_State *L, const gx_run_result *result)
{
    int status = result->signal ? result->signal : (result->exit_code & 0xff) << 8;
    errno = 0;
    return luaL_execresult(L, status);
}

static char *shell_argv[] = {"/bin/sh", "-c", NULL, NULL};

/* os.execute([command]) */
static int shell_execute(lua_State *L)
{
    const char *command = luaL_optstring(L, 1, NULL);
    if (!command) {
        lua_pushboolean(L, access("/bin/sh", X_OK) == 0);
        return 1;
    }
    shell_argv[2] = (char *)command;
    gx_run_result result;
    gx_error error;
    int failed = gx_process_run(shell_argv, &shell_options, &result, &error);
    shell_argv[2] = NULL;
    if (failed) {
        luaL_pushfail(L);
        lua_pushstring(L, error.message);
        lua_pushinteger(L, 127);
        return 3;
    }
    return push_ended(L, &result);
}

/* The stream's close (file:close(), io.close, the garbage collector): the pipe closed, then the
   command waited for. */
static int shell_close(lua_State *L)
{
    shell_stream *stream = (shell_stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
    fclose(stream->stream.f);
    gx_run_result result;
    gx_error error;
    gx_process_finish(&stream->started, &shell_options, &result, &error);
    return push_ended(L, &result);
}

/* io.popen(command [, mode]) */
static int shell_popen(lua_State *L)
{
    const char *command = luaL_checkstring(L, 1);
    const char *mode = luaL_optstring(L, 2, "r");
    luaL_argcheck(L, (mode[0] == 'r' || mode[0] == 'w') && mode[1] == 0, 2, "invalid mode");
    int reading = mode[0] == 'r';
    shell_stream *stream = (shell_stream *)lua_newuserdatauv(L, sizeof *stream, 0);
    stream->stream.f = NULL;
    stream->stream.closef = NULL; /* closed, for the garbage collector, until it is open */
    luaL_setmetatable(L, LUA_FILEHANDLE);
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return luaL_fileresult(L, 0, command);
    int ours = reading ? pipe_fds[0] : pipe_fds[1], theirs = reading ? pipe_fds[1] : pipe_fds[0];
    shell_argv[2] = (char *)command;
    gx_error error;
    int failed = gx_process_start(shell_argv, &shell_options, reading ? -1 : theirs, reading ? theirs : -1,
                                  &stream->started, &error);
    shell_argv[2] = NULL;
    close(theirs);
    if (failed) {
        close(ours);
        luaL_pushfail(L);
        lua_pushstring(L, error.message);
        return 2;
    }
    stream->stream.f = fdopen(ours, mode);
    if (!stream->stream.f) {
        close(ours);
        gx_run_result result;
        gx_process_finish(&stream->started, &shell_options, &result, &error);
        return luaL_fileresult(L, 0, command);
    }
    stream->stream.closef = shell_close;
    return 1;
}

void l_open_shell(lua_State *L)
{
    lua_getglobal(L, "os");
    if (lua_istable(L, -1)) {
        lua_pushcfunction(L, shell_execute);
        lua_setfield(L, -2, "execute");
    }
    lua_pop(L, 1);
    lua_getglobal(L, "io");
    if (lua_istable(L, -1)) {
        lua_pushcfunction(L, shell_popen);
        lua_setfield(L, -2, "popen");
    }
    lua_pop(L, 1);
}
