/* Streams (with priorities) and events (record, wait, elapsed time) on a device's context. */
#ifndef GX_STREAM_H
#define GX_STREAM_H

#include <cuda.h>

#include "gx_device.h"

typedef struct gx_stream {
    const gx_device *device;
    CUstream handle; /* NULL when not created or destroyed */
    int priority;
} gx_stream;

typedef struct gx_event {
    const gx_device *device;
    CUevent handle;
    int timing; /* created with timing (CU_EVENT_DEFAULT) rather than CU_EVENT_DISABLE_TIMING */
} gx_event;

/* The device's priorities: least (0) and greatest (a negative number: lower is more urgent). */
int gx_stream_priority_range(const gx_device *device, int *least, int *greatest, gx_error *error);
/* blocking: the stream waits for the legacy default stream and it for the stream (CU_STREAM_DEFAULT);
   else CU_STREAM_NON_BLOCKING. */
int gx_stream_create(gx_stream *stream, const gx_device *device, int priority, int blocking, gx_error *error);
void gx_stream_destroy(gx_stream *stream); /* idempotent; queued work still completes */
int gx_stream_synchronize(const gx_stream *stream, gx_error *error);
int gx_stream_query(const gx_stream *stream, int *done, gx_error *error);
int gx_stream_wait_event(const gx_stream *stream, const gx_event *event, gx_error *error);

int gx_event_create(gx_event *event, const gx_device *device, int timing, gx_error *error);
void gx_event_destroy(gx_event *event); /* idempotent */
int gx_event_record(const gx_event *event, CUstream stream, gx_error *error);
int gx_event_synchronize(const gx_event *event, gx_error *error);
int gx_event_query(const gx_event *event, int *done, gx_error *error);
/* Milliseconds from start to end, both recorded and complete. */
int gx_event_elapsed(const gx_event *start, const gx_event *end, float *ms, gx_error *error);

#endif
