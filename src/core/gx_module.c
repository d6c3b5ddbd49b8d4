#include "gx_module.h"

#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "gx_driver.h"
#include "gx_launch_attributes.h"

__thread CUstream gx_current_stream;
uint64_t gx_kernel_launches;
static void (*launch_hook)(const gx_kernel *kernel, const gx_launch_config *config);

static char (*recorded)[128];
static int recorded_max, *recorded_count;

void gx_module_on_launch(void (*hook)(const gx_kernel *kernel, const gx_launch_config *config))
{
    launch_hook = hook;
}

void gx_record_launches(char (*names)[128], int max, int *count)
{
    recorded = names;
    recorded_max = max;
    recorded_count = count;
    if (count)
        *count = 0;
}

void gx_note_launch(const char *name)
{
    gx_kernel_launches++;
    if (recorded) {
        if (*recorded_count < recorded_max)
            snprintf(recorded[*recorded_count], sizeof recorded[0], "%s", name);
        (*recorded_count)++;
    }
}

int gx_module_load(gx_module *module, const gx_device *device, const void *image, char *log, size_t log_size,
                   gx_error *error)
{
    memset(module, 0, sizeof *module);
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(device, error))
        return error->kind;
    /* the JIT's logs: why PTX did not compile, or its ptxas report when it did */
    static char error_log[16384];
    error_log[0] = 0;
    if (log && log_size)
        log[0] = 0;
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
    void *values[] = {error_log, (void *)(uintptr_t)sizeof error_log, log, (void *)(uintptr_t)(log ? log_size : 0),
                      (void *)(uintptr_t)1};
    CUresult result = d->cuModuleLoadDataEx(&module->handle, image, log ? 5 : 2, keys, values);
    if (result != CUDA_SUCCESS) {
        gx_cuda_fail(error, "cuModuleLoadDataEx", result);
        if (error_log[0])
            gx_error_append(error, ":\n%s", error_log);
        return error->kind;
    }
    module->device = device;
    return GX_OK;
}

