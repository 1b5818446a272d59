/* lasso_corr.c — loom-lasso's correlation filter on several ranks
 * (kernels/lasso_corr.c), under loomrun:
 *
 *   lasso_corr ROWS
 *
 * A 37 x 24 matrix, the same on every rank (column j holds a value in
 * about (j + 1) / 24 of the rows), split cyclically as loom-lasso splits
 * it (rank r holds rows r, r + P, ...).  The filter's sample of about ROWS
 * rows (0: all) is the first ceil(ROWS / P) rows of every rank's share.
 * For every pair of columns it checks, on every rank:
 *   - the correlation equals, within 1e-6 (it is kept as a float), the
 *     one computed here over exactly those rows of the whole matrix;
 *   - every rank computed the same value, bit for bit (a MIN and a MAX
 *     allreduce of all of them agree).
 * Prints "ok - ..." and exits 0, or "not ok - ..." lines and exits 1. */
#include <loom.h>

#include "../../kernels/lasso.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 37, P = 24, PAIRS = P * (P - 1) / 2 };

/* The matrix: a deterministic mix, column j non-zero in about (j+1)/P of
 * the rows. */
static double x(int i, int j)
{
    unsigned h = (unsigned)(i * 7919 + j * 104729 + 12345);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (int)(h % P) <= j ? (double)(h % 1000) / 500.0 - 1.0 : 0.0;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int R = loom_size(), r = loom_rank(), fails = 0;
    long rows = argc > 1 ? atol(argv[1]) : 0;
    /* this rank's share, local rows 0, 1, ... = rows r, r + R, ... */
    int64_t ri[N * P], ci[N * P], nl = 0, k = 0;
    double v[N * P], y[N];
    for (int i = r; i < N; i += R, nl++) {
        y[nl] = 1;
        for (int j = 0; j < P; j++)
            if (x(i, j) != 0)
                ri[k] = nl, ci[k] = j, v[k++] = x(i, j);
    }
    loom_lasso l;
    int rc = loom_lasso_build(&l, nl, N, P, k, ri, ci, v, y);
    loom_lasso_corr *c = rc ? NULL : loom_lasso_corr_new(&l, rows, 0.5, &rc);
    if (!c) {
        printf("not ok - the filter could not be made: %s\n", loom_strerror(rc));
        loom_finalize();
        return 1;
    }
    /* the sample's rows of the whole matrix, in sample order */
    int64_t per = ((rows <= 0 || rows > N ? N : rows) + R - 1) / R, sample[N], m = 0;
    for (int q = 0; q < R; q++)
        for (int64_t t = 0; t < per && q + t * R < N; t++)
            sample[m++] = q + t * R;
    double got[PAIRS], lo[PAIRS], hi[PAIRS], worst = 0;
    int at = 0;
    for (int j = 0; j < P; j++)
        for (int q = j + 1; q < P; q++, at++) {
            double s = 0, a2 = 0, b2 = 0;
            for (int64_t t = 0; t < m; t++) {
                double a = x((int)sample[t], j), b = x((int)sample[t], q);
                s += a * b, a2 += a * a, b2 += b * b;
            }
            double want = a2 > 0 && b2 > 0 ? fabs(s) / (sqrt(a2) * sqrt(b2)) : 0;
            got[at] = lo[at] = hi[at] = loom_lasso_corr_get(c, q, j);
            worst = fmax(worst, fabs(got[at] - want));
        }
    loom_allreduce(LOOM_IN_PLACE, lo, PAIRS, LOOM_DOUBLE, LOOM_MIN);
    loom_allreduce(LOOM_IN_PLACE, hi, PAIRS, LOOM_DOUBLE, LOOM_MAX);
    int differ = 0;
    for (int t = 0; t < PAIRS; t++)
        differ += lo[t] != hi[t];
    if (worst > 1e-6 || differ) /* values are rounded to float: 1e-6 */
        fails++, printf("not ok - rank %d: sample of %lld rows: largest error %.3g, %d of %d "
                        "pairs differ between ranks\n",
                        r, (long long)loom_lasso_corr_rows(c), worst, differ, PAIRS);
    else if (r == 0)
        printf("ok - %d rank(s), a sample of %lld rows: all %d pairs within %.2g of the "
               "correlation over those rows, the same on every rank\n",
               R, (long long)loom_lasso_corr_rows(c), PAIRS, worst);
    loom_lasso_corr_free(c);
    loom_lasso_free(&l);
    int32_t bad = fails;
    loom_allreduce(LOOM_IN_PLACE, &bad, 1, LOOM_INT32, LOOM_MAX);
    loom_finalize();
    return bad ? 1 : 0;
}
