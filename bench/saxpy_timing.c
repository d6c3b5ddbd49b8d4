/* Event-timed median of SAXPY (32M floats, block 256) in plain C: the peer of gpuexp's
   kernel:time for bench/saxpy_timing.lua. Same method: warm-up, then event pairs per sample. */
#include <string.h>

#include "bench_common.h"

static int compare(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32 * 1024 * 1024;
    int reps = argc > 2 ? atoi(argv[2]) : 200;
    gx_device device;
    gx_module module;
    CUfunction saxpy =
        bench_kernel(&device, &module,
                     "extern \"C\" __global__ void minimal(float *y, const float *x, float a, int n) {"
                     " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }",
                     "minimal");
    gx_error error;
    const gx_driver *d = gx_driver_get(&error);
    CUdeviceptr x, y;
    bench_check(GX_CU(&error, d->cuMemAlloc(&x, (size_t)n * 4)), &error);
    bench_check(GX_CU(&error, d->cuMemAlloc(&y, (size_t)n * 4)), &error);
    float *host = malloc((size_t)n * 4);
    for (int i = 0; i < n; i++)
        host[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    bench_check(GX_CU(&error, d->cuMemcpyHtoD(x, host, (size_t)n * 4)), &error);
    bench_check(GX_CU(&error, d->cuMemcpyHtoD(y, host, (size_t)n * 4)), &error);
    float alpha = 2.5f;
    void *params[] = {&y, &x, &alpha, &n};
    unsigned grid = (unsigned)((n + 255) / 256);
    for (int i = 0; i < 10; i++)
        bench_check(GX_CU(&error, d->cuLaunchKernel(saxpy, grid, 1, 1, 256, 1, 1, 0, NULL, params, NULL)), &error);
    bench_check(GX_CU(&error, d->cuCtxSynchronize()), &error);
    CUevent *events = malloc(sizeof(CUevent) * 2 * (size_t)reps);
    for (int i = 0; i < 2 * reps; i++)
        bench_check(GX_CU(&error, d->cuEventCreate(&events[i], CU_EVENT_DEFAULT)), &error);
    for (int i = 0; i < reps; i++) {
        bench_check(GX_CU(&error, d->cuEventRecord(events[2 * i], NULL)), &error);
        bench_check(GX_CU(&error, d->cuLaunchKernel(saxpy, grid, 1, 1, 256, 1, 1, 0, NULL, params, NULL)), &error);
        bench_check(GX_CU(&error, d->cuEventRecord(events[2 * i + 1], NULL)), &error);
    }
    bench_check(GX_CU(&error, d->cuEventSynchronize(events[2 * reps - 1])), &error);
    float *ms = malloc(sizeof(float) * (size_t)reps);
    for (int i = 0; i < reps; i++)
        bench_check(GX_CU(&error, d->cuEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1])), &error);
    qsort(ms, (size_t)reps, sizeof *ms, compare);
    printf("c_saxpy_median_ms %.6f\n", reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]));
    return 0;
}
