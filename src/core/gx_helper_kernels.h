/* gpuexp's own helper kernels on a device: the L2 flush (cold runs, counter passes), the SM
   clock probe (the clock a measurement actually ran at) and the seeded random fill. Compiled
   with NVRTC on first use. */
#ifndef GX_HELPER_KERNELS_H
#define GX_HELPER_KERNELS_H

#include <cuda.h>

#include <stdint.h>

#include "gx_device.h"
#include "gx_memory.h"
#include "gx_module.h"

typedef struct gx_helper_kernels {
    const gx_device *device;
    gx_module module;
    CUfunction flush, clock_probe, random, block;
    CUdeviceptr flush_buffer, probe_result;
    volatile unsigned *block_words; /* host-mapped: [0] the released generation, [1] timeouts seen */
    CUdeviceptr block_words_device;
    unsigned block_generation;
    size_t flush_bytes;
    int flush_blocks;
} gx_helper_kernels;

int gx_helper_kernels_open(gx_helper_kernels **helper_kernels, const gx_device *device, gx_error *error);
void gx_helper_kernels_close(gx_helper_kernels *helper_kernels);
/* Enqueues a read of a buffer twice the L2's size: the L2 then holds none of the caller's data and
   no dirty lines. Asynchronous on gx_current_stream (the default stream unless a sequence runs on its own). */
int gx_helper_kernels_flush_l2(gx_helper_kernels *helper_kernels, gx_error *error);
/* Runs a one-thread kernel that spins about 50 us and returns the SM clock it saw, in MHz
   (cycles over globaltimer nanoseconds). Synchronous. */
int gx_helper_kernels_sm_clock(gx_helper_kernels *helper_kernels, double *mhz, gx_error *error);
/* Fills a device buffer with gx_fill_random's values (the same, bit for bit) on the GPU.
   Asynchronous on gx_current_stream (the default stream unless a sequence runs on its own). */
int gx_helper_kernels_random(gx_helper_kernels *helper_kernels, gx_buffer *buffer, uint64_t seed, double low,
                             double high, gx_error *error);
/* The blocking kernel: gx_helper_kernels_block enqueues on gx_current_stream a one-thread kernel that
   holds the stream until gx_helper_kernels_release (or GX_BLOCK_TIMEOUT_MS, so never a deadlock: each
   timeout adds one to gx_helper_kernels_block_timeouts, and the runs behind it were not held back to back). */
#define GX_BLOCK_TIMEOUT_MS 200
int gx_helper_kernels_block(gx_helper_kernels *helper_kernels, gx_error *error);
int gx_helper_kernels_release(gx_helper_kernels *helper_kernels, gx_error *error);
unsigned gx_helper_kernels_block_timeouts(const gx_helper_kernels *helper_kernels);

#endif
