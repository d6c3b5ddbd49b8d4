/* `gpuexp metrics`: the metrics a GPU or chip offers, and checks of metric names (no launch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "gx_cli.h"
#include "gx_metric.h"
#include "gx_profiler.h"

static void print_metric(void *user, const char *name, int type)
{
    static const char *const types[] = {"counter", "ratio", "throughput"};
    (void)user;
    printf("%s,%s\n", name, type >= 0 && type < 3 ? types[type] : "unknown");
}

/* What the command line asks for, as the catalog's types gave it (lua/gpuexp/commands/metrics.lua,
   which also expands the presets: each name checked is {name =, preset =}). */
struct metrics_request {
    const char *chip;
    int device_ordinal, list, check, chips;
    const char *names[256], *presets[256];
    int name_count;
};

static int flag(lua_State *L, const char *key)
{
    lua_getfield(L, 1, key);
    int on = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return on;
}

/* Reads the fields into r (its strings are kept alive by the table at index 1). */
static void read_request(lua_State *L, struct metrics_request *r)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    r->list = flag(L, "list");
    r->check = flag(L, "check");
    r->chips = flag(L, "chips");
    lua_getfield(L, 1, "chip");
    r->chip = lua_tostring(L, -1);
    lua_getfield(L, 1, "device");
    r->device_ordinal = (int)lua_tointeger(L, -1);
    lua_settop(L, 1);
    if (lua_getfield(L, 1, "names") == LUA_TTABLE)
        for (lua_Integer i = 1; r->name_count < 256 && lua_rawgeti(L, -1, i) == LUA_TTABLE; i++, lua_pop(L, 3)) {
            lua_getfield(L, -1, "name");
            lua_getfield(L, -2, "preset");
            r->names[r->name_count] = lua_tostring(L, -2);
            r->presets[r->name_count++] = lua_tostring(L, -1);
        }
    lua_settop(L, 1);
}

/* The names checked: a preset's names as the preset collects them (the names this chip lacks left
   out, as kernel:metrics leaves them out), other names as given. */
static int available_names(gx_metric_host *host, const struct metrics_request *r, const char **checked)
{
    int count = 0;
    gx_error error;
    for (int i = 0; i < r->name_count; i++) {
        if (r->presets[i] && gx_metric_check(host, r->names[i], NULL, &error) != GX_OK) {
            fprintf(stderr, "gpuexp metrics: preset %s: %s is not on %s (left out, as the preset does)\n",
                    r->presets[i], r->names[i], gx_metric_host_chip(host));
            continue;
        }
        checked[count++] = r->names[i];
    }
    return count;
}

/* --check: each name's type, unit and description, and the replay passes of them all; 1 when every
   name is valid, 0 when one is not (each said). */
static int check_names(gx_metric_host *host, const struct metrics_request *r)
{
    int valid = 1;
    gx_error error;
    const char *names[256];
    int name_count = available_names(host, r, names);
    printf("name,type,unit,description\n");
    for (int i = 0; i < name_count; i++) {
        gx_metric_info info;
        if (gx_metric_check(host, names[i], &info, &error)) {
            fprintf(stderr, "gpuexp metrics: %s\n", error.message);
            valid = 0; /* the command's exit 1: a metric checked is not valid */
            continue;
        }
        static const char *const types[] = {"counter", "ratio", "throughput"};
        printf("%s,%s,%s,\"%s\"\n", names[i], info.type >= 0 && info.type < 3 ? types[info.type] : "unknown",
               info.dimension_unit ? info.dimension_unit : "", info.description ? info.description : "");
    }
    size_t passes;
    if (valid && gx_metric_passes(host, names, name_count, &passes, &error) == GX_OK)
        fprintf(stderr, "%d metric(s) on %s: %zu replay pass(es)\n", name_count, gx_metric_host_chip(host), passes);
    return valid;
}

int gx_cli_metrics(lua_State *L)
{
    static struct metrics_request r;
    memset(&r, 0, sizeof r);
    read_request(L, &r);
    gx_error error;
    if (r.chips) {
        char text[4096];
        if (gx_metric_chips(text, sizeof text, &error))
            return gx_cli_raise(L, &error, GX_ERR_DRIVER);
        printf("%s\n", text);
        lua_pushboolean(L, 1);
        return 1;
    }
    gx_metric_host *host = NULL;
    gx_profiler *profiler = NULL;
    gx_device device;
    if (r.chip) {
        if (gx_metric_host_open(&host, r.chip, &error))
            return gx_cli_raise(L, &error, GX_ERR_DRIVER);
    } else {
        if (gx_device_open(&device, r.device_ordinal, &error) || gx_profiler_open(&profiler, &device, &error)) {
            return gx_cli_raise(L, &error, GX_ERR_DRIVER); /* no GPU, or no CUPTI: exit 3 */
        }
        host = gx_profiler_host(profiler);
    }
    int valid = 1, failed = 0;
    if (r.list) {
        printf("name,type\n");
        failed = gx_metric_each(host, print_metric, NULL, &error);
    } else {
        valid = check_names(host, &r);
    }
    if (profiler)
        gx_profiler_close(profiler);
    else
        gx_metric_host_close(host);
    if (failed)
        return gx_cli_raise(L, &error, GX_ERR_DRIVER);
    lua_pushboolean(L, valid);
    return 1;
}
