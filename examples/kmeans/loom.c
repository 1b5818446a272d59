/* kmeans — Lloyd's k-means on generated blobs: omp.c is the plain OpenMP
 * program, loom.c its port to Loom (`diff omp.c loom.c` shows the port).
 *
 *   kmeans [N]      N points (default 1000000) in D = 4 dimensions, K = 8 blobs
 *
 * Each rank (of one, in OpenMP) assigns its block of the points; the sums
 * of every thread of every rank are added, and every rank computes the
 * same centres.  The coordinates sit on a 1/64 grid, so every sum is exact
 * in double whatever order threads and ranks add it in: the answer is the
 * same on any layout.  Prints the iterations, a checksum of the
 * memberships and the centres. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D 4
#define K 8

static void make_points(double *x, long n)
{
    unsigned long s = 12345;
    for (long i = 0; i < n; i++)
        for (int d = 0; d < D; d++) {
            s = s * 6364136223846793005UL + 1442695040888963407UL;
            x[i * D + d] = 3.0 * (double)(i % K) + d + (double)((long)(s >> 40) % 513 - 256) / 64;
        }
}

static int nearest(const double *p, const double *cen)
{
    int best = 0;
    double bd = 1e300;
    for (int k = 0; k < K; k++) {
        double dist = 0;
        for (int d = 0; d < D; d++)
            dist += (p[d] - cen[k * D + d]) * (p[d] - cen[k * D + d]);
        if (dist < bd)
            bd = dist, best = k;
    }
    return best;
}

static void report(long n, int iter, long check, const double *cen, const long *count)
{
    printf("kmeans: %ld points, %d iterations, membership checksum %ld\n", n, iter, check);
    for (int k = 0; k < K; k++)
        printf("centre %d: %.6f %.6f %.6f %.6f (%ld points)\n", k, cen[k * D], cen[k * D + 1],
               cen[k * D + 2], cen[k * D + 3], count[k]);
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double *x = malloc((size_t)n * D * sizeof *x), cen[K * D], sum[K * D];
    int *member = malloc((size_t)n * sizeof *member);
    long count[K], changed = 1, check = 0;
    if (!x || !member)
        return 1;
    make_points(x, n);
    for (int k = 0; k < K * D; k++) /* K points of the first blob */
        cen[k] = x[(k / D) * K * D + k % D];
    for (long i = 0; i < n; i++)
        member[i] = -1;
    int iter;
    for (iter = 0; iter < 100 && changed; iter++) {
        memset(sum, 0, sizeof sum);
        memset(count, 0, sizeof count);
        changed = 0;
        LOOM_FOR_REDUCE(i, 0, n, NULL, SUM, changed, reduction(+ : sum[:K * D], count[:K])) {
            int best = nearest(x + i * D, cen);
            if (best != member[i]) {
                member[i] = best;
                changed++;
            }
            for (int d = 0; d < D; d++)
                sum[best * D + d] += x[i * D + d];
            count[best]++;
        }
        loom_allreduce(LOOM_IN_PLACE, sum, K * D, LOOM_DOUBLE, LOOM_SUM);
        loom_allreduce(LOOM_IN_PLACE, count, K, LOOM_INT64, LOOM_SUM);
        for (int k = 0; k < K * D; k++)
            if (count[k / D])
                cen[k] = sum[k] / (double)count[k / D];
    }
    LOOM_FOR_REDUCE(i, 0, n, NULL, SUM, check)
        check += member[i] * (i % 1000);
    if (loom_rank() == 0)
        report(n, iter, check, cen, count);
    free(x);
    free(member);
    loom_finalize();
    return 0;
}
