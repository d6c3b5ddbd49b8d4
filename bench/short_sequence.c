/* The C peer of bench/short_sequence.lua: the 3-kernel sequence (scale, add, add over SEQUENCE_N
   floats) and the single kernel (scale over SINGLE_N), each run RUNS times back to back between
   two events, enqueued while gpuexp's blocking kernel (gx_helper_kernels_block) holds the stream,
   so the host's enqueue speed cannot show (what the GPU takes per run), and per run
   between its own events (what per-run events read). Same kernels, sizes and grid as the script.
   usage: bench_short_sequence [RUNS] (prints "name value" lines for the comparison) */
#include <string.h>

#include "bench_common.h"
#include "gx_files.h"
#include "gx_helper_kernels.h"

#define SEQUENCE_N (2u << 20)
#define SINGLE_N (1u << 19)

typedef struct launch {
    CUfunction function;
    void *params[4];
} launch;

static const gx_driver *d;
static gx_error error;
static unsigned grid;
static gx_helper_kernels *helper_kernels;

static void enqueue(const launch *launches, int count)
{
    for (int i = 0; i < count; i++)
        bench_check(GX_CU(&error, d->cuLaunchKernel(launches[i].function, grid, 1, 1, 256, 1, 1, 0, NULL,
                                                    (void **)launches[i].params, NULL)),
                    &error);
}

static double elapsed_ms(CUevent start, CUevent stop)
{
    float ms;
    bench_check(GX_CU(&error, d->cuEventSynchronize(stop)), &error);
    bench_check(GX_CU(&error, d->cuEventElapsedTime(&ms, start, stop)), &error);
    return ms;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the median over 11 samples of (RUNS back-to-back runs) / RUNS, and the median per-run reading */
static void measure(const char *name, const launch *launches, int count, int runs, CUevent start, CUevent stop)
{
    double back[11], single[201];
    for (int i = 0; i < 10; i++)
        enqueue(launches, count);
    unsigned timeouts = gx_helper_kernels_block_timeouts(helper_kernels);
    for (int s = 0; s < 11; s++) {
        bench_check(gx_helper_kernels_block(helper_kernels, &error), &error);
        bench_check(GX_CU(&error, d->cuEventRecord(start, NULL)), &error);
        for (int r = 0; r < runs; r++)
            enqueue(launches, count);
        bench_check(GX_CU(&error, d->cuEventRecord(stop, NULL)), &error);
        bench_check(gx_helper_kernels_release(helper_kernels, &error), &error);
        back[s] = elapsed_ms(start, stop) / runs;
    }
    printf("c_%s_block_timeouts %u\n", name, gx_helper_kernels_block_timeouts(helper_kernels) - timeouts);
    for (int s = 0; s < 201; s++) {
        bench_check(GX_CU(&error, d->cuEventRecord(start, NULL)), &error);
        enqueue(launches, count);
        bench_check(GX_CU(&error, d->cuEventRecord(stop, NULL)), &error);
        single[s] = elapsed_ms(start, stop);
    }
    qsort(back, 11, sizeof *back, compare);
    qsort(single, 201, sizeof *single, compare);
    printf("c_%s_back_to_back_ms %.6f\nc_%s_per_run_events_ms %.6f\n", name, back[5], name, single[100]);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    char *source;
    size_t size;
    bench_check(gx_read_file("bench/short_kernels.cu", &source, &size, &error), &error);
    gx_device device;
    gx_module module;
    CUfunction scale = bench_kernel(&device, &module, source, "scale");
    d = gx_driver_get(&error);
    CUfunction add;
    bench_check(GX_CU(&error, d->cuModuleGetFunction(&add, module.handle, "add")), &error);
    grid = 1056; /* 8 blocks per SM of an H100 or H200 (132 SMs), as the script */
    CUdeviceptr a, b, c;
    bench_check(GX_CU(&error, d->cuMemAlloc(&a, SEQUENCE_N * 4ull)), &error);
    bench_check(GX_CU(&error, d->cuMemAlloc(&b, SEQUENCE_N * 4ull)), &error);
    bench_check(GX_CU(&error, d->cuMemAlloc(&c, SEQUENCE_N * 4ull)), &error);
    bench_check(GX_CU(&error, d->cuMemsetD32(a, 0x3f800000u, SEQUENCE_N)), &error);
    bench_check(GX_CU(&error, d->cuMemsetD32(b, 0x40000000u, SEQUENCE_N)), &error);
    float factor = 2;
    unsigned long long n = SEQUENCE_N, single_n = SINGLE_N;
    launch sequence[3] = {{scale, {&c, &a, &factor, &n}}, {add, {&c, &b, &n}}, {add, {&c, &a, &n}}};
    launch single[1] = {{scale, {&c, &a, &factor, &single_n}}};
    bench_check(gx_helper_kernels_open(&helper_kernels, &device, &error), &error);
    CUevent start, stop;
    bench_check(GX_CU(&error, d->cuEventCreate(&start, CU_EVENT_DEFAULT)), &error);
    bench_check(GX_CU(&error, d->cuEventCreate(&stop, CU_EVENT_DEFAULT)), &error);
    measure("sequence", sequence, 3, runs, start, stop);
    measure("single", single, 1, runs, start, stop);
    gx_helper_kernels_close(helper_kernels);
    free(source);
    return 0;
}
