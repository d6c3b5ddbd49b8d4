// Settles the recipe of CUPTI's PC sampling and SASS metrics on the lent GPU (issue 38): one
// variant per process, so no variant sees another's state. The lead's first probe
// (bench/lineprobe) got 0 PCs and 0 samples; its suspects are tried one at a time here:
//   load      module loaded before cuptiPCSamplingEnable (the first probe) or after it
//   mode      KERNEL_SERIALIZED or CONTINUOUS
//   buffer    GetData into the configured buffer (the first probe) or into a buffer of its own
//   launches  1 or many; iters: the kernel's length (200: 0.18 ms on an H200)
//   startstop start/stop control, or sampling over the whole enable range (read at Disable)
//   sass      the SASS metrics stage first, on the same context (the first probe did that)
//   repeat    once; each (enabled, used, disabled, then all again on a fresh module); keep (enabled
//             once, two ranges each on a fresh module), as gpuexp profiles two builds in one process
//   sass_after the SASS metrics stage after the first session (each) or while it is kept (keep)
// Usage: probe_pc CUBIN pc LOAD MODE BUFFER LAUNCHES ITERS STARTSTOP SASS_FIRST [REPEAT [SASS_AFTER]]
//        probe_pc CUBIN sass NMETRICS LOAD [TIMES]   (SASS metrics: the record layout with N metrics;
//                                                     TIMES stages in one process, each on a fresh module)
// Prints "result ..." lines that bench/lines/run.sh greps.
#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static const char *errname(CUptiResult r)
{
    const char *s = "?";
    cuptiGetResultString(r, &s);
    return s;
}
#define CU(x)                                                                                                          \
    do {                                                                                                               \
        CUresult r_ = (x);                                                                                             \
        if (r_) {                                                                                                      \
            const char *s = "?";                                                                                       \
            cuGetErrorName(r_, &s);                                                                                    \
            printf("result FAIL %s: %s\n", #x, s);                                                                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)
/* a CUPTI call: 1 on success, else says which and 0 */
#define CP(x) ((x) == CUPTI_SUCCESS ? 1 : (printf("cupti FAIL %s: %s\n", #x, errname(x)), 0))

static void *cubin;
static size_t cubin_size;
static CUcontext ctx;
static CUmodule mod;
static CUfunction fn;
static CUdeviceptr in, out;
static int n = 1 << 20, iters = 200;

static void load_module(void)
{
    CU(cuModuleLoadData(&mod, cubin));
    CU(cuModuleGetFunction(&fn, mod, "probe_kernel"));
}

static void launch(void)
{
    void *args[] = {&out, &in, &n, &iters};
    CU(cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
}

static void line_of(const char *function, uint64_t pc, char *buf, size_t size)
{
    CUpti_GetSassToSourceCorrelationParams p = {0};
    p.size = CUpti_GetSassToSourceCorrelationParamsSize;
    p.cubin = cubin;
    p.cubinSize = cubin_size;
    p.functionName = function;
    p.pcOffset = pc;
    CUptiResult r = cuptiGetSassToSourceCorrelation(&p);
    if (r)
        snprintf(buf, size, "(no line: %s)", errname(r));
    else {
        snprintf(buf, size, "%s:%u", p.fileName ? p.fileName : "?", p.lineNumber);
        free(p.fileName);
        free(p.dirName);
    }
}

/* What cuptiProfilerDeviceSupported says of an API on device 0 (a virtual GPU may refuse it). */
static void supported(CUdevice dev, CUpti_Profiler_API api, const char *name)
{
    CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CP(cuptiProfilerInitialize(&ip));
    CUpti_Profiler_DeviceSupported_Params s = {CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    s.cuDevice = dev;
    s.api = api;
    if (CP(cuptiProfilerDeviceSupported(&s)))
        printf("result supported %s: %d (architecture %d sli %d vgpu %d confidential %d cmp %d wsl %d)\n", name,
               (int)s.isSupported, (int)s.architecture, (int)s.sli, (int)s.vGpu, (int)s.confidentialCompute, (int)s.cmp,
               (int)s.wsl);
}

/* ---- SASS metrics: N metrics in one configuration; how the records come back ---- */
static int sass_stage(int count, int print_records, int load_inside)
{
    static const char *wanted[] = {"smsp__sass_inst_executed",
                                   "smsp__sass_thread_inst_executed",
                                   "smsp__sass_sectors_mem_global",
                                   "smsp__sass_sectors_mem_global_ideal",
                                   "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared",
                                   "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal",
                                   "smsp__sass_sectors_mem_local"};
    if (count > 7)
        count = 7;
    double t0 = now();
    CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CP(cuptiProfilerInitialize(&ip)); /* called before by supported(): said if it refuses twice */
    CUpti_Device_GetChipName_Params cp = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cp.deviceIndex = 0;
    if (!CP(cuptiDeviceGetChipName(&cp)))
        return 0;
    CUpti_SassMetrics_Config config[7];
    uint64_t ids[7];
    for (int w = 0; w < count; w++) {
        CUpti_SassMetrics_GetProperties_Params pp = {CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
        pp.pChipName = cp.pChipName;
        pp.pMetricName = wanted[w];
        if (!CP(cuptiSassMetricsGetProperties(&pp)))
            return 0;
        ids[w] = config[w].metricId = pp.metric.metricId;
        config[w].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
        printf("sass metric %d %s id %llu\n", w, wanted[w], (unsigned long long)ids[w]);
    }
    CUpti_SassMetricsSetConfig_Params sc = {CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
    sc.numOfMetricConfig = (size_t)count;
    sc.pConfigs = config;
    sc.deviceIndex = 0;
    if (!CP(cuptiSassMetricsSetConfig(&sc)))
        return 0;
    CUpti_SassMetricsEnable_Params en = {CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
    en.ctx = ctx;
    en.enableLazyPatching = 1;
    int ok = 0;
    if (CP(cuptiSassMetricsEnable(&en))) {
        if (load_inside) /* a module loaded after Enable: gpuexp loads a fresh copy of the cubin */
            load_module();
        double tl = now();
        launch();
        CU(cuCtxSynchronize());
        double patched = now() - tl;
        CUpti_SassMetricsGetDataProperties_Params dp = {CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
        dp.ctx = ctx;
        if (CP(cuptiSassMetricsGetDataProperties(&dp))) {
            size_t records = dp.numOfPatchedInstructionRecords, instances = dp.numOfInstances;
            CUpti_SassMetrics_Data *data = calloc(records, sizeof *data);
            for (size_t r = 0; r < records; r++) {
                data[r].structSize = sizeof data[r];
                /* room for every metric's instances in each record, whatever the layout */
                data[r].pInstanceValues = calloc(instances * (size_t)count, sizeof(CUpti_SassMetrics_InstanceValue));
            }
            CUpti_SassMetricsFlushData_Params fd = {CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
            fd.ctx = ctx;
            fd.numOfPatchedInstructionRecords = records;
            fd.numOfInstances = instances;
            fd.pMetricsData = data;
            if (CP(cuptiSassMetricsFlushData(&fd))) {
                /* which metric each record holds, and whether slots past the instances are used */
                size_t per_metric[7] = {0}, unknown = 0, extra_slots_used = 0, distinct_pcs = 0;
                uint64_t totals[7] = {0};
                for (size_t r = 0; r < records; r++) {
                    int found = -1;
                    for (int w = 0; w < count; w++)
                        if (data[r].pInstanceValues[0].metricId == ids[w])
                            found = w;
                    if (found < 0)
                        unknown++;
                    else {
                        per_metric[found]++;
                        for (size_t k = 0; k < instances; k++)
                            totals[found] += data[r].pInstanceValues[k].value;
                    }
                    for (size_t k = instances; k < instances * (size_t)count; k++)
                        if (data[r].pInstanceValues[k].metricId || data[r].pInstanceValues[k].value)
                            extra_slots_used++;
                    int seen = 0;
                    for (size_t q = 0; q < r && !seen; q++)
                        seen = data[q].pcOffset == data[r].pcOffset && data[q].functionIndex == data[r].functionIndex;
                    distinct_pcs += !seen;
                    if (print_records && r < 6) {
                        char where[256];
                        line_of(data[r].functionName, data[r].pcOffset, where, sizeof where);
                        printf("sass record %zu %s pc 0x%x %s metric %llu value %llu\n", r, data[r].functionName,
                               data[r].pcOffset, where, (unsigned long long)data[r].pInstanceValues[0].metricId,
                               (unsigned long long)data[r].pInstanceValues[0].value);
                    }
                }
                printf("result sass metrics %d records %zu instances %zu distinct_pcs %zu unknown_metric %zu "
                       "extra_slots_used %zu patched_s %.3f\n",
                       count, records, instances, distinct_pcs, unknown, extra_slots_used, patched);
                for (int w = 0; w < count; w++)
                    printf("result sass total %s records %zu sum %llu\n", wanted[w], per_metric[w],
                           (unsigned long long)totals[w]);
                ok = 1;
            }
        }
        CUpti_SassMetricsDisable_Params di = {CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
        di.ctx = ctx;
        CP(cuptiSassMetricsDisable(&di));
        printf("sass dropped %zu\n", di.numOfDroppedRecords);
    }
    CUpti_SassMetricsUnsetConfig_Params us = {CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};
    us.deviceIndex = 0;
    CP(cuptiSassMetricsUnsetConfig(&us));
    printf("sass stage %.3f s\n", now() - t0);
    return ok;
}

/* ---- PC sampling ---- */
static size_t reasons;
static uint32_t *reason_index;
static char **reason_names;

static CUpti_PCSamplingData *new_buffer(size_t pcs)
{
    CUpti_PCSamplingData *b = calloc(1, sizeof *b);
    b->size = sizeof *b;
    b->collectNumPcs = pcs;
    b->pPcData = calloc(pcs, sizeof(CUpti_PCSamplingPCData));
    for (size_t i = 0; i < pcs; i++) {
        b->pPcData[i].size = sizeof(CUpti_PCSamplingPCData);
        b->pPcData[i].stallReason = calloc(reasons, sizeof(CUpti_PCSamplingStallReason));
    }
    return b;
}

static const char *reason_name(uint32_t index)
{
    for (size_t k = 0; k < reasons; k++)
        if (reason_index[k] == index)
            return reason_names[k];
    return "?";
}

/* Sums a buffer's records (samples of reasons not named *_not_issued) and prints the first PCs. */
static unsigned long long tally(const char *where, CUpti_PCSamplingData *b, int print)
{
    unsigned long long samples = 0;
    for (size_t p = 0; p < b->totalNumPcs; p++) {
        CUpti_PCSamplingPCData *d = &b->pPcData[p];
        unsigned total = 0, best = 0;
        uint32_t best_index = 0;
        for (size_t s = 0; s < d->stallReasonCount; s++) {
            if (strstr(reason_name(d->stallReason[s].pcSamplingStallReasonIndex), "not_issued"))
                continue;
            total += d->stallReason[s].samples;
            if (d->stallReason[s].samples > best) {
                best = d->stallReason[s].samples;
                best_index = d->stallReason[s].pcSamplingStallReasonIndex;
            }
        }
        samples += total;
        if (print && p < 12) {
            char line[256];
            line_of(d->functionName, d->pcOffset, line, sizeof line);
            printf("  pc 0x%llx %s samples %u top %s (%u) reasons %zu\n", (unsigned long long)d->pcOffset, line, total,
                   reason_name(best_index), best, d->stallReasonCount);
        }
    }
    printf("%s: pcs %zu totalSamples %llu dropped %llu remaining %zu nonuser %llu full %d record_samples %llu\n", where,
           b->totalNumPcs, (unsigned long long)b->totalSamples, (unsigned long long)b->droppedSamples,
           b->remainingNumPcs, (unsigned long long)b->nonUsrKernelsTotalSamples, b->hardwareBufferFull, samples);
    return samples;
}

/* One PC sampling session: enable, reasons, configure. 0 when CUPTI refused. */
static CUpti_PCSamplingData *configured_buffer, *own_buffer;
static int pc_open(int serialized, int startstop, int separate)
{
    CUpti_PCSamplingEnableParams pe = {CUpti_PCSamplingEnableParamsSize};
    pe.ctx = ctx;
    if (!CP(cuptiPCSamplingEnable(&pe)))
        return 0;
    CUpti_PCSamplingGetNumStallReasonsParams ns = {CUpti_PCSamplingGetNumStallReasonsParamsSize};
    ns.ctx = ctx;
    ns.numStallReasons = &reasons;
    CP(cuptiPCSamplingGetNumStallReasons(&ns));
    reason_names = calloc(reasons, sizeof *reason_names);
    reason_index = calloc(reasons, sizeof *reason_index);
    for (size_t i = 0; i < reasons; i++)
        reason_names[i] = calloc(CUPTI_STALL_REASON_STRING_SIZE, 1);
    CUpti_PCSamplingGetStallReasonsParams sr = {CUpti_PCSamplingGetStallReasonsParamsSize};
    sr.ctx = ctx;
    sr.numStallReasons = reasons;
    sr.stallReasonIndex = reason_index;
    sr.stallReasons = reason_names;
    CP(cuptiPCSamplingGetStallReasons(&sr));
    if (reasons > 3)
        printf("stall reasons %zu: %s %s %s ...\n", reasons, reason_names[0], reason_names[1], reason_names[2]);
    configured_buffer = new_buffer(4096);
    own_buffer = separate ? new_buffer(4096) : configured_buffer;
    CUpti_PCSamplingConfigurationInfo ci[6];
    memset(ci, 0, sizeof ci);
    int na = 0;
    ci[na].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    ci[na++].attributeData.collectionModeData.collectionMode =
        serialized ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    ci[na].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    ci[na++].attributeData.enableStartStopControlData.enableStartStopControl = (uint32_t)startstop;
    ci[na].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    ci[na++].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    ci[na].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    ci[na++].attributeData.samplingDataBufferData.samplingDataBuffer = configured_buffer;
    ci[na].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    ci[na++].attributeData.samplingPeriodData.samplingPeriod = 9;
    CUpti_PCSamplingConfigurationInfoParams cip = {CUpti_PCSamplingConfigurationInfoParamsSize};
    cip.ctx = ctx;
    cip.numAttributes = (size_t)na;
    cip.pPCSamplingConfigurationInfo = ci;
    if (!CP(cuptiPCSamplingSetConfigurationAttribute(&cip))) {
        for (int a = 0; a < na; a++)
            printf("  attribute %d status %s\n", (int)ci[a].attributeType, errname(ci[a].attributeStatus));
        return 0;
    }
    return 1;
}

/* One range: start, launches, stop, what the configured buffer holds, GetData until none remain. */
static unsigned long long pc_range(int launches, int startstop, const char *label)
{
    CUpti_PCSamplingStartParams st = {CUpti_PCSamplingStartParamsSize};
    st.ctx = ctx;
    CUpti_PCSamplingStopParams sp = {CUpti_PCSamplingStopParamsSize};
    sp.ctx = ctx;
    CU(cuCtxSynchronize());
    double tl = now();
    if (startstop && !CP(cuptiPCSamplingStart(&st)))
        return 0;
    for (int l = 0; l < launches; l++)
        launch();
    CU(cuCtxSynchronize());
    printf("%s: %d launch(es) in %.3f s\n", label, launches, now() - tl);
    unsigned long long samples = 0;
    if (!startstop)
        return 0;
    CP(cuptiPCSamplingStop(&sp));
    samples += tally("after Stop, configured buffer", configured_buffer, 0);
    configured_buffer->totalNumPcs = 0;
    for (int round = 0; round < 64; round++) {
        CUpti_PCSamplingGetDataParams gd = {CUpti_PCSamplingGetDataParamsSize};
        gd.ctx = ctx;
        gd.pcSamplingData = own_buffer;
        if (!CP(cuptiPCSamplingGetData(&gd)))
            break;
        char where[64];
        snprintf(where, sizeof where, "GetData round %d", round);
        samples += tally(where, own_buffer, round == 0);
        size_t got = own_buffer->totalNumPcs, remaining = own_buffer->remainingNumPcs;
        own_buffer->totalNumPcs = 0;
        if (remaining == 0 || got == 0)
            break;
    }
    return samples;
}

static unsigned long long pc_close(int print)
{
    CUpti_PCSamplingDisableParams pd = {CUpti_PCSamplingDisableParamsSize};
    pd.ctx = ctx;
    CP(cuptiPCSamplingDisable(&pd));
    unsigned long long samples = tally("after Disable, configured buffer", configured_buffer, print);
    configured_buffer->totalNumPcs = 0;
    return samples;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: probe_pc CUBIN pc|sass ...\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        printf("result FAIL no cubin %s\n", argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    cubin_size = (size_t)ftell(f);
    rewind(f);
    cubin = malloc(cubin_size);
    if (fread(cubin, 1, cubin_size, f) != cubin_size)
        return 1;
    fclose(f);
    int sass_mode = strcmp(argv[2], "sass") == 0;
    int load_after = 0, serialized = 1, separate = 0, launches = 1, startstop = 1, sass_first = 0, metrics = 2;
    int sass_after = 0, sass_times = 1;
    const char *repeat = "once";
    if (sass_mode) {
        metrics = argc > 3 ? atoi(argv[3]) : 2;
        load_after = argc > 4 && strcmp(argv[4], "after") == 0;
        sass_times = argc > 5 ? atoi(argv[5]) : 1;
    } else {
        if (argc < 10) {
            printf("usage: probe_pc CUBIN pc LOAD MODE BUFFER LAUNCHES ITERS STARTSTOP SASS_FIRST [once|each|keep "
                   "[SASS_AFTER]]\n");
            return 2;
        }
        load_after = strcmp(argv[3], "after") == 0;
        serialized = strcmp(argv[4], "serialized") == 0;
        separate = strcmp(argv[5], "separate") == 0;
        launches = atoi(argv[6]);
        iters = atoi(argv[7]);
        startstop = atoi(argv[8]);
        sass_first = atoi(argv[9]);
        if (argc > 10)
            repeat = argv[10];
        sass_after = argc > 11 && atoi(argv[11]);
    }
    CU(cuInit(0));
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    supported(dev, sass_mode ? CUPTI_PROFILER_SASS_METRICS : CUPTI_PROFILER_PC_SAMPLING, sass_mode ? "sass" : "pc");
    CU(cuMemAlloc(&in, (size_t)n * 4));
    CU(cuMemAlloc(&out, (size_t)n * 4));
    CU(cuMemsetD32(in, 0x3f800000, (size_t)n));
    if (sass_mode) {
        if (!load_after)
            load_module();
        int ok = 0;
        for (int t = 0; t < sass_times; t++) /* again: a fresh module each time, as gpuexp loads one a profile */
            ok += sass_stage(metrics, t == 0, load_after || t > 0);
        printf("result sass %s metrics %d load %s times %d ok %d\n", ok == sass_times ? "ok" : "FAILED", metrics,
               load_after ? "after" : "before", sass_times, ok);
        return ok == sass_times ? 0 : 1;
    }
    if (!load_after || sass_first)
        load_module();
    if (sass_first)
        sass_stage(2, 0, 0);
    if (!load_after || sass_first) { /* time one launch */
        CUevent e0, e1;
        CU(cuEventCreate(&e0, 0));
        CU(cuEventCreate(&e1, 0));
        launch();
        CU(cuEventRecord(e0, 0));
        launch();
        CU(cuEventRecord(e1, 0));
        CU(cuEventSynchronize(e1));
        float ms;
        CU(cuEventElapsedTime(&ms, e0, e1));
        printf("kernel %.3f ms (iters %d)\n", ms, iters);
    }
    double t0 = now();
    unsigned long long first = 0, second = 0;
    int sass_ok = -1;
    if (!pc_open(serialized, startstop, separate)) {
        printf("result pc FAILED enable or configure\n");
        return 1;
    }
    if (load_after && !sass_first)
        load_module();
    first += pc_range(launches, startstop, "range 1");
    if (strcmp(repeat, "keep") == 0) {
        if (sass_after) /* SASS metrics while PC sampling stays enabled */
            sass_ok = sass_stage(2, 0, 1);
        load_module(); /* a fresh module, as gpuexp loads one a profile */
        second += pc_range(launches, startstop, "range 2 (kept enabled, a fresh module)");
        second += pc_close(0);
    } else {
        first += pc_close(!startstop);
        if (strcmp(repeat, "each") == 0) {
            if (sass_after)
                sass_ok = sass_stage(2, 0, 1);
            if (!pc_open(serialized, startstop, separate))
                printf("second enable FAILED\n");
            else {
                load_module();
                second += pc_range(launches, startstop, "range 2 (enabled again, a fresh module)");
                second += pc_close(0);
            }
        } else if (sass_after)
            sass_ok = sass_stage(2, 0, 1);
    }
    printf(
        "result pc load %s mode %s buffer %s launches %d iters %d startstop %d sass_first %d repeat %s sass_after %d: "
        "samples %llu second %llu sass_after_ok %d stage %.3f s\n",
        load_after ? "after" : "before", serialized ? "serialized" : "continuous", separate ? "separate" : "same",
        launches, iters, startstop, sass_first, repeat, sass_after, first, second, sass_ok, now() - t0);
    return 0;
}
