/* Seeded random fills and fills with one value, computed on the host. */
#ifndef GX_FILL_H
#define GX_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "gx_types.h"

/* Fills count elements with values uniform in [low, high) (integers: [low, high]),
   element i depending only on (seed, i), so any subrange is reproducible. */
void gx_fill_random(void *base, gx_type type, size_t first_index, size_t count, uint64_t seed, double low, double high);
/* Fills with one value. */
void gx_fill_value(void *base, gx_type type, size_t count, double value);

#endif
