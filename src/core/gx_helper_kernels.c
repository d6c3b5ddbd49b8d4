#include "gx_helper_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cache.h"
#include "gx_driver.h"
#include "gx_nvrtc.h"
#include "gx_fill.h"

static const char helper_kernels_source[] =
    "extern \"C\" __global__ void gx_flush_l2(const int4 *data, unsigned long long count, int *sink)\n"
    "{\n"
    "    int acc = 0;\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "        int4 v = data[i];\n"
    "        acc ^= v.x ^ v.y ^ v.z ^ v.w;\n"
    "    }\n"
    "    if (acc == 0x7ffffff1) /* never: the buffer is zeros; keeps the reads */\n"
    "        *sink = acc;\n"
    "}\n"
    /* the blocking kernel (as NVBench's): holds the stream until the host writes target into the
       mapped flag, so the runs enqueued behind it execute back to back whatever the host's enqueue
       speed; never a deadlock: it gives up after timeout_ns and counts that in *timed_out */
    "extern \"C\" __global__ void gx_block(const volatile unsigned *flag, unsigned target,\n"
    "                                      unsigned long long timeout_ns, volatile unsigned *timed_out)\n"
    "{\n"
    "    unsigned long long t0, t1;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "    while (*flag < target) {\n"
    "        asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t1));\n"
    "        if (t1 - t0 > timeout_ns) {\n"
    "            *timed_out = *timed_out + 1;\n"
    "            __threadfence_system();\n"
    "            break;\n"
    "        }\n"
    "    }\n"
    "}\n"
    "extern \"C\" __global__ void gx_clock_probe(unsigned long long *result)\n"
    "{\n"
    "    unsigned long long t0, t1;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "    long long c0 = clock64(), c1;\n"
    "    do {\n"
    "        asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t1));\n"
    "        c1 = clock64();\n"
    "    } while (t1 - t0 < 50000ull);\n"
    "    result[0] = (unsigned long long)(c1 - c0);\n"
    "    result[1] = t1 - t0;\n"
    "}\n"
    /* gx_fill_random (gx_fill.c) on the device, bit for bit: the same splitmix64 of (seed, index)
       and the same operations in the same order, rounded as the host rounds them (no FMA) */
    "__device__ unsigned long long gx_mix(unsigned long long seed, unsigned long long index)\n"
    "{\n"
    "    unsigned long long z = seed * 0x9E3779B97F4A7C15ull + index * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;\n"
    "    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;\n"
    "    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;\n"
    "    return z ^ (z >> 31);\n"
    "}\n"
    "extern \"C\" __global__ void gx_random(void *out, unsigned long long count, unsigned long long seed, int type,\n"
    "                                       double lo, double span, float lo_f, float span_f)\n"
    "{\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "        unsigned long long z = gx_mix(seed, i);\n"
    "        if (type == 0) {\n"
    "            ((float *)out)[i] = __fadd_rn(lo_f, __fmul_rn(__fmul_rn(span_f, (float)(z >> 40)), 0x1.0p-24f));\n"
    "            continue;\n"
    "        }\n"
    "        if (type == 1) {\n"
    "            ((double *)out)[i] = __dadd_rn(lo, __dmul_rn(__dmul_rn(span, (double)(z >> 11)), 0x1.0p-53));\n"
    "            continue;\n"
    "        }\n"
    "        double v = __dadd_rn(lo, floor(__dmul_rn(__dmul_rn((double)(z >> 11), 0x1.0p-53), span)));\n"
    "        switch (type) {\n"
    "        case 2: ((int *)out)[i] = (int)v; break;\n"
    "        case 3: ((unsigned *)out)[i] = (unsigned)v; break;\n"
    "        case 4: ((long long *)out)[i] = (long long)v; break;\n"
    "        case 5: ((unsigned long long *)out)[i] = (unsigned long long)v; break;\n"
    "        case 6: ((unsigned char *)out)[i] = (unsigned char)v; break;\n"
    "        default: ((signed char *)out)[i] = (signed char)v; break;\n"
    "        }\n"
    "    }\n"
    "}\n";

int gx_helper_kernels_open(gx_helper_kernels **out, const gx_device *device, gx_error *error)
{
    *out = NULL;
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(device, error))
        return error->kind;
    gx_helper_kernels *t = calloc(1, sizeof *t);
    if (!t)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
    t->device = device;
    int l2 = 0, sms = 0;
    char arch[16], cache[4096];
    snprintf(arch, sizeof arch, "sm_%d%d", device->cc_major, device->cc_minor);
    gx_cache_directory(cache, sizeof cache - 8);
    if (cache[0])
        strcat(cache, "/cubin");
    gx_compile_request request = {
        .source = helper_kernels_source, .source_name = "gx_helper_kernels.cu", .arch = arch, .cache_directory = cache};
    gx_compile_result compiled;
    int status = gx_nvrtc_compile(&request, &compiled, error);
    if (status == GX_OK) {
        status = gx_module_load(&t->module, device, compiled.cubin, NULL, 0, error);
        gx_compile_result_free(&compiled);
    }
    if (status || GX_CU(error, d->cuModuleGetFunction(&t->flush, t->module.handle, "gx_flush_l2")) ||
        GX_CU(error, d->cuModuleGetFunction(&t->clock_probe, t->module.handle, "gx_clock_probe")) ||
        GX_CU(error, d->cuModuleGetFunction(&t->random, t->module.handle, "gx_random")) ||
        GX_CU(error, d->cuModuleGetFunction(&t->block, t->module.handle, "gx_block")) ||
        GX_CU(error, d->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device->handle)) ||
        GX_CU(error, d->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device->handle))) {
        gx_helper_kernels_close(t);
        return error->kind;
    }
    t->flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 1 << 20);
    t->flush_blocks = 4 * (sms > 0 ? sms : 1);
    if (GX_CU(error, d->cuMemAlloc(&t->flush_buffer, t->flush_bytes + 64)) ||
        GX_CU(error, d->cuMemsetD32(t->flush_buffer, 0, (t->flush_bytes + 64) / 4)) ||
        GX_CU(error, d->cuMemAlloc(&t->probe_result, 16)) ||
        GX_CU(error, d->cuMemHostAlloc((void **)&t->block_words, 2 * sizeof(unsigned),
                                       CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE)) ||
        GX_CU(error, d->cuMemHostGetDevicePointer(&t->block_words_device, (void *)t->block_words, 0))) {
        gx_helper_kernels_close(t);
        return error->kind;
    }
    *out = t;
    return GX_OK;
}

