/* The range profiler on a device: hardware counters of launches, replayed by the caller (user
   replay) with its buffers restored and the L2 flushed before every pass. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL /* header-only: no libxxhash at run time */
#include <xxhash.h>

#include "gx_clock.h"
#include "gx_cache.h"
#include "gx_files.h"
#include "gx_cupti.h"
#include "gx_cupti_internal.h"
#include "gx_profiler.h"
#include "gx_driver.h"

struct gx_profiler {
    const gx_device *device;
    char chip[64];
    uint8_t *availability;
    size_t availability_size;
    char cache_note[4400]; /* a damaged cache entry that was rebuilt, for the caller to show */
    gx_metric_host *validator;
    CUpti_RangeProfiler_Object *range; /* enabled on the device's context on first use */
    char *key;                         /* the metric list the cached images are for */
    gx_metric_host *config_host;
    uint8_t *config, *counter_data;
    size_t config_size, counter_data_size;
    int ranges;          /* ranges per pass the counter-data image holds */
    CUdeviceptr scratch; /* snapshots of the buffers a replayed launch may write */
    size_t scratch_bytes;
    gx_profile_timing timing; /* where the last collect's time went */
};

const gx_profile_timing *gx_profiler_timing(const gx_profiler *p)
{
    return &p->timing;
}

/* Where the device's counter availability image is cached: one entry per chip, GPU, kernel driver
   and CUPTI version (an entry of another driver or CUPTI is never read). "" when there is no cache. */
static void availability_path(const gx_profiler *p, char *path, size_t size)
{
    char directory[3000], driver[256] = "";
    gx_cache_directory(directory, sizeof directory);
    path[0] = 0;
    if (!directory[0])
        return;
    FILE *version = fopen("/proc/driver/nvidia/version", "r");
    if (version) {
        if (!fgets(driver, sizeof driver, version))
            driver[0] = 0;
        fclose(version);
    }
    int cuda_driver = 0;
    unsigned cupti = 0;
    gx_error ignored;
    const gx_driver *d = gx_driver_get(&ignored);
    if (d)
        d->cuDriverGetVersion(&cuda_driver);
    gx_cupti_version(&cupti, &ignored);
    char key[1024];
    int length =
        snprintf(key, sizeof key, "%s\n%s\n%s\n%d\n%u\n", p->chip, p->device->uuid, driver, cuda_driver, cupti);
    snprintf(path, size, "%s/cupti/availability-%s-%016llx", directory, p->chip,
             (unsigned long long)XXH3_64bits(key, (size_t)length));
}

/* The counter availability image: from the cache when an intact entry is there (fetching it costs
   0.13 s of every process on an H200), else from the device, then cached. A damaged entry is
   fetched again and rewritten, with a note (gx_profiler_cache_note). */
