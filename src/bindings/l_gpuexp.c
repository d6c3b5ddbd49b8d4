/* The gpuexp module table: functions that belong to no type, and the embedded Lua library. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <nvtx3/nvToolsExt.h>

#include "gx_cache.h"
#include "gx_files.h"
#include "gx_driver.h"
#include "gx_nvrtc.h"
#include "gx_stats.h"
#include "gx_cupti.h"
#include "gx_db.h"
#include "gx_paths.h"
#include "gx_suggest.h"
#include "l_util.h"
#include "l_gpuexp.h"
#include "l_searcher.h"

int luaopen_cjson(lua_State *L); /* lua-cjson */

/* gpuexp.stats(list_of_numbers [, unit_suffix]) -> {min, median, mean, stddev, noise_pct, ...} */
static int gpuexp_stats(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *unit = luaL_optstring(L, 2, "");
    size_t n = (size_t)lua_rawlen(L, 1);
    double *samples = lua_newuserdatauv(L, sizeof(double) * (n ? n : 1), 0);
    for (size_t i = 0; i < n; i++) {
        if (lua_rawgeti(L, 1, (lua_Integer)i + 1) != LUA_TNUMBER)
            return l_raisef(L, GX_ERR_USAGE, "stats: element %zu is %s, not a number", i + 1, luaL_typename(L, -1));
        samples[i] = lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
    l_push_stats(L, samples, n, unit);
    return 1;
}

/* gpuexp.hash(string) -> 32 hex digits (XXH3-128), for script hashes and keys. */
static int gpuexp_hash(lua_State *L)
{
    size_t size;
    const char *data = luaL_checklstring(L, 1, &size);
    XXH128_hash_t hash = XXH3_128bits(data, size);
    char hex[33];
    snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)hash.high64, (unsigned long long)hash.low64);
    lua_pushstring(L, hex);
    return 1;
}

/* gpuexp.clock(["realtime"]) -> seconds on the monotonic clock, or since the epoch. */
static int gpuexp_clock(lua_State *L)
{
    static const char *const clocks[] = {"monotonic", "realtime", NULL};
    int which = luaL_checkoption(L, 1, "monotonic", clocks);
    struct timespec t;
    clock_gettime(which ? CLOCK_REALTIME : CLOCK_MONOTONIC, &t);
    lua_pushnumber(L, (double)t.tv_sec + (double)t.tv_nsec * 1e-9);
    return 1;
}

/* gpuexp.sleep(seconds): waits (the measurement policy's recovery from a throttled batch). */
static int gpuexp_sleep(lua_State *L)
{
    double seconds = luaL_checknumber(L, 1);
    if (seconds > 0) {
        struct timespec wait = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
        while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {
        }
    }
    return 0;
}

/* gpuexp._profiler_start() / _profiler_stop(): cuProfilerStart and cuProfilerStop, the range
   `ncu --profile-from-start off` and `nsys --capture-range=cudaProfilerApi` capture (gpuexp profile). */
static int profiler_call(lua_State *L, int start)
{
    gx_error error;
    const gx_driver *d = gx_driver_get(&error);
    if (!d || GX_CU(&error, start ? d->cuProfilerStart() : d->cuProfilerStop()))
        return l_raise(L, &error);
    return 0;
}
static int gpuexp_profiler_start(lua_State *L)
{
    return profiler_call(L, 1);
}
static int gpuexp_profiler_stop(lua_State *L)
{
    return profiler_call(L, 0);
}

/* gpuexp._range_push(name) / _range_pop(): an NVTX range (named in a profiler's timeline); NVTX's
   header-only API costs a test of a pointer when no tool is attached. */
static int gpuexp_range_push(lua_State *L)
{
    nvtxRangePushA(luaL_checkstring(L, 1));
    return 0;
}
static int gpuexp_range_pop(lua_State *L)
{
    (void)L;
    nvtxRangePop();
    return 0;
}

/* gpuexp.versions([loaded_only]) -> {gpuexp, built_with_cuda, driver_cuda, nvrtc, cupti_api, lua,
   sqlite}; the CUDA pieces not found are absent. loaded_only: NVRTC and CUPTI only when this
   process has loaded them already (a run's metadata: loading them costs ~10 ms and ~35 MB). */
