/* Launch rate of an empty kernel from a C loop calling cuLaunchKernel directly: the peer of
   bench/launch_rate.lua. Prints launches per second, the median of `rounds` rounds. */
#include "bench_common.h"

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 200000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    gx_device device;
    gx_module module;
    CUfunction empty = bench_kernel(&device, &module, "extern \"C\" __global__ void empty() {}", "empty");
    gx_error error;
    const gx_driver *d = gx_driver_get(&error);
    double rates[64];
    for (int r = 0; r < rounds && r < 64; r++) {
        bench_check(GX_CU(&error, d->cuCtxSynchronize()), &error);
        double start = bench_seconds();
        for (int i = 0; i < launches; i++)
            if (d->cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS)
                return fprintf(stderr, "cuLaunchKernel failed\n"), 3;
        bench_check(GX_CU(&error, d->cuCtxSynchronize()), &error);
        rates[r] = launches / (bench_seconds() - start);
    }
    for (int i = 0; i < rounds; i++) /* median by insertion sort */
        for (int j = i; j > 0 && rates[j] < rates[j - 1]; j--) {
            double t = rates[j];
            rates[j] = rates[j - 1];
            rates[j - 1] = t;
        }
    printf("c_launches_per_second %.0f\n", rates[rounds / 2]);
    return 0;
}
