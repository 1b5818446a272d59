/* ssp_bound.c — the ssp guarantee under random delays and a straggler.
 * Usage: ssp_bound CLOCKS  (policy and staleness from LOOM_COHERENCE and
 * LOOM_STALENESS).  In clock k every rank sleeps a random 0-2 ms (the
 * last rank, the straggler, 8 ms one clock in three), writes k into its
 * own row and its own page slot, and reads everyone's: a value v from
 * rank q is the clock of the newest update of q it sees, and must satisfy
 * v >= k - s - 1 (every update from clocks < k - s is visible) and, for
 * its own, v = k.  Rank 0 prints the violations, the largest lag and the
 * blocked reads summed over ranks. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "../rng.h"

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int K = argc > 1 ? atoi(argv[1]) : 30, r = loom_rank(), P = loom_size();
    int s = getenv("LOOM_STALENESS") ? atoi(getenv("LOOM_STALENESS")) : 0;
    int64_t *rows = loom_alloc((size_t)P * 8, &(loom_alloc_opts){
        .name = "clocks", .unit = LOOM_UNIT_ROW, .row_size = 8, .dist = LOOM_DIST_CYCLIC});
    int64_t *pages = loom_alloc((size_t)P * 4096, &(loom_alloc_opts){
        .name = "pages", .page_unit = 4096, .dist = LOOM_DIST_CYCLIC});
    int64_t minus1 = -1;
    loom_row_put(rows, (size_t)r, &minus1);
    pages[(size_t)r * 512] = -1;
    loom_barrier();
    uint64_t seed = (uint64_t)r * 7919;
    long violations = 0, maxlag = 0;
    for (int64_t k = 0; k < K; k++) {
        long us = (long)(next(&seed) % 2000);
        if (r == P - 1 && next(&seed) % 3 == 0)
            us += 8000;
        struct timespec ts = {0, us * 1000};
        nanosleep(&ts, NULL);
        loom_row_put(rows, (size_t)r, &k);
        pages[(size_t)r * 512] = k;
        for (int q = 0; q < P; q++) {
            int64_t v[2] = {*(const int64_t *)loom_row_get(rows, (size_t)q), pages[(size_t)q * 512]};
            for (int w = 0; w < 2; w++) {
                int bad = q == r ? v[w] != k : v[w] < k - s - 1;
                if (bad && violations++ < 5)
                    fprintf(stderr, "rank %d clock %lld: %s of rank %d shows clock %lld\n", r,
                            (long long)k, w ? "page" : "row", q, (long long)v[w]);
                if (k - v[w] > maxlag)
                    maxlag = (long)(k - v[w]);
            }
        }
        loom_clock();
    }
    loom_stats st;
    loom_stats_get(NULL, &st);
    int64_t tot[3] = {violations, maxlag, (int64_t)st.blocked_reads};
    loom_allreduce(LOOM_IN_PLACE, tot, 1, LOOM_INT64, LOOM_SUM);
    loom_allreduce(LOOM_IN_PLACE, tot + 1, 1, LOOM_INT64, LOOM_MAX);
    loom_allreduce(LOOM_IN_PLACE, tot + 2, 1, LOOM_INT64, LOOM_SUM);
    if (r == 0)
        printf("ssp_bound: s=%d P=%d clocks=%d violations=%lld maxlag=%lld blocked=%lld\n", s, P,
               K, (long long)tot[0], (long long)tot[1], (long long)tot[2]);
    loom_barrier();
    return loom_finalize() || tot[0] != 0;
}