static int gpuexp_versions(lua_State *L)
{
    int loaded_only = lua_toboolean(L, 1);
    lua_createtable(L, 0, 7);
    l_set_string(L, "gpuexp", GX_VERSION);
    l_set_cuda_versions(L, loaded_only);
    gx_error error;
    unsigned cupti_api;
    if ((!loaded_only || gx_cupti_loaded()) && gx_cupti_version(&cupti_api, &error) == GX_OK) {
        lua_pushinteger(L, (lua_Integer)cupti_api);
        lua_setfield(L, -2, "cupti_api");
    }
    l_set_string(L, "lua", LUA_RELEASE);
    l_set_string(L, "sqlite", gx_db_sqlite_version());
    return 1;
}

/* gpuexp.error(kind, message): raises a gpuexp error value from Lua code (kind as in exit codes). */
static int gpuexp_error(lua_State *L)
{
    static const char *const kinds[] = {"usage", "driver", "compile",     "system", "write",
                                        "busy",  "option", "interrupted", NULL};
    static const enum gx_error_kind values[] = {GX_ERR_USAGE, GX_ERR_DRIVER, GX_ERR_COMPILE, GX_ERR_SYSTEM,
                                                GX_ERR_WRITE, GX_ERR_BUSY,   GX_ERR_OPTION,  GX_ERR_INTERRUPTED};
    int kind = luaL_checkoption(L, 1, NULL, kinds);
    int level = (int)luaL_optinteger(L, 3, 1);
    l_push_where(L, level);
    lua_pushstring(L, luaL_checkstring(L, 2));
    lua_concat(L, 2);
    l_push_error(L, values[kind], lua_tostring(L, -1));
    return lua_error(L);
}

/* gpuexp.mkdir(path): creates the folder and its parents. */
static int gpuexp_mkdir(lua_State *L)
{
    gx_error error;
    if (gx_make_directories(luaL_checkstring(L, 1), &error))
        return l_raise(L, &error);
    return 0;
}

/* gpuexp.cache_directory() -> the folder gpuexp caches in (cubins, calibrations), or nil. */
static int gpuexp_cache_directory(lua_State *L)
{
    char directory[4096];
    gx_cache_directory(directory, sizeof directory);
    if (directory[0])
        lua_pushstring(L, directory);
    else
        lua_pushnil(L);
    return 1;
}

/* gpuexp._truncate(path, bytes) -> true, or nil and why: cuts a file back to its last whole row
   after a failed write (a full disk), so no cut row is left behind. */
static int gpuexp_truncate(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Integer bytes = luaL_checkinteger(L, 2);
    if (bytes < 0 || truncate(path, (off_t)bytes) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, bytes < 0 ? "negative size" : strerror(errno));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* gpuexp._realpath(path) -> the absolute path with links resolved, or nil when it does not exist */
static int gpuexp_realpath(lua_State *L)
{
    char resolved[PATH_MAX];
    if (!realpath(luaL_checkstring(L, 1), resolved))
        return 0;
    lua_pushstring(L, resolved);
    return 1;
}

/* gpuexp._is_directory(path) -> true when path names an existing directory */
static int gpuexp_is_directory(lua_State *L)
{
    struct stat info;
    lua_pushboolean(L, stat(luaL_checkstring(L, 1), &info) == 0 && S_ISDIR(info.st_mode));
    return 1;
}

/* gpuexp._did_you_mean(word, names) -> " (did you mean 'x'?)" naming the names closest to word (up
   to 3, only plausible ones), or "": every suggestion of the Lua side, with gx_suggest. */
static int gpuexp_did_you_mean(lua_State *L)
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

/* gpuexp._set_run{device =, offline_arch =, script_dir =}: what the bindings read of the run
   (gpuexp.device()'s default GPU, the plan's architecture, the folder a kernel file is found from),
   set by the run command before the script runs. */
static int gpuexp_set_run(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "device");
    lua_setfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_DEFAULT_DEVICE);
    lua_getfield(L, 1, "offline_arch");
    lua_setfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_OFFLINE_ARCH);
    lua_getfield(L, 1, "script_dir");
    lua_setfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_SCRIPT_DIR);
    return 0;
}

