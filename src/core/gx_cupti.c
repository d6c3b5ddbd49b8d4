#include "gx_cupti.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>

#include "gx_driver.h"

#define GX_CUPTI_FUNCTIONS(X)                                                                      \
    X(cuptiGetVersion) X(cuptiGetResultString) X(cuptiGetErrorMessage) X(cuptiProfilerInitialize) \
    X(cuptiProfilerDeviceSupported) X(cuptiDeviceGetChipName) X(cuptiProfilerGetCounterAvailability) \
    X(cuptiProfilerHostInitialize) X(cuptiProfilerHostDeinitialize) X(cuptiProfilerHostGetSupportedChips) \
    X(cuptiProfilerHostGetBaseMetrics) X(cuptiProfilerHostGetSubMetrics)                           \
    X(cuptiProfilerHostGetMetricProperties) X(cuptiProfilerHostConfigAddMetrics)                  \
    X(cuptiProfilerHostGetConfigImageSize) X(cuptiProfilerHostGetConfigImage)                     \
    X(cuptiProfilerHostGetNumOfPasses) X(cuptiProfilerHostEvaluateToGpuValues)                    \
    X(cuptiRangeProfilerEnable) X(cuptiRangeProfilerDisable) X(cuptiRangeProfilerGetCounterDataSize) \
    X(cuptiRangeProfilerCounterDataImageInitialize) X(cuptiRangeProfilerSetConfig)                \
    X(cuptiRangeProfilerStart) X(cuptiRangeProfilerStop) X(cuptiRangeProfilerDecodeData)          \
    X(cuptiRangeProfilerGetCounterDataInfo)

static struct {
#define GX_CUPTI_POINTER(name) __typeof__(name) *name;
    GX_CUPTI_FUNCTIONS(GX_CUPTI_POINTER)
#undef GX_CUPTI_POINTER
} cupti;
static gx_error load_error;
static int load_status = -1;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_cupti(void)
{
    const char *candidates[6];
    int n = 0;
    char from_home[512];
    if (getenv("GX_LIBCUPTI")) /* when set, the only candidate: tests use it to take CUPTI away */
        candidates[n++] = getenv("GX_LIBCUPTI");
    else
        candidates[n++] = "libcupti.so.13";
    if (!getenv("GX_LIBCUPTI") && getenv("CUDA_HOME")) {
        snprintf(from_home, sizeof from_home, "%s/lib64/libcupti.so.13", getenv("CUDA_HOME"));
        candidates[n++] = from_home;
    }
    if (!getenv("GX_LIBCUPTI")) {
        candidates[n++] = "/usr/local/cuda/lib64/libcupti.so.13";
        candidates[n++] = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13";
    }
    void *handle = NULL;
    for (int i = 0; i < n && !handle; i++)
        handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        load_status = gx_fail(&load_error, GX_ERR_PROFILER,
                              "CUPTI not found (tried %s and /usr/local/cuda/lib64): install the CUDA toolkit's CUPTI or set GX_LIBCUPTI",
                              candidates[0]);
        return;
    }
