/* Lua type gpuexp.Device: one per GPU ordinal, cached, holding the primary context. */
#include <stdio.h>
#include <string.h>

#include "gx_nvml.h"
#include "gx_profiler.h"
#include "gx_driver.h"
#include "gx_helper_kernels.h"
#include "gx_nvrtc.h"
#include "l_util.h"
#include "l_types.h"
#include "l_gpuexp.h"

#define DEVICE_CACHE "gpuexp.devices" /* registry: ordinal -> Device */

l_device *l_check_device(lua_State *L, int index)
{
    l_device *device = luaL_checkudata(L, index, GX_DEVICE_TYPE);
    if (!device->open)
        l_raisef(L, GX_ERR_USAGE, "this device was closed");
    return device;
}

/* Pushes the Device for an ordinal, opening it on first use. */
static l_device *push_device(lua_State *L, int ordinal)
{
    lua_getfield(L, LUA_REGISTRYINDEX, DEVICE_CACHE);
    if (lua_rawgeti(L, -1, ordinal) == LUA_TUSERDATA) {
        lua_remove(L, -2);
        return lua_touserdata(L, -1);
    }
    lua_pop(L, 1);
    l_device *device = lua_newuserdatauv(L, sizeof *device, 1); /* uservalue: the facts, made once */
    memset(device, 0, sizeof *device); /* released state first, so __gc is safe if open fails */
    luaL_setmetatable(L, GX_DEVICE_TYPE);
    gx_error error;
    if (gx_device_open(&device->device, ordinal, &error))
        l_raise(L, &error);
    device->open = 1;
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, ordinal);
    lua_remove(L, -2);
    return device;
}

static int default_ordinal(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, GX_REGISTRY_DEFAULT_DEVICE);
    int ordinal = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    return ordinal;
}

l_device *l_default_device(lua_State *L, int *index_out)
{
    const char *arch = l_offline_arch(L);
    if (arch)
        l_raisef(L, GX_ERR_USAGE, "this run is an offline plan for %s: there is no GPU to use", arch);
    l_device *device = push_device(L, default_ordinal(L));
    *index_out = lua_gettop(L);
    return device;
}

struct gx_helper_kernels *l_device_helper_kernels(lua_State *L, l_device *device)
{
    gx_error error;
    if (!device->helper_kernels && gx_helper_kernels_open(&device->helper_kernels, &device->device, &error))
        l_raise(L, &error);
    return device->helper_kernels;
}

/* dev:sm_clock() -> the SM clock in MHz, measured by a probe kernel (cycles over globaltimer). */
static int device_sm_clock(lua_State *L)
{
    l_device *device = l_check_device(L, 1);
    double mhz;
    gx_error error;
    if (gx_helper_kernels_sm_clock(l_device_helper_kernels(L, device), &mhz, &error))
        return l_raise(L, &error);
    lua_pushnumber(L, mhz);
    return 1;
}

int l_device_profiler(l_device *device, gx_error *error)
{
    if (device->profiler)
        return GX_OK;
    if (gx_profiler_open(&device->profiler, &device->device, error))
        return error->kind;
    if (*gx_profiler_cache_note(device->profiler))
        fprintf(stderr, "gpuexp: %s\n", gx_profiler_cache_note(device->profiler));
    return GX_OK;
}

/* dev:flush_l2(): enqueue a read of twice the L2's size (the next kernel starts cold). */
static int device_flush_l2(lua_State *L)
{
    l_device *device = l_check_device(L, 1);
    gx_error error;
    if (gx_helper_kernels_flush_l2(l_device_helper_kernels(L, device), &error))
        return l_raise(L, &error);
    return 0;
}

static int device_gc(lua_State *L)
{
    l_device *device = luaL_checkudata(L, 1, GX_DEVICE_TYPE);
    gx_profiler_close(device->profiler);
    device->profiler = NULL;
    gx_helper_kernels_close(device->helper_kernels);
    device->helper_kernels = NULL;
    if (device->open)
        gx_device_close(&device->device);
    device->open = 0;
    return 0;
}

static int device_tostring(lua_State *L)
{
    l_device *device = luaL_checkudata(L, 1, GX_DEVICE_TYPE);
    lua_pushfstring(L, "gpuexp.Device(%d: %s, sm_%d%d)", device->device.ordinal, device->device.name,
                    device->device.cc_major, device->device.cc_minor);
    return 1;
}

static int device_attribute(lua_State *L)
{
    l_device *device = l_check_device(L, 1);
    const char *name = luaL_checkstring(L, 2);
    int value;
    gx_error error;
    if (gx_device_attribute(&device->device, name, &value, &error))
        return l_raise(L, &error);
    lua_pushinteger(L, value);
    return 1;
}

