/* A timeline of the run (--trace FILE.json): kernels, copies, memsets, synchronizations and
   driver API calls from CUPTI's activity API, written as Chrome trace events (the JSON array
   format, which Perfetto and chrome://tracing open). Off unless started; nothing is enabled then. */
#ifndef GX_TRACE_H
#define GX_TRACE_H

#include "gx_error.h"

/* Starts recording into path (written to path.tmp, renamed at the stop). exclusive: fail with
   GX_ERR_SYSTEM and errno EEXIST when path.tmp exists (a second worker of one run then picks
   another name). */
int gx_trace_start(const char *path, int exclusive, gx_error *error);
/* Flushes every record, closes the array and the file. Safe to call when not started. */
int gx_trace_stop(gx_error *error);

#endif
