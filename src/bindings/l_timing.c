/* Timing any work with CUDA events (a kernel's launch, a bound launch, a sequence): warm-up,
   samples, cold L2, graph mode and the SM clock probe, into one statistics table. */
#include <string.h>

#include "gx_helper_kernels.h"
#include "l_util.h"
#include "l_types.h"

static int flush_before(void *user, gx_error *error)
{
    return gx_helper_kernels_flush_l2(user, error);
}

static int block_stream(void *user, gx_error *error)
{
    return gx_helper_kernels_block(user, error);
}

static int release_stream(void *user, gx_error *error)
{
    return gx_helper_kernels_release(user, error);
}

/* batch = N: N runs back to back between one sample's two events, enqueued from C behind the
   blocking kernel (gx_helper_kernels_block; hold = false: not held) so the events time the GPU's back-to-back
   execution, not the host's enqueue speed. No graph: also for work a graph cannot capture. */
struct batch_work {
    gx_work_fn work;
    void *user;
    int runs;
};

static int run_batch(void *user, gx_error *error)
{
    struct batch_work *batch = user;
    for (int i = 0; i < batch->runs; i++)
        if (batch->work(batch->user, error))
            return error->kind;
    return GX_OK;
}

int l_time_work(lua_State *L, const l_timed_work *work, int options)
{
    lua_Integer warmup = 5, reps = 100, graph = 0, batch = 0;
    int cold = 0, clock = 0, block = 1;
    if (options) {
        l_opt_integer_field(L, options, "warmup", 5, &warmup);
        l_opt_integer_field(L, options, "reps", 100, &reps);
        l_opt_integer_field(L, options, "graph", 0, &graph);
        l_opt_integer_field(L, options, "batch", 0, &batch);
        lua_getfield(L, options, "cold");
        cold = lua_toboolean(L, -1);
        lua_getfield(L, options, "clock");
        clock = lua_toboolean(L, -1);
        lua_getfield(L, options, "hold"); /* ("block" is the launch's block size in kernel:time) */
        block = lua_isnil(L, -1) || lua_toboolean(L, -1);
        lua_pop(L, 3);
    }
    if (warmup < 0 || reps < 1 || reps > 10000000 || graph < 0 || graph > 100000 || batch < 0 || batch > 100000)
        return l_raisef(
            L, GX_ERR_USAGE,
            "time: warmup must be >= 0, reps from 1 to 10^7, graph and batch from 0 to 10^5 (got %lld, %lld, "
            "%lld, %lld)",
            (long long)warmup, (long long)reps, (long long)graph, (long long)batch);
    if (graph > 0 && batch > 0)
        return l_raisef(L, GX_ERR_USAGE, "time: graph and batch are two ways to time back-to-back runs: give one");
    if (!work->device) { /* offline plan: no timings, never invented ones */
        lua_createtable(L, 0, 3);
        l_set_integer(L, "samples", 0);
        l_set_integer(L, "warmup", 0);
        l_set_string(L, "timer", "none (offline plan)");
        return 1;
    }
    double *samples = lua_newuserdatauv(L, sizeof(double) * (size_t)reps, 0);
    const gx_device *device = &work->device->device;
    int blocked = batch > 0 && block;
    gx_helper_kernels *helper_kernels = cold || clock || blocked ? l_device_helper_kernels(L, work->device) : NULL;
    gx_timing_request request = {.work = work->work,
                                 .user = work->user,
                                 .warmup = (int)warmup,
                                 .samples = (size_t)reps,
                                 .before_each = cold ? flush_before : NULL,
                                 .before_user = helper_kernels};
    gx_error error;
    gx_graph captured;
    memset(&captured, 0, sizeof captured);
    int status = GX_OK;
    struct batch_work batched = {work->work, work->user, (int)batch};
    if (graph > 0) {
        status = gx_graph_capture(&captured, device, work->enqueue, work->user, (int)graph, &error);
        request.work = gx_graph_launch;
        request.user = &captured;
    } else if (batch > 0) {
        request.work = run_batch;
        request.user = &batched;
        if (blocked) {
            request.block = block_stream;
            request.release = release_stream;
            request.block_user = helper_kernels;
        }
    }
    unsigned timeouts = blocked ? gx_helper_kernels_block_timeouts(helper_kernels) : 0;
    if (status == GX_OK)
        status = gx_time_events(device, &request, samples, &error);
    if (blocked) /* a held stream that timed out was not held: those samples are not clean */
        timeouts = gx_helper_kernels_block_timeouts(helper_kernels) - timeouts;
    if (status == GX_OK && timeouts > 0) {
        request.block = request.release = NULL;
        status = gx_time_events(device, &request, samples, &error);
    }
    gx_graph_destroy(&captured); /* before anything can raise */
    if (status)
        return work->raise ? work->raise(L, work->user, &error) : l_raise(L, &error);
    lua_Integer runs = graph > 0 ? graph : batch > 0 ? batch : 1;
    for (lua_Integer i = 0; runs > 1 && i < reps; i++)
        samples[i] /= (double)runs;
    double clock_mhz = 0;
    if (clock && gx_helper_kernels_sm_clock(helper_kernels, &clock_mhz, &error))
        return l_raise(L, &error);
    lua_createtable(L, (int)reps, 0);
    for (lua_Integer i = 0; i < reps; i++) {
        lua_pushnumber(L, samples[i]);
        lua_rawseti(L, -2, i + 1);
    }
    l_push_stats(L, samples, (size_t)reps, "_ms");
    lua_insert(L, -2);
    lua_setfield(L, -2, "samples_ms");
    l_set_integer(L, "warmup", warmup);
    l_set_string(L, "timer", "cuda_events");
    l_set_string(L, "mode", graph > 0 ? "graph" : batch > 0 ? "batch" : cold ? "cold" : "hot");
    if (runs > 1)
        l_set_integer(L, "launches_per_sample", runs);
    if (batch > 0)
        lua_pushboolean(L, blocked && timeouts == 0), lua_setfield(L, -2, "blocked");
    if (timeouts > 0) {
        l_set_integer(L, "block_timeouts", timeouts);
        lua_pushfstring(L,
                        "the blocking kernel timed out (%d ms) in %d of %d samples before the host had enqueued "
                        "them: re-timed unblocked (the host's enqueue speed may show)",
                        GX_BLOCK_TIMEOUT_MS, (int)timeouts, (int)reps);
        lua_setfield(L, -2, "timing_note");
    }
    if (clock)
        l_set_number(L, "sm_clock_mhz", clock_mhz);
    return 1;
}
