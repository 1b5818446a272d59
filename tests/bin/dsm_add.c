/* dsm_add.c — additive stress: every rank and OpenMP thread adds to random
 * rows; nothing may be lost.
 * Usage: dsm_add rows|pages TOTAL NROWS ROUNDS
 * There are S = ranks x threads streams; stream s makes its share of
 * TOTAL additions of (1, v) to random rows, v in 1..3, drawn from a
 * generator seeded with s, with a barrier after every round.  Row path:
 * loom_row_add on an add-merged row allocation.  Page path: atomic adds to
 * an add-merged int64 page allocation.  At the end every rank checks that
 * the first column sums to TOTAL and that every row equals a serial
 * replay of all S streams. */
#include <loom.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "../rng.h"
#include <string.h>


/* Additions stream s makes in round k (of R), out of TOTAL over S streams. */
static long share(long total, long S, long s, int R, int k)
{
    long mine = total / S + (s < total % S);
    return mine / R + (k < mine % R);
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 5) {
        fprintf(stderr, "usage: dsm_add rows|pages TOTAL NROWS ROUNDS\n");
        return 2;
    }
    int pages = !strcmp(argv[1], "pages"), R = atoi(argv[4]);
    long total = atol(argv[2]);
    size_t nrows = (size_t)atol(argv[3]);
    int P = loom_size(), r = loom_rank(), T = omp_get_max_threads();
    long S = (long)P * T;
    loom_alloc_opts o = {.name = "sums", .merge = LOOM_MERGE_ADD, .type = LOOM_INT64,
                         .dist = LOOM_DIST_CYCLIC};
    if (!pages) {
        o.unit = LOOM_UNIT_ROW;
        o.row_size = 16;
    } else
        o.page_unit = 8192;
    int64_t *a = loom_alloc(nrows * 16, &o);
    if (!a)
        return 1;
    uint64_t *seed = calloc((size_t)T, sizeof *seed);
    for (int t = 0; t < T; t++)
        seed[t] = (uint64_t)(r * T + t);
    for (int k = 0; k < R; k++) {
        #pragma omp parallel num_threads(T)
        {
            int t = omp_get_thread_num();
            long n = share(total, S, (long)r * T + t, R, k);
            for (long i = 0; i < n; i++) {
                uint64_t x = next(&seed[t]);
                size_t row = (size_t)(x % nrows);
                int64_t d[2] = {1, (int64_t)(1 + (x >> 32) % 3)};
                if (pages) {
                    __atomic_fetch_add(&a[2 * row], d[0], __ATOMIC_RELAXED);
                    __atomic_fetch_add(&a[2 * row + 1], d[1], __ATOMIC_RELAXED);
                } else
                    loom_row_add(a, row, d);
            }
        }
        loom_barrier();
    }
    /* the serial replay of every stream */
    int64_t *want = calloc(nrows * 2, sizeof *want);
    for (long s = 0; s < S; s++) {
        uint64_t sd = (uint64_t)s;
        for (int k = 0; k < R; k++)
            for (long i = 0, n = share(total, S, s, R, k); i < n; i++) {
                uint64_t x = next(&sd);
                size_t row = (size_t)(x % nrows);
                want[2 * row] += 1;
                want[2 * row + 1] += (int64_t)(1 + (x >> 32) % 3);
            }
    }
    long sum = 0, bad = 0;
    for (size_t row = 0; row < nrows; row++) {
        const int64_t *v = pages ? &a[2 * row] : loom_row_get(a, row);
        sum += v[0];
        if (v[0] != want[2 * row] || v[1] != want[2 * row + 1]) {
            if (bad++ < 5)
                fprintf(stderr, "rank %d: row %zu = (%lld, %lld), replay says (%lld, %lld)\n",
                        r, row, (long long)v[0], (long long)v[1],
                        (long long)want[2 * row], (long long)want[2 * row + 1]);
        }
    }
    if (sum != total)
        fprintf(stderr, "rank %d: %ld additions counted, %ld made\n", r, sum, total);
    int ok = sum == total && !bad;
    int32_t all = ok;
    loom_allreduce(LOOM_IN_PLACE, &all, 1, LOOM_INT32, LOOM_MIN);
    if (r == 0 && all)
        printf("dsm_add: ok %s P=%d T=%d total=%ld rows=%zu\n", argv[1], P, T, sum, nrows);
    loom_free(a);
    free(want);
    free(seed);
    loom_finalize();
    return all ? 0 : 1;
}