/* gpuexp._find_experiment(name) -> the path of a shipped experiment ("occupancy_sweep",
   "nightly/kernels", with or without .lua), or nil */
static int gpuexp_find_experiment(lua_State *L)
{
    char path[PATH_MAX];
    if (!gx_find_experiment(luaL_checkstring(L, 1), path, sizeof path))
        return 0;
    lua_pushstring(L, path);
    return 1;
}

/* gpuexp._experiment_names() -> the shipped experiments' names, as gpuexp runs them */
static int gpuexp_experiment_names(lua_State *L)
{
    enum { SLOT = 128, MAX = 256 };
    static char names[MAX][SLOT];
    int count = gx_experiment_names(&names[0][0], SLOT, MAX);
    lua_createtable(L, count, 0);
    for (int i = 0; i < count; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* gpuexp._directory_entries(path) -> the names in a folder (not . and ..), unsorted, or nil and why */
static int gpuexp_directory_entries(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    DIR *directory = opendir(path);
    if (!directory) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        return 2;
    }
    lua_newtable(L);
    int n = 0;
    for (struct dirent *entry; (entry = readdir(directory));) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        lua_pushstring(L, entry->d_name);
        lua_rawseti(L, -2, ++n);
    }
    closedir(directory);
    return 1;
}

/* gpuexp._isatty(fd) -> whether standard input (0), output (1) or error (2) is a terminal */
static int gpuexp_isatty(lua_State *L)
{
    lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
    return 1;
}

/* gpuexp.hostname() -> this machine's name */
static int gpuexp_hostname(lua_State *L)
{
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) != 0)
        return 0;
    lua_pushstring(L, name);
    return 1;
}

void l_open_gpuexp(lua_State *L)
{
    static const luaL_Reg functions[] = {{"stats", gpuexp_stats},
                                         {"hash", gpuexp_hash},
                                         {"clock", gpuexp_clock},
                                         {"versions", gpuexp_versions},
                                         {"sleep", gpuexp_sleep},
                                         {"_profiler_start", gpuexp_profiler_start},
                                         {"_profiler_stop", gpuexp_profiler_stop},
                                         {"_range_push", gpuexp_range_push},
                                         {"_range_pop", gpuexp_range_pop},
                                         {"error", gpuexp_error},
                                         {"mkdir", gpuexp_mkdir},
                                         {"cache_directory", gpuexp_cache_directory},
                                         {"_is_directory", gpuexp_is_directory},
                                         {"_truncate", gpuexp_truncate},
                                         {"_realpath", gpuexp_realpath},
                                         {"hostname", gpuexp_hostname},
                                         {"_did_you_mean", gpuexp_did_you_mean},
                                         {"_set_run", gpuexp_set_run},
                                         {"_find_experiment", gpuexp_find_experiment},
                                         {"_experiment_names", gpuexp_experiment_names},
                                         {"_directory_entries", gpuexp_directory_entries},
                                         {"_isatty", gpuexp_isatty},
                                         {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
    l_open_files(L);
    l_set_string(L, "version", GX_VERSION);
    char data[PATH_MAX];
    if (gx_data_directory(data, sizeof data)) /* gpuexp.data_dir: the shipped experiments and kernels */
        l_set_string(L, "data_dir", data);
    char executable[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length > 0) { /* gpuexp.executable: this binary, for commands that run it again (nightly) */
        executable[length] = 0;
        l_set_string(L, "executable", executable);
    }
    l_open_error(L);
    l_open_device(L);
    l_open_buffer(L);
    l_open_program(L);
    l_open_global(L); /* program:global, program:globals: after the Program type */
    l_open_compile(L);
    l_open_kernel(L);
    l_open_scalar(L);
    l_open_bytes(L);
    l_open_tensor_map(L);
    l_open_stream(L);
    l_open_sequence(L);
    l_open_occupancy(L);
    l_open_metrics(L);
    l_open_process(L);
    l_open_shell(L);
    l_open_db(L);
    l_open_collect(L);
    l_open_trace(L);
    l_open_lines(L);
    /* lua-cjson (Debian's, linked statically) for JSON: require("cjson") */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_cjson);
    lua_setfield(L, -2, "cjson");
    lua_pop(L, 1);
    l_install_searcher(L);
}
