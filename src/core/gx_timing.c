#include "gx_timing.h"

#include <string.h>

#include "gx_driver.h"

#define BATCH 256 /* event pairs in flight before the host waits */

int gx_time_events(const gx_device *device, const gx_timing_request *request, double *samples_ms, gx_error *error)
{
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(device, error))
        return error->kind;
    for (int i = 0; i < request->warmup; i++)
        if (request->work(request->user, error))
            return error->kind;
    if (GX_CU(error, d->cuCtxSynchronize()))
        return error->kind;

    CUevent events[2 * BATCH];
    int created = 0, needed = request->samples < BATCH ? 2 * (int)request->samples : 2 * BATCH;
    int status = GX_OK;
    for (; created < needed; created++)
        if ((status = GX_CU(error, d->cuEventCreate(&events[created], CU_EVENT_DEFAULT))))
            break;
    /* blocked: one sample at a time, the stream held until the whole sample is enqueued */
    size_t per_wait = request->block ? 1 : BATCH;
    for (size_t first = 0; status == GX_OK && first < request->samples; first += per_wait) {
        size_t n = request->samples - first < per_wait ? request->samples - first : per_wait;
        int blocked = 0;
        for (size_t i = 0; status == GX_OK && i < n; i++) {
            if (request->before_each && (status = request->before_each(request->before_user, error)))
                break;
            if (request->block && !(status = request->block(request->block_user, error)))
                blocked = 1;
            if (status || (status = GX_CU(error, d->cuEventRecord(events[2 * i], NULL))) ||
                (status = request->work(request->user, error)) ||
                (status = GX_CU(error, d->cuEventRecord(events[2 * i + 1], NULL))))
                break;
        }
        if (blocked) { /* always released, also after a failure */
            gx_error ignored;
            request->release(request->block_user, status ? &ignored : error);
        }
        if (status || (status = GX_CU(error, d->cuEventSynchronize(events[2 * n - 1]))))
            break;
        for (size_t i = 0; i < n; i++) {
            float ms = 0;
            if ((status = GX_CU(error, d->cuEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]))))
                break;
            samples_ms[first + i] = ms;
        }
    }
    for (int i = 0; i < created; i++)
        d->cuEventDestroy(events[i]);
    return status;
}

int gx_graph_capture(gx_graph *g, const gx_device *device, gx_enqueue_fn enqueue, void *user, int count,
                     gx_error *error)
{
    memset(g, 0, sizeof *g);
    g->device = device;
    const gx_driver *d = gx_driver_get(error);
    if (!d || gx_device_activate(device, error) || GX_CU(error, d->cuStreamCreate(&g->stream, CU_STREAM_DEFAULT)) ||
        GX_CU(error, d->cuStreamBeginCapture(g->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)))
        return error->kind;
    int status = GX_OK;
    for (int i = 0; i < count && status == GX_OK; i++)
        status = enqueue(user, g->stream, error);
    CUresult ended = d->cuStreamEndCapture(g->stream, &g->graph); /* always end the capture */
    if (status)
        return status;
    if (ended != CUDA_SUCCESS)
        return gx_cuda_fail(error, "cuStreamEndCapture", ended);
    return GX_CU(error, d->cuGraphInstantiateWithFlags(&g->exec, g->graph, 0));
}

int gx_graph_launch(void *graph, gx_error *error)
{
    gx_graph *g = graph;
    const gx_driver *d = gx_driver_get(error);
    if (!d)
        return error->kind;
    return GX_CU(error, d->cuGraphLaunch(g->exec, g->stream));
}

void gx_graph_destroy(gx_graph *g)
{
    gx_error ignored;
    if (!g->device) /* never captured */
        return;
    const gx_driver *d = gx_driver_get(&ignored);
    if (!d || gx_device_activate(g->device, &ignored))
        return;
    if (g->stream)
        d->cuStreamSynchronize(g->stream);
    if (g->exec)
        d->cuGraphExecDestroy(g->exec);
    if (g->graph)
        d->cuGraphDestroy(g->graph);
    if (g->stream)
        d->cuStreamDestroy(g->stream);
    memset(g, 0, sizeof *g);
}
