/* Hardware metrics in-process with CUPTI's range profiler on a device: one launch replayed as many
   passes as the metrics need, the kernels of one run, or a batch of launches in one replay. */
#ifndef GX_PROFILER_H
#define GX_PROFILER_H

#include <stddef.h>

#include <cuda.h>

#include "gx_device.h"
#include "gx_error.h"
#include "gx_metric.h"

typedef struct gx_profiler gx_profiler; /* a device's profiling state, reused across calls */

/* One pass of a replay: prepare runs outside the profiled range (restore buffers, flush L2),
   launch enqueues exactly one kernel. */
typedef int (*gx_pass_fn)(void *user, int pass, gx_error *error);

int gx_profiler_open(gx_profiler **profiler, const gx_device *device, gx_error *error);
void gx_profiler_close(gx_profiler *profiler);
const char *gx_profiler_chip(const gx_profiler *profiler);
/* "" or a note for the user: a damaged cache entry (the counter availability image) was rebuilt. */
const char *gx_profiler_cache_note(const gx_profiler *profiler);
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
