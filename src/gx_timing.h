/* Timing device work with CUDA events: warm-up, then samples, each bracketed by an event pair. */
#ifndef GX_TIMING_H
#define GX_TIMING_H

#include <stddef.h>

#include "gx_device.h"

typedef int (*gx_work_fn)(void *user, gx_error *error);

typedef struct gx_timing_request {
    gx_work_fn work;        /* enqueued between the events of each sample */
    gx_work_fn before_each; /* optional, enqueued before each sample's start event (e.g. an L2 flush) */
    void *user;
    int warmup;             /* runs of work before the first sample, then a synchronize */
    size_t samples;
} gx_timing_request;

/* Writes request->samples durations in milliseconds to samples_ms. */
int gx_time_events(const gx_device *device, const gx_timing_request *request, double *samples_ms, gx_error *error);

#endif