void gx_helper_kernels_close(gx_helper_kernels *t)
{
    if (!t)
        return;
    gx_error ignored;
    const gx_driver *d = gx_driver_get(&ignored);
    if (d && gx_device_activate(t->device, &ignored) == GX_OK) {
        if (t->flush_buffer)
            d->cuMemFree(t->flush_buffer);
        if (t->probe_result)
            d->cuMemFree(t->probe_result);
        if (t->block_words) {
            t->block_words[0] = 0xffffffffu; /* releases a blocking kernel still waiting */
            d->cuCtxSynchronize();
            d->cuMemFreeHost((void *)t->block_words);
        }
    }
    gx_module_unload(&t->module);
    free(t);
}

int gx_helper_kernels_flush_l2(gx_helper_kernels *t, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(t->device, error))
        return error->kind;
    unsigned long long count = t->flush_bytes / 16;
    CUdeviceptr sink = t->flush_buffer + t->flush_bytes;
    void *params[] = {&t->flush_buffer, &count, &sink};
    gx_note_launch("gx_flush_l2");
    return GX_CU(error, d->cuLaunchKernel(t->flush, (unsigned)t->flush_blocks, 1, 1, 256, 1, 1, 0, gx_current_stream,
                                          params, NULL));
}

int gx_helper_kernels_sm_clock(gx_helper_kernels *t, double *mhz, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(t->device, error))
        return error->kind;
    void *params[] = {&t->probe_result};
    unsigned long long result[2];
    gx_note_launch("gx_clock_probe");
    if (GX_CU(error, d->cuLaunchKernel(t->clock_probe, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL)) ||
        GX_CU(error, d->cuMemcpyDtoH(result, t->probe_result, sizeof result)))
        return error->kind;
    *mhz = result[1] ? (double)result[0] / (double)result[1] * 1e3 : 0;
    return GX_OK;
}

int gx_helper_kernels_random(gx_helper_kernels *t, gx_buffer *buffer, uint64_t seed, double low, double high,
                             gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(t->device, error))
        return error->kind;
    /* the host's parameters exactly (gx_fill_random) */
    int type = (int)buffer->type;
    double lo = low, span = high - low;
    float lo_f = (float)low, span_f = (float)(high - low);
    if (!gx_type_is_float(buffer->type)) {
        lo = ceil(low);
        span = floor(high) - lo + 1;
        if (span < 1)
            span = 1;
    }
    unsigned long long count = buffer->count, s = seed;
    void *params[] = {&buffer->device_pointer, &count, &s, &type, &lo, &span, &lo_f, &span_f};
    gx_note_launch("gx_random");
    return GX_CU(error, d->cuLaunchKernel(t->random, (unsigned)t->flush_blocks * 4, 1, 1, 256, 1, 1, 0,
                                          gx_current_stream, params, NULL));
}

int gx_helper_kernels_block(gx_helper_kernels *t, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(t->device, error))
        return error->kind;
    unsigned target = ++t->block_generation;
    if (target == 0xffffffffu) { /* wrapped: start again from a released flag of 0 */
        t->block_words[0] = 0;
        target = t->block_generation = 1;
    }
    unsigned long long timeout_ns = GX_BLOCK_TIMEOUT_MS * 1000000ull;
    CUdeviceptr flag = t->block_words_device, timed_out = t->block_words_device + sizeof(unsigned);
    void *params[] = {&flag, &target, &timeout_ns, &timed_out};
    gx_note_launch("gx_block");
    return GX_CU(error, d->cuLaunchKernel(t->block, 1, 1, 1, 1, 1, 1, 0, gx_current_stream, params, NULL));
}

int gx_helper_kernels_release(gx_helper_kernels *t, gx_error *error)
{
    (void)error;
    __atomic_store_n(&t->block_words[0], t->block_generation, __ATOMIC_SEQ_CST);
    return GX_OK;
}

unsigned gx_helper_kernels_block_timeouts(const gx_helper_kernels *t)
{
    return __atomic_load_n(&t->block_words[1], __ATOMIC_SEQ_CST);
}
