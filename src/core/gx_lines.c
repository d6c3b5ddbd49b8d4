/* Per-instruction profiles of one launch: CUPTI's SASS metrics and PC sampling, mapped to source
   lines (gx_lines.h). The recipe the lent GPUs settled (bench/lines/README.md): the kernel runs from
   a copy of its image loaded after each stage is enabled (and unloaded after it is disabled); PC
   sampling's records are read from the configured buffer after every Stop and at Disable, and from
   cuptiPCSamplingGetData into a buffer of its own until nothing remains; one SASS record comes back
   per (instruction, metric); and the two collectors never share a process (gx_lines_plan_for). */
#include "gx_clock.h"
#include "gx_lines.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cupti_internal.h"
#include "gx_driver.h"

const char *const gx_lines_default_metrics[] = {
    "smsp__sass_inst_executed",        /* warp-level instructions executed */
    "smsp__sass_thread_inst_executed", /* thread-level: divergence when under 32x */
    "smsp__sass_sectors_mem_global",   /* global memory sectors: coalescing, traffic */
    "smsp__sass_sectors_mem_global_ideal",
    "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared", /* shared memory wavefronts: bank conflicts */
    "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal",
    "smsp__sass_sectors_mem_local", /* local memory: spills, run-time indexed arrays */
};
const int gx_lines_default_metric_count = (int)(sizeof gx_lines_default_metrics / sizeof gx_lines_default_metrics[0]);

/* ---- the process rule: one collector a process ---- */

static int process_owner; /* GX_LINES_PC or GX_LINES_SASS once one was enabled here */

int gx_lines_owner(void)
{
    return process_owner;
}

void gx_lines_plan_for(int owner, int want_pc, int want_sass, gx_lines_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->run_pc = want_pc && owner != GX_LINES_SASS;
    plan->run_sass = want_sass && !plan->run_pc && owner != GX_LINES_PC;
    if (want_pc && !plan->run_pc)
        snprintf(plan->why_pc, sizeof plan->why_pc,
                 "not taken: this process counted SASS metrics, and PC sampling after them gives no samples "
                 "(CUPTI 13, driver 580); sample PCs in a process of their own (docs/howto/lines.md)");
    if (want_sass && !plan->run_sass)
        snprintf(plan->why_sass, sizeof plan->why_sass,
                 "not taken: this process samples PCs, and SASS metrics after PC sampling fail (CUPTI 13, "
                 "driver 580); count them in a process of their own: line_profile{sass = true, pc_sampling = "
                 "false} (docs/howto/lines.md)");
}

/* Copies a message into a stage's note, cut to fit. */
static void note(char *to, size_t size, const char *message)
{
    size_t length = strlen(message);
    if (length >= size)
        length = size - 1;
    memcpy(to, message, length);
    to[length] = 0;
}

/* ---- the instructions, indexed by (function, pc) ---- */

static size_t key_hash(const char *function, uint64_t pc)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the name, then the pc mixed in */
    for (const unsigned char *c = (const unsigned char *)function; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    h ^= pc + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return (size_t)(h ^ (h >> 29));
}

static int index_grow(gx_line_profile *p)
{
    size_t count = p->slot_count ? p->slot_count * 2 : 1024;
    size_t *slots = malloc(count * sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < count; i++)
        slots[i] = (size_t)-1;
    for (size_t i = 0; i < p->count; i++) {
        size_t s = key_hash(p->instructions[i].function, p->instructions[i].pc) & (count - 1);
        while (slots[s] != (size_t)-1)
            s = (s + 1) & (count - 1);
        slots[s] = i;
    }
    free(p->slots);
    p->slots = slots;
    p->slot_count = count;
    return 0;
}

gx_line_instruction *gx_line_profile_instruction(gx_line_profile *p, const char *function, uint64_t pc)
{
    if (!function)
        function = "";
    if ((p->count + 1) * 2 > p->slot_count && index_grow(p))
        return NULL;
    size_t s = key_hash(function, pc) & (p->slot_count - 1);
    while (p->slots[s] != (size_t)-1) {
        gx_line_instruction *i = &p->instructions[p->slots[s]];
        if (i->pc == pc && strcmp(i->function, function) == 0)
            return i;
        s = (s + 1) & (p->slot_count - 1);
    }
    if (p->count == p->capacity) {
        size_t capacity = p->capacity ? p->capacity * 2 : 256;
        gx_line_instruction *grown = realloc(p->instructions, capacity * sizeof *grown);
        if (!grown)
            return NULL;
        p->instructions = grown;
        p->capacity = capacity;
    }
    gx_line_instruction *i = &p->instructions[p->count];
    memset(i, 0, sizeof *i);
    if (!(i->function = strdup(function)))
        return NULL;
    i->pc = pc;
    if (p->reason_count && !(i->samples = calloc((size_t)p->reason_count, sizeof *i->samples))) {
        free(i->function);
        return NULL;
    }
    p->slots[s] = p->count++;
    return i;
}

