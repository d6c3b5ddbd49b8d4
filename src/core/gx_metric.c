/* The CUPTI host object for one chip, its whole life here (open, config image, close), and CUPTI's
   metric tables read through it without a GPU: names, types, checks with suggestions, listing and
   pass counts. */
#include "gx_metric.h"
#include "gx_suggest.h"
#include "gx_cupti_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names ncu computes itself (launch__*, sm__maximum_warps_*, ...): not CUPTI metrics. */
static int is_ncu_only(const char *name)
{
    static const char *const prefixes[] = {"launch__",
                                           "sm__maximum_warps",
                                           "smsp__maximum_warps",
                                           "device__attribute",
                                           "profiler__",
                                           "smsp__pcsamp",
                                           "sass__inst_executed_per_opcode",
                                           "numa__",
                                           "nvlink__count",
                                           "breakdown:",
                                           NULL};
    for (int i = 0; prefixes[i]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* Whether CUPTI knows no chip of this name: then error says so as a usage error (a misspelled
   --chip is the user's, exit 2), with the likely names and every chip CUPTI knows. */
static int unknown_chip(const char *chip, gx_error *error)
{
    CUpti_Profiler_Host_GetSupportedChips_Params p = {.structSize =
                                                          CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};
    if (gx_cupti.cuptiProfilerHostGetSupportedChips(&p) != CUPTI_SUCCESS || p.numChips == 0)
        return 0;
    for (size_t i = 0; i < p.numChips; i++)
        if (strcmp(chip, p.ppChipNames[i]) == 0)
            return 0;
    char hint[256], chips[2048] = "";
    gx_did_you_mean(chip, p.ppChipNames, p.numChips, hint, sizeof hint);
    for (size_t i = 0; i < p.numChips; i++)
        snprintf(chips + strlen(chips), sizeof chips - strlen(chips), "%s%s", i ? ", " : "", p.ppChipNames[i]);
    gx_fail(error, GX_ERR_USAGE, "unknown chip '%s'%s; the chips this CUPTI knows: %s", chip, hint, chips);
    return 1;
}

/* A host object for chip, with a device's counter availability image or NULL: opened here and closed by
   gx_metric_host_close, so its whole life is in this file. */
int gx_metric_host_open_for_device(gx_metric_host **out, const char *chip, const uint8_t *availability, gx_error *error)
{
    *out = NULL;
    if (gx_cupti_get(error))
        return error->kind;
    gx_metric_host *host = calloc(1, sizeof *host);
    if (!host)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    snprintf(host->chip, sizeof host->chip, "%s", chip);
    CUpti_Profiler_Host_Initialize_Params p = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = host->chip;
    p.pCounterAvailabilityImage = availability;
    CUptiResult result = gx_cupti.cuptiProfilerHostInitialize(&p);
    if (result != CUPTI_SUCCESS) {
        free(host);
        if ((result == CUPTI_ERROR_INVALID_CHIP_NAME || result == CUPTI_ERROR_INVALID_PARAMETER) &&
            unknown_chip(chip, error))
            return error->kind;
        return gx_cupti_fail(error, "cuptiProfilerHostInitialize", result);
    }
    host->object = p.pHostObject;
    *out = host;
    return GX_OK;
}

int gx_metric_host_open(gx_metric_host **out, const char *chip, gx_error *error)
{
    return gx_metric_host_open_for_device(out, chip, NULL, error);
}

void gx_metric_host_close(gx_metric_host *host)
{
    if (!host)
        return;
    if (host->object) {
        CUpti_Profiler_Host_Deinitialize_Params p = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        p.pHostObject = host->object;
        gx_cupti.cuptiProfilerHostDeinitialize(&p);
    }
    for (size_t i = 0; i < host->base_count; i++)
        free(host->base_names[i]);
    free(host->base_names);
    free(host->base_types);
    free(host);
}

/* Builds the config image (the pass schedule) for names. */
int gx_metric_host_config_image(gx_metric_host *host, const char *const *names, int count, uint8_t **image,
                                size_t *size, gx_error *error)
{
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {.structSize =
                                                           CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = host->object;
    add.ppMetricNames = (const char **)names;
    add.numMetrics = (size_t)count;
    CUPTI_CHECK(error, cuptiProfilerHostConfigAddMetrics, &add);
    CUpti_Profiler_Host_GetConfigImageSize_Params s = {.structSize =
                                                           CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    s.pHostObject = host->object;
    CUPTI_CHECK(error, cuptiProfilerHostGetConfigImageSize, &s);
    *image = malloc(s.configImageSize);
    if (!*image)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    CUpti_Profiler_Host_GetConfigImage_Params g = {.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    g.pHostObject = host->object;
    g.configImageSize = s.configImageSize;
    g.pConfigImage = *image;
    CUptiResult result = gx_cupti.cuptiProfilerHostGetConfigImage(&g);
    if (result != CUPTI_SUCCESS) {
        free(*image);
        *image = NULL;
        return gx_cupti_fail(error, "cuptiProfilerHostGetConfigImage", result);
    }
    *size = s.configImageSize;
    return GX_OK;
}

const char *gx_metric_host_chip(const gx_metric_host *host)
{
    return host->chip;
}

int gx_metric_chips(char *buffer, size_t size, gx_error *error)
{
    if (gx_cupti_get(error))
        return error->kind;
    CUpti_Profiler_Host_GetSupportedChips_Params p = {.structSize =
                                                          CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};
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
        CUpti_Profiler_Host_GetBaseMetrics_Params p = {.structSize =
                                                           CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
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

/* Appends up to `want` of candidates closest to `target` to the error. */
static void append_closest(gx_error *error, const char *target, const char *const *candidates, size_t count,
                           const char *prefix, int want)
{
    int chosen[16];
    int have = gx_suggest(target, candidates, count, want, 0, chosen);
    for (int k = 0; k < have; k++)
        gx_error_append(error, "%s%s%s", k ? ", " : "", prefix, candidates[chosen[k]]);
}

int gx_metric_check(gx_metric_host *host, const char *name, gx_metric_info *info, gx_error *error)
{
    if (is_ncu_only(name))
        return gx_fail(error, GX_ERR_USAGE,
                       "'%s' is computed by ncu from the launch, not a hardware counter CUPTI can collect%s", name,
                       strncmp(name, "launch__occupancy", 17) == 0 || strncmp(name, "sm__maximum_warps", 17) == 0
                           ? ": kernel:occupancy{} gives the same limits"
                           : "");
    CUpti_Profiler_Host_GetMetricProperties_Params p = {.structSize =
                                                            CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    p.pHostObject = host->object;
    p.pMetricName = name;
    const char *dot = strchr(name, '.');
    if (gx_cupti.cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS && dot) {
        if (info) {
            info->type = (int)p.metricType;
            info->description = p.pDescription;
            info->hardware_unit = p.pHwUnit;
            info->dimension_unit = p.pDimUnit;
        }
        /* a throughput needs .avg.pct_of_peak_sustained_*, a counter a rollup: ask CUPTI which suffixes exist */
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(dot - name), name);
        CUpti_Profiler_Host_GetSubMetrics_Params s = {.structSize =
                                                          CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
        s.pHostObject = host->object;
        s.metricType = p.metricType;
        s.pMetricName = base;
        if (gx_cupti.cuptiProfilerHostGetSubMetrics(&s) != CUPTI_SUCCESS)
            return GX_OK;
        for (size_t i = 0; i < s.numOfSubmetrics; i++)
            if (strcmp(s.ppSubMetrics[i], dot + 1) == 0 ||
                (s.ppSubMetrics[i][0] == '.' && strcmp(s.ppSubMetrics[i], dot) == 0))
                return GX_OK;
        gx_fail(error, GX_ERR_USAGE, "metric '%s' has no suffix '%s'; closest valid: ", name, dot);
        append_closest(error, dot, s.ppSubMetrics, s.numOfSubmetrics, base, 4);
        return error->kind;
    }
    char base[256];
    snprintf(base, sizeof base, "%.*s", dot ? (int)(dot - name) : (int)strlen(name), name);
    CUpti_Profiler_Host_GetMetricProperties_Params b = {.structSize =
                                                            CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    b.pHostObject = host->object;
    b.pMetricName = base;
    if (gx_cupti.cuptiProfilerHostGetMetricProperties(&b) == CUPTI_SUCCESS) {
        CUpti_Profiler_Host_GetSubMetrics_Params s = {.structSize =
                                                          CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
        s.pHostObject = host->object;
        s.metricType = b.metricType;
        s.pMetricName = base;
        gx_fail(error, GX_ERR_USAGE, "metric '%s' needs a valid rollup or submetric on %s; closest valid: ", name,
                host->chip);
        if (gx_cupti.cuptiProfilerHostGetSubMetrics(&s) == CUPTI_SUCCESS) {
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
    int status = gx_metric_host_config_image(scratch, names, count, &image, &size, error);
    if (status == GX_OK) {
        CUpti_Profiler_Host_GetNumOfPasses_Params p = {.structSize =
                                                           CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
        p.configImageSize = size;
        p.pConfigImage = image;
        CUptiResult result = gx_cupti.cuptiProfilerHostGetNumOfPasses(&p);
        status = result == CUPTI_SUCCESS ? GX_OK : gx_cupti_fail(error, "cuptiProfilerHostGetNumOfPasses", result);
        *passes = p.numOfPasses;
        free(image);
    }
    gx_metric_host_close(scratch);
    return status;
}
