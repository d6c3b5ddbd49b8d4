#include "gx_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear-interpolated quantile of sorted samples, q in [0, 1]. */
static double quantile_sorted(const double *sorted, size_t count, double q)
{
    if (count == 0)
        return 0;
    double position = q * (double)(count - 1);
    size_t below = (size_t)position;
    if (below + 1 >= count)
        return sorted[count - 1];
    double fraction = position - (double)below;
    return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
}

void gx_stats_compute(double *samples, size_t count, gx_stats *out)
{
    memset(out, 0, sizeof *out);
    out->count = count;
    if (count == 0)
        return;
    qsort(samples, count, sizeof *samples, compare_doubles);
    double sum = 0;
    for (size_t i = 0; i < count; i++)
        sum += samples[i];
    out->mean = sum / (double)count;
    double squares = 0;
    for (size_t i = 0; i < count; i++)
        squares += (samples[i] - out->mean) * (samples[i] - out->mean);
    out->stddev = count > 1 ? sqrt(squares / (double)(count - 1)) : 0;
    out->noise_pct = out->mean != 0 ? 100.0 * out->stddev / out->mean : 0;
    out->min = samples[0];
    out->max = samples[count - 1];
    out->median = quantile_sorted(samples, count, 0.5);
    out->p10 = quantile_sorted(samples, count, 0.1);
    out->p90 = quantile_sorted(samples, count, 0.9);
}
