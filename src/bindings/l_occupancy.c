/* gpuexp.occupancy{...} and gpuexp.arch_limits(arch): the occupancy model for scripts, and the
   per-limit table pushed for kernel:occupancy. */
#include <string.h>

#include "gx_occupancy.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

static void set_limit(lua_State *L, const char *key, int value)
{
    if (value != GX_UNLIMITED) /* no limit: the field stays nil (an empty CSV cell) */
        l_set_integer(L, key, value);
}

void l_push_occupancy(lua_State *L, const gx_arch_limits *arch, const gx_occupancy_input *in,
                      const gx_occupancy_result *r)
{
    lua_createtable(L, 0, 20);
    l_set_string(L, "arch", arch->arch);
    l_set_integer(L, "block_size", in->block_size);
    l_set_integer(L, "registers", in->registers);
    l_set_integer(L, "shared_bytes", (lua_Integer)in->static_shared_bytes + in->dynamic_shared_bytes);
    l_set_integer(L, "barriers", in->barriers);
    set_limit(L, "limit_warps", r->limit_warps);
    set_limit(L, "limit_blocks", r->limit_blocks);
    set_limit(L, "limit_registers", r->limit_registers);
    set_limit(L, "limit_shared", r->limit_shared);
    set_limit(L, "limit_barriers", r->limit_barriers);
    l_set_integer(L, "blocks_per_sm", r->blocks_per_sm);
    l_set_integer(L, "active_blocks_per_sm", r->blocks_per_sm);
    l_set_integer(L, "active_warps", r->active_warps);
    l_set_integer(L, "active_warps_per_sm", r->active_warps);
    l_set_integer(L, "max_warps_per_sm", arch->max_warps_per_sm);
    l_set_number(L, "occupancy_pct", r->occupancy_pct);
    char limiter[64];
    gx_limiter_names(r->limiters, limiter, sizeof limiter);
    l_set_string(L, "limiter", limiter);
    l_set_integer(L, "shared_config_bytes", r->shared_config_bytes);
    l_set_integer(L, "allocated_shared_bytes", r->allocated_shared_per_block_bytes);
    l_set_integer(L, "allocated_registers_per_block", r->allocated_registers_per_block);
    l_set_string(L, "source", "model");
}

const gx_arch_limits *l_check_arch(lua_State *L, const char *arch)
{
    const gx_arch_limits *limits = gx_arch_find(arch);
    if (!limits) {
        char known[256] = "";
        for (int i = 0; gx_arch_at(i); i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", gx_arch_at(i)->arch);
        l_raisef(L, GX_ERR_USAGE, "no occupancy limits for architecture '%s' (known: %s)", arch, known);
    }
    return limits;
}

/* carveout = "max" (default) | "driver" | KiB */
int l_carveout_option(lua_State *L, int table)
{
    int type = lua_getfield(L, table, "carveout");
    int carveout = -1;
    if (type == LUA_TSTRING && strcmp(lua_tostring(L, -1), "driver") == 0)
        carveout = -2;
    else if (type == LUA_TSTRING && strcmp(lua_tostring(L, -1), "max") == 0)
        carveout = -1;
    else if (type == LUA_TNUMBER && lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0 && lua_tointeger(L, -1) < 1 << 20)
        carveout = (int)lua_tointeger(L, -1);
    else if (type != LUA_TNIL)
        l_raisef(L, GX_ERR_USAGE, "carveout must be \"max\", \"driver\" or a size in KiB");
    lua_pop(L, 1);
    return carveout;
}

/* gpuexp.occupancy{arch=, block=, registers=, shared=, barriers=, carveout=} */
static int gpuexp_occupancy(lua_State *L)
{
    static const char *const allowed[] = {"arch", "block", "registers", "shared", "barriers", "carveout", NULL};
    l_check_options(L, 1, "occupancy", allowed);
    const char *arch_name = l_opt_string_field(L, 1, "arch", l_offline_arch(L));
    if (!arch_name)
        return l_raisef(L, GX_ERR_USAGE, "occupancy: 'arch' is required (e.g. \"sm_90\")");
    const gx_arch_limits *arch = l_check_arch(L, arch_name);
    lua_Integer block, registers, shared, barriers;
    if (!l_opt_integer_field(L, 1, "block", 0, &block))
        return l_raisef(L, GX_ERR_USAGE, "occupancy: 'block' is required");
    l_opt_integer_field(L, 1, "registers", 0, &registers);
    l_opt_integer_field(L, 1, "shared", 0, &shared);
    l_opt_integer_field(L, 1, "barriers", 0, &barriers);
    if (block > 1 << 20 || registers > 1 << 20 || shared > 1 << 30 || barriers > 1 << 20 || shared < 0)
        return l_raisef(L, GX_ERR_USAGE, "occupancy: values out of range");
    gx_occupancy_input in = {(int)block, (int)registers, (int)shared, 0, (int)barriers, l_carveout_option(L, 1)};
    gx_occupancy_result r;
    gx_error error;
    if (gx_occupancy_compute(arch, &in, &r, &error))
        return l_raise(L, &error);
    l_push_occupancy(L, arch, &in, &r);
    return 1;
}

/* gpuexp.arch_limits(arch) -> the table row; gpuexp.arch_limits() -> every architecture's name */
static int gpuexp_arch_limits(lua_State *L)
{
    if (lua_isnoneornil(L, 1)) {
        lua_newtable(L);
        for (int i = 0; gx_arch_at(i); i++) {
            lua_pushstring(L, gx_arch_at(i)->arch);
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    }
    const gx_arch_limits *a = l_check_arch(L, luaL_checkstring(L, 1));
    lua_createtable(L, 0, 20);
    l_set_string(L, "arch", a->arch);
    lua_pushfstring(L, "%d.%d", a->cc_major, a->cc_minor);
    lua_setfield(L, -2, "compute_capability");
    l_set_integer(L, "max_warps_per_sm", a->max_warps_per_sm);
    l_set_integer(L, "max_threads_per_sm", a->max_threads_per_sm);
    l_set_integer(L, "max_blocks_per_sm", a->max_blocks_per_sm);
    l_set_integer(L, "max_threads_per_block", a->max_threads_per_block);
    l_set_integer(L, "registers_per_sm", a->registers_per_sm);
    l_set_integer(L, "registers_per_block", a->registers_per_block);
    l_set_integer(L, "register_allocation_unit", a->register_allocation_unit);
    l_set_integer(L, "max_registers_per_thread", a->max_registers_per_thread);
    l_set_integer(L, "shared_per_sm_bytes", a->shared_per_sm_bytes);
    l_set_integer(L, "shared_per_block_bytes", a->shared_per_block_bytes);
    l_set_integer(L, "shared_per_block_optin_bytes", a->shared_per_block_optin_bytes);
    l_set_integer(L, "reserved_shared_per_block_bytes", a->reserved_shared_per_block_bytes);
    l_set_integer(L, "shared_allocation_unit_bytes", a->shared_allocation_unit_bytes);
    l_set_integer(L, "warp_size", 32);
    lua_createtable(L, a->carveout_count, 0);
    for (int i = 0; i < a->carveout_count; i++) {
        lua_pushinteger(L, a->carveouts_kib[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "carveouts_kib");
    return 1;
}

void l_open_occupancy(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"occupancy", gpuexp_occupancy}, {"arch_limits", gpuexp_arch_limits}, {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
