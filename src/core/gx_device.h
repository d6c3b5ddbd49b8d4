/* Devices: attributes by name, derived facts, and the primary context each one runs in. */
#ifndef GX_DEVICE_H
#define GX_DEVICE_H

#include <cuda.h>
#include <stddef.h>

#include "gx_error.h"

typedef struct gx_device {
    int ordinal;
    CUdevice handle;
    CUcontext context; /* primary context, retained while the device is open */
    char name[256];
    char uuid[48]; /* GPU-xxxxxxxx-xxxx-... as nvidia-smi prints it */
    char pci_bus_id[32];
    int cc_major, cc_minor;
    size_t total_memory_bytes;
} gx_device;

/* Facts derived from attributes; what deviceQuery and gpu-specs print. */
typedef struct gx_device_facts {
    int sm_count;
    int sm_clock_khz, memory_clock_khz, memory_bus_width_bits;
    int l2_bytes;
    int shared_per_sm_bytes, shared_per_block_bytes, shared_per_block_optin_bytes;
    int reserved_shared_per_block_bytes;
    int registers_per_sm, registers_per_block;
    int max_threads_per_sm, max_warps_per_sm, max_blocks_per_sm, max_threads_per_block;
    int warp_size;
    int fp32_lanes_per_sm;
    double peak_dram_bytes_per_second; /* 2 (double data rate) x memory clock x bus width */
    double peak_fp32_flops;            /* 2 (FMA) x FP32 lanes x SMs x SM clock */
} gx_device_facts;

int gx_device_count(int *count, gx_error *error);
/* The GPU's name and UUID (when uuid is not NULL) without opening a context (for a supervisor,
   which never holds one, and nightly's lock). */
int gx_device_name(int ordinal, char *name, int size, char *uuid, size_t uuid_size, gx_error *error);
int gx_device_open(gx_device *device, int ordinal, gx_error *error);
void gx_device_close(gx_device *device);

/* Makes the device's context current on this thread; inline, since launches call it each time. */
int gx_device_activate_slow(const gx_device *device, gx_error *error);
extern __thread CUcontext gx_current_context;
static inline int gx_device_activate(const gx_device *device, gx_error *error)
{
    return device->context == gx_current_context ? GX_OK : gx_device_activate_slow(device, error);
}

/* Attribute by lower-case name without the CU_DEVICE_ATTRIBUTE_ prefix ("max_threads_per_block"). */
int gx_device_attribute(const gx_device *device, const char *name, int *value, gx_error *error);
/* The names, for listing: returns the count and sets *names_out[i] via the callback. */
size_t gx_device_attribute_count(void);
const char *gx_device_attribute_name(size_t index);
int gx_device_attribute_lookup(const char *name); /* -1 when unknown */

int gx_device_facts_get(const gx_device *device, gx_device_facts *facts, gx_error *error);

/* FP32 lanes per SM for a compute capability (0 when unknown). */
int gx_fp32_lanes_per_sm(int cc_major, int cc_minor);

#endif
