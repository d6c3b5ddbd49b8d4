/* Shared by the CUPTI code (gx_cupti.c: loading and errors; gx_metric.c: the host object's whole life,
   metric names and pass counts without a GPU; gx_profiler.c: the range profiler on a device; gx_trace.c: the timeline).
   Not a public header; it includes none of its users' headers (each includes its own). */
#ifndef GX_CUPTI_INTERNAL_H
#define GX_CUPTI_INTERNAL_H

#include <stdint.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <cupti_version.h>

#include "gx_device.h"
#include "gx_error.h"

// an X-macro list, one entry a line (clang-format 14 does not settle on such a list)
// clang-format off
#define GX_CUPTI_FUNCTIONS(X) \
    X(cuptiGetVersion) \
    X(cuptiGetResultString) \
    X(cuptiGetErrorMessage) \
    X(cuptiProfilerInitialize) \
    X(cuptiProfilerDeviceSupported) \
    X(cuptiDeviceGetChipName) \
    X(cuptiProfilerGetCounterAvailability) \
    X(cuptiProfilerHostInitialize) \
    X(cuptiProfilerHostDeinitialize) \
    X(cuptiProfilerHostGetSupportedChips) \
    X(cuptiProfilerHostGetBaseMetrics) \
    X(cuptiProfilerHostGetSubMetrics) \
    X(cuptiProfilerHostGetMetricProperties) \
    X(cuptiProfilerHostConfigAddMetrics) \
    X(cuptiProfilerHostGetConfigImageSize) \
    X(cuptiProfilerHostGetConfigImage) \
    X(cuptiProfilerHostGetNumOfPasses) \
    X(cuptiProfilerHostEvaluateToGpuValues) \
    X(cuptiRangeProfilerEnable) \
    X(cuptiRangeProfilerDisable) \
    X(cuptiRangeProfilerGetCounterDataSize) \
    X(cuptiRangeProfilerCounterDataImageInitialize) \
    X(cuptiRangeProfilerSetConfig) \
    X(cuptiRangeProfilerStart) \
    X(cuptiRangeProfilerStop) \
    X(cuptiRangeProfilerDecodeData) \
    X(cuptiRangeProfilerGetCounterDataInfo) \
    X(cuptiActivityEnable) \
    X(cuptiActivityDisable) \
    X(cuptiActivityRegisterCallbacks) \
    X(cuptiActivityFlushAll) \
    X(cuptiActivityGetNextRecord) \
    X(cuptiGetTimestamp) \
    X(cuptiGetCallbackName) \
    X(cuptiSassMetricsGetProperties) \
    X(cuptiSassMetricsSetConfig) \
    X(cuptiSassMetricsUnsetConfig) \
    X(cuptiSassMetricsEnable) \
    X(cuptiSassMetricsDisable) \
    X(cuptiSassMetricsGetDataProperties) \
    X(cuptiSassMetricsFlushData) \
    X(cuptiPCSamplingEnable) \
    X(cuptiPCSamplingDisable) \
    X(cuptiPCSamplingGetNumStallReasons) \
    X(cuptiPCSamplingGetStallReasons) \
    X(cuptiPCSamplingSetConfigurationAttribute) \
    X(cuptiPCSamplingStart) \
    X(cuptiPCSamplingStop) \
    X(cuptiPCSamplingGetData) \
    X(cuptiGetSassToSourceCorrelation)
// clang-format on

struct gx_cupti_functions {
#define GX_CUPTI_POINTER(name) __typeof__(name) *name;
    GX_CUPTI_FUNCTIONS(GX_CUPTI_POINTER)
#undef GX_CUPTI_POINTER
};
extern struct gx_cupti_functions gx_cupti; /* loaded with dlopen by gx_cupti_get */

struct gx_metric_host {
    CUpti_Profiler_Host_Object *object;
    char chip[64];
    char **base_names; /* every type's base metrics, for suggestions; loaded on first need */
    int *base_types;
    size_t base_count;
};

/* Loads CUPTI once; GX_OK or the reason it cannot be used. */
int gx_cupti_get(gx_error *error);
/* "cuptiX failed: CUPTI_ERROR_Y (text)" plus what the user can do about the common ones. */
int gx_cupti_fail(gx_error *error, const char *call, CUptiResult result);
/* A host object for chip (with the device's counter availability, or NULL); gx_metric.c owns its
   whole life (open, config image, close). */
int gx_metric_host_open_for_device(struct gx_metric_host **out, const char *chip, const uint8_t *availability,
                                   gx_error *error);
/* cuptiProfilerInitialize, once a process. */
int gx_cupti_profiler_initialize(gx_error *error);
/* GX_OK when CUPTI supports `api` (range profiling, PC sampling, SASS metrics) on the device; else
   a GX_ERR_PROFILER saying why not (a virtual GPU, an old architecture, confidential computing...). */
int gx_cupti_device_supported(const gx_device *device, CUpti_Profiler_API api, gx_error *error);
/* The config image (the pass schedule) for names. */
int gx_metric_host_config_image(struct gx_metric_host *host, const char *const *names, int count, uint8_t **image,
                                size_t *size, gx_error *error);

/* Calls a CUPTI function once and returns its failure as a gx error. */
#define CUPTI_CHECK(error, call, params)                                                                               \
    do {                                                                                                               \
        CUptiResult result_ = gx_cupti.call(params);                                                                   \
        if (result_ != CUPTI_SUCCESS)                                                                                  \
            return gx_cupti_fail(error, #call, result_);                                                               \
    } while (0)

#endif
