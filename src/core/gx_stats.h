/* Summary statistics of timing samples. */
#ifndef GX_STATS_H
#define GX_STATS_H

#include <stddef.h>

typedef struct gx_stats {
    size_t count;
    double min, max, median, mean;
    double stddev;    /* sample standard deviation (n - 1) */
    double noise_pct; /* relative noise: stddev / mean x 100 */
    double p10, p90;
} gx_stats;

/* Summarizes samples[0..count) (sorted in place). count 0 gives all zeros. */
void gx_stats_compute(double *samples, size_t count, gx_stats *out);

#endif
