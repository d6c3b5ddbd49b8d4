/* `gpuexp info`: the deviceQuery / gpu-specs view of every GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "gx_cli.h"
#include "gx_device.h"
#include "gx_driver.h"
#include "gx_nvrtc.h"

static void print_device(const gx_device *device, const gx_device_facts *f)
{
    printf("GPU %d: %s\n", device->ordinal, device->name);
    printf("  %-28s %s\n", "uuid", device->uuid);
    printf("  %-28s %s\n", "pci bus id", device->pci_bus_id);
    printf("  %-28s %d.%d (sm_%d%d)\n", "compute capability", device->cc_major, device->cc_minor, device->cc_major,
           device->cc_minor);
    printf("  %-28s %d\n", "multiprocessors (SMs)", f->sm_count);
    printf("  %-28s %d MHz\n", "SM clock (max)", f->sm_clock_khz / 1000);
    printf("  %-28s %d MHz\n", "memory clock (max)", f->memory_clock_khz / 1000);
    printf("  %-28s %d bits\n", "memory bus width", f->memory_bus_width_bits);
    printf("  %-28s %.1f GiB (%zu bytes)\n", "memory size", device->total_memory_bytes / 1073741824.0,
           device->total_memory_bytes);
    printf("  %-28s %.1f MiB\n", "L2 cache", f->l2_bytes / 1048576.0);
    printf("  %-28s %d KiB\n", "shared memory per SM", f->shared_per_sm_bytes / 1024);
    printf("  %-28s %d KiB (opt-in %d KiB, %d bytes reserved per block)\n", "shared memory per block",
           f->shared_per_block_bytes / 1024, f->shared_per_block_optin_bytes / 1024,
           f->reserved_shared_per_block_bytes);
    printf("  %-28s %d (per block %d)\n", "registers per SM", f->registers_per_sm, f->registers_per_block);
    printf("  %-28s %d (%d warps of %d)\n", "max threads per SM", f->max_threads_per_sm, f->max_warps_per_sm,
           f->warp_size);
    printf("  %-28s %d\n", "max blocks per SM", f->max_blocks_per_sm);
    printf("  %-28s %d\n", "max threads per block", f->max_threads_per_block);
    printf("  %-28s %d\n", "FP32 lanes per SM", f->fp32_lanes_per_sm);
    printf("  %-28s %.0f GB/s (2 x memory clock x bus width)\n", "peak DRAM bandwidth",
           f->peak_dram_bytes_per_second / 1e9);
    printf("  %-28s %.1f TFLOP/s (2 x FP32 lanes x SMs x SM clock)\n", "peak FP32", f->peak_fp32_flops / 1e12);
}

int gx_cli_info(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "device");
    int only = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : -1; /* a GPU number >= 0 (the catalog's type) */
    lua_pop(L, 1);
    gx_error error;
    int nvrtc_major = 0, nvrtc_minor = 0;
    gx_error nvrtc_error;
    int have_nvrtc = gx_nvrtc_version(&nvrtc_major, &nvrtc_minor, &nvrtc_error) == GX_OK;
    printf("gpuexp %s, built with CUDA %d.%d", GX_VERSION, CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
    if (have_nvrtc)
        printf(", NVRTC %d.%d", nvrtc_major, nvrtc_minor);
    else
        printf(", NVRTC not found");
    const gx_driver *d = gx_driver_get(&error);
    if (!d) {
        printf("\n");
        fflush(stdout);
        return gx_cli_raise(L, &error, GX_ERR_DRIVER);
    }
    printf(", driver supports CUDA %d.%d\n", d->version / 1000, (d->version % 1000) / 10);
    fflush(stdout);
    int count = 0;
    if (gx_device_count(&count, &error))
        return gx_cli_raise(L, &error, GX_ERR_DRIVER);
    if (count == 0) {
        gx_fail(&error, GX_ERR_DRIVER, "no CUDA GPU found (the driver reports 0 devices)");
        return gx_cli_raise(L, &error, GX_ERR_DRIVER);
    }
    if (only >= count) {
        gx_fail(&error, GX_ERR_USAGE, "no GPU %d: this machine has %d", only, count);
        return gx_cli_raise(L, &error, GX_ERR_USAGE);
    }
    for (int i = 0; i < count; i++) {
        if (only >= 0 && i != only)
            continue;
        gx_device device;
        gx_device_facts facts;
        if (gx_device_open(&device, i, &error) || gx_device_facts_get(&device, &facts, &error)) {
            gx_error said;
            gx_fail(&said, GX_ERR_DRIVER, "GPU %d: %.4000s", i, error.message);
            return gx_cli_raise(L, &said, GX_ERR_DRIVER);
        }
        print_device(&device, &facts);
        gx_device_close(&device);
    }
    return 0;
}