static int counter_availability(gx_profiler *p, gx_error *error)
{
    char path[4096], why[160] = "";
    availability_path(p, path, sizeof path);
    if (path[0]) {
        int found = gx_blob_load(path, &p->availability, &p->availability_size, why, sizeof why);
        if (found == GX_OK)
            return GX_OK;
        if (found == -2)
            snprintf(p->cache_note, sizeof p->cache_note,
                     "the cached counter availability %s was damaged (%s); "
                     "fetched again from the GPU",
                     path, why);
    }
    CUpti_Profiler_GetCounterAvailability_Params available = {
        .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    available.ctx = p->device->context;
    CUPTI_CHECK(error, cuptiProfilerGetCounterAvailability, &available);
    if (!(p->availability = malloc(available.counterAvailabilityImageSize)))
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    p->availability_size = available.counterAvailabilityImageSize;
    available.pCounterAvailabilityImage = p->availability;
    CUPTI_CHECK(error, cuptiProfilerGetCounterAvailability, &available);
    if (path[0]) { /* a cache that cannot be written costs only this fetch next time */
        char directory[4096];
        snprintf(directory, sizeof directory, "%s", path);
        *strrchr(directory, '/') = 0;
        gx_error ignored;
        if (gx_make_directories(directory, &ignored) == GX_OK)
            gx_blob_store(path, p->availability, p->availability_size, &ignored);
    }
    return GX_OK;
}

const char *gx_profiler_cache_note(const gx_profiler *p)
{
    return p->cache_note;
}

int gx_profiler_open(gx_profiler **out, const gx_device *device, gx_error *error)
{
    *out = NULL;
    const gx_driver *d = gx_driver_get(error);
    /* nothing in flight while CUPTI sets up: a launch still running when the range profiler
       starts crashed CUPTI inside NVPW_CUDA_Profiler_BeginPass on the H200 */
    if (!d || gx_cupti_get(error) || gx_device_activate(device, error) || GX_CU(error, d->cuCtxSynchronize()))
        return error->kind;
    if (gx_cupti_device_supported(device, CUPTI_PROFILER_RANGE_PROFILING, error))
        return error->kind;
    if (strstr(device->name, "MIG"))
        return gx_fail(error, GX_ERR_PROFILER,
                       "%s is a MIG instance: counters need a compute instance that owns its whole GPU instance",
                       device->name);
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
    if (counter_availability(p, error)) {
        gx_profiler_close(p);
        return error->kind;
    }
    if (gx_metric_host_open_for_device(&p->validator, p->chip, p->availability, error)) {
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

const char *gx_profiler_chip(const gx_profiler *p)
{
    return p->chip;
}
gx_metric_host *gx_profiler_host(gx_profiler *p)
{
    return p->validator;
}

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
static int prepare_images(gx_profiler *p, const char *const *names, int count, int ranges, gx_error *error)
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
    if (p->key && strcmp(p->key, key) == 0 && p->ranges == ranges) {
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
    if (gx_metric_host_open_for_device(&p->config_host, p->chip, p->availability, error) ||
        gx_metric_host_config_image(p->config_host, names, count, &p->config, &p->config_size, error)) {
        free(key);
        return error->kind;
    }
    CUpti_RangeProfiler_GetCounterDataSize_Params size = {
        .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = p->range;
    size.pMetricNames = (const char **)names;
    size.numMetrics = (size_t)count;
    size.maxNumOfRanges = (size_t)ranges;
    size.maxNumRangeTreeNodes = (size_t)ranges;
    CUptiResult result = gx_cupti.cuptiRangeProfilerGetCounterDataSize(&size);
    if (result != CUPTI_SUCCESS || !(p->counter_data = malloc(size.counterDataSize))) {
        free(key);
        return result != CUPTI_SUCCESS ? gx_cupti_fail(error, "cuptiRangeProfilerGetCounterDataSize", result)
                                       : gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    }
    p->counter_data_size = size.counterDataSize;
    p->key = key;
    p->ranges = ranges;
    return GX_OK;
}

/* One replay: SetConfig for `ranges` ranges per pass, then passes of Start, pass(), Stop until
   CUPTI has every pass, then decode. pass() enqueues exactly `ranges` kernels. */
typedef int (*replay_pass_fn)(void *user, int pass, gx_error *error);

static int replay(gx_profiler *p, const char *const *names, int count, int ranges, replay_pass_fn before,
                  replay_pass_fn inside, void *user, int *passes, gx_error *error)
{
    gx_profile_timing *t = &p->timing;
    memset(t, 0, sizeof *t);
    double mark = gx_clock_s();
    *passes = 0;
    if (count <= 0)
        return gx_fail(error, GX_ERR_USAGE, "no metrics asked for");
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(p->device, error))
        return error->kind;
    if (GX_CU(error, d->cuCtxSynchronize()) || prepare_images(p, names, count, ranges, error))
        return error->kind;
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
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
    config.range = CUPTI_AutoRange;       /* kernel boundary to kernel boundary: ncu's numbers */
    config.replayMode = CUPTI_UserReplay; /* we restore the buffers and flush L2 before each pass */
    config.maxRangesPerPass = (size_t)ranges;
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    CUPTI_CHECK(error, cuptiRangeProfilerSetConfig, &config);
    double now = gx_clock_s();
    t->setup_s = now - mark;
    mark = now;
    for (int pass = 0;; pass++) {
        if (pass >= 256)
            return gx_fail(error, GX_ERR_PROFILER, "CUPTI asked for more than 256 replay passes");
        if ((before && before(user, pass, error)) || GX_CU(error, d->cuCtxSynchronize()))
            return error->kind;
        now = gx_clock_s();
        t->prepare_s += now - mark;
        mark = now;
        CUpti_RangeProfiler_Start_Params start = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
        start.pRangeProfilerObject = p->range;
        CUPTI_CHECK(error, cuptiRangeProfilerStart, &start);
        now = gx_clock_s();
        t->start_s += now - mark;
        mark = now;
        int launched = inside(user, pass, error);
        now = gx_clock_s();
        t->launch_s += now - mark;
        mark = now;
        CUpti_RangeProfiler_Stop_Params stop = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        stop.pRangeProfilerObject = p->range;
        CUptiResult stopped = gx_cupti.cuptiRangeProfilerStop(&stop);
        now = gx_clock_s();
        t->stop_s += now - mark;
        mark = now;
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
        return gx_fail(error, GX_ERR_PROFILER,
                       "CUPTI dropped %zu range(s): the profiled work ran more kernels than the %d "
                       "expected",
                       decode.numOfRangeDropped, ranges);
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
        .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = p->counter_data;
    info.counterDataImageSize = p->counter_data_size;
    CUPTI_CHECK(error, cuptiRangeProfilerGetCounterDataInfo, &info);
    if (info.numTotalRanges != (size_t)ranges)
        return gx_fail(error, GX_ERR_PROFILER, "CUPTI recorded %zu range(s) where %d kernel(s) ran",
                       info.numTotalRanges, ranges);
    now = gx_clock_s();
    t->decode_s = now - mark;
    return GX_OK;
}

/* The values of one range. */
static int evaluate(gx_profiler *p, const char *const *names, int count, int range, double *values, gx_error *error)
{
    CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate = {
        .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    evaluate.pHostObject = p->config_host->object;
    evaluate.pCounterDataImage = p->counter_data;
    evaluate.counterDataImageSize = p->counter_data_size;
    evaluate.rangeIndex = (size_t)range;
    evaluate.ppMetricNames = (const char **)names;
    evaluate.numMetrics = (size_t)count;
    evaluate.pMetricValues = values;
    CUPTI_CHECK(error, cuptiProfilerHostEvaluateToGpuValues, &evaluate);
    return GX_OK;
}

struct single {
    gx_pass_fn prepare, launch;
    void *user;
};

static int single_before(void *user, int pass, gx_error *error)
{
    struct single *s = user;
    return s->prepare(s->user, pass, error);
}

static int single_inside(void *user, int pass, gx_error *error)
{
    struct single *s = user;
    return s->launch(s->user, pass, error);
}

int gx_profiler_collect_ranges(gx_profiler *p, const char *const *names, int count, int ranges, gx_pass_fn prepare,
                               gx_pass_fn run, void *user, double *values, int *passes, gx_error *error)
{
    if (ranges <= 0)
        return gx_fail(error, GX_ERR_USAGE, "no kernels to profile: the work launched none");
    struct single s = {prepare, run, user};
    if (replay(p, names, count, ranges, single_before, single_inside, &s, passes, error))
        return error->kind;
    double mark = gx_clock_s();
    int status = GX_OK;
    for (int r = 0; r < ranges && status == GX_OK; r++)
        status = evaluate(p, names, count, r, values + (size_t)r * (size_t)count, error);
    p->timing.evaluate_s = gx_clock_s() - mark;
    return status;
}

int gx_profiler_collect(gx_profiler *p, const char *const *names, int count, gx_pass_fn prepare, gx_pass_fn launch,
                        void *user, double *values, int *passes, gx_error *error)
{
    return gx_profiler_collect_ranges(p, names, count, 1, prepare, launch, user, values, passes, error);
}

struct batch {
    int launches;
    gx_batch_fn prepare, launch;
    void *user;
};

static int batch_inside(void *user, int pass, gx_error *error)
{
    struct batch *b = user;
    for (int i = 0; i < b->launches; i++)
        if (b->prepare(b->user, pass, i, error) || b->launch(b->user, pass, i, error))
            return error->kind;
    return GX_OK;
}

int gx_profiler_collect_batch(gx_profiler *p, const char *const *names, int count, int launches,
                              int kernels_per_prepare, gx_batch_fn prepare, gx_batch_fn launch, void *user,
                              double *values, int *passes, gx_error *error)
{
    if (launches <= 0)
        return gx_fail(error, GX_ERR_USAGE, "a batch needs at least one launch");
    struct batch b = {launches, prepare, launch, user};
    int per_launch = kernels_per_prepare + 1;
    if (replay(p, names, count, launches * per_launch, NULL, batch_inside, &b, passes, error))
        return error->kind;
    double mark = gx_clock_s();
    for (int i = 0; i < launches; i++) /* each launch's range comes after its prepare's kernels */
        if (evaluate(p, names, count, i * per_launch + kernels_per_prepare, values + (size_t)i * (size_t)count, error))
            return error->kind;
    p->timing.evaluate_s = gx_clock_s() - mark;
    return GX_OK;
}
