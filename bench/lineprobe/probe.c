// Probe of CUPTI's SASS metrics and PC sampling on the lent GPU: do they work, what do they cost,
// and does SASS-to-source correlation give lines. Prints a short report.
#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_sass_metrics.h>
#include <cupti_profiler_target.h>
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
#define CU(x)                                                                                                          \
    do {                                                                                                               \
        CUresult r_ = (x);                                                                                             \
        if (r_) {                                                                                                      \
            const char *s;                                                                                             \
            cuGetErrorName(r_, &s);                                                                                    \
            printf("FAIL %s: %s\n", #x, s);                                                                            \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)
#define CP(x) ((x) == CUPTI_SUCCESS ? 1 : (printf("CUPTI FAIL %s: %s\n", #x, errname(x)), 0))
static const char *errname(CUptiResult r)
{
    const char *s = "?";
    cuptiGetResultString(r, &s);
    return s;
}

static void *cubin;
static size_t cubin_size;
static void line_of(const char *fn, uint64_t pc, char *buf, size_t n)
{
    CUpti_GetSassToSourceCorrelationParams p = {0};
    p.size = CUpti_GetSassToSourceCorrelationParamsSize;
    p.cubin = cubin;
    p.cubinSize = cubin_size;
    p.functionName = fn;
    p.pcOffset = pc;
    CUptiResult r = cuptiGetSassToSourceCorrelation(&p);
    if (r)
        snprintf(buf, n, "(no line: %s)", errname(r));
    else {
        snprintf(buf, n, "%s:%u", p.fileName ? p.fileName : "?", p.lineNumber);
        free(p.fileName);
        free(p.dirName);
    }
}

int main(int argc, char **argv)
{
    FILE *f = fopen(argc > 1 ? argv[1] : "kernel.cubin", "rb");
    if (!f) {
        printf("no cubin\n");
        return 1;
    }
    fseek(f, 0, SEEK_END);
    cubin_size = ftell(f);
    rewind(f);
    cubin = malloc(cubin_size);
    if (fread(cubin, 1, cubin_size, f) != cubin_size)
        return 1;
    fclose(f);
    CU(cuInit(0));
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CU(cuModuleLoadData(&mod, cubin));
    CUfunction fn;
    CU(cuModuleGetFunction(&fn, mod, "probe_kernel"));
    int n = 1 << 20, iters = 200;
    CUdeviceptr in, out;
    CU(cuMemAlloc(&in, n * 4));
    CU(cuMemAlloc(&out, n * 4));
    CU(cuMemsetD32(in, 0x3f800000, n));
    void *args[] = {&out, &in, &n, &iters};
    CUevent e0, e1;
    CU(cuEventCreate(&e0, 0));
    CU(cuEventCreate(&e1, 0));
    CU(cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
    CU(cuCtxSynchronize());
    CU(cuEventRecord(e0, 0));
    CU(cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
    CU(cuEventRecord(e1, 0));
    CU(cuEventSynchronize(e1));
    float ms;
    CU(cuEventElapsedTime(&ms, e0, e1));
    printf("kernel alone: %.3f ms\n", ms);

    // --- SASS metrics ---
    double t0 = now();
    CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CP(cuptiProfilerInitialize(&ip));
    CUpti_Device_GetChipName_Params cp = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cp.deviceIndex = 0;
    CP(cuptiDeviceGetChipName(&cp));
    printf("chip %s\n", cp.pChipName);
    CUpti_SassMetrics_GetNumOfMetrics_Params nm = {CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE};
    nm.pChipName = cp.pChipName;
    if (CP(cuptiSassMetricsGetNumOfMetrics(&nm))) {
        CUpti_SassMetrics_MetricDetails *list = calloc(nm.numOfMetrics, sizeof *list);
        CUpti_SassMetrics_GetMetrics_Params gm = {CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE};
        gm.pChipName = cp.pChipName;
        gm.numOfMetrics = nm.numOfMetrics;
        gm.pMetricsList = list;
        if (CP(cuptiSassMetricsGetMetrics(&gm)))
            for (size_t i = 0; i < nm.numOfMetrics; i++)
                printf("sass metric: %s\n", list[i].pMetricName);
        const char *want[] = {"smsp__sass_inst_executed", "smsp__sass_thread_inst_executed"};
        CUpti_SassMetrics_Config cfg[2];
        int nc = 0;
        for (int w = 0; w < 2; w++) {
            CUpti_SassMetrics_GetProperties_Params pp = {CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
            pp.pChipName = cp.pChipName;
            pp.pMetricName = want[w];
            if (CP(cuptiSassMetricsGetProperties(&pp))) {
                cfg[nc].metricId = pp.metric.metricId;
                cfg[nc].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
                nc++;
            }
        }
        CUpti_SassMetricsSetConfig_Params sc = {CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
        sc.numOfMetricConfig = nc;
        sc.pConfigs = cfg;
        sc.deviceIndex = 0;
        if (nc && CP(cuptiSassMetricsSetConfig(&sc))) {
            CUpti_SassMetricsEnable_Params en = {CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
            en.ctx = ctx;
            en.enableLazyPatching = 1;
            if (CP(cuptiSassMetricsEnable(&en))) {
                double tl = now();
                CU(cuEventRecord(e0, 0));
                CU(cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
                CU(cuEventRecord(e1, 0));
                CU(cuEventSynchronize(e1));
                CU(cuEventElapsedTime(&ms, e0, e1));
                printf("kernel patched: %.3f ms (wall %.3f s)\n", ms, now() - tl);
                CUpti_SassMetricsGetDataProperties_Params dp = {CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
                dp.ctx = ctx;
                if (CP(cuptiSassMetricsGetDataProperties(&dp))) {
                    printf("records %zu instances %zu\n", dp.numOfPatchedInstructionRecords, dp.numOfInstances);
                    size_t nr = dp.numOfPatchedInstructionRecords, ni = dp.numOfInstances;
                    CUpti_SassMetrics_Data *data = calloc(nr, sizeof *data);
                    for (size_t r = 0; r < nr; r++) {
                        data[r].structSize = sizeof data[r];
                        data[r].pInstanceValues = calloc(ni * nc, sizeof(CUpti_SassMetrics_InstanceValue));
                    }
                    CUpti_SassMetricsFlushData_Params fd = {CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
                    fd.ctx = ctx;
                    fd.numOfPatchedInstructionRecords = nr;
                    fd.numOfInstances = ni;
                    fd.pMetricsData = data;
                    if (CP(cuptiSassMetricsFlushData(&fd)))
                        for (size_t r = 0; r < nr; r++) {
                            char where[256];
                            line_of(data[r].functionName, data[r].pcOffset, where, sizeof where);
                            printf("sass %s pc 0x%x %s:", data[r].functionName, data[r].pcOffset, where);
                            for (size_t k = 0; k < ni * nc; k++)
                                printf(" %llu", (unsigned long long)data[r].pInstanceValues[k].value);
                            printf("\n");
                        }
                }
                CUpti_SassMetricsDisable_Params di = {CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
                di.ctx = ctx;
                CP(cuptiSassMetricsDisable(&di));
            }
            CUpti_SassMetricsUnsetConfig_Params us = {CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};
            us.deviceIndex = 0;
            CP(cuptiSassMetricsUnsetConfig(&us));
        }
    }
    printf("sass metrics stage: %.3f s\n", now() - t0);

    // --- PC sampling ---
    t0 = now();
    CUpti_PCSamplingEnableParams pe = {CUpti_PCSamplingEnableParamsSize};
    pe.ctx = ctx;
    if (CP(cuptiPCSamplingEnable(&pe))) {
        size_t nsr = 0;
        CUpti_PCSamplingGetNumStallReasonsParams ns = {CUpti_PCSamplingGetNumStallReasonsParamsSize};
        ns.ctx = ctx;
        ns.numStallReasons = &nsr;
        CP(cuptiPCSamplingGetNumStallReasons(&ns));
        char **names = calloc(nsr, sizeof *names);
        uint32_t *idx = calloc(nsr, sizeof *idx);
        for (size_t i = 0; i < nsr; i++)
            names[i] = calloc(CUPTI_STALL_REASON_STRING_SIZE, 1);
        CUpti_PCSamplingGetStallReasonsParams sr = {CUpti_PCSamplingGetStallReasonsParamsSize};
        sr.ctx = ctx;
        sr.numStallReasons = nsr;
        sr.stallReasonIndex = idx;
        sr.stallReasons = names;
        CP(cuptiPCSamplingGetStallReasons(&sr));
        printf("stall reasons: %zu\n", nsr);
        size_t npc = 4096;
        CUpti_PCSamplingData buf = {0};
        buf.size = sizeof buf;
        buf.collectNumPcs = npc;
        buf.pPcData = calloc(npc, sizeof(CUpti_PCSamplingPCData));
        for (size_t i = 0; i < npc; i++) {
            buf.pPcData[i].size = sizeof(CUpti_PCSamplingPCData);
            buf.pPcData[i].stallReason = calloc(nsr, sizeof(CUpti_PCSamplingStallReason));
        }
        CUpti_PCSamplingConfigurationInfo ci[5];
        memset(ci, 0, sizeof ci);
        ci[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
        ci[0].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
        ci[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
        ci[1].attributeData.enableStartStopControlData.enableStartStopControl = 1;
        ci[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
        ci[2].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
        ci[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
        ci[3].attributeData.samplingDataBufferData.samplingDataBuffer = &buf;
        ci[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
        ci[4].attributeData.samplingPeriodData.samplingPeriod = 10;
        CUpti_PCSamplingConfigurationInfoParams cip = {CUpti_PCSamplingConfigurationInfoParamsSize};
        cip.ctx = ctx;
        cip.numAttributes = 5;
        cip.pPCSamplingConfigurationInfo = ci;
        if (CP(cuptiPCSamplingSetConfigurationAttribute(&cip))) {
            CUpti_PCSamplingStartParams st = {CUpti_PCSamplingStartParamsSize};
            st.ctx = ctx;
            CUpti_PCSamplingStopParams sp = {CUpti_PCSamplingStopParamsSize};
            sp.ctx = ctx;
            double tl = now();
            if (CP(cuptiPCSamplingStart(&st))) {
                CU(cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
                CU(cuCtxSynchronize());
                CP(cuptiPCSamplingStop(&sp));
                printf("sampled launch wall %.3f s\n", now() - tl);
                CUpti_PCSamplingGetDataParams gd = {CUpti_PCSamplingGetDataParamsSize};
                gd.ctx = ctx;
                gd.pcSamplingData = &buf;
                if (CP(cuptiPCSamplingGetData(&gd))) {
                    printf("pcs %zu total samples %llu dropped %llu remaining %zu full %d\n", buf.totalNumPcs,
                           (unsigned long long)buf.totalSamples, (unsigned long long)buf.droppedSamples,
                           buf.remainingNumPcs, buf.hardwareBufferFull);
                    for (size_t p = 0; p < buf.totalNumPcs; p++) {
                        CUpti_PCSamplingPCData *d = &buf.pPcData[p];
                        unsigned tot = 0, best = 0;
                        size_t bi = 0;
                        for (size_t s = 0; s < d->stallReasonCount; s++) {
                            tot += d->stallReason[s].samples;
                            if (d->stallReason[s].samples > best) {
                                best = d->stallReason[s].samples;
                                bi = d->stallReason[s].pcSamplingStallReasonIndex;
                            }
                        }
                        const char *bn = "?";
                        for (size_t k = 0; k < nsr; k++)
                            if (idx[k] == bi)
                                bn = names[k];
                        char where[256];
                        line_of(d->functionName, d->pcOffset, where, sizeof where);
                        printf("pc %s 0x%llx %s samples %u top %s (%u)\n", d->functionName,
                               (unsigned long long)d->pcOffset, where, tot, bn, best);
                    }
                }
            }
        }
        CUpti_PCSamplingDisableParams pd = {CUpti_PCSamplingDisableParamsSize};
        pd.ctx = ctx;
        CP(cuptiPCSamplingDisable(&pd));
    }
    printf("pc sampling stage: %.3f s\n", now() - t0);
    return 0;
}
