/* ssp_allreduce.c — loom_allreduce_ssp keeps its promises.
 * Usage: ssp_allreduce CALLS SLACK COUNT.  In call k every rank sleeps a
 * random 0-1 ms (the last rank 4 ms one call in three) and contributes a
 * vector of COUNT int64: element q < P is 1 for its own rank (so result[q]
 * counts rank q's calls folded in) and element i >= P is r + k + i.
 * After every call: result[r] == k (own contributions always in),
 * result[q] >= k - SLACK (the age never exceeds the slack), and with
 * SLACK 0 result[q] == k exactly (an ordinary allreduce).  A final call
 * with a zero contribution and slack 0 must give the exact totals.
 * With a fourth argument "late", every rank first allocates (which starts
 * the progress agent) and rank 0 makes its first call 300 ms after the
 * others: their pushes reach it before it knows the reduction.
 * With "lag", only the last rank sleeps, 20 ms before every call (100 ms
 * before its first), and rank 0 prints the largest lag it saw (k -
 * result[last rank]): it must reach the slack exactly (the fast ranks run
 * ahead without waiting while within it) and never pass it (they wait
 * beyond it).  Under LOOM_STATS=1 the finalize line counts the calls that
 * waited.
 * With "mixed", rank 0 passes slack 0 at call 5 and the others SLACK: the
 * job must stop with a message instead of hanging.
 * Environment: SSP_VARIANT=hypercube tests loom_allreduce_ssp_hypercube
 * instead; SSP_FLOAT=1 passes the same integers as floats (keep the sums
 * below 2^24: COUNT <= 1000), so every result must still be exact. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../rng.h"

/* One call of the variant under test; with cf (floats), through the
 * scratch vectors cf and rf, converting exactly both ways. */
static void call(int64_t *res, const int64_t *c, size_t n, int slack, int hc, float *cf, float *rf)
{
    int rc;
    if (cf) {
        for (size_t i = 0; i < n; i++)
            cf[i] = (float)c[i];
        rc = hc ? loom_allreduce_ssp_hypercube(rf, cf, n, LOOM_FLOAT, LOOM_SUM, slack)
                : loom_allreduce_ssp(rf, cf, n, LOOM_FLOAT, LOOM_SUM, slack);
        for (size_t i = 0; i < n; i++)
            res[i] = (int64_t)rf[i];
    } else
        rc = hc ? loom_allreduce_ssp_hypercube(res, c, n, LOOM_INT64, LOOM_SUM, slack)
                : loom_allreduce_ssp(res, c, n, LOOM_INT64, LOOM_SUM, slack);
    if (rc)
        loom_abort(1, "ssp_allreduce: the call failed (%d)", rc);
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 4) {
        fprintf(stderr, "usage: ssp_allreduce CALLS SLACK COUNT [late]\n");
        return 2;
    }
    int K = atoi(argv[1]), slack = atoi(argv[2]), r = loom_rank(), P = loom_size();
    size_t n = (size_t)atol(argv[3]);
    if (n < (size_t)P)
        n = (size_t)P;
    int64_t *c = calloc(n, 8), *res = calloc(n, 8);
    void *held = NULL;
    int lag = argc > 4 && !strcmp(argv[4], "lag"), mixed = argc > 4 && !strcmp(argv[4], "mixed");
    int64_t maxlag = 0;
    int hc = getenv("SSP_VARIANT") && !strcmp(getenv("SSP_VARIANT"), "hypercube");
    int fl = getenv("SSP_FLOAT") != NULL;
    float *cf = calloc(n, sizeof *cf), *rf = calloc(n, sizeof *rf);
    if (argc > 4 && !strcmp(argv[4], "late")) {
        held = loom_alloc(4096, &(loom_alloc_opts){.name = "agent"});
        if (r == 0)
            nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
    }
    uint64_t seed = (uint64_t)r * 104729 + 1;
    long bad = 0;
    for (int64_t k = 1; k <= K; k++) {
        long us = (long)(next(&seed) % 1000) + (r == P - 1 && next(&seed) % 3 == 0 ? 4000 : 0);
        if (lag)
            us = r < P - 1 ? 0 : k == 1 ? 100000 : 20000;
        struct timespec ts = {0, us * 1000};
        nanosleep(&ts, NULL);
        memset(c, 0, n * 8);
        c[r] = 1;
        for (size_t i = (size_t)P; i < n; i++)
            c[i] = r + k + (int64_t)i;
        call(res, c, n, mixed && k == 5 && r == 0 ? 0 : slack, hc, fl ? cf : NULL, rf);
        if (k - res[P - 1] > maxlag)
            maxlag = k - res[P - 1];
        for (int q = 0; q < P; q++) {
            int wrong = q == r ? res[q] != k : slack == 0 ? res[q] != k : res[q] < k - slack;
            if (wrong && bad++ < 5)
                fprintf(stderr, "rank %d call %lld: rank %d's calls in the result: %lld\n", r,
                        (long long)k, q, (long long)res[q]);
        }
    }
    memset(c, 0, n * 8);
    call(res, c, n, 0, hc, fl ? cf : NULL, rf); /* the final flush */
    for (size_t i = 0; i < n; i++) {
        int64_t want = 0;
        if (i < (size_t)P)
            want = K;
        else
            for (int q = 0; q < P; q++)
                want += (int64_t)K * (q + (int64_t)i) + (int64_t)K * (K + 1) / 2;
        if (res[i] != want && bad++ < 10)
            fprintf(stderr, "rank %d: final element %zu is %lld, exact sum %lld\n", r, i,
                    (long long)res[i], (long long)want);
    }
    int64_t tot = bad;
    loom_allreduce(LOOM_IN_PLACE, &tot, 1, LOOM_INT64, LOOM_SUM);
    if (r == 0)
        printf("ssp_allreduce: P=%d calls=%d slack=%d count=%zu violations=%lld\n", P, K, slack, n,
               (long long)tot);
    if (r == 0 && lag)
        printf("ssp_allreduce: rank 0's largest lag behind rank %d: %lld calls\n", P - 1,
               (long long)maxlag);
    free(c);
    free(res);
    free(cf);
    free(rf);
    if (held)
        loom_free(held);
    loom_finalize();
    return tot != 0;
}