#define GX_CUPTI_LOAD(name)                                                                        \
    if (!(cupti.name = (__typeof__(name) *)dlsym(handle, #name))) {                                \
        load_status = gx_fail(&load_error, GX_ERR_PROFILER, "CUPTI has no %s: CUPTI 13 is needed", #name); \
        return;                                                                                    \
    }
    GX_CUPTI_FUNCTIONS(GX_CUPTI_LOAD)
#undef GX_CUPTI_LOAD
    load_status = GX_OK;
}

static int cupti_get(gx_error *error)
{
    pthread_once(&load_once, load_cupti);
    if (load_status != GX_OK)
        *error = load_error;
    return load_status;
}

/* "cuptiX failed: CUPTI_ERROR_Y (text)" plus what the user can do about the common ones. */
static int cupti_fail(gx_error *error, const char *call, CUptiResult result)
{
    const char *name = "CUPTI_ERROR", *text = "";
    cupti.cuptiGetResultString(result, &name);
    cupti.cuptiGetErrorMessage(result, &text);
    int kind = result == CUPTI_ERROR_INVALID_METRIC_NAME ? GX_ERR_USAGE : GX_ERR_PROFILER;
    gx_fail(error, kind, "%s failed: %s (%s)", call, name, text);
    switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        gx_error_append(error, ": the driver lets only administrators read GPU performance counters (ERR_NVGPUCTRPERM). "
                               "Run as root or with CAP_SYS_ADMIN (CAP_PERFMON from driver R565), or have an admin set "
                               "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d, rebuild the "
                               "initramfs and reboot; in a container the host's setting applies");
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        gx_error_append(error, ": another profiler owns this process (ncu, nsys, cuda-gdb, or a framework's tracer); "
                               "run gpuexp without it to collect metrics");
        break;
    case CUPTI_ERROR_HARDWARE_BUSY:
        gx_error_append(error, ": another process is using the GPU's counters (a profiler, or DCGM: 'dcgmi profile --pause'); "
                               "try again when it is done");
        break;
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
        gx_error_append(error, ": on a MIG instance counters need a compute instance that owns its whole GPU instance");
        break;
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        gx_error_append(error, ": this is a virtual GPU; the hypervisor's administrator must enable profiling for the VM");
        break;
    case CUPTI_ERROR_NOT_INITIALIZED:
        gx_error_append(error, ": CUPTI could not load libnvperf_host.so, which must sit beside libcupti.so");
        break;
    default:
        break;
    }
    return kind;
}

/* Calls a CUPTI function once and returns its failure as a gx error. */
#define CUPTI_CHECK(error, call, params)                                                           \
    do {                                                                                           \
        CUptiResult result_ = cupti.call(params);                                                  \
        if (result_ != CUPTI_SUCCESS)                                                              \
            return cupti_fail(error, #call, result_);                                              \
    } while (0)

int gx_metric_is_ncu_only(const char *name)
{
    static const char *const prefixes[] = {"launch__", "sm__maximum_warps", "smsp__maximum_warps", "device__attribute",
                                           "profiler__", "smsp__pcsamp", "sass__inst_executed_per_opcode", "numa__",
                                           "nvlink__count", "breakdown:", NULL};
    for (int i = 0; prefixes[i]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* ---- host side ---- */

struct gx_metric_host {
    CUpti_Profiler_Host_Object *object;
    char chip[64];
    char **base_names; /* every type's base metrics, for suggestions; loaded on first need */
    int *base_types;
    size_t base_count;
};

static int host_open(gx_metric_host **out, const char *chip, const uint8_t *availability, gx_error *error)
{
    *out = NULL;
    if (cupti_get(error))
        return error->kind;
    gx_metric_host *host = calloc(1, sizeof *host);
    if (!host)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    snprintf(host->chip, sizeof host->chip, "%s", chip);
    CUpti_Profiler_Host_Initialize_Params p = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = host->chip;
    p.pCounterAvailabilityImage = availability;
    CUptiResult result = cupti.cuptiProfilerHostInitialize(&p);
    if (result != CUPTI_SUCCESS) {
        free(host);
        cupti_fail(error, "cuptiProfilerHostInitialize", result);
        if (result == CUPTI_ERROR_INVALID_CHIP_NAME || result == CUPTI_ERROR_INVALID_PARAMETER) {
            char chips[2048];
            gx_error ignored;
            if (gx_metric_chips(chips, sizeof chips, &ignored) == GX_OK)
                gx_error_append(error, ": unknown chip '%s' (known: %s)", chip, chips);
        }
        return error->kind;
    }
    host->object = p.pHostObject;
    *out = host;
    return GX_OK;
}

int gx_metric_host_open(gx_metric_host **out, const char *chip, gx_error *error)
{
    return host_open(out, chip, NULL, error);
}

void gx_metric_host_close(gx_metric_host *host)
{
    if (!host)
        return;
    if (host->object) {
        CUpti_Profiler_Host_Deinitialize_Params p = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        p.pHostObject = host->object;
        cupti.cuptiProfilerHostDeinitialize(&p);
    }
    for (size_t i = 0; i < host->base_count; i++)
        free(host->base_names[i]);
    free(host->base_names);
    free(host->base_types);
    free(host);
}

const char *gx_metric_host_chip(const gx_metric_host *host) { return host->chip; }

int gx_metric_chips(char *buffer, size_t size, gx_error *error)
{
    if (cupti_get(error))
        return error->kind;
    CUpti_Profiler_Host_GetSupportedChips_Params p = {.structSize = CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};
    CUPTI_CHECK(error, cuptiProfilerHostGetSupportedChips, &p);
    buffer[0] = 0;
    for (size_t i = 0; i < p.numChips; i++)
        snprintf(buffer + strlen(buffer), size - strlen(buffer), "%s%s", i ? ", " : "", p.ppChipNames[i]);
    return GX_OK;
}

static int load_base_names(gx_metric_host *host, gx_error *error)
{
    if (host->base_names)
        return GX_OK;
    size_t capacity = 0;
    for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT; type++) {
        CUpti_Profiler_Host_GetBaseMetrics_Params p = {.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
        p.pHostObject = host->object;
        p.metricType = (CUpti_MetricType)type;
        CUPTI_CHECK(error, cuptiProfilerHostGetBaseMetrics, &p);
        char **names = realloc(host->base_names, sizeof *names * (capacity + p.numMetrics));
        int *types = realloc(host->base_types, sizeof *types * (capacity + p.numMetrics));
        if (names)
            host->base_names = names;
        if (types)
            host->base_types = types;
        if (!names || !types)
            return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
        for (size_t i = 0; i < p.numMetrics; i++) {
            if (strchr(p.ppMetricNames[i], '.')) /* PM-sampling aliases like TriageCompute.x */
                continue;
            host->base_names[capacity] = strdup(p.ppMetricNames[i]);
            host->base_types[capacity++] = type;
        }
        host->base_count = capacity;
    }
    return GX_OK;
}

int gx_metric_each(gx_metric_host *host, void (*fn)(void *user, const char *name, int type), void *user,
                   gx_error *error)
{
    if (load_base_names(host, error))
        return error->kind;
    for (size_t i = 0; i < host->base_count; i++)
        fn(user, host->base_names[i], host->base_types[i]);
    return GX_OK;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(b), row[256];
    if (n >= 255)
        return 1000;
    for (size_t j = 0; j <= n; j++)
        row[j] = j;
    for (size_t i = 1; a[i - 1]; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t above = row[j];
            size_t cost = diagonal + (a[i - 1] != b[j - 1]);
            size_t best = row[j - 1] + 1 < above + 1 ? row[j - 1] + 1 : above + 1;
            row[j] = cost < best ? cost : best;
            diagonal = above;
        }
    }
    return row[n];
}

/* Appends up to `want` of candidates closest to `target` to the error. */
static void append_closest(gx_error *error, const char *target, const char *const *candidates, size_t count,
                           const char *prefix, int want)
{
    int chosen[8];
    size_t scores[8];
    int have = 0;
    for (size_t i = 0; i < count; i++) {
        size_t score = edit_distance(target, candidates[i]);
        if (strstr(candidates[i], target) || strstr(target, candidates[i]))
            score = score / 2; /* substrings are likely what was meant */
        int at = have;
        while (at > 0 && scores[at - 1] > score)
            at--;
        if (at >= want)
            continue;
        for (int k = (have < want ? have : want - 1); k > at; k--) {
            chosen[k] = chosen[k - 1];
            scores[k] = scores[k - 1];
        }
        chosen[at] = (int)i;
        scores[at] = score;
        if (have < want)
            have++;
    }
    for (int k = 0; k < have; k++)
        gx_error_append(error, "%s%s%s", k ? ", " : "", prefix, candidates[chosen[k]]);
}

int gx_metric_check(gx_metric_host *host, const char *name, gx_metric_info *info, gx_error *error)
{
    if (gx_metric_is_ncu_only(name))
        return gx_fail(error, GX_ERR_USAGE,
                       "'%s' is computed by ncu from the launch, not a hardware counter CUPTI can collect%s", name,
                       strncmp(name, "launch__occupancy", 17) == 0 || strncmp(name, "sm__maximum_warps", 17) == 0
                           ? ": kernel:occupancy{} gives the same limits"
                           : "");
    CUpti_Profiler_Host_GetMetricProperties_Params p = {.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    p.pHostObject = host->object;
    p.pMetricName = name;
    const char *dot = strchr(name, '.');
    if (cupti.cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS && dot) {
        if (info) {
            info->type = (int)p.metricType;
            info->description = p.pDescription;
            info->hardware_unit = p.pHwUnit;
            info->dimension_unit = p.pDimUnit;
        }
        /* a throughput needs .avg.pct_of_peak_sustained_*, a counter a rollup: ask CUPTI which suffixes exist */
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(dot - name), name);
        CUpti_Profiler_Host_GetSubMetrics_Params s = {.structSize = CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
        s.pHostObject = host->object;
        s.metricType = p.metricType;
        s.pMetricName = base;
        if (cupti.cuptiProfilerHostGetSubMetrics(&s) != CUPTI_SUCCESS)
            return GX_OK;
        for (size_t i = 0; i < s.numOfSubmetrics; i++)
            if (strcmp(s.ppSubMetrics[i], dot + 1) == 0 || (s.ppSubMetrics[i][0] == '.' && strcmp(s.ppSubMetrics[i], dot) == 0))
                return GX_OK;
        gx_fail(error, GX_ERR_USAGE, "metric '%s' has no suffix '%s'; closest valid: ", name, dot);
        append_closest(error, dot, s.ppSubMetrics, s.numOfSubmetrics, base, 4);
        return error->kind;
    }
    char base[256];
    snprintf(base, sizeof base, "%.*s", dot ? (int)(dot - name) : (int)strlen(name), name);
    CUpti_Profiler_Host_GetMetricProperties_Params b = {.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    b.pHostObject = host->object;
    b.pMetricName = base;
    if (cupti.cuptiProfilerHostGetMetricProperties(&b) == CUPTI_SUCCESS) {
        CUpti_Profiler_Host_GetSubMetrics_Params s = {.structSize = CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
        s.pHostObject = host->object;
        s.metricType = b.metricType;
        s.pMetricName = base;
        gx_fail(error, GX_ERR_USAGE, "metric '%s' needs a valid rollup or submetric on %s; closest valid: ", name, host->chip);
        if (cupti.cuptiProfilerHostGetSubMetrics(&s) == CUPTI_SUCCESS) {
            /* submetrics are listed with their leading dot: ".sum", ".avg.pct_of_peak_sustained_active" */
            const char *wanted = dot ? dot : (b.metricType == CUPTI_METRIC_TYPE_RATIO ? ".ratio" : ".sum");
            append_closest(error, wanted, s.ppSubMetrics, s.numOfSubmetrics, base, 4);
        }
        return error->kind;
    }
    gx_fail(error, GX_ERR_USAGE, "unknown metric '%s' on %s; did you mean: ", name, host->chip);
    if (load_base_names(host, &(gx_error){0}) == GX_OK)
        append_closest(error, base, (const char *const *)host->base_names, host->base_count, "", 5);
    return error->kind;
}

/* Builds the config image (the pass schedule) for names. */
static int config_image(gx_metric_host *host, const char *const *names, int count, uint8_t **image, size_t *size,
                        gx_error *error)
{
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = host->object;
    add.ppMetricNames = (const char **)names;
    add.numMetrics = (size_t)count;
    CUPTI_CHECK(error, cuptiProfilerHostConfigAddMetrics, &add);
    CUpti_Profiler_Host_GetConfigImageSize_Params s = {.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    s.pHostObject = host->object;
    CUPTI_CHECK(error, cuptiProfilerHostGetConfigImageSize, &s);
    *image = malloc(s.configImageSize);
    if (!*image)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    CUpti_Profiler_Host_GetConfigImage_Params g = {.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    g.pHostObject = host->object;
    g.configImageSize = s.configImageSize;
    g.pConfigImage = *image;
    CUptiResult result = cupti.cuptiProfilerHostGetConfigImage(&g);
    if (result != CUPTI_SUCCESS) {
        free(*image);
        *image = NULL;
        return cupti_fail(error, "cuptiProfilerHostGetConfigImage", result);
    }
    *size = s.configImageSize;
    return GX_OK;
}

int gx_metric_passes(gx_metric_host *host, const char *const *names, int count, size_t *passes, gx_error *error)
{
    for (int i = 0; i < count; i++)
        if (gx_metric_check(host, names[i], NULL, error))
            return error->kind;
    /* a fresh host object: ConfigAddMetrics accumulates */
    gx_metric_host *scratch;
    if (gx_metric_host_open(&scratch, host->chip, error))
        return error->kind;
    uint8_t *image;
    size_t size;
    int status = config_image(scratch, names, count, &image, &size, error);
    if (status == GX_OK) {
        CUpti_Profiler_Host_GetNumOfPasses_Params p = {.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
        p.configImageSize = size;
        p.pConfigImage = image;
        CUptiResult result = cupti.cuptiProfilerHostGetNumOfPasses(&p);
        status = result == CUPTI_SUCCESS ? GX_OK : cupti_fail(error, "cuptiProfilerHostGetNumOfPasses", result);
        *passes = p.numOfPasses;
        free(image);
    }
    gx_metric_host_close(scratch);
    return status;
}

/* ---- device side ---- */

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
    if (!d || cupti_get(error) || gx_device_activate(device, error) || GX_CU(error, d->cuCtxSynchronize()))
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
    CUptiResult result = cupti.cuptiDeviceGetChipName(&chip);
    if (result != CUPTI_SUCCESS) {
        free(p);
        return cupti_fail(error, "cuptiDeviceGetChipName", result);
    }
    snprintf(p->chip, sizeof p->chip, "%s", chip.pChipName);
    CUpti_Profiler_GetCounterAvailability_Params available = {.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    available.ctx = device->context;
    if ((result = cupti.cuptiProfilerGetCounterAvailability(&available)) != CUPTI_SUCCESS
        || !(p->availability = malloc(available.counterAvailabilityImageSize))) {
        free(p);
        return result != CUPTI_SUCCESS ? cupti_fail(error, "cuptiProfilerGetCounterAvailability", result)
                                       : gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    available.pCounterAvailabilityImage = p->availability;
    if ((result = cupti.cuptiProfilerGetCounterAvailability(&available)) != CUPTI_SUCCESS) {
        gx_profiler_close(p);
        return cupti_fail(error, "cuptiProfilerGetCounterAvailability", result);
    }
    if (host_open(&p->validator, p->chip, p->availability, error)) {
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
        cupti.cuptiRangeProfilerDisable(&disable);
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
        CUptiResult disabled = cupti.cuptiRangeProfilerDisable(&disable);
        if (disabled != CUPTI_SUCCESS) {
            free(key);
            return cupti_fail(error, "cuptiRangeProfilerDisable", disabled);
        }
    }
    CUpti_RangeProfiler_Enable_Params enable = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    enable.ctx = p->device->context;
    CUptiResult enabled = cupti.cuptiRangeProfilerEnable(&enable);
    if (enabled != CUPTI_SUCCESS) {
        free(key);
        return cupti_fail(error, "cuptiRangeProfilerEnable", enabled);
    }
    p->range = enable.pRangeProfilerObject;
    free(p->key);
    free(p->config);
    free(p->counter_data);
    gx_metric_host_close(p->config_host);
    p->key = NULL;
    p->config = p->counter_data = NULL;
    p->config_host = NULL;
    if (host_open(&p->config_host, p->chip, p->availability, error)
        || config_image(p->config_host, names, count, &p->config, &p->config_size, error)) {
        free(key);
        return error->kind;
    }
    CUpti_RangeProfiler_GetCounterDataSize_Params size = {.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = p->range;
    size.pMetricNames = (const char **)names;
    size.numMetrics = (size_t)count;
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    CUptiResult result = cupti.cuptiRangeProfilerGetCounterDataSize(&size);
    if (result != CUPTI_SUCCESS || !(p->counter_data = malloc(size.counterDataSize))) {
        free(key);
        return result != CUPTI_SUCCESS ? cupti_fail(error, "cuptiRangeProfilerGetCounterDataSize", result)
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
        CUptiResult stopped = cupti.cuptiRangeProfilerStop(&stop);
        if (launched)
            return error->kind;
        if (stopped != CUPTI_SUCCESS)
            return cupti_fail(error, "cuptiRangeProfilerStop", stopped);
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
