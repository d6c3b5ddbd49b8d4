#include "gx_stream.h"

#include <string.h>

#include "gx_driver.h"

static const gx_driver *active(const gx_device *device, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    return d && gx_device_activate(device, error) == GX_OK ? d : NULL;
}

int gx_stream_priority_range(const gx_device *device, int *least, int *greatest, gx_error *error)
{
    const gx_driver *d = active(device, error);
    return d ? GX_CU(error, d->cuCtxGetStreamPriorityRange(least, greatest)) : (int)error->kind;
}

int gx_stream_create(gx_stream *stream, const gx_device *device, int priority, int blocking, gx_error *error)
{
    memset(stream, 0, sizeof *stream);
    const gx_driver *d = active(device, error);
    if (!d)
        return error->kind;
    int least, greatest;
    if (GX_CU(error, d->cuCtxGetStreamPriorityRange(&least, &greatest)))
        return error->kind;
    if (priority > least || priority < greatest)
        return gx_fail(error, GX_ERR_USAGE, "stream priority %d is outside %s's range, %d (least) to %d (greatest)",
                       priority, device->name, least, greatest);
    if (GX_CU(error, d->cuStreamCreateWithPriority(&stream->handle,
                                                   blocking ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING, priority)))
        return error->kind;
    stream->device = device;
    stream->priority = priority;
    return GX_OK;
}

void gx_stream_destroy(gx_stream *stream)
{
    gx_error ignored;
    const gx_driver *d = stream->handle ? active(stream->device, &ignored) : NULL;
    if (d)
        d->cuStreamDestroy(stream->handle);
    stream->handle = NULL;
}

int gx_stream_synchronize(const gx_stream *stream, gx_error *error)
{
    const gx_driver *d = active(stream->device, error);
    return d ? GX_CU(error, d->cuStreamSynchronize(stream->handle)) : (int)error->kind;
}

/* CUDA_ERROR_NOT_READY is an answer, not an error. */
static int query_result(CUresult result, int *done, const char *call, gx_error *error)
{
    *done = result == CUDA_SUCCESS;
    return result == CUDA_SUCCESS || result == CUDA_ERROR_NOT_READY ? GX_OK : gx_cuda_fail(error, call, result);
}

int gx_stream_query(const gx_stream *stream, int *done, gx_error *error)
{
    const gx_driver *d = active(stream->device, error);
    return d ? query_result(d->cuStreamQuery(stream->handle), done, "cuStreamQuery", error) : (int)error->kind;
}

int gx_stream_wait_event(const gx_stream *stream, const gx_event *event, gx_error *error)
{
    if (stream->device != event->device)
        return gx_fail(error, GX_ERR_USAGE, "a stream can wait only for an event of its own GPU");
    const gx_driver *d = active(stream->device, error);
    return d ? GX_CU(error, d->cuStreamWaitEvent(stream->handle, event->handle, 0)) : (int)error->kind;
}

int gx_event_create(gx_event *event, const gx_device *device, int timing, gx_error *error)
{
    memset(event, 0, sizeof *event);
    const gx_driver *d = active(device, error);
    if (!d || GX_CU(error, d->cuEventCreate(&event->handle, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING)))
        return error->kind;
    event->device = device;
    event->timing = timing;
    return GX_OK;
}

void gx_event_destroy(gx_event *event)
{
    gx_error ignored;
    const gx_driver *d = event->handle ? active(event->device, &ignored) : NULL;
    if (d)
        d->cuEventDestroy(event->handle);
    event->handle = NULL;
}

int gx_event_record(const gx_event *event, CUstream stream, gx_error *error)
{
    const gx_driver *d = active(event->device, error);
    return d ? GX_CU(error, d->cuEventRecord(event->handle, stream)) : (int)error->kind;
}

int gx_event_synchronize(const gx_event *event, gx_error *error)
{
    const gx_driver *d = active(event->device, error);
    return d ? GX_CU(error, d->cuEventSynchronize(event->handle)) : (int)error->kind;
}

int gx_event_query(const gx_event *event, int *done, gx_error *error)
{
    const gx_driver *d = active(event->device, error);
    return d ? query_result(d->cuEventQuery(event->handle), done, "cuEventQuery", error) : (int)error->kind;
}

int gx_event_elapsed(const gx_event *start, const gx_event *end, float *ms, gx_error *error)
{
    if (!start->timing || !end->timing)
        return gx_fail(error, GX_ERR_USAGE, "elapsed time needs two events made with timing (the default)");
    if (start->device != end->device)
        return gx_fail(error, GX_ERR_USAGE, "elapsed time between events of two GPUs");
    const gx_driver *d = active(start->device, error);
    return d ? GX_CU(error, d->cuEventElapsedTime(ms, start->handle, end->handle)) : (int)error->kind;
}
