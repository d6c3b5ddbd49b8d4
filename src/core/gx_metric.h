/* Hardware metric names on the host (CUPTI's metric tables): checks with suggestions, listing and
   pass counts, from a chip name, without a GPU. */
#ifndef GX_METRIC_H
#define GX_METRIC_H

#include <stddef.h>

#include "gx_error.h"

typedef struct gx_metric_host gx_metric_host; /* a CUPTI host object for one chip */

typedef struct gx_metric_info {
    int type;                                                 /* 0 counter, 1 ratio, 2 throughput */
    const char *description, *hardware_unit, *dimension_unit; /* owned by CUPTI */
} gx_metric_info;

int gx_metric_host_open(gx_metric_host **host, const char *chip, gx_error *error);
void gx_metric_host_close(gx_metric_host *host);
const char *gx_metric_host_chip(const gx_metric_host *host);
/* GX_OK when `name` can be collected (a full name: base plus rollup/submetric); otherwise a usage
   error naming the closest valid names. */
int gx_metric_check(gx_metric_host *host, const char *name, gx_metric_info *info, gx_error *error);
/* Calls fn for each base metric of the chip with its type. */
int gx_metric_each(gx_metric_host *host, void (*fn)(void *user, const char *name, int type), void *user,
                   gx_error *error);
int gx_metric_passes(gx_metric_host *host, const char *const *names, int count, size_t *passes, gx_error *error);
/* Supported chip names, comma separated. */
int gx_metric_chips(char *buffer, size_t size, gx_error *error);

#endif
