/* Hardware metrics in-process with CUPTI's range profiler (CUPTI 13, loaded with dlopen).
   Host side (names, suggestions, listing, pass counts) works without a GPU, from a chip name. */
#ifndef GX_CUPTI_H
#define GX_CUPTI_H

#include <stddef.h>

#include <cuda.h>

#include "gx_device.h"
#include "gx_error.h"

typedef struct gx_metric_host gx_metric_host; /* a CUPTI host object for one chip */
typedef struct gx_profiler gx_profiler;       /* a device's profiling state, reused across calls */

typedef struct gx_metric_info {
    int type; /* 0 counter, 1 ratio, 2 throughput */
    const char *description, *hardware_unit, *dimension_unit; /* owned by CUPTI */
} gx_metric_info;

/* Names ncu computes itself (launch__*, sm__maximum_warps_*, ...): not CUPTI metrics. */
int gx_metric_is_ncu_only(const char *name);

int gx_metric_host_open(gx_metric_host **host, const char *chip, gx_error *error);
void gx_metric_host_close(gx_metric_host *host);
const char *gx_metric_host_chip(const gx_metric_host *host);
/* GX_OK when `name` can be collected (a full name: base plus rollup/submetric); otherwise a usage
   error naming the closest valid names. */
int gx_metric_check(gx_metric_host *host, const char *name, gx_metric_info *info, gx_error *error);
/* Calls fn for each base metric of the chip with its type. */
int gx_metric_each(gx_metric_host *host, void (*fn)(void *user, const char *name, int type), void *user,
                   gx_error *error);
int gx_metric_passes(gx_metric_host *host, const char *const *names, int count, size_t *passes, gx_error *error);
/* CUPTI's API version (cuptiGetVersion), or the reason CUPTI cannot be loaded. */
int gx_cupti_version(unsigned *version, gx_error *error);
int gx_cupti_loaded(void); /* whether this process has loaded CUPTI already (nothing is loaded) */
/* Supported chip names, comma separated. */
int gx_metric_chips(char *buffer, size_t size, gx_error *error);

/* One pass of a replay: prepare runs outside the profiled range (restore buffers, flush L2),
   launch enqueues exactly one kernel. */
typedef int (*gx_pass_fn)(void *user, int pass, gx_error *error);

int gx_profiler_open(gx_profiler **profiler, const gx_device *device, gx_error *error);
void gx_profiler_close(gx_profiler *profiler);
const char *gx_profiler_chip(const gx_profiler *profiler);
gx_metric_host *gx_profiler_host(gx_profiler *profiler);
/* Collects `names` for one launch, replaying it as many passes as they need. */
int gx_profiler_collect(gx_profiler *profiler, const char *const *names, int count, gx_pass_fn prepare,
                        gx_pass_fn launch, void *user, double *values, int *passes, gx_error *error);
/* Collects `names` for each of `ranges` kernels that one run launches: prepare before each pass
   (outside the profiled range), run inside it (exactly `ranges` kernels). values[r * count + m]. */
int gx_profiler_collect_ranges(gx_profiler *profiler, const char *const *names, int count, int ranges,
                               gx_pass_fn prepare, gx_pass_fn run, void *user, double *values, int *passes,
                               gx_error *error);
/* One step of a batch: for launch `index` of pass `pass`. */
typedef int (*gx_batch_fn)(void *user, int pass, int index, gx_error *error);
/* Collects `names` for `launches` launches in one replay: each pass runs, inside one Start/Stop,
   prepare(i) (restore launch i's buffers, flush the L2: exactly `kernels_per_prepare` kernels)
   then launch(i) (exactly one kernel) for every i. Auto range records every kernel; each launch's
   range is the one after its prepare's. values[i * count + m]. */
int gx_profiler_collect_batch(gx_profiler *profiler, const char *const *names, int count, int launches,
                              int kernels_per_prepare, gx_batch_fn prepare, gx_batch_fn launch, void *user,
                              double *values, int *passes, gx_error *error);

/* Where the last collect's time went (seconds): images and SetConfig, the caller's preparation
   between passes, Start, the launches, Stop, decoding, evaluating the values. */
typedef struct gx_profile_timing {
    double setup_s, prepare_s, start_s, launch_s, stop_s, decode_s, evaluate_s;
} gx_profile_timing;
const gx_profile_timing *gx_profiler_timing(const gx_profiler *profiler);

/* Device memory of at least `bytes` for snapshots, kept and reused across calls. */
int gx_profiler_scratch(gx_profiler *profiler, size_t bytes, CUdeviceptr *scratch, gx_error *error);

#endif
