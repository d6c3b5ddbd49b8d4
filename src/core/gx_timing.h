/* Timing device work with CUDA events: warm-up, then samples, each bracketed by an event pair. */
#ifndef GX_TIMING_H
#define GX_TIMING_H

#include <stddef.h>

#include <cuda.h>

#include "gx_device.h"

typedef int (*gx_work_fn)(void *user, gx_error *error);

typedef struct gx_timing_request {
    gx_work_fn work;        /* enqueued between the events of each sample */
    gx_work_fn before_each; /* optional, enqueued before each sample's start event (e.g. an L2 flush) */
    void *user;
    void *before_user;  /* passed to before_each */
    gx_work_fn block;   /* optional: enqueued before each sample's start event, holds the stream */
    gx_work_fn release; /* with block: releases it once the sample is enqueued */
    void *block_user;   /* passed to block and release */
    int warmup;         /* runs of work before the first sample, then a synchronize */
    size_t samples;
} gx_timing_request;

/* A CUDA graph of `count` copies of some work, captured once and launched as one: for kernels
   so short that launch gaps would dominate. The stream is blocking, so events on the default
   stream order with it. */
typedef struct gx_graph {
    const gx_device *device;
    CUstream stream;
    CUgraph graph;
    CUgraphExec exec;
} gx_graph;

typedef int (*gx_enqueue_fn)(void *user, CUstream stream, gx_error *error);
int gx_graph_capture(gx_graph *graph, const gx_device *device, gx_enqueue_fn enqueue, void *user, int count,
                     gx_error *error);
int gx_graph_launch(void *graph, gx_error *error); /* a gx_work_fn */
void gx_graph_destroy(gx_graph *graph);

/* Writes request->samples durations in milliseconds to samples_ms. */
int gx_time_events(const gx_device *device, const gx_timing_request *request, double *samples_ms, gx_error *error);

#endif
