/* The range profiler on a device: hardware counters of launches, replayed by the caller (user
   replay) with its buffers restored and the L2 flushed before every pass. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cupti_internal.h"
#include "gx_driver.h"

struct gx_profiler {
    const gx_device *device;
    char chip[64];
    uint8_t *availability;
    gx_metric_host *validator;
    CUpti_RangeProfiler_Object *range; /* enabled on the device's context on first use */
    char *key;                         /* the metric list the cached images are for */
    gx_metric_host *config_host;
    uint8_t *config, *counter_data;
    size_t config_size, counter_data_size;
    CUdeviceptr scratch; /* snapshots of the buffers a replayed launch may write */
    size_t scratch_bytes;
};

static int profiler_initialized;

int gx_profiler_open(gx_profiler **out, const gx_device *device, gx_error *error)
{
    *out = NULL;
    const gx_driver *d = gx_driver_get(error);
    /* nothing in flight while CUPTI sets up: a launch still running when the range profiler
       starts crashed CUPTI inside NVPW_CUDA_Profiler_BeginPass on the H200 */
    if (!d || gx_cupti_get(error) || gx_device_activate(device, error) || GX_CU(error, d->cuCtxSynchronize()))
        return error->kind;
    if (!profiler_initialized) {
        CUpti_Profiler_Initialize_Params init = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        CUPTI_CHECK(error, cuptiProfilerInitialize, &init);
        profiler_initialized = 1;
    }
    CUpti_Profiler_DeviceSupported_Params supported = {.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    supported.cuDevice = device->handle;
    supported.api = CUPTI_PROFILER_RANGE_PROFILING;
    CUPTI_CHECK(error, cuptiProfilerDeviceSupported, &supported);
    if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
        const char *why = supported.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "its architecture is older than 7.5"
                        : supported.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "it is a virtual GPU without profiling enabled by the hypervisor"
                        : supported.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "confidential computing is on"
                        : supported.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "it is a crypto-mining processor (CMP)"
                        : supported.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "SLI is enabled"
                        : supported.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "WSL does not support it here"
                                                                                   : "CUPTI gives no reason";
        return gx_fail(error, GX_ERR_PROFILER, "CUPTI cannot profile %s: %s", device->name, why);
    }
    if (strstr(device->name, "MIG"))
        return gx_fail(error, GX_ERR_PROFILER,
                       "%s is a MIG instance: counters need a compute instance that owns its whole GPU instance", device->name);
    gx_profiler *p = calloc(1, sizeof *p);
    if (!p)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    p->device = device;
    CUpti_Device_GetChipName_Params chip = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = (size_t)device->ordinal;
    CUptiResult result = gx_cupti.cuptiDeviceGetChipName(&chip);
    if (result != CUPTI_SUCCESS) {
        free(p);
        return gx_cupti_fail(error, "cuptiDeviceGetChipName", result);
    }
    snprintf(p->chip, sizeof p->chip, "%s", chip.pChipName);
    CUpti_Profiler_GetCounterAvailability_Params available = {.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    available.ctx = device->context;
    if ((result = gx_cupti.cuptiProfilerGetCounterAvailability(&available)) != CUPTI_SUCCESS
        || !(p->availability = malloc(available.counterAvailabilityImageSize))) {
        free(p);
        return result != CUPTI_SUCCESS ? gx_cupti_fail(error, "cuptiProfilerGetCounterAvailability", result)
                                       : gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    available.pCounterAvailabilityImage = p->availability;
    if ((result = gx_cupti.cuptiProfilerGetCounterAvailability(&available)) != CUPTI_SUCCESS) {
        gx_profiler_close(p);
        return gx_cupti_fail(error, "cuptiProfilerGetCounterAvailability", result);
    }
    if (gx_cupti_host_open(&p->validator, p->chip, p->availability, error)) {
        gx_profiler_close(p);
        return error->kind;
    }
    *out = p;
    return GX_OK;
}

void gx_profiler_close(gx_profiler *p)
{
    if (!p)
        return;
    gx_error ignored;
    const gx_driver *d = gx_driver_get(&ignored);
    if (p->range) {
        CUpti_RangeProfiler_Disable_Params disable = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        disable.pRangeProfilerObject = p->range;
        gx_cupti.cuptiRangeProfilerDisable(&disable);
    }
    if (d && gx_device_activate(p->device, &ignored) == GX_OK) {
        if (p->scratch)
            d->cuMemFree(p->scratch);
    }
    gx_metric_host_close(p->validator);
    gx_metric_host_close(p->config_host);
    free(p->availability);
    free(p->key);
    free(p->config);
    free(p->counter_data);
    free(p);
}

const char *gx_profiler_chip(const gx_profiler *p) { return p->chip; }
gx_metric_host *gx_profiler_host(gx_profiler *p) { return p->validator; }

int gx_profiler_scratch(gx_profiler *p, size_t bytes, CUdeviceptr *scratch, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(p->device, error))
        return error->kind;
    if (bytes > p->scratch_bytes) {
        if (p->scratch)
            d->cuMemFree(p->scratch);
        p->scratch = 0;
        p->scratch_bytes = 0;
        if (GX_CU(error, d->cuMemAlloc(&p->scratch, bytes)))
            return error->kind;
        p->scratch_bytes = bytes;
    }
    *scratch = p->scratch;
    return GX_OK;
}

/* Builds (or reuses) the config image and counter-data image for this metric list. */
static int prepare_images(gx_profiler *p, const char *const *names, int count, gx_error *error)
{
    size_t length = 1;
    for (int i = 0; i < count; i++)
        length += strlen(names[i]) + 1;
    char *key = malloc(length);
    if (!key)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    key[0] = 0;
    for (int i = 0; i < count; i++)
        strcat(strcat(key, names[i]), "\n");
    if (p->key && strcmp(p->key, key) == 0) {
        free(key);
        return GX_OK; /* validated and built for the last call */
    }
    for (int i = 0; i < count; i++)
        if (gx_metric_check(p->validator, names[i], NULL, error)) {
            free(key);
            return error->kind;
        }
    /* a new list: a fresh range-profiler object first, so nothing in CUPTI still refers to the
       images and host object freed below (reusing the object crashed in NVPW_CUDA_Profiler_BeginPass) */
    if (p->range) {
        CUpti_RangeProfiler_Disable_Params disable = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        disable.pRangeProfilerObject = p->range;
        p->range = NULL;
        CUptiResult disabled = gx_cupti.cuptiRangeProfilerDisable(&disable);
        if (disabled != CUPTI_SUCCESS) {
            free(key);
            return gx_cupti_fail(error, "cuptiRangeProfilerDisable", disabled);
        }
    }
    CUpti_RangeProfiler_Enable_Params enable = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    enable.ctx = p->device->context;
    CUptiResult enabled = gx_cupti.cuptiRangeProfilerEnable(&enable);
    if (enabled != CUPTI_SUCCESS) {
        free(key);
        return gx_cupti_fail(error, "cuptiRangeProfilerEnable", enabled);
    }
    p->range = enable.pRangeProfilerObject;
    free(p->key);
    free(p->config);
    free(p->counter_data);
    gx_metric_host_close(p->config_host);
    p->key = NULL;
    p->config = p->counter_data = NULL;
    p->config_host = NULL;
    if (gx_cupti_host_open(&p->config_host, p->chip, p->availability, error)
        || gx_cupti_config_image(p->config_host, names, count, &p->config, &p->config_size, error)) {
        free(key);
        return error->kind;
    }
    CUpti_RangeProfiler_GetCounterDataSize_Params size = {.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = p->range;
    size.pMetricNames = (const char **)names;
    size.numMetrics = (size_t)count;
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    CUptiResult result = gx_cupti.cuptiRangeProfilerGetCounterDataSize(&size);
    if (result != CUPTI_SUCCESS || !(p->counter_data = malloc(size.counterDataSize))) {
        free(key);
        return result != CUPTI_SUCCESS ? gx_cupti_fail(error, "cuptiRangeProfilerGetCounterDataSize", result)
                                       : gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    p->counter_data_size = size.counterDataSize;
    p->key = key;
    return GX_OK;
}

int gx_profiler_collect(gx_profiler *p, const char *const *names, int count, gx_pass_fn prepare, gx_pass_fn launch,
                        void *user, double *values, int *passes, gx_error *error)
{
    *passes = 0;
    if (count <= 0)
        return gx_fail(error, GX_ERR_USAGE, "no metrics asked for");
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(p->device, error))
        return error->kind;
    if (GX_CU(error, d->cuCtxSynchronize()) || prepare_images(p, names, count, error))
        return error->kind;
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = p->range;
    init.counterDataSize = p->counter_data_size;
    init.pCounterData = p->counter_data;
    CUPTI_CHECK(error, cuptiRangeProfilerCounterDataImageInitialize, &init);
    CUpti_RangeProfiler_SetConfig_Params config = {.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    config.pRangeProfilerObject = p->range;
    config.configSize = p->config_size;
    config.pConfig = p->config;
    config.counterDataImageSize = p->counter_data_size;
    config.pCounterDataImage = p->counter_data;
    config.range = CUPTI_AutoRange;    /* kernel boundary to kernel boundary: ncu's numbers */
    config.replayMode = CUPTI_UserReplay; /* we restore the buffers and flush L2 before each pass */
    config.maxRangesPerPass = 1;
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    CUPTI_CHECK(error, cuptiRangeProfilerSetConfig, &config);
    for (int pass = 0;; pass++) {
        if (pass >= 256)
            return gx_fail(error, GX_ERR_PROFILER, "CUPTI asked for more than 256 replay passes");
        if (prepare(user, pass, error) || GX_CU(error, d->cuCtxSynchronize()))
            return error->kind;
        CUpti_RangeProfiler_Start_Params start = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
        start.pRangeProfilerObject = p->range;
        CUPTI_CHECK(error, cuptiRangeProfilerStart, &start);
        int launched = launch(user, pass, error);
        CUpti_RangeProfiler_Stop_Params stop = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        stop.pRangeProfilerObject = p->range;
        CUptiResult stopped = gx_cupti.cuptiRangeProfilerStop(&stop);
        if (launched)
            return error->kind;
        if (stopped != CUPTI_SUCCESS)
            return gx_cupti_fail(error, "cuptiRangeProfilerStop", stopped);
        *passes = pass + 1;
        if (stop.isAllPassSubmitted)
            break;
    }
    CUpti_RangeProfiler_DecodeData_Params decode = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = p->range;
    CUPTI_CHECK(error, cuptiRangeProfilerDecodeData, &decode);
    if (decode.numOfRangeDropped)
        return gx_fail(error, GX_ERR_PROFILER, "CUPTI dropped %zu range(s): the profiled launch ran more than one kernel",
                       decode.numOfRangeDropped);
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = p->counter_data;
    info.counterDataImageSize = p->counter_data_size;
    CUPTI_CHECK(error, cuptiRangeProfilerGetCounterDataInfo, &info);
    if (info.numTotalRanges < 1)
        return gx_fail(error, GX_ERR_PROFILER, "CUPTI recorded no range: the launch ran no kernel");
    CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate = {.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    evaluate.pHostObject = p->config_host->object;
    evaluate.pCounterDataImage = p->counter_data;
    evaluate.counterDataImageSize = p->counter_data_size;
    evaluate.rangeIndex = 0;
    evaluate.ppMetricNames = (const char **)names;
    evaluate.numMetrics = (size_t)count;
    evaluate.pMetricValues = values;
    CUPTI_CHECK(error, cuptiProfilerHostEvaluateToGpuValues, &evaluate);
    return GX_OK;
}
