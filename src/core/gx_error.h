/* Errors of the core: a kind for the exit code and one message line, never printed here. */
#ifndef GX_ERROR_H
#define GX_ERROR_H

#include <stdarg.h>

enum gx_error_kind {
    GX_OK = 0,
    GX_ERR_USAGE,       /* bad arguments from the caller */
    GX_ERR_DRIVER,      /* no driver, no device, or a CUDA call failed */
    GX_ERR_COMPILE,     /* NVRTC refused the source */
    GX_ERR_SYSTEM,      /* file system, memory */
    GX_ERR_PROFILER,    /* CUPTI missing or refused here (permissions, another profiler, unsupported GPU) */
    GX_ERR_WRITE,       /* an output could not be written (a full disk, an I/O error): the run stops */
    GX_ERR_BUSY,        /* another process holds what this one needs (an output, a GPU's nightly): try later */
    GX_ERR_OPTION,      /* a command-line option does not fit the script (--only naming an axis it lacks) */
    GX_ERR_INTERRUPTED, /* a stop signal (Ctrl-C, SIGTERM, SIGHUP) ended the run: exit 128 + N */
};

typedef struct gx_error {
    enum gx_error_kind kind;
    char message[4096];
} gx_error;

/* Sets *error and returns its kind, so callers can `return gx_fail(...)`. */
int gx_fail(gx_error *error, enum gx_error_kind kind, const char *format, ...) __attribute__((format(printf, 3, 4)));
int gx_fail_va(gx_error *error, enum gx_error_kind kind, const char *format, va_list args);

/* Appends text to an error already set (for hints after the API's own text). */
void gx_error_append(gx_error *error, const char *format, ...) __attribute__((format(printf, 2, 3)));

const char *gx_error_kind_name(enum gx_error_kind kind);

#endif
