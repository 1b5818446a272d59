/* dsm_median.h — the median of a sample, for the DSM benchmarks
 * (dsm_bench.c, dsm_cases.c).  Sorts v in place. */
#ifndef LOOM_DSM_MEDIAN_H
#define LOOM_DSM_MEDIAN_H

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
