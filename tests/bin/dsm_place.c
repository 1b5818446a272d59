/* dsm_place.c — IterStore's placement by accessor (dsm/rehome.c, moved by
 * sched/prefetch.c after a repeated loop's first call), under loomrun:
 *
 *   dsm_place CALLS [BLOCK [WIDTH]]
 *
 * X: P * BLOCK rows of WIDTH doubles (default 8), bsp, add merge, block homes (rank b is
 * home of block b).  A hybrid data-parallel loop, .repeated and .local,
 * runs BLOCK iterations a rank in rounds of BLOCK / 4: iteration i of
 * rank r adds 1 to every element of row (r + 1) mod P * BLOCK + i (the
 * next rank's block: the placement is wrong for it) and, at i = 0, to its
 * own first row r * BLOCK too.  CALLS calls.  Rank 0 prints, per call,
 * the bytes its copies of X received and the seconds the call took
 * ("call C received B in S s"), the largest over ranks; then "dsm_place: rehomed N" (the rows that moved, summed
 * over ranks) and "dsm_place: exact=1" when every rank reads every row
 * as CALLS times its touches: CALLS for a row of block b, 2 CALLS for row
 * b * BLOCK (touched by rank b - 1 and by rank b).  Each call ends with
 * loom_clock, so LOOM_CHECKPOINT_EVERY checkpoints between calls and a
 * restart (loomrun --restart) goes on after the last call saved. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>

static double *X;
static long BLOCK;
static int W = 8;

static void body(long i, void *ctx)
{
    (void)ctx;
    int P = loom_size(), r = loom_rank();
    double *x = loom_at(X, (size_t)(((r + 1) % P) * BLOCK + i));
    for (int k = 0; k < W; k++)
        x[k] += 1.0;
    if (i == 0) {
        double *y = loom_at(X, (size_t)(r * BLOCK));
        for (int k = 0; k < W; k++)
            y[k] += 1.0;
    }
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int calls = argc > 1 ? atoi(argv[1]) : 4, P = loom_size();
    BLOCK = argc > 2 ? atol(argv[2]) : 2000;
    W = argc > 3 ? atoi(argv[3]) : 8;
    X = loom_alloc((size_t)(P * BLOCK) * W * sizeof(double),
                   &(loom_alloc_opts){.name = "X", .unit = LOOM_UNIT_ROW, .row_size = W * sizeof(double),
                                      .type = LOOM_DOUBLE, .merge = LOOM_MERGE_ADD});
    if (!X)
        return 1;
    loom_for_opts o = {.schedule = LOOM_STATIC, .sync = LOOM_HYBRID, .sync_every = BLOCK / 4,
                       .local = 1, .repeated = 1, .accessor_reads = 1}; /* loom_row_get below */
    uint64_t seen = 0;
    for (int c = (int)loom_clock_now() + 1; c <= calls; c++) {
        double t0 = loom_wtime();
        if (loom_for(0, BLOCK, body, NULL, &o))
            return 1;
        double t = loom_wtime() - t0;
        loom_barrier();
        loom_allreduce(LOOM_IN_PLACE, &t, 1, LOOM_DOUBLE, LOOM_MAX);
        loom_stats s;
        loom_stats_get(X, &s);
        int64_t got = (int64_t)(s.bytes_received - seen);
        seen = s.bytes_received;
        loom_allreduce(LOOM_IN_PLACE, &got, 1, LOOM_INT64, LOOM_MAX);
        if (loom_rank() == 0)
            printf("dsm_place: call %d received %lld in %.6f s\n", c, (long long)got, t);
        loom_clock();
    }
    loom_stats s;
    loom_stats_get(X, &s);
#ifdef NO_PLACEMENT /* tests/perf/place.sh builds this against a tree from before placement */
    int64_t moved = 0;
#else
    int64_t moved = (int64_t)s.rehomed;
#endif
    loom_allreduce(LOOM_IN_PLACE, &moved, 1, LOOM_INT64, LOOM_SUM);
    int32_t exact = 1;
    for (long row = 0; row < P * BLOCK; row++) {
        double want = calls * (row % BLOCK == 0 ? 2.0 : 1.0);
        const double *x = loom_row_get(X, (size_t)row);
        for (int k = 0; k < W; k++)
            if (x[k] != want) {
                if (exact)
                    fprintf(stderr, "dsm_place: rank %d reads row %ld [%d] = %g, not %g\n",
                            loom_rank(), row, k, x[k], want);
                exact = 0;
            }
    }
    loom_allreduce(LOOM_IN_PLACE, &exact, 1, LOOM_INT32, LOOM_MIN);
    if (loom_rank() == 0)
        printf("dsm_place: rehomed %lld\ndsm_place: exact=%d\n", (long long)moved, exact);
    loom_free(X);
    loom_finalize();
    return !exact;
}
