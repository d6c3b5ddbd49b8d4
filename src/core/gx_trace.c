/* The timeline: CUPTI activity records written as Chrome trace events as CUPTI hands over its
   buffers. Times are microseconds from the start of the trace; GPUs are processes ("GPU 0: name"),
   streams their threads; the host's driver calls are the process "host". */
#include "gx_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gx_cupti_internal.h"
#include "gx_driver.h"

#define GX_TRACE_BUFFER (8u << 20)
#define GX_TRACE_LABELS 256

static struct {
    FILE *file;
    pthread_mutex_t lock;
    int active;
    uint64_t origin;                     /* CUPTI timestamp at the start, ns */
    long long labelled[GX_TRACE_LABELS]; /* pid * 2^32 + tid (tid -1: the process) already named */
    int labels;
    char path[4096], temporary[4100];
} trace = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                           CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                           CUPTI_ACTIVITY_KIND_DRIVER};

static void write_string(const char *text)
{
    fputc('"', trace.file);
    for (const unsigned char *c = (const unsigned char *)(text ? text : ""); *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(trace.file, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(trace.file, "\\u%04x", *c);
        else
            fputc(*c, trace.file);
    }
    fputc('"', trace.file);
}

/* A process or thread name, once: Chrome's "M" metadata events. */
static void label(long long pid, long long tid, const char *name)
{
    long long key = pid * 4294967296LL + tid;
    for (int i = 0; i < trace.labels; i++)
        if (trace.labelled[i] == key)
            return;
    if (trace.labels < GX_TRACE_LABELS)
        trace.labelled[trace.labels++] = key;
    fprintf(trace.file, "{\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"name\":\"%s\",\"args\":{\"name\":", pid,
            tid < 0 ? 0 : tid, tid < 0 ? "process_name" : "thread_name");
    write_string(name);
    fputs("}},\n", trace.file);
}

static double micros(uint64_t t)
{
    return t >= trace.origin ? (double)(t - trace.origin) / 1000.0 : 0.0;
}

/* One complete ("X") event; args is a JSON object's body. */
static void complete(const char *name, const char *category, long long pid, long long tid, uint64_t start, uint64_t end,
                     const char *args)
{
    fputs("{\"ph\":\"X\",\"name\":", trace.file);
    write_string(name);
    fprintf(trace.file, ",\"cat\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s}},\n",
            category, pid, tid, micros(start), end > start ? (double)(end - start) / 1000.0 : 0.0, args);
}

static const char *memory_kind(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
    default: return "other";
    }
}

static void gpu_labels(uint32_t device, uint32_t stream)
{
    char name[96];
    snprintf(name, sizeof name, "GPU %u", device);
    label(device + 1, -1, name);
    snprintf(name, sizeof name, "stream %u", stream);
    label(device + 1, stream, name);
}

static void write_record(const CUpti_Activity *record)
{
    char args[512], name[160];
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)record;
        gpu_labels(k->deviceId, k->streamId);
        snprintf(args, sizeof args,
                 "\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"shared_bytes\":%d,\"registers\":%u,\"correlation\":%u",
                 k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
                 k->staticSharedMemory + k->dynamicSharedMemory, k->registersPerThread, k->correlationId);
        complete(k->name, "kernel", k->deviceId + 1, k->streamId, k->start, k->end, args);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)record;
        static const char *const directions[] = {"?",    "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                 "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
        const char *direction = m->copyKind < sizeof directions / sizeof directions[0] ? directions[m->copyKind] : "?";
        gpu_labels(m->deviceId, m->streamId);
        snprintf(name, sizeof name, "memcpy %s %s to %s", direction, memory_kind(m->srcKind), memory_kind(m->dstKind));
        double seconds = m->end > m->start ? (double)(m->end - m->start) * 1e-9 : 0;
        snprintf(args, sizeof args, "\"bytes\":%llu,\"gbps\":%.3f,\"correlation\":%u", (unsigned long long)m->bytes,
                 seconds > 0 ? (double)m->bytes / seconds / 1e9 : 0.0, m->correlationId);
        complete(name, "memcpy", m->deviceId + 1, m->streamId, m->start, m->end, args);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)record;
        gpu_labels(m->deviceId, m->streamId);
        snprintf(args, sizeof args, "\"bytes\":%llu,\"correlation\":%u", (unsigned long long)m->bytes,
                 m->correlationId);
        complete("memset", "memset", m->deviceId + 1, m->streamId, m->start, m->end, args);
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)record;
        static const char *const types[] = {"synchronize", "event synchronize", "stream wait event",
                                            "stream synchronize", "context synchronize"};
        const char *type = (unsigned)s->type < 5 ? types[s->type] : "synchronize";
        label(0, -1, "host");
        label(0, 1, "synchronization");
        snprintf(args, sizeof args, "\"stream\":%u,\"correlation\":%u", s->streamId, s->correlationId);
        complete(type, "sync", 0, 1, s->start, s->end, args);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)record;
        const char *call = NULL;
        if (gx_cupti.cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, a->cbid, &call) != CUPTI_SUCCESS || !call)
            call = "driver call";
        label(0, -1, "host");
        snprintf(name, sizeof name, "thread %u", a->threadId);
        label(0, (long long)a->threadId + 2, name);
        snprintf(args, sizeof args, "\"correlation\":%u,\"result\":%u", a->correlationId, a->returnValue);
        complete(call, "driver", 0, (long long)a->threadId + 2, a->start, a->end, args);
        break;
    }
    default: break;
    }
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, GX_TRACE_BUFFER);
    *size = *buffer ? GX_TRACE_BUFFER : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)context, (void)stream, (void)size;
    pthread_mutex_lock(&trace.lock);
    CUpti_Activity *record = NULL;
    while (trace.file && gx_cupti.cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        write_record(record);
    if (trace.file)
        fflush(trace.file);
    pthread_mutex_unlock(&trace.lock);
    free(buffer);
}