void gx_line_profile_free(gx_line_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->count; i++) {
        free(p->instructions[i].function);
        free(p->instructions[i].samples);
        free(p->instructions[i].file);
        free(p->instructions[i].directory);
    }
    free(p->instructions);
    free(p->reason_names);
    free(p->slots);
    memset(p, 0, sizeof *p);
}

/* ---- a fresh copy of the kernel for a stage ---- */

struct fresh {
    gx_module module;
    gx_kernel kernel;
    int loaded;
};

static int fresh_load(struct fresh *f, const gx_device *device, const void *image, const char *symbol, gx_error *error)
{
    memset(f, 0, sizeof *f);
    if (gx_module_load(&f->module, device, image, NULL, 0, error))
        return error->kind;
    f->loaded = 1;
    if (gx_kernel_get(&f->kernel, &f->module, symbol, error))
        return error->kind;
    return GX_OK;
}

static void fresh_unload(struct fresh *f)
{
    if (f->loaded)
        gx_module_unload(&f->module);
    f->loaded = 0;
}

/* A CUPTI call of a stage: on failure, the stage's error says which call and why. */
#define STAGE_CALL(call, params)                                                                                       \
    (result_ = gx_cupti.call(params),                                                                                  \
     result_ == CUPTI_SUCCESS ? 0 : (gx_cupti_fail(&stage_failure_, #call, result_), 1))

/* ---- SASS metrics ---- */

/* One configuration of `count` metrics from `first`: enable, launch once, flush, disable. A
   failure of CUPTI is the stage's (*refused set), of the launch the caller's (returned). */
static int sass_pass(gx_line_profile *p, const gx_device *device, const void *image, const char *symbol,
                     const char *chip, int first, int count, gx_line_launch_fn launch, void *user, int *refused,
                     gx_error *error)
{
    CUptiResult result_;
    gx_error stage_failure_;
    CUpti_SassMetrics_Config config[GX_LINES_MAX_METRICS];
    uint64_t ids[GX_LINES_MAX_METRICS];
    for (int m = 0; m < count; m++) {
        CUpti_SassMetrics_GetProperties_Params properties = {.structSize =
                                                                 CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
        properties.pChipName = chip;
        properties.pMetricName = p->metric_names[first + m];
        if (STAGE_CALL(cuptiSassMetricsGetProperties, &properties)) {
            if (stage_failure_.kind == GX_ERR_USAGE) { /* a name CUPTI does not know: the caller's mistake */
                *error = stage_failure_;
                gx_error_append(error, " (SASS metric %s on %s)", p->metric_names[first + m], chip);
                return error->kind;
            }
            snprintf(p->sass_error, sizeof p->sass_error, "%.800s (SASS metric %s on %s)", stage_failure_.message,
                     p->metric_names[first + m], chip);
            *refused = 1;
            return GX_OK;
        }
        ids[m] = config[m].metricId = properties.metric.metricId;
        config[m].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
    }
    CUpti_SassMetricsSetConfig_Params set = {.structSize = CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
    set.numOfMetricConfig = (size_t)count;
    set.pConfigs = config;
    set.deviceIndex = (uint32_t)device->ordinal;
    if (STAGE_CALL(cuptiSassMetricsSetConfig, &set)) {
        note(p->sass_error, sizeof p->sass_error, stage_failure_.message);
        *refused = 1;
        return GX_OK;
    }
    process_owner = GX_LINES_SASS;
    int status = GX_OK;
    struct fresh fresh = {0};
    CUpti_SassMetricsEnable_Params enable = {.structSize = CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
    enable.ctx = device->context;
    enable.enableLazyPatching = 1;
    if (STAGE_CALL(cuptiSassMetricsEnable, &enable)) {
        note(p->sass_error, sizeof p->sass_error, stage_failure_.message);
        *refused = 1;
    } else {
        const gx_driver *d = gx_driver_get(error);
        if (!d || fresh_load(&fresh, device, image, symbol, error) || launch(user, &fresh.kernel, error) ||
            GX_CU(error, d->cuCtxSynchronize()))
            status = error->kind;
        CUpti_SassMetricsGetDataProperties_Params properties = {
            .structSize = CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
        properties.ctx = device->context;
        if (status == GX_OK && STAGE_CALL(cuptiSassMetricsGetDataProperties, &properties)) {
            note(p->sass_error, sizeof p->sass_error, stage_failure_.message);
            *refused = 1;
        } else if (status == GX_OK && properties.numOfPatchedInstructionRecords > 0) {
            size_t records = properties.numOfPatchedInstructionRecords, instances = properties.numOfInstances;
            CUpti_SassMetrics_Data *data = calloc(records, sizeof *data);
            /* each record holds one metric's instances; room for every metric's, whatever the layout */
            CUpti_SassMetrics_InstanceValue *values =
                calloc(records * (instances ? instances : 1) * (size_t)count, sizeof *values);
            if (!data || !values)
                status = gx_fail(error, GX_ERR_SYSTEM, "out of memory for %zu SASS records", records);
            else {
                for (size_t r = 0; r < records; r++) {
                    data[r].structSize = sizeof data[r];
                    data[r].pInstanceValues = values + r * (instances ? instances : 1) * (size_t)count;
                }
                CUpti_SassMetricsFlushData_Params flush = {.structSize = CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
                flush.ctx = device->context;
                flush.numOfPatchedInstructionRecords = records;
                flush.numOfInstances = instances;
                flush.pMetricsData = data;
                if (STAGE_CALL(cuptiSassMetricsFlushData, &flush)) {
                    note(p->sass_error, sizeof p->sass_error, stage_failure_.message);
                    *refused = 1;
                } else {
                    for (size_t r = 0; r < records && status == GX_OK; r++) {
                        /* every instance of the record is one metric's: which one its id says */
                        for (size_t k = 0; k < instances; k++) {
                            int m = -1;
                            for (int j = 0; j < count; j++)
                                if (data[r].pInstanceValues[k].metricId == ids[j])
                                    m = first + j;
                            if (m < 0)
                                continue;
                            gx_line_instruction *i =
                                gx_line_profile_instruction(p, data[r].functionName, data[r].pcOffset);
                            if (!i)
                                status = gx_fail(error, GX_ERR_SYSTEM, "out of memory for the line profile");
                            else
                                i->values[m] += data[r].pInstanceValues[k].value;
                        }
                    }
                }
            }
            free(data);
            free(values);
        }
        CUpti_SassMetricsDisable_Params disable = {.structSize = CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
        disable.ctx = device->context;
        if (STAGE_CALL(cuptiSassMetricsDisable, &disable) && status == GX_OK && !*refused) {
            note(p->sass_error, sizeof p->sass_error, stage_failure_.message);
            *refused = 1;
        }
    }
    fresh_unload(&fresh);
    CUpti_SassMetricsUnsetConfig_Params unset = {.structSize = CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};
    unset.deviceIndex = (uint32_t)device->ordinal;
    if (STAGE_CALL(cuptiSassMetricsUnsetConfig, &unset) && status == GX_OK && !*refused) {
        note(p->sass_error, sizeof p->sass_error, stage_failure_.message);
        *refused = 1;
    }
    p->sass_passes++;
    return status;
}

/* Every metric in one configuration; when CUPTI refuses that, one configuration per metric. */
static int sass_stage(gx_line_profile *p, const gx_device *device, const void *image, const char *symbol,
                      gx_line_launch_fn launch, void *user, gx_error *error)
{
    double started = gx_clock_s();
    gx_error refusal;
    if (gx_cupti_device_supported(device, CUPTI_PROFILER_SASS_METRICS, &refusal)) {
        if (refusal.kind != GX_ERR_PROFILER) {
            *error = refusal;
            return error->kind;
        }
        note(p->sass_error, sizeof p->sass_error, refusal.message);
        return GX_OK;
    }
    CUpti_Device_GetChipName_Params chip = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = (size_t)device->ordinal;
    CUptiResult result = gx_cupti.cuptiDeviceGetChipName(&chip);
    if (result != CUPTI_SUCCESS) {
        gx_cupti_fail(&refusal, "cuptiDeviceGetChipName", result);
        note(p->sass_error, sizeof p->sass_error, refusal.message);
        return GX_OK;
    }
    int refused = 0;
    if (sass_pass(p, device, image, symbol, chip.pChipName, 0, p->metric_count, launch, user, &refused, error))
        return error->kind;
    if (refused && p->metric_count > 1) {
        char first_refusal[sizeof p->sass_error];
        note(first_refusal, sizeof first_refusal, p->sass_error);
        for (size_t i = 0; i < p->count; i++)
            memset(p->instructions[i].values, 0, sizeof p->instructions[i].values);
        refused = 0;
        p->sass_error[0] = 0;
        for (int m = 0; m < p->metric_count && !refused; m++)
            if (sass_pass(p, device, image, symbol, chip.pChipName, m, 1, launch, user, &refused, error))
                return error->kind;
        if (refused)
            snprintf(p->sass_error + strlen(p->sass_error), sizeof p->sass_error - strlen(p->sass_error),
                     " (and with all %d metrics at once: %.300s)", p->metric_count, first_refusal);
    }
    p->sass_done = !refused;
    p->sass_seconds = gx_clock_s() - started;
    return GX_OK;
}

/* ---- PC sampling ---- */

/* PC sampling on a context: enabled, its stall reasons, configured with a buffer CUPTI writes to
   (configured) and one GetData fills (own). Closed after each profile, or kept open between them
   (GX_LINES_PC_KEEP: enabled once a context and left so, as Triton's Proton does). */
struct pc_session {
    CUcontext context;
    int open;
    int period, serialized;
    size_t reasons;
    uint32_t *reason_index; /* CUPTI's index of each reason */
    char (*reason_names)[GX_LINES_NAME_SIZE];
    CUpti_PCSamplingData configured, own;
};
static struct pc_session kept; /* the context's session, in keep mode */

static int buffer_alloc(CUpti_PCSamplingData *b, size_t pcs, size_t reasons)
{
    memset(b, 0, sizeof *b);
    b->size = sizeof *b;
    b->collectNumPcs = pcs;
    if (!(b->pPcData = calloc(pcs, sizeof *b->pPcData)))
        return -1;
    for (size_t i = 0; i < pcs; i++) {
        b->pPcData[i].size = sizeof b->pPcData[i];
        if (!(b->pPcData[i].stallReason = calloc(reasons ? reasons : 1, sizeof *b->pPcData[i].stallReason)))
            return -1;
    }
    return 0;
}

static void buffer_free(CUpti_PCSamplingData *b)
{
    for (size_t i = 0; b->pPcData && i < b->collectNumPcs; i++)
        free(b->pPcData[i].stallReason);
    free(b->pPcData);
    memset(b, 0, sizeof *b);
}

/* Adds what a buffer holds to the profile, then marks it read (a buffer CUPTI did not touch since
   is never counted twice). CUPTI's function names are the caller's to free once every record is
   processed, but may be shared with the records of later ranges (cupti_pcsampling.h): a few bytes
   a function are left, never a name freed that CUPTI still hands out. */
static int take_buffer(struct pc_session *s, gx_line_profile *p, CUpti_PCSamplingData *b, gx_error *error)
{
    p->total_samples += b->totalSamples;
    p->dropped_samples += b->droppedSamples;
    p->non_user_samples += b->nonUsrKernelsTotalSamples;
    p->buffer_full |= b->hardwareBufferFull != 0;
    size_t pcs = b->totalNumPcs < b->collectNumPcs ? b->totalNumPcs : b->collectNumPcs;
    for (size_t k = 0; k < pcs; k++) {
        CUpti_PCSamplingPCData *d = &b->pPcData[k];
        gx_line_instruction *i = gx_line_profile_instruction(p, d->functionName, d->pcOffset);
        if (!i || !i->samples)
            return gx_fail(error, GX_ERR_SYSTEM, "out of memory for the line profile");
        size_t reasons = d->stallReasonCount < s->reasons ? d->stallReasonCount : s->reasons;
        for (size_t r = 0; r < reasons; r++)
            for (size_t n = 0; n < s->reasons && (int)n < p->reason_count; n++)
                if (s->reason_index[n] == d->stallReason[r].pcSamplingStallReasonIndex) {
                    i->samples[n] += d->stallReason[r].samples;
                    if (!strstr(s->reason_names[n], "not_issued"))
                        p->record_samples += d->stallReason[r].samples;
                    break;
                }
    }
    b->totalNumPcs = 0;
    b->remainingNumPcs = 0;
    b->totalSamples = b->droppedSamples = b->nonUsrKernelsTotalSamples = 0;
    b->hardwareBufferFull = 0;
    return GX_OK;
}

/* After a Stop: what Stop left in the configured buffer, then GetData until nothing remains. */
static int drain(struct pc_session *s, gx_line_profile *p, int *refused, gx_error *error)
{
    CUptiResult result_;
    gx_error stage_failure_;
    if (take_buffer(s, p, &s->configured, error))
        return error->kind;
    for (int round = 0; round < 100000; round++) {
        CUpti_PCSamplingGetDataParams get = {.size = CUpti_PCSamplingGetDataParamsSize};
        get.ctx = s->context;
        get.pcSamplingData = &s->own;
        if (STAGE_CALL(cuptiPCSamplingGetData, &get)) {
            if (result_ == CUPTI_ERROR_OUT_OF_MEMORY) { /* the hardware buffer filled: what came is kept */
                p->buffer_full = 1;
                return take_buffer(s, p, &s->own, error);
            }
            note(p->pc_error, sizeof p->pc_error, stage_failure_.message);
            *refused = 1;
            return GX_OK;
        }
        size_t remaining = s->own.remainingNumPcs, got = s->own.totalNumPcs;
        if (take_buffer(s, p, &s->own, error))
            return error->kind;
        if (remaining == 0 || got == 0)
            break;
    }
    return GX_OK;
}

/* The collection mode, start/stop control, the parsed format, the configured buffer, the period. */
static int configure(struct pc_session *s, int serialized, int period, gx_error *failure)
{
    CUptiResult result_;
    gx_error stage_failure_;
    CUpti_PCSamplingConfigurationInfo info[5];
    memset(info, 0, sizeof info);
    info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[0].attributeData.collectionModeData.collectionMode =
        serialized ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    info[1].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    info[2].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[3].attributeData.samplingDataBufferData.samplingDataBuffer = &s->configured;
    info[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    info[4].attributeData.samplingPeriodData.samplingPeriod = (uint32_t)period;
    CUpti_PCSamplingConfigurationInfoParams params = {.size = CUpti_PCSamplingConfigurationInfoParamsSize};
    params.ctx = s->context;
    params.numAttributes = 5;
    params.pPCSamplingConfigurationInfo = info;
    if (STAGE_CALL(cuptiPCSamplingSetConfigurationAttribute, &params)) {
        *failure = stage_failure_;
        static const char *const names[] = {
            "", "period", "", "", "", "collection mode", "start/stop control", "output format", "data buffer"};
        for (int a = 0; a < 5; a++)
            if (info[a].attributeStatus != CUPTI_SUCCESS) {
                const char *status = "?";
                gx_cupti.cuptiGetResultString(info[a].attributeStatus, &status);
                int type = (int)info[a].attributeType;
                gx_error_append(failure, " (%s: %s)", type > 0 && type < 9 ? names[type] : "an attribute", status);
            }
        return failure->kind;
    }
    s->serialized = serialized;
    s->period = period;
    return GX_OK;
}

/* Disables PC sampling on the session's context, takes what Disable leaves in the configured
   buffer (into p, when given) and frees the session. */
static int session_close(struct pc_session *s, gx_line_profile *p, gx_error *error)
{
    int status = GX_OK;
    if (s->open) {
        CUptiResult result = gx_cupti.cuptiPCSamplingDisable(
            &(CUpti_PCSamplingDisableParams){.size = CUpti_PCSamplingDisableParamsSize, .ctx = s->context});
        if (result != CUPTI_SUCCESS && p && !p->pc_error[0]) {
            gx_error failure;
            gx_cupti_fail(&failure, "cuptiPCSamplingDisable", result);
            note(p->pc_error, sizeof p->pc_error, failure.message);
        }
        if (p && s->configured.pPcData && p->reason_count)
            status = take_buffer(s, p, &s->configured, error);
    }
    buffer_free(&s->configured);
    buffer_free(&s->own);
    free(s->reason_index);
    free(s->reason_names);
    memset(s, 0, sizeof *s);
    return status;
}

/* Enables PC sampling on the device's context, reads its stall reasons and configures it; a
   refusal of CUPTI is set in failure (the session left closed), an error returned. */
static int session_open(struct pc_session *s, const gx_device *device, const gx_line_options *o, gx_error *failure,
                        gx_error *error)
{
    CUptiResult result_;
    gx_error stage_failure_;
    memset(s, 0, sizeof *s);
    s->context = device->context;
    failure->kind = GX_OK;
    if (STAGE_CALL(cuptiPCSamplingEnable, &((CUpti_PCSamplingEnableParams){.size = CUpti_PCSamplingEnableParamsSize,
                                                                           .ctx = device->context}))) {
        *failure = stage_failure_;
        return GX_OK;
    }
    process_owner = GX_LINES_PC;
    s->open = 1;
    CUpti_PCSamplingGetNumStallReasonsParams count = {.size = CUpti_PCSamplingGetNumStallReasonsParamsSize};
    count.ctx = s->context;
    count.numStallReasons = &s->reasons;
    if (STAGE_CALL(cuptiPCSamplingGetNumStallReasons, &count)) {
        *failure = stage_failure_;
        session_close(s, NULL, error);
        return GX_OK;
    }
    size_t reasons = s->reasons ? s->reasons : 1;
    char **names = calloc(reasons, sizeof *names);
    s->reason_names = calloc(reasons, sizeof *s->reason_names);
    s->reason_index = calloc(reasons, sizeof *s->reason_index);
    if (!names || !s->reason_names || !s->reason_index || buffer_alloc(&s->configured, 8192, s->reasons) ||
        buffer_alloc(&s->own, 8192, s->reasons)) {
        free(names);
        session_close(s, NULL, error);
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory for PC sampling's buffers");
    }
    for (size_t r = 0; r < s->reasons; r++)
        names[r] = s->reason_names[r]; /* CUPTI writes up to CUPTI_STALL_REASON_STRING_SIZE (128) */
    CUpti_PCSamplingGetStallReasonsParams get = {.size = CUpti_PCSamplingGetStallReasonsParamsSize};
    get.ctx = s->context;
    get.numStallReasons = s->reasons;
    get.stallReasonIndex = s->reason_index;
    get.stallReasons = names;
    int refused = STAGE_CALL(cuptiPCSamplingGetStallReasons, &get);
    free(names);
    if (refused) {
        *failure = stage_failure_;
        session_close(s, NULL, error);
        return GX_OK;
    }
    if (configure(s, o->serialized, o->period, failure)) {
        session_close(s, NULL, error);
        return GX_OK;
    }
    return GX_OK;
}

static int keep_sessions(void)
{
    const char *keep = getenv("GX_LINES_PC_KEEP");
    return keep && keep[0] && strcmp(keep, "0") != 0;
}

/* Rounds of Start, launches, Stop, drain, each twice the launches of the one before, until the
   samples, the launches or the time are enough; then (unless the session is kept) Disable and
   what it leaves. */
static int pc_stage(gx_line_profile *p, const gx_device *device, const void *image, const char *symbol,
                    const gx_line_options *o, gx_line_launch_fn launch, void *user, gx_error *error)
{
    CUptiResult result_;
    gx_error stage_failure_, refusal;
    double started = gx_clock_s();
    if (gx_cupti_device_supported(device, CUPTI_PROFILER_PC_SAMPLING, &refusal)) {
        if (refusal.kind != GX_ERR_PROFILER) {
            *error = refusal;
            return error->kind;
        }
        note(p->pc_error, sizeof p->pc_error, refusal.message);
        return GX_OK;
    }
    const gx_driver *d = gx_driver_get(error);
    if (!d || GX_CU(error, d->cuCtxSynchronize()))
        return error->kind;
    int keep = keep_sessions();
    struct pc_session local, *s = &local;
    gx_error failure = {.kind = GX_OK};
    if (keep && kept.open && kept.context == device->context) {
        s = &kept;
        if ((s->serialized != o->serialized || s->period != o->period) &&
            configure(s, o->serialized, o->period, &failure))
            session_close(s, NULL, error);
    } else {
        if (keep && kept.open)
            session_close(&kept, NULL, error); /* another context's: one session at a time */
        /* opened where it stays: CUPTI keeps the configured buffer's address */
        s = keep ? &kept : &local;
        if (session_open(s, device, o, &failure, error))
            return error->kind;
    }
    if (failure.kind != GX_OK || !s->open) {
        note(p->pc_error, sizeof p->pc_error, failure.message);
        p->pc_seconds = gx_clock_s() - started;
        return GX_OK;
    }
    /* the profile's reasons, and sample counters for the instructions the SASS stage found */
    int status = GX_OK, refused = 0;
    p->reason_names = calloc(s->reasons ? s->reasons : 1, sizeof *p->reason_names);
    if (!p->reason_names)
        status = gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    for (size_t i = 0; status == GX_OK && i < p->count; i++)
        if (!p->instructions[i].samples &&
            !(p->instructions[i].samples = calloc(s->reasons ? s->reasons : 1, sizeof(uint32_t))))
            status = gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    if (status == GX_OK) {
        memcpy(p->reason_names, s->reason_names, s->reasons * sizeof *p->reason_names);
        p->reason_count = (int)s->reasons;
    }
    struct fresh fresh = {0};
    if (status == GX_OK && (fresh_load(&fresh, device, image, symbol, error) || GX_CU(error, d->cuCtxSynchronize())))
        status = error->kind;
    int batch = 1;
    while (!refused && status == GX_OK) {
        CUpti_PCSamplingStartParams start = {.size = CUpti_PCSamplingStartParamsSize};
        start.ctx = s->context;
        if (STAGE_CALL(cuptiPCSamplingStart, &start)) {
            note(p->pc_error, sizeof p->pc_error, stage_failure_.message);
            refused = 1;
            break;
        }
        for (int l = 0; l < batch && status == GX_OK; l++) {
            if (launch(user, &fresh.kernel, error))
                status = error->kind;
            else
                p->launches++;
        }
        if (status == GX_OK && GX_CU(error, d->cuCtxSynchronize()))
            status = error->kind;
        CUpti_PCSamplingStopParams stop = {.size = CUpti_PCSamplingStopParamsSize};
        stop.ctx = s->context;
        if (STAGE_CALL(cuptiPCSamplingStop, &stop)) {
            if (status == GX_OK)
                note(p->pc_error, sizeof p->pc_error, stage_failure_.message);
            refused = 1;
            break;
        }
        p->ranges++;
        if (status != GX_OK || drain(s, p, &refused, error))
            break;
        if (p->record_samples >= o->min_samples || p->launches >= o->max_launches ||
            gx_clock_s() - started >= o->max_seconds)
            break;
        /* CUPTI counted samples it has not handed over (they come at Disable), or none came from
           three ranges: more launches would only fill its buffers */
        if (p->record_samples == 0 && (p->total_samples > 0 || p->ranges >= 3))
            break;
        batch = batch * 2 < o->max_launches - p->launches ? batch * 2 : o->max_launches - p->launches;
        if (batch < 1)
            break;
    }
    /* a kept session stays enabled (what Disable would leave is read when it is closed: never,
       for a kept one, whose profiles drain every range); any other is closed now, before its module
       is unloaded (the records CUPTI still holds name the module's PCs) */
    if (!keep || refused || status != GX_OK) {
        gx_error ignored;
        if (session_close(s, status == GX_OK ? p : NULL, status == GX_OK ? error : &ignored) && status == GX_OK)
            status = error->kind;
    }
    fresh_unload(&fresh);
    if (status == GX_OK && !refused) {
        p->pc_done = 1;
        if (p->record_samples == 0)
            snprintf(
                p->pc_error, sizeof p->pc_error,
                "PC sampling gave no samples (%d launch(es) in %d range(s), CUPTI counted %llu samples, %llu dropped)",
                p->launches, p->ranges, (unsigned long long)p->total_samples, (unsigned long long)p->dropped_samples);
    }
    p->pc_seconds = gx_clock_s() - started;
    return status;
}

/* ---- the whole profile ---- */

static int by_function_and_pc(const void *a, const void *b)
{
    const gx_line_instruction *x = a, *y = b;
    int c = strcmp(x->function, y->function);
    return c ? c : (x->pc > y->pc) - (x->pc < y->pc);
}

static void sort_instructions(gx_line_profile *p)
{
    qsort(p->instructions, p->count, sizeof *p->instructions, by_function_and_pc);
    free(p->slots); /* the index is rebuilt on the next lookup */
    p->slots = NULL;
    p->slot_count = 0;
}

int gx_line_profile_collect(gx_line_profile *p, const gx_device *device, const void *image, const char *symbol,
                            const gx_line_options *options, gx_line_launch_fn launch, void *user, gx_error *error)
{
    memset(p, 0, sizeof *p);
    gx_line_options o = *options;
    if (!o.metrics) {
        o.metrics = gx_lines_default_metrics;
        o.metric_count = gx_lines_default_metric_count;
    }
    if (o.metric_count < 0 || o.metric_count > GX_LINES_MAX_METRICS)
        return gx_fail(error, GX_ERR_USAGE, "a line profile takes at most %d SASS metrics, got %d",
                       GX_LINES_MAX_METRICS, o.metric_count);
    if (o.period == 0)
        o.period = 9;
    if (o.period < 5 || o.period > 31)
        return gx_fail(error, GX_ERR_USAGE, "the PC sampling period is 2^N cycles with N from 5 to 31, got %d",
                       o.period);
    if (o.min_samples == 0)
        o.min_samples = 100000;
    if (o.max_launches <= 0)
        o.max_launches = 64;
    if (o.max_seconds <= 0)
        o.max_seconds = 10;
    p->metric_count = o.metric_count;
    for (int m = 0; m < o.metric_count; m++) {
        if (!o.metrics[m] || strlen(o.metrics[m]) >= GX_LINES_NAME_SIZE)
            return gx_fail(error, GX_ERR_USAGE, "SASS metric %d has no name or one too long", m + 1);
        snprintf(p->metric_names[m], sizeof p->metric_names[m], "%s", o.metrics[m]);
    }
    p->period = o.period;
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_cupti_get(error) || gx_device_activate(device, error) || GX_CU(error, d->cuCtxSynchronize()))
        return error->kind;
    /* one collector a process (gx_lines.h): PC sampling first, a refused one said in its error */
    gx_lines_plan plan;
    gx_lines_plan_for(process_owner, o.pc_sampling, o.sass, &plan);
    note(p->pc_error, sizeof p->pc_error, plan.why_pc);
    note(p->sass_error, sizeof p->sass_error, plan.why_sass);
    if (plan.run_pc && pc_stage(p, device, image, symbol, &o, launch, user, error))
        return error->kind;
    if (plan.run_sass && sass_stage(p, device, image, symbol, launch, user, error))
        return error->kind;
    sort_instructions(p);
    return GX_OK;
}

/* ---- source lines ---- */

size_t gx_line_profile_map(gx_line_profile *p, const void *cubin, size_t cubin_size)
{
    gx_error error;
    p->mapped = 0;
    p->map_error[0] = 0;
    if (!cubin || cubin_size == 0) {
        snprintf(p->map_error, sizeof p->map_error, "no cubin to read lines from");
        return 0;
    }
    if (gx_cupti_get(&error)) {
        note(p->map_error, sizeof p->map_error, error.message);
        return 0;
    }
    char last_failure[256] = "";
    for (size_t k = 0; k < p->count; k++) {
        gx_line_instruction *i = &p->instructions[k];
        CUpti_GetSassToSourceCorrelationParams params = {.size = CUpti_GetSassToSourceCorrelationParamsSize};
        params.cubin = cubin;
        params.cubinSize = cubin_size;
        params.functionName = i->function;
        params.pcOffset = i->pc;
        CUptiResult result = gx_cupti.cuptiGetSassToSourceCorrelation(&params);
        if (result != CUPTI_SUCCESS) {
            gx_cupti_fail(&error, "cuptiGetSassToSourceCorrelation", result);
            note(last_failure, sizeof last_failure, error.message);
        } else if (params.fileName && params.lineNumber > 0) {
            free(i->file);
            free(i->directory);
            i->file = strdup(params.fileName);
            i->directory = params.dirName ? strdup(params.dirName) : NULL;
            i->line = params.lineNumber;
            p->mapped += i->file != NULL;
        }
        free(params.fileName); /* the caller's to free (cupti_pcsampling.h) */
        free(params.dirName);
    }
    if (p->count == 0) /* said apart: an empty profile is not a cubin without lines */
        snprintf(p->map_error, sizeof p->map_error, "no instructions were collected, so none mapped (the cubin %s)",
                 gx_cubin_has_line_table(cubin, cubin_size) ? "has a line table" : "has no line table either");
    else if (p->mapped == 0)
        snprintf(p->map_error, sizeof p->map_error, "%s",
                 last_failure[0] ? last_failure
                                 : "the cubin has no line table (compile with -lineinfo or --generate-line-info)");
    return p->mapped;
}

/* The header of the section called `name` in an ELF64 cubin, copied out (a cubin's bytes need not
   be aligned: a header is never read in place), with every offset checked to lie inside it; 0 when
   there is no such section. */
static int section_named(const unsigned char *data, size_t size, const char *name, Elf64_Shdr *found)
{
    Elf64_Ehdr h;
    if (!data || size < sizeof h || memcmp(data, ELFMAG, SELFMAG) != 0 || data[EI_CLASS] != ELFCLASS64)
        return 0;
    memcpy(&h, data, sizeof h);
    if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shoff > size || h.e_shnum == 0 ||
        (size - h.e_shoff) / sizeof(Elf64_Shdr) < h.e_shnum || h.e_shstrndx >= h.e_shnum)
        return 0;
    Elf64_Shdr names, section;
    memcpy(&names, data + h.e_shoff + (size_t)h.e_shstrndx * sizeof names, sizeof names);
    if (names.sh_offset > size || names.sh_size > size - names.sh_offset)
        return 0;
    const char *strings = (const char *)data + names.sh_offset;
    size_t wanted = strlen(name) + 1;
    for (size_t s = 0; s < h.e_shnum; s++) {
        memcpy(&section, data + h.e_shoff + s * sizeof section, sizeof section);
        size_t at = section.sh_name;
        if (at < names.sh_size && names.sh_size - at >= wanted && memcmp(strings + at, name, wanted) == 0) {
            *found = section;
            return 1;
        }
    }
    return 0;
}

size_t gx_cubin_function_bytes(const void *cubin, size_t size, const char *symbol)
{
    if (!symbol)
        return 0;
    size_t length = strlen(symbol) + sizeof ".text.";
    char *name = malloc(length);
    if (!name)
        return 0;
    snprintf(name, length, ".text.%s", symbol);
    Elf64_Shdr section;
    int found = section_named(cubin, size, name, &section);
    free(name);
    return found && section.sh_type != SHT_NOBITS ? (size_t)section.sh_size : 0;
}

int gx_cubin_has_line_table(const void *cubin, size_t size)
{
    Elf64_Shdr section;
    return section_named(cubin, size, ".debug_line", &section) && section.sh_type != SHT_NOBITS && section.sh_size > 0;
}

int gx_line_profile_static(gx_line_profile *p, const void *cubin, size_t cubin_size, const char *symbol,
                           gx_error *error)
{
    memset(p, 0, sizeof *p);
    size_t bytes = gx_cubin_function_bytes(cubin, cubin_size, symbol);
    if (bytes == 0)
        return gx_fail(error, GX_ERR_USAGE, "the cubin has no code for %s (no section .text.%s)", symbol, symbol);
    for (uint64_t pc = 0; pc + 16 <= bytes; pc += 16) /* a SASS instruction is 16 bytes from Volta on */
        if (!gx_line_profile_instruction(p, symbol, pc))
            return gx_fail(error, GX_ERR_SYSTEM, "out of memory for the line table");
    gx_line_profile_map(p, cubin, cubin_size);
    sort_instructions(p);
    return GX_OK;
}