static int device_attributes(lua_State *L)
{
    l_device *device = l_check_device(L, 1);
    const gx_driver *d;
    gx_error error;
    if (!(d = gx_driver_get(&error)))
        return l_raise(L, &error);
    lua_newtable(L);
    for (size_t i = 0; i < gx_device_attribute_count(); i++) {
        const char *name = gx_device_attribute_name(i);
        int value;
        /* attributes newer than the driver are left out rather than failing the whole table */
        if (d->cuDeviceGetAttribute(&value, (CUdevice_attribute)gx_device_attribute_lookup(name),
                                    device->device.handle) == CUDA_SUCCESS)
            l_set_integer(L, name, value);
    }
    return 1;
}

/* The derived facts as a table: what `gpuexp info` prints. */
static void push_facts(lua_State *L, const l_device *device)
{
    gx_device_facts f;
    gx_error error;
    if (gx_device_facts_get(&device->device, &f, &error))
        l_raise(L, &error);
    const gx_driver *d = gx_driver_get(&error);
    lua_createtable(L, 0, 32);
    l_set_integer(L, "ordinal", device->device.ordinal);
    l_set_string(L, "name", device->device.name);
    l_set_string(L, "uuid", device->device.uuid);
    l_set_string(L, "pci_bus_id", device->device.pci_bus_id);
    lua_pushfstring(L, "%d.%d", device->device.cc_major, device->device.cc_minor);
    lua_setfield(L, -2, "compute_capability");
    lua_pushfstring(L, "sm_%d%d", device->device.cc_major, device->device.cc_minor);
    lua_setfield(L, -2, "arch");
    l_set_integer(L, "memory_bytes", (lua_Integer)device->device.total_memory_bytes);
    l_set_integer(L, "sm_count", f.sm_count);
    l_set_integer(L, "sm_clock_khz", f.sm_clock_khz);
    l_set_integer(L, "memory_clock_khz", f.memory_clock_khz);
    l_set_integer(L, "memory_bus_width_bits", f.memory_bus_width_bits);
    l_set_integer(L, "l2_bytes", f.l2_bytes);
    l_set_integer(L, "shared_per_sm_bytes", f.shared_per_sm_bytes);
    l_set_integer(L, "shared_per_block_bytes", f.shared_per_block_bytes);
    l_set_integer(L, "shared_per_block_optin_bytes", f.shared_per_block_optin_bytes);
    l_set_integer(L, "reserved_shared_per_block_bytes", f.reserved_shared_per_block_bytes);
    l_set_integer(L, "registers_per_sm", f.registers_per_sm);
    l_set_integer(L, "registers_per_block", f.registers_per_block);
    l_set_integer(L, "max_threads_per_sm", f.max_threads_per_sm);
    l_set_integer(L, "max_warps_per_sm", f.max_warps_per_sm);
    l_set_integer(L, "max_blocks_per_sm", f.max_blocks_per_sm);
    l_set_integer(L, "max_threads_per_block", f.max_threads_per_block);
    l_set_integer(L, "warp_size", f.warp_size);
    l_set_integer(L, "fp32_lanes_per_sm", f.fp32_lanes_per_sm);
    l_set_number(L, "peak_dram_gbps", f.peak_dram_bytes_per_second / 1e9);
    l_set_number(L, "peak_fp32_gflops", f.peak_fp32_flops / 1e9);
    if (d)
        l_set_integer(L, "driver_cuda_version", d->version);
    l_set_cuda_versions(L, 0);
}

static int device_index(lua_State *L)
{
    l_device *device = l_check_device(L, 1);
    const char *key = luaL_checkstring(L, 2);
    if (luaL_getmetafield(L, 1, "methods") && lua_getfield(L, -1, key) != LUA_TNIL)
        return 1;
    if (strcmp(key, "facts") == 0) { /* a fresh table the caller may change */
        push_facts(L, device);
        return 1;
    }
    /* plain fields come from the facts, so dev.name, dev.sm_count, dev.arch all work; they do not
       change, so they are read from the driver once (a launch loop reads dev.sm_count often) */
    if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        push_facts(L, device);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, 1, 1);
    }
    lua_getfield(L, -1, key);
    return 1;
}

/* dev:telemetry() -> {energy_j (total since the driver loaded), power_w, temperature_c, throttle_reasons
   (names), throttle_mask, sm_clock_mhz, applications_clock_mhz, power_limit_w} as NVML reads them
   (a value NVML cannot give is absent), or nil and why (no NVML, or it does not know this GPU). */
