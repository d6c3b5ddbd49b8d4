#include "gx_device.h"

#include <stdio.h>
#include <string.h>

#include "gx_driver.h"

struct gx_attribute_name {
    const char *name;
    int value;
};
#include "gx_attribute_table.h"

#define ATTRIBUTE_COUNT (sizeof gx_attribute_names / sizeof gx_attribute_names[0])

size_t gx_device_attribute_count(void)
{
    return ATTRIBUTE_COUNT;
}

const char *gx_device_attribute_name(size_t index)
{
    return index < ATTRIBUTE_COUNT ? gx_attribute_names[index].name : NULL;
}

int gx_device_attribute_lookup(const char *name)
{
    for (size_t i = 0; i < ATTRIBUTE_COUNT; i++)
        if (strcmp(gx_attribute_names[i].name, name) == 0)
            return gx_attribute_names[i].value;
    return -1;
}

int gx_device_count(int *count, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d)
        return error->kind;
    return GX_CU(error, d->cuDeviceGetCount(count));
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it */
static int uuid_text(const gx_driver *d, CUdevice handle, char *out, size_t size, gx_error *error)
{
    CUuuid uuid;
    if (GX_CU(error, d->cuDeviceGetUuid(&uuid, handle)))
        return error->kind;
    const unsigned char *b = (const unsigned char *)uuid.bytes;
    snprintf(out, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return GX_OK;
}

int gx_device_open(gx_device *device, int ordinal, gx_error *error)
{
    memset(device, 0, sizeof *device);
    const gx_driver *d = gx_driver_get(error);
    if (!d)
        return error->kind;
    int count = 0;
    if (GX_CU(error, d->cuDeviceGetCount(&count)))
        return error->kind;
    if (count == 0)
        return gx_fail(error, GX_ERR_DRIVER, "no CUDA GPU found (the driver reports 0 devices)");
    if (ordinal < 0 || ordinal >= count)
        return gx_fail(error, GX_ERR_USAGE, "no GPU %d: this machine has %d (0 to %d)", ordinal, count, count - 1);
    device->ordinal = ordinal;
    if (GX_CU(error, d->cuDeviceGet(&device->handle, ordinal)) ||
        GX_CU(error, d->cuDeviceGetName(device->name, sizeof device->name, device->handle)) ||
        GX_CU(error, d->cuDeviceTotalMem(&device->total_memory_bytes, device->handle)) ||
        GX_CU(error, d->cuDeviceGetAttribute(&device->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                             device->handle)) ||
        GX_CU(error, d->cuDeviceGetAttribute(&device->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                             device->handle)) ||
        GX_CU(error, d->cuDeviceGetPCIBusId(device->pci_bus_id, sizeof device->pci_bus_id, device->handle)))
        return error->kind;
    if (uuid_text(d, device->handle, device->uuid, sizeof device->uuid, error))
        return error->kind;
    if (GX_CU(error, d->cuDevicePrimaryCtxRetain(&device->context, device->handle)))
        return error->kind;
    return gx_device_activate(device, error);
}

void gx_device_close(gx_device *device)
{
    gx_error ignored;
    const gx_driver *d = gx_driver_get(&ignored);
    if (d && device->context) {
        d->cuCtxSynchronize();
        d->cuDevicePrimaryCtxRelease(device->handle);
    }
    if (gx_current_context == device->context)
        gx_current_context = NULL;
    device->context = NULL;
}

__thread CUcontext gx_current_context;

int gx_device_activate_slow(const gx_device *device, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d)
        return error->kind;
    if (GX_CU(error, d->cuCtxSetCurrent(device->context)))
        return error->kind;
    gx_current_context = device->context;
    return GX_OK;
}

int gx_device_attribute(const gx_device *device, const char *name, int *value, gx_error *error)
{
    int attribute = gx_device_attribute_lookup(name);
    if (attribute < 0)
        return gx_fail(error, GX_ERR_USAGE,
                       "unknown device attribute '%s' (names are CU_DEVICE_ATTRIBUTE_* in lower case without the "
                       "prefix, e.g. 'max_threads_per_block')",
                       name);
    const gx_driver *d = gx_driver_get(error);
    if (!d)
        return error->kind;
    return GX_CU(error, d->cuDeviceGetAttribute(value, (CUdevice_attribute)attribute, device->handle));
}

int gx_fp32_lanes_per_sm(int cc_major, int cc_minor)
{
    switch (cc_major) {
    case 6: return cc_minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return cc_minor == 0 ? 64 : 128;
    case 9:
    case 10:
    case 11:
    case 12: return 128;
    }
    return 0;
}

int gx_device_facts_get(const gx_device *device, gx_device_facts *f, gx_error *error)
{
    memset(f, 0, sizeof *f);
    const gx_driver *d = gx_driver_get(error);
    if (!d)
        return error->kind;
    struct {
        int *out;
        CUdevice_attribute attribute;
    } wanted[] = {
        {&f->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
        {&f->sm_clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
        {&f->memory_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
        {&f->memory_bus_width_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
        {&f->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
        {&f->shared_per_sm_bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
        {&f->shared_per_block_bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
        {&f->shared_per_block_optin_bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
        {&f->reserved_shared_per_block_bytes, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK},
        {&f->registers_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
        {&f->registers_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
        {&f->max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
        {&f->max_blocks_per_sm, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR},
        {&f->max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
        {&f->warp_size, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (GX_CU(error, d->cuDeviceGetAttribute(wanted[i].out, wanted[i].attribute, device->handle)))
            return error->kind;
    f->max_warps_per_sm = f->warp_size ? f->max_threads_per_sm / f->warp_size : 0;
    f->fp32_lanes_per_sm = gx_fp32_lanes_per_sm(device->cc_major, device->cc_minor);
    f->peak_dram_bytes_per_second = 2.0 * f->memory_clock_khz * 1e3 * (f->memory_bus_width_bits / 8.0);
    f->peak_fp32_flops = 2.0 * f->fp32_lanes_per_sm * f->sm_count * (f->sm_clock_khz * 1e3);
    return GX_OK;
}

int gx_device_name(int ordinal, char *name, int size, char *uuid, size_t uuid_size, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d)
        return error->kind;
    CUdevice handle;
    if (GX_CU(error, d->cuDeviceGet(&handle, ordinal)) || GX_CU(error, d->cuDeviceGetName(name, size, handle)))
        return error->kind;
    return uuid ? uuid_text(d, handle, uuid, uuid_size, error) : GX_OK;
}
