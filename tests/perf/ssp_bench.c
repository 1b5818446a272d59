/* ssp_bench.c — stale synchronous communication under a straggler.
 *
 *   ssp_bench allreduce ITERS WORK_MS SLACK [rotate]  (also built for MPI,
 *                             see ssp_bench_mpi.c: SLACK ignored; SLACK -1:
 *                             the synchronous loom_allreduce)
 *   ssp_bench hypercube ITERS WORK_MS SLACK [rotate]  (Hypercube-SSP)
 *   ssp_bench clocks ITERS WORK_MS SLACK COHERENCE
 *
 * Every iteration each rank "computes" for WORK_MS (a sleep, so that four
 * ranks on two cores do not distort each other's compute), the last rank
 * 20% longer (with "rotate": rank k % P in iteration k, so that the
 * straggler moves), then communicates:
 *   allreduce  a 1 MiB float vector: loom_allreduce_ssp with SLACK (Loom)
 *              or MPI_Allreduce (MPI).  Rank 0 prints the mean time per
 *              iteration spent inside the collective, over all ranks and
 *              over the fast ranks, and the wall time.
 *   clocks     adds to 256 rows of a DSM row allocation (coherence
 *              COHERENCE, staleness SLACK), reads 64 of them, loom_clock.
 *              Rank 0 prints the clocks per second of the fast ranks.
 * The result of the allreduce is checked at the end (a final flush). */
#ifndef SSP_BENCH_MPI
#include <loom.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef SSP_BENCH_MPI
static int b_init(int *c, char ***v) { return loom_init(c, v); }
static void b_fini(void) { loom_finalize(); }
static int b_rank(void) { return loom_rank(); }
static int b_size(void) { return loom_size(); }
static double b_wtime(void) { return loom_wtime(); }
static void b_barrier(void) { loom_barrier(); }
static void b_sum_d(double *x, int n) { loom_allreduce(LOOM_IN_PLACE, x, (size_t)n, LOOM_DOUBLE, LOOM_SUM); }
static void b_allreduce(float *res, const float *contrib, size_t n, int slack, int hc)
{
    if (hc)
        loom_allreduce_ssp_hypercube(res, contrib, n, LOOM_FLOAT, LOOM_SUM, slack);
    else if (slack < 0) /* the synchronous loom_allreduce, for reference */
        loom_allreduce(contrib, res, n, LOOM_FLOAT, LOOM_SUM);
    else
        loom_allreduce_ssp(res, contrib, n, LOOM_FLOAT, LOOM_SUM, slack);
}
#endif

static void work(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (long)(ms / 1000)) * 1e6)};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    if (b_init(&argc, &argv))
        return 1;
    if (argc < 5) {
        fprintf(stderr, "usage: ssp_bench allreduce|clocks ITERS WORK_MS SLACK [COHERENCE]\n");
        return 2;
    }
    int iters = atoi(argv[2]), slack = atoi(argv[4]), r = b_rank(), P = b_size();
    double ms = atof(argv[3]) * (r == P - 1 ? 1.2 : 1.0);
    int hc = !strcmp(argv[1], "hypercube"), rotate = argc > 5 && !strcmp(argv[5], "rotate");
    if (!strcmp(argv[1], "allreduce") || hc) {
        size_t n = (1u << 20) / sizeof(float);
        float *c = malloc(n * sizeof *c), *res = malloc(n * sizeof *res);
        for (size_t i = 0; i < n; i++)
            c[i] = 1.0f;
        b_barrier();
        double t0 = b_wtime(), in_coll = 0;
        for (int k = 0; k < iters; k++) {
            work(rotate ? atof(argv[3]) * (k % P == r ? 1.2 : 1.0) : ms);
            double t = b_wtime();
            b_allreduce(res, c, n, slack, hc);
            in_coll += b_wtime() - t;
        }
        double wall = b_wtime() - t0;
        double v[3] = {in_coll, r == P - 1 && !rotate ? 0 : in_coll, wall};
        b_sum_d(v, 3);
        if (r == 0)
            printf("allreduce_ms_per_iter %.3f fast_ranks %.3f wall_s %.3f slack %d\n",
                   1e3 * v[0] / P / iters, 1e3 * v[1] / (P > 1 && !rotate ? P - 1 : P) / iters, v[2] / P,
                   slack);
        free(c);
        free(res);
        b_fini();
        return 0;
    }
#ifndef SSP_BENCH_MPI
    const char *coh = argc > 5 ? argv[5] : "ssp";
    size_t rows = 4096;
    float *w = loom_alloc(rows * 64, &(loom_alloc_opts){.name = "w", .unit = LOOM_UNIT_ROW,
        .row_size = 64, .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT, .coherence = coh,
        .staleness = slack, .staleness_set = 1, .dist = LOOM_DIST_CYCLIC});
    float d[16];
    for (int i = 0; i < 16; i++)
        d[i] = 0.001f;
    unsigned seed = (unsigned)r * 7 + 1;
    loom_barrier();
    double t0 = loom_wtime(), fast_done = 0;
    for (int k = 0; k < iters; k++) {
        work(ms);
        for (int i = 0; i < 256; i++)
            loom_row_add(w, (seed = seed * 1103515245u + 12345u) % rows, d);
        for (int i = 0; i < 64; i++)
            (void)loom_row_get(w, (seed = seed * 1103515245u + 12345u) % rows);
        loom_clock();
    }
    double mine = loom_wtime() - t0;
    double v[1] = {r == P - 1 ? 0 : iters / mine};
    loom_allreduce(LOOM_IN_PLACE, v, 1, LOOM_DOUBLE, LOOM_SUM);
    fast_done = v[0] / (P > 1 ? P - 1 : 1);
    if (r == 0)
        printf("clocks_per_s_fast %.2f coherence %s slack %d\n", fast_done, coh, slack);
    loom_barrier();
    loom_free(w);
#endif
    b_fini();
    return 0;
}
