/* CUPTI 13, loaded with dlopen on first use: whether it is there and its version. The metric
   tables are gx_metric.h, the range profiler on a device gx_profiler.h, the timeline gx_trace.h. */
#ifndef GX_CUPTI_H
#define GX_CUPTI_H

#include "gx_error.h"

/* CUPTI's API version (cuptiGetVersion), or the reason CUPTI cannot be loaded. */
int gx_cupti_version(unsigned *version, gx_error *error);
int gx_cupti_loaded(void); /* whether this process has loaded CUPTI already (nothing is loaded) */

#endif