int gx_module_functions(const gx_module *module, char ***symbols, int *count, gx_error *error)
{
    *symbols = NULL;
    *count = 0;
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(module->device, error))
        return error->kind;
    unsigned n = 0;
    if (GX_CU(error, d->cuModuleGetFunctionCount(&n, module->handle)))
        return error->kind;
    CUfunction *functions = calloc(n ? n : 1, sizeof *functions);
    char **names = calloc(n ? n : 1, sizeof *names);
    if (!functions || !names) {
        free(functions);
        free(names);
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    int status = n ? GX_CU(error, d->cuModuleEnumerateFunctions(functions, n, module->handle)) : GX_OK;
    for (unsigned i = 0; status == GX_OK && i < n; i++) {
        const char *name = NULL;
        if ((status = GX_CU(error, d->cuFuncGetName(&name, functions[i]))) == GX_OK &&
            !(names[i] = strdup(name ? name : "")))
            status = gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    free(functions);
    if (status) {
        gx_module_functions_free(names, (int)n);
        return status;
    }
    *symbols = names;
    *count = (int)n;
    return GX_OK;
}

void gx_module_functions_free(char **symbols, int count)
{
    for (int i = 0; symbols && i < count; i++)
        free(symbols[i]);
    free(symbols);
}

void gx_module_unload(gx_module *module)
{
    gx_error ignored;
    const gx_driver *d = gx_driver_get(&ignored);
    if (d && module->handle && gx_device_activate(module->device, &ignored) == GX_OK)
        d->cuModuleUnload(module->handle);
    module->handle = NULL;
}

int gx_kernel_get(gx_kernel *kernel, const gx_module *module, const char *name, gx_error *error)
{
    memset(kernel, 0, sizeof *kernel);
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(module->device, error))
        return error->kind;
    kernel->module = module;
    kernel->driver = d;
    if (strlen(name) >= sizeof kernel->name)
        return gx_fail(error, GX_ERR_USAGE, "a kernel name of %zu characters is longer than gpuexp takes (%zu)",
                       strlen(name), sizeof kernel->name - 1);
    snprintf(kernel->name, sizeof kernel->name, "%s", name);
    if (GX_CU(error, d->cuModuleGetFunction(&kernel->function, module->handle, name)))
        return error->kind;
    struct {
        int *out;
        CUfunction_attribute attribute;
    } wanted[] = {
        {&kernel->info.registers, CU_FUNC_ATTRIBUTE_NUM_REGS},
        {&kernel->info.static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
        {&kernel->info.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
        {&kernel->info.constant_bytes, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES},
        {&kernel->info.max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
        {&kernel->info.max_dynamic_shared_bytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES},
        {&kernel->info.ptx_version, CU_FUNC_ATTRIBUTE_PTX_VERSION},
        {&kernel->info.binary_version, CU_FUNC_ATTRIBUTE_BINARY_VERSION},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (GX_CU(error, d->cuFuncGetAttribute(wanted[i].out, wanted[i].attribute, kernel->function)))
            return error->kind;
    if (module->device->cc_major >= 9) { /* __cluster_dims__: clusters exist from 9.0 on */
        static const CUfunction_attribute cluster[3] = {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
                                                        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
                                                        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH};
        for (int i = 0; i < 3; i++)
            if (GX_CU(error, d->cuFuncGetAttribute(&kernel->info.required_cluster[i], cluster[i], kernel->function)))
                return error->kind;
    }
    /* the parameters as the compiled function has them: CUDA_ERROR_INVALID_VALUE past the last */
    for (kernel->param_count = 0; kernel->param_count < GX_MAX_PARAMS; kernel->param_count++) {
        size_t offset, size;
        if (d->cuFuncGetParamInfo(kernel->function, (size_t)kernel->param_count, &offset, &size) != CUDA_SUCCESS)
            break;
        kernel->param_sizes[kernel->param_count] = size;
        kernel->param_offsets[kernel->param_count] = offset;
    }
    size_t offset, size;
    if (kernel->param_count == GX_MAX_PARAMS &&
        d->cuFuncGetParamInfo(kernel->function, GX_MAX_PARAMS, &offset, &size) == CUDA_SUCCESS)
        return gx_fail(error, GX_ERR_USAGE,
                       "kernel '%s' has more than %d parameters, more than gpuexp takes: pass "
                       "them in a struct (by value or behind a pointer)",
                       kernel->name, GX_MAX_PARAMS);
    return GX_OK;
}

static int prepare_shared(gx_kernel *kernel, const gx_launch_config *config, gx_error *error)
{
    const gx_device *device = kernel->module->device;
    unsigned long long threads = (unsigned long long)config->block[0] * config->block[1] * config->block[2];
    for (int i = 0; i < 3; i++)
        if (config->grid[i] == 0 || config->block[i] == 0)
            return gx_fail(
                error, GX_ERR_USAGE,
                "launch of '%s': grid and block dimensions must be at least 1 (grid %ux%ux%u, block %ux%ux%u)",
                kernel->name, config->grid[0], config->grid[1], config->grid[2], config->block[0], config->block[1],
                config->block[2]);
    if (threads > (unsigned long long)kernel->info.max_threads_per_block)
        return gx_fail(error, GX_ERR_USAGE,
                       "launch of '%s' with a block of %llu threads: this kernel allows at most %d per block on %s "
                       "(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
                       kernel->name, threads, kernel->info.max_threads_per_block, device->name);
    if ((int)config->shared_bytes <= kernel->info.max_dynamic_shared_bytes)
        return GX_OK;
    const gx_driver *d = gx_driver_get(error);
    if (!d)
        return error->kind;
    int optin = 0;
    if (GX_CU(error,
              d->cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device->handle)))
        return error->kind;
    long available = (long)optin - kernel->info.static_shared_bytes;
    if ((long)config->shared_bytes > available)
        return gx_fail(error, GX_ERR_USAGE,
                       "launch of '%s' with %u bytes of dynamic shared memory: %s allows %d bytes per block, %d of "
                       "them taken by the kernel's static shared memory, so at most %ld dynamic",
                       kernel->name, config->shared_bytes, device->name, optin, kernel->info.static_shared_bytes,
                       available);
    if (gx_device_activate(device, error) ||
        GX_CU(error, d->cuFuncSetAttribute(kernel->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           (int)config->shared_bytes)))
        return error->kind;
    kernel->info.max_dynamic_shared_bytes = (int)config->shared_bytes;
    return GX_OK;
}

static int device_attribute(const gx_driver *d, const gx_device *device, CUdevice_attribute attribute, int *value,
                            gx_error *error)
{
    return GX_CU(error, d->cuDeviceGetAttribute(value, attribute, device->handle));
}

/* The launch attributes: what the checks need from the driver, asked only for what the launch uses. */
static int prepare_attributes(gx_kernel *kernel, const gx_launch_config *config, gx_error *error)
{
    int given = config->cluster[0] || config->cluster[1] || config->cluster[2];
    if (!given && !config->cooperative && !config->programmatic && !kernel->info.required_cluster[0])
        return GX_OK;
    const gx_device *device = kernel->module->device;
    const gx_driver *d = kernel->driver;
    gx_launch_target target = {.where = device->name,
                               .cc_major = device->cc_major,
                               .cc_minor = device->cc_minor,
                               .blocks_per_sm = -1,
                               .max_active_clusters = -1};
    memcpy(target.required_cluster, kernel->info.required_cluster, sizeof target.required_cluster);
    unsigned cluster[3];
    int clustered = gx_launch_cluster(config, &target, cluster);
    if (device_attribute(d, device, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, &target.cluster_launch, error) ||
        device_attribute(d, device, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &target.cooperative_launch, error) ||
        device_attribute(d, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &target.sm_count, error))
        return error->kind;
    gx_launch_config checked = *config;
    memset(checked.cluster, 0, sizeof checked.cluster); /* the first checks need no occupancy */
    if (gx_launch_check_attributes(kernel->name, clustered && given ? config : &checked, &target, error))
        return error->kind;
    if (clustered && target.cluster_launch) {
        unsigned long long size = (unsigned long long)cluster[0] * cluster[1] * cluster[2];
        if (size > (unsigned long long)gx_cluster_max_blocks(device->cc_major, device->cc_minor, 0) &&
            GX_CU(error,
                  d->cuFuncSetAttribute(kernel->function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)))
            return error->kind;
        if (gx_kernel_active_clusters(kernel, config, &target.max_active_clusters, error))
            return error->kind;
    }
    if (config->cooperative &&
        gx_kernel_occupancy(kernel, (int)(config->block[0] * config->block[1] * config->block[2]), config->shared_bytes,
                            &target.blocks_per_sm, error))
        return error->kind;
    return gx_launch_check_attributes(kernel->name, config, &target, error);
}

int gx_kernel_prepare(gx_kernel *kernel, const gx_launch_config *config, gx_error *error)
{
    if (prepare_shared(kernel, config, error))
        return error->kind;
    return prepare_attributes(kernel, config, error);
}

/* The driver's configuration of launch c: its grid, block, shared memory and stream, with the
   attributes it asks for in attributes (room for 3): a cluster (unless the kernel declares its own
   __cluster_dims__, which cuLaunchKernel takes from the function; the launch's own, checked equal,
   is left out), and, unless cluster_only (the occupancy of clusters), cooperative and programmatic. */
static CUlaunchConfig launch_config_of(const gx_kernel *kernel, const gx_launch_config *c, CUstream stream,
                                       CUlaunchAttribute *attributes, int cluster_only)
{
    unsigned count = 0;
    memset(attributes, 0, 3 * sizeof *attributes);
    if (c->cluster[0] && !kernel->info.required_cluster[0]) {
        attributes[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attributes[count].value.clusterDim.x = c->cluster[0];
        attributes[count].value.clusterDim.y = c->cluster[1] ? c->cluster[1] : 1;
        attributes[count++].value.clusterDim.z = c->cluster[2] ? c->cluster[2] : 1;
    }
    if (!cluster_only && c->cooperative) {
        attributes[count].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attributes[count++].value.cooperative = 1;
    }
    if (!cluster_only && c->programmatic) {
        attributes[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attributes[count++].value.programmaticStreamSerializationAllowed = 1;
    }
    CUlaunchConfig config = {.gridDimX = c->grid[0],
                             .gridDimY = c->grid[1],
                             .gridDimZ = c->grid[2],
                             .blockDimX = c->block[0],
                             .blockDimY = c->block[1],
                             .blockDimZ = c->block[2],
                             .sharedMemBytes = c->shared_bytes,
                             .hStream = stream,
                             .attrs = attributes,
                             .numAttrs = count};
    return config;
}

int gx_kernel_launch(const gx_kernel *kernel, const gx_launch_config *c, void **params, gx_error *error)
{
    const gx_driver *d = kernel->driver; /* set by gx_kernel_get: no lookup on the hot path */
    if (gx_device_activate(kernel->module->device, error))
        return error->kind;
    if (launch_hook)
        launch_hook(kernel, c); /* what a supervisor names if this launch never returns */
    gx_note_launch(kernel->name);
    CUstream stream = c->stream ? c->stream : gx_current_stream;
    /* (the plain launch builds no configuration: the hot path stays cuLaunchKernel's) */
    int attributed = (c->cluster[0] && !kernel->info.required_cluster[0]) || c->cooperative || c->programmatic;
    CUresult result;
    if (!attributed) {
        result = d->cuLaunchKernel(kernel->function, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
                                   c->block[2], c->shared_bytes, stream, params, NULL);
    } else {
        CUlaunchAttribute attributes[3];
        CUlaunchConfig config = launch_config_of(kernel, c, stream, attributes, 0);
        result = d->cuLaunchKernelEx(&config, kernel->function, params, NULL);
    }
    if (result != CUDA_SUCCESS) {
        gx_cuda_fail(error, attributed ? "cuLaunchKernelEx" : "cuLaunchKernel", result);
        gx_error_append(error, " launching '%s' with grid %ux%ux%u, block %ux%ux%u, %u bytes dynamic shared memory",
                        kernel->name, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2],
                        c->shared_bytes);
        if (c->cluster[0])
            gx_error_append(error, ", cluster %ux%ux%u", c->cluster[0], c->cluster[1] ? c->cluster[1] : 1,
                            c->cluster[2] ? c->cluster[2] : 1);
        if (c->cooperative)
            gx_error_append(error, ", cooperative");
        if (c->programmatic)
            gx_error_append(error, ", programmatic");
        return error->kind;
    }
    return GX_OK;
}

int gx_kernel_occupancy(const gx_kernel *kernel, int block_threads, size_t dynamic_shared_bytes, int *blocks_per_sm,
                        gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(kernel->module->device, error))
        return error->kind;
    return GX_CU(error, d->cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, kernel->function, block_threads,
                                                                       dynamic_shared_bytes));
}

int gx_kernel_active_clusters(gx_kernel *kernel, const gx_launch_config *c, int *clusters, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(kernel->module->device, error))
        return error->kind;
    CUlaunchAttribute attributes[3];
    CUlaunchConfig config = launch_config_of(kernel, c, NULL, attributes, 1);
    return GX_CU(error, d->cuOccupancyMaxActiveClusters(clusters, kernel->function, &config));
}

int gx_module_global(const gx_module *module, const char *symbol, CUdeviceptr *address, size_t *bytes, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(module->device, error))
        return error->kind;
    return GX_CU(error, d->cuModuleGetGlobal(address, bytes, module->handle, symbol));
}

int gx_synchronize(const gx_device *device, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(device, error))
        return error->kind;
    return GX_CU(error, d->cuCtxSynchronize());
}
