#include "gx_error.h"

#include <stdio.h>
#include <string.h>

int gx_fail_va(gx_error *error, enum gx_error_kind kind, const char *format, va_list args)
{
    error->kind = kind;
    vsnprintf(error->message, sizeof error->message, format, args);
    return kind;
}

int gx_fail(gx_error *error, enum gx_error_kind kind, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    gx_fail_va(error, kind, format, args);
    va_end(args);
    return kind;
}

void gx_error_append(gx_error *error, const char *format, ...)
{
    size_t used = strlen(error->message);
    if (used + 1 >= sizeof error->message)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(error->message + used, sizeof error->message - used, format, args);
    va_end(args);
}

const char *gx_error_kind_name(enum gx_error_kind kind)
{
    switch (kind) {
    case GX_OK: return "ok";
    case GX_ERR_USAGE: return "usage";
    case GX_ERR_DRIVER: return "driver";
    case GX_ERR_COMPILE: return "compile";
    case GX_ERR_SYSTEM: return "system";
    case GX_ERR_PROFILER: return "profiler";
    case GX_ERR_WRITE: return "write";
    case GX_ERR_BUSY: return "busy";
    case GX_ERR_OPTION: return "option";
    case GX_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown";
}
