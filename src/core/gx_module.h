/* Loaded modules, kernels in them, their attributes, launches and the driver's occupancy. */
#ifndef GX_MODULE_H
#define GX_MODULE_H

#include <cuda.h>

#include "gx_device.h"
#include "gx_ptx.h"

#define GX_MAX_PARAMS 64

typedef struct gx_module {
    const gx_device *device;
    CUmodule handle;
} gx_module;

typedef struct gx_function_info {
    int registers;
    int static_shared_bytes;
    int local_bytes;
    int constant_bytes;
    int max_threads_per_block;
    int max_dynamic_shared_bytes;
    int ptx_version, binary_version;
} gx_function_info;

struct gx_driver;

typedef struct gx_kernel {
    const gx_module *module;
    const struct gx_driver *driver;
    CUfunction function;
    char name[256];
    gx_function_info info;
    int param_count;
    size_t param_sizes[GX_MAX_PARAMS];
} gx_kernel;

typedef struct gx_launch_config {
    unsigned grid[3], block[3];
    unsigned shared_bytes; /* dynamic */
    CUstream stream;       /* NULL: the legacy default stream */
} gx_launch_config;

int gx_module_load(gx_module *module, const gx_device *device, const void *cubin, gx_error *error);
void gx_module_unload(gx_module *module); /* idempotent */

int gx_kernel_get(gx_kernel *kernel, const gx_module *module, const char *name, gx_error *error);

/* Checks the configuration against the kernel and device, raising the dynamic shared-memory
   limit when the launch needs more than the default 48 KB, then launches on the default stream. */
int gx_kernel_prepare(gx_kernel *kernel, const gx_launch_config *config, gx_error *error);
int gx_kernel_launch(const gx_kernel *kernel, const gx_launch_config *config, void **params, gx_error *error);

/* cuOccupancyMaxActiveBlocksPerMultiprocessor. */
int gx_kernel_occupancy(const gx_kernel *kernel, int block_threads, size_t dynamic_shared_bytes, int *blocks_per_sm,
                        gx_error *error);

int gx_synchronize(const gx_device *device, gx_error *error);

#endif
