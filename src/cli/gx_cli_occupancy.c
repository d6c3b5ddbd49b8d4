/* `gpuexp occupancy`: the occupancy calculator as CSV on stdout, one row per combination (the command
   line is read by lua/gpuexp/commands/occupancy.lua). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "gx_cli.h"
#include "gx_occupancy.h"

#define MAX_VALUES 4096

static void print_limits(const gx_arch_limits *a)
{
    printf("%s,%d.%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,", a->arch, a->cc_major, a->cc_minor,
           a->max_warps_per_sm, a->max_threads_per_sm, a->max_blocks_per_sm, a->max_threads_per_block,
           a->registers_per_sm, a->registers_per_block, a->register_allocation_unit, a->max_registers_per_thread,
           a->shared_per_sm_bytes, a->shared_per_block_bytes, a->shared_per_block_optin_bytes,
           a->reserved_shared_per_block_bytes, a->shared_allocation_unit_bytes,
           a->cc_major >= 9 ? a->barriers_per_block_slot : 0);
    for (int i = 0; i < a->carveout_count; i++)
        printf("%s%d", i ? " " : "\"", a->carveouts_kib[i]);
    printf("\"\n");
}

static void print_limit(int value)
{
    if (value == GX_UNLIMITED)
        printf(",");
    else
        printf(",%d", value);
}

/* What the command line asks for, as the catalog's types gave it (lua/gpuexp/commands/occupancy.lua):
   the architectures, the values of --block, --registers, --shared and --barriers, the carveout
   (-1 max, -2 driver, else KiB), --limits. */
static const char *const value_names[4] = {"block", "registers", "shared", "barriers"};
struct occupancy_request {
    const gx_arch_limits *archs[32];
    int arch_count, counts[4], carveout, limits;
    int *values[4];
};

/* A field of whole numbers (a list), into values; its count. */
static int read_values(lua_State *L, const char *key, int *values, int max)
{
    int count = 0;
    if (lua_getfield(L, 1, key) == LUA_TTABLE)
        for (lua_Integer i = 1; count < max && lua_rawgeti(L, -1, i) == LUA_TNUMBER; i++, lua_pop(L, 1))
            values[count++] = (int)lua_tointeger(L, -1);
    lua_settop(L, 1);
    return count;
}

/* Reads the fields into r (the values into static arrays). */
static void read_request(lua_State *L, struct occupancy_request *r)
{
    static int values[4][MAX_VALUES];
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "limits");
    r->limits = lua_toboolean(L, -1);
    lua_getfield(L, 1, "carveout");
    r->carveout = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : -1;
    lua_settop(L, 1);
    if (lua_getfield(L, 1, "arch") == LUA_TTABLE)
        for (lua_Integer i = 1; r->arch_count < 32 && lua_rawgeti(L, -1, i) == LUA_TSTRING; i++, lua_pop(L, 1))
            if (!(r->archs[r->arch_count++] = gx_arch_find(lua_tostring(L, -1))))
                luaL_error(L, "internal: the architecture '%s' passed the command line's check", lua_tostring(L, -1));
    lua_settop(L, 1);
    for (int k = 0; k < 4; k++) {
        r->values[k] = values[k];
        r->counts[k] = read_values(L, value_names[k], values[k], MAX_VALUES);
    }
}

/* One CSV row of an architecture and a combination; GX_OK, or the model's refusal in *error. With
   print 0 nothing is printed: every row is checked before the header is. */
static int print_row(const gx_arch_limits *arch, const gx_occupancy_input *in, int print, gx_error *error)
{
    gx_occupancy_result o;
    if (gx_occupancy_compute(arch, in, &o, error))
        return error->kind;
    if (!print)
        return GX_OK;
    char limiter[64];
    gx_limiter_names(o.limiters, limiter, sizeof limiter);
    printf("%s,%d,%d,%d,%d", arch->arch, in->block_size, in->registers, in->static_shared_bytes, in->barriers);
    print_limit(o.limit_warps);
    print_limit(o.limit_blocks);
    print_limit(o.limit_registers);
    print_limit(o.limit_shared);
    print_limit(o.limit_barriers);
    printf(",%d,%d,%d,%.2f,%s,%d,%d,%d\n", o.blocks_per_sm, o.active_warps, arch->max_warps_per_sm, o.occupancy_pct,
           limiter, o.shared_config_bytes, o.allocated_shared_per_block_bytes, o.allocated_registers_per_block);
    return GX_OK;
}

/* Every combination of every architecture, a row each (print 0: checked only); GX_OK or the first
   refusal in *error. */
static int each_row(const struct occupancy_request *r, int print, gx_error *error)
{
    for (int a = 0; a < r->arch_count; a++)
        for (int b = 0; b < r->counts[0]; b++)
            for (int g = 0; g < r->counts[1]; g++)
                for (int s = 0; s < r->counts[2]; s++)
                    for (int n = 0; n < r->counts[3]; n++) {
                        gx_occupancy_input in = {r->values[0][b], r->values[1][g], r->values[2][s], 0,
                                                 r->values[3][n], r->carveout};
                        if (print_row(r->archs[a], &in, print, error))
                            return error->kind;
                    }
    return GX_OK;
}

int gx_cli_occupancy(lua_State *L)
{
    static struct occupancy_request r;
    memset(&r, 0, sizeof r);
    read_request(L, &r);
    if (r.limits) {
        printf("arch,compute_capability,max_warps_per_sm,max_threads_per_sm,max_blocks_per_sm,max_threads_per_block,"
               "registers_per_sm,registers_per_block,register_allocation_unit,max_registers_per_thread,"
               "shared_per_sm_bytes,shared_per_block_bytes,shared_per_block_optin_bytes,"
               "reserved_shared_per_block_bytes,shared_allocation_unit_bytes,barriers_per_block_slot,carveouts_kib\n");
        for (int k = 0; r.arch_count ? k < r.arch_count : gx_arch_at(k) != NULL; k++)
            print_limits(r.arch_count ? r.archs[k] : gx_arch_at(k));
        return 0;
    }
    gx_error error;
    if (each_row(&r, 0, &error)) /* a refused combination is said before any line is printed */
        return gx_cli_raise(L, &error, GX_ERR_USAGE);
    printf("arch,block_size,registers,shared_bytes,barriers,limit_warps,limit_blocks,limit_registers,limit_shared,"
           "limit_barriers,blocks_per_sm,active_warps,max_warps,occupancy_pct,limiter,shared_config_bytes,"
           "allocated_shared_bytes,allocated_registers_per_block\n");
    each_row(&r, 1, &error);
    return 0;
}