int gx_trace_start(const char *path, int exclusive, gx_error *error)
{
    if (trace.active)
        return gx_fail(error, GX_ERR_USAGE, "a trace is already being recorded");
    /* PATH.tmp is renamed over PATH at the end: a device, a FIFO or a link there would be
       replaced (gx_output.h's rules), so the trace names a regular file or a new name */
    struct stat named;
    if (lstat(path, &named) == 0 && !S_ISREG(named.st_mode))
        return gx_fail(error, GX_ERR_USAGE,
                       "--trace %s: it is not a regular file (a device, a FIFO, a folder or a "
                       "link); name a file",
                       path);
    if (gx_cupti_get(error))
        return error->kind;
    /* written to PATH.tmp and renamed at the end: PATH is never cut, emptied or removed by a trace
       that could not be written */
    if (snprintf(trace.path, sizeof trace.path, "%s", path) >= (int)sizeof trace.path ||
        snprintf(trace.temporary, sizeof trace.temporary, "%s.tmp", path) >= (int)sizeof trace.temporary)
        return gx_fail(error, GX_ERR_USAGE, "the trace's path is too long");
    int fd = open(trace.temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | (exclusive ? O_EXCL : 0),
                  0644); /* never through a link planted at PATH.tmp */
    if (fd < 0) {
        int saved = errno;
        gx_fail(error, GX_ERR_SYSTEM, "cannot write the trace %s: %s", trace.temporary, strerror(saved));
        errno = saved;
        return GX_ERR_SYSTEM;
    }
    trace.file = fdopen(fd, "w");
    if (!trace.file) {
        close(fd);
        return gx_fail(error, GX_ERR_SYSTEM, "cannot write the trace %s: %s", path, strerror(errno));
    }
    trace.labels = 0;
    fputs("[\n", trace.file);
    CUptiResult result = gx_cupti.cuptiGetTimestamp(&trace.origin);
    if (result == CUPTI_SUCCESS)
        result = gx_cupti.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    for (size_t i = 0; result == CUPTI_SUCCESS && i < sizeof kinds / sizeof kinds[0]; i++)
        result = gx_cupti.cuptiActivityEnable(kinds[i]);
    if (result != CUPTI_SUCCESS) {
        fclose(trace.file);
        trace.file = NULL;
        unlink(trace.temporary); /* only the file this call made */
        gx_cupti_fail(error, "cuptiActivityEnable", result);
        gx_error_append(error, " (is there a GPU and a driver here? gpuexp doctor checks)");
        return error->kind;
    }
    trace.active = 1;
    return GX_OK;
}

int gx_trace_stop(gx_error *error)
{
    if (!trace.active)
        return GX_OK;
    trace.active = 0;
    CUptiResult result = gx_cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        gx_cupti.cuptiActivityDisable(kinds[i]);
    pthread_mutex_lock(&trace.lock);
    /* the last element carries no comma: the array is complete JSON */
    fprintf(trace.file,
            "{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"host (gpuexp pid "
            "%d)\"}}\n]\n",
            (int)getpid());
    int failed = ferror(trace.file);
    failed |= fflush(trace.file) != 0;
    int saved = errno;
    failed |= fclose(trace.file) != 0;
    if (!saved)
        saved = errno;
    trace.file = NULL;
    pthread_mutex_unlock(&trace.lock);
    if (failed) {
        unlink(trace.temporary);
        return gx_fail(error, GX_ERR_WRITE, "cannot write the trace %s: %s (no trace was kept)", trace.path,
                       saved ? strerror(saved) : "an I/O error");
    }
    if (rename(trace.temporary, trace.path) != 0) {
        saved = errno;
        unlink(trace.temporary);
        return gx_fail(error, GX_ERR_WRITE, "cannot write the trace %s: %s", trace.path, strerror(saved));
    }
    if (result != CUPTI_SUCCESS)
        return gx_cupti_fail(error, "cuptiActivityFlushAll", result);
    return GX_OK;
}
