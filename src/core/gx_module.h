/* Loaded modules, kernels in them, their attributes, launches and the driver's occupancy. */
#ifndef GX_MODULE_H
#define GX_MODULE_H

#include <cuda.h>
#include <stdint.h>

#include "gx_device.h"
#include "gx_ptx.h"

#define GX_MAX_PARAMS 256 /* Hopper allows 32764 bytes of parameters: at most this many of them */

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
    int required_cluster[3]; /* __cluster_dims__ of the kernel (CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_*); 0: none */
} gx_function_info;

struct gx_driver;

typedef struct gx_kernel {
    const gx_module *module;
    const struct gx_driver *driver;
    CUfunction function;
    char name[GX_NAME_BYTES];
    gx_function_info info;
    int param_count; /* from cuFuncGetParamInfo */
    size_t param_sizes[GX_MAX_PARAMS];
    size_t param_offsets[GX_MAX_PARAMS];
} gx_kernel;

typedef struct gx_launch_config {
    unsigned grid[3], block[3];
    unsigned shared_bytes; /* dynamic */
    CUstream stream;       /* NULL: gx_current_stream */
    /* launch attributes (cuLaunchKernelEx), checked by gx_launch_check_attributes */
    unsigned cluster[3]; /* thread block cluster shape; 0, 0, 0: none asked (a __cluster_dims__ kernel has its own) */
    int cooperative;     /* grid-wide synchronization: every block resident at once */
    int programmatic;    /* programmatic dependent launch: may start before the previous kernel of the stream ends */
} gx_launch_config;

/* Where work with no stream of its own goes: NULL (the legacy default stream) unless a sequence
   is being captured or run on a stream of its own. */
extern __thread CUstream gx_current_stream;

/* Kernels launched by this process so far, gpuexp's helper kernels included: a sequence counts
   the kernels it enqueues (each is a range for the counters). */
extern uint64_t gx_kernel_launches;
/* Counts a launch (and records its name while a recorder is set): every kernel launch calls it. */
void gx_note_launch(const char *name);
/* While names is non-NULL, launches append their kernel's name (up to max; *count counts all). */
void gx_record_launches(char (*names)[128], int max, int *count);

/* The hook every launch calls first (a supervised worker records what is running). */
void gx_module_on_launch(void (*hook)(const gx_kernel *kernel, const gx_launch_config *config));

/* Loads a cubin, fat binary or PTX (which the driver compiles). log gets the driver's JIT log
   (the error log on failure; the info log, with ptxas' report for PTX, on success); may be NULL. */
int gx_module_load(gx_module *module, const gx_device *device, const void *image, char *log, size_t log_size,
                   gx_error *error);
void gx_module_unload(gx_module *module); /* idempotent */

/* The module's kernels' symbols (mangled names), malloc'ed into *symbols (free each, then the list). */
int gx_module_functions(const gx_module *module, char ***symbols, int *count, gx_error *error);
void gx_module_functions_free(char **symbols, int count);

int gx_kernel_get(gx_kernel *kernel, const gx_module *module, const char *name, gx_error *error);

/* Checks the configuration against the kernel and device, raising the dynamic shared-memory
   limit when the launch needs more than the default 48 KB, and its launch attributes (clusters,
   cooperative, programmatic) against the device and the kernel's occupancy, allowing a
   non-portable cluster size when the cluster asks for one. */
int gx_kernel_prepare(gx_kernel *kernel, const gx_launch_config *config, gx_error *error);
int gx_kernel_launch(const gx_kernel *kernel, const gx_launch_config *config, void **params, gx_error *error);

/* cuOccupancyMaxActiveBlocksPerMultiprocessor. */
int gx_kernel_occupancy(const gx_kernel *kernel, int block_threads, size_t dynamic_shared_bytes, int *blocks_per_sm,
                        gx_error *error);
/* cuOccupancyMaxActiveClusters for config's cluster (or the kernel's own __cluster_dims__): how many
   clusters of this kernel and configuration can be resident at once on the whole GPU. */
int gx_kernel_active_clusters(gx_kernel *kernel, const gx_launch_config *config, int *clusters, gx_error *error);

/* A module global (__constant__ or __device__ variable) by its symbol: address and size. */
int gx_module_global(const gx_module *module, const char *symbol, CUdeviceptr *address, size_t *bytes, gx_error *error);

int gx_synchronize(const gx_device *device, gx_error *error);

#endif