static int device_telemetry(lua_State *L)
{
    l_device *device = l_check_device(L, 1);
    gx_telemetry t;
    gx_error error;
    if (gx_nvml_read(device->device.uuid, &t, &error)) {
        lua_pushnil(L);
        lua_pushstring(L, error.message);
        return 2;
    }
    lua_createtable(L, 0, 8);
    if (t.has_energy)
        l_set_number(L, "energy_j", (double)t.energy_mj / 1000.0);
    if (t.has_power)
        l_set_number(L, "power_w", t.power_w);
    if (t.has_temperature)
        l_set_integer(L, "temperature_c", t.temperature_c);
    if (t.has_reasons) {
        char names[256];
        gx_nvml_reason_names(t.reasons, names, sizeof names);
        l_set_string(L, "throttle_reasons", names);
        l_set_integer(L, "throttle_mask", (lua_Integer)t.reasons);
    }
    if (t.has_sm_clock)
        l_set_integer(L, "sm_clock_mhz", t.sm_clock_mhz);
    if (t.has_app_clock)
        l_set_integer(L, "applications_clock_mhz", t.app_clock_mhz);
    if (t.has_power_limit)
        l_set_number(L, "power_limit_w", t.power_limit_w);
    return 1;
}

static int device_synchronize(lua_State *L)
{
    l_device *device = l_check_device(L, 1);
    gx_error error;
    if (gx_synchronize(&device->device, &error))
        return l_raise(L, &error);
    return 0;
}

static int device_memory_info(lua_State *L)
{
    l_device *device = l_check_device(L, 1);
    gx_error error;
    const gx_driver *d = gx_driver_get(&error);
    size_t free_bytes, total_bytes;
    if (!d || gx_device_activate(&device->device, &error) || GX_CU(&error, d->cuMemGetInfo(&free_bytes, &total_bytes)))
        return l_raise(L, &error);
    lua_pushinteger(L, (lua_Integer)free_bytes);
    lua_pushinteger(L, (lua_Integer)total_bytes);
    return 2;
}

static int gpuexp_device(lua_State *L)
{
    int ordinal = lua_isnoneornil(L, 1) ? -1 : (int)luaL_checkinteger(L, 1);
    if (ordinal < 0) {
        int index;
        l_default_device(L, &index);
        return 1;
    }
    if (l_offline_arch(L))
        return l_raisef(L, GX_ERR_USAGE, "this run is an offline plan for %s: there is no GPU to use",
                        l_offline_arch(L));
    push_device(L, ordinal);
    return 1;
}

static int gpuexp_device_count(lua_State *L)
{
    int count;
    gx_error error;
    if (gx_device_count(&count, &error))
        return l_raise(L, &error);
    lua_pushinteger(L, count);
    return 1;
}

static int gpuexp_devices(lua_State *L)
{
    int count;
    gx_error error;
    if (gx_device_count(&count, &error))
        return l_raise(L, &error);
    lua_createtable(L, count, 0);
    for (int i = 0; i < count; i++) {
        push_device(L, i);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* gpuexp._synchronize_devices() -> nil, or the first error: waits for the work of every open
   device, so a sweep point's asynchronous failures are charged to that point. */
static int gpuexp_synchronize_devices(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, DEVICE_CACHE);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        l_device *device = lua_touserdata(L, -1);
        gx_error error;
        if (device && device->open && gx_synchronize(&device->device, &error)) {
            lua_pushstring(L, error.message);
            return 1;
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* gpuexp._device_name(ordinal) -> the GPU's name and UUID, with no context opened */
static int gpuexp_device_name(lua_State *L)
{
    char name[256], uuid[48];
    gx_error error;
    if (gx_device_name((int)luaL_checkinteger(L, 1), name, sizeof name, uuid, sizeof uuid, &error))
        return l_raise(L, &error);
    lua_pushstring(L, name);
    lua_pushstring(L, uuid);
    return 2;
}

void l_open_device(lua_State *L)
{
    static const luaL_Reg methods[] = {{"attribute", device_attribute},     {"attributes", device_attributes},
                                       {"synchronize", device_synchronize}, {"memory_info", device_memory_info},
                                       {"sm_clock", device_sm_clock},       {"telemetry", device_telemetry},
                                       {"flush_l2", device_flush_l2},       {NULL, NULL}};
    static const luaL_Reg metamethods[] = {
        {"__index", device_index}, {"__gc", device_gc}, {"__tostring", device_tostring}, {NULL, NULL}};
    l_new_class(L, GX_DEVICE_TYPE, methods, metamethods);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, DEVICE_CACHE);
    /* the gpuexp table is on the top of the stack */
    static const luaL_Reg functions[] = {{"device", gpuexp_device},
                                         {"devices", gpuexp_devices},
                                         {"device_count", gpuexp_device_count},
                                         {"_synchronize_devices", gpuexp_synchronize_devices},
                                         {"_device_name", gpuexp_device_name},
                                         {NULL, NULL}};
    luaL_setfuncs(L, functions, 0);
}
