/* Metric names without a launch: what a chip offers, whether a name is valid (with the closest
   names when it is not), and how many replay passes a list needs. Works with no GPU, by chip. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "gx_metric.h"
#include "gx_profiler.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

/* Host objects by chip name, opened on first use and kept for the process. */
static gx_metric_host *host_for(lua_State *L, int chip_index)
{
    static struct {
        char chip[64];
        gx_metric_host *host;
    } cache[8];
    gx_error error;
    const char *chip = NULL;
    if (!lua_isnoneornil(L, chip_index)) {
        chip = luaL_checkstring(L, chip_index);
    } else {
        int device_index;
        l_device *device = l_default_device(L, &device_index);
        if (l_device_profiler(device, &error))
            l_raise(L, &error);
        return gx_profiler_host(device->profiler);
    }
    for (int i = 0; i < 8; i++)
        if (cache[i].host && strcmp(cache[i].chip, chip) == 0)
            return cache[i].host;
    gx_metric_host *host;
    if (gx_metric_host_open(&host, chip, &error))
        l_raise(L, &error);
    for (int i = 0; i < 8; i++)
        if (!cache[i].host) {
            snprintf(cache[i].chip, sizeof cache[i].chip, "%s", chip);
            cache[i].host = host;
            return host;
        }
    return host; /* more than 8 chips in one process: not cached */
}

static const char *const type_names[] = {"counter", "ratio", "throughput"};

/* gpuexp.metric_info(name [, chip]) -> {type, unit, hardware_unit, description}; raises with the
   closest valid names when the name is not valid */
static int metric_info(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    gx_metric_host *host = host_for(L, 2);
    gx_metric_info info;
    gx_error error;
    if (gx_metric_check(host, name, &info, &error))
        return l_raise(L, &error);
    lua_createtable(L, 0, 5);
    l_set_string(L, "name", name);
    l_set_string(L, "chip", gx_metric_host_chip(host));
    l_set_string(L, "type", info.type >= 0 && info.type < 3 ? type_names[info.type] : "unknown");
    if (info.dimension_unit)
        l_set_string(L, "unit", info.dimension_unit);
    if (info.hardware_unit)
        l_set_string(L, "hardware_unit", info.hardware_unit);
    if (info.description)
        l_set_string(L, "description", info.description);
    return 1;
}

/* gpuexp.metric_passes(names [, chip]) -> replay passes the list needs on that chip */
static int metric_passes(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    gx_metric_host *host = host_for(L, 2);
    int count = (int)lua_rawlen(L, 1);
    const char **names = lua_newuserdatauv(L, sizeof(char *) * (size_t)(count + 1), 0);
    for (int i = 0; i < count; i++) {
        if (lua_rawgeti(L, 1, i + 1) != LUA_TSTRING)
            return l_raisef(L, GX_ERR_USAGE, "metric_passes: names[%d] must be a string", i + 1);
        names[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    size_t passes;
    gx_error error;
    if (gx_metric_passes(host, names, count, &passes, &error))
        return l_raise(L, &error);
    lua_pushinteger(L, (lua_Integer)passes);
    return 1;
}

struct list_state {
    lua_State *L;
    int n;
};

static void list_one(void *user, const char *name, int type)
{
    struct list_state *state = user;
    lua_createtable(state->L, 0, 2);
    l_set_string(state->L, "name", name);
    l_set_string(state->L, "type", type >= 0 && type < 3 ? type_names[type] : "unknown");
    lua_rawseti(state->L, -2, ++state->n);
}

/* gpuexp.metric_names([chip]) -> {{name=, type=}, ...}: every base metric of the chip */
static int metric_names(lua_State *L)
{
    gx_metric_host *host = host_for(L, 1);
    lua_newtable(L);
    struct list_state state = {L, 0};
    gx_error error;
    if (gx_metric_each(host, list_one, &state, &error))
        return l_raise(L, &error);
    return 1;
}

static int metric_chips(lua_State *L)
{
    char chips[4096];
    gx_error error;
    if (gx_metric_chips(chips, sizeof chips, &error))
        return l_raise(L, &error);
    lua_newtable(L);
    int n = 0;
    for (char *save = NULL, *chip = strtok_r(chips, ", ", &save); chip; chip = strtok_r(NULL, ", ", &save)) {
        lua_pushstring(L, chip);
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

void l_open_metrics(lua_State *L)
{
    static const luaL_Reg functions[] = {{"metric_info", metric_info},
                                         {"metric_passes", metric_passes},
                                         {"metric_names", metric_names},
                                         {"metric_chips", metric_chips},
                                         {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
