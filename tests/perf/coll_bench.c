/* coll_bench.c — collective micro-benchmarks: barrier latency, 8-byte
 * (one double, SUM) allreduce latency and 1 MiB bcast bandwidth (root 0).
 *
 * The measuring code below is shared with the Open MPI twin,
 * coll_bench_mpi.c, which defines COLL_BENCH_MPI, supplies its own
 * bench_* shims and #includes this file: both programs run exactly the same
 * loops with the same iteration counts.  Per metric: N/10 untimed calls,
 * a barrier, N timed calls, then the slowest rank's time (a MAX allreduce)
 * divided by N is the cost of one call.  Rank 0 prints one
 * machine-readable line per metric, plus the job size and the counts:
 *     ranks <P>
 *     barrier_us <float>
 *     allreduce8_us <float>
 *     bcast1m_mibps <float>
 *     iters <barrier N> <allreduce N> <bcast N>
 * Usage: coll_bench [scale]   (scale multiplies every N; default 1) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef COLL_BENCH_MPI
#include <loom.h>

static const char *bench_name = "coll_bench";

static void bench_check(int err, const char *what)
{
    if (err)
        loom_abort(1, "%s: %s", what, loom_strerror(err));
}

static int bench_init(int *argc, char ***argv) { return loom_init(argc, argv); }
static void bench_finalize(void) { loom_finalize(); }
static int bench_rank(void) { return loom_rank(); }
static int bench_size(void) { return loom_size(); }
static double bench_wtime(void) { return loom_wtime(); }
static void bench_barrier(void) { bench_check(loom_barrier(), "loom_barrier"); }

static void bench_sum1(const double *in, double *out)
{
    bench_check(loom_allreduce(in, out, 1, LOOM_DOUBLE, LOOM_SUM), "loom_allreduce");
}

static void bench_max1(const double *in, double *out)
{
    bench_check(loom_allreduce(in, out, 1, LOOM_DOUBLE, LOOM_MAX), "loom_allreduce");
}

static void bench_bcast(void *buf, size_t bytes)
{
    bench_check(loom_bcast(buf, bytes, 0), "loom_bcast");
}
#endif

#define BCAST_BYTES ((size_t)1 << 20)

/* Iteration counts: fixed, so both libraries run the same loops, and
 * sized for shared memory on one host (about 0.3-0.5 s a measurement).
 * They depend on the rank count only, never on the library: beyond 2 ranks
 * the benchmark host (2 cores) is oversubscribed and a small call costs
 * ~25 times more, a 1 MiB bcast ~4 times more.  The scale argument
 * multiplies all of them (run.sh lowers it when Loom is on TCP). */
static long iters(long two_ranks, long more_ranks, int P, double scale)
{
    long n = (long)((double)(P <= 2 ? two_ranks : more_ranks) * scale);
    return n < 1 ? 1 : n;
}

/* Slowest rank's elapsed time, on every rank. */
static double slowest(double t)
{
    double m;
    bench_max1(&t, &m);
    return m;
}

int main(int argc, char **argv)
{
    if (bench_init(&argc, &argv))
        return 1;
    double scale = 1.0;
    if (argc > 1 && (scale = strtod(argv[1], NULL)) <= 0) {
        fprintf(stderr, "usage: %s [scale > 0]\n", bench_name);
        return 2;
    }
    int r = bench_rank(), P = bench_size();
    long n_bar = iters(1500000, 60000, P, scale);
    long n_ar = iters(1500000, 60000, P, scale);
    long n_bc = iters(4000, 1000, P, scale);
    long w_bar = n_bar / 10 + 1, w_ar = n_ar / 10 + 1, w_bc = n_bc / 10 + 1;

    /* barrier */
    for (long i = 0; i < w_bar; i++)
        bench_barrier();
    bench_barrier();
    double t0 = bench_wtime();
    for (long i = 0; i < n_bar; i++)
        bench_barrier();
    double t_bar = slowest(bench_wtime() - t0);

    /* 8-byte allreduce: one double, SUM.  The input changes every call so
     * nothing can be cached; the result is checked at the end. */
    double x = (double)(r + 1), y = 0, acc = 0;
    for (long i = 0; i < w_ar; i++)
        bench_sum1(&x, &y);
    bench_barrier();
    t0 = bench_wtime();
    for (long i = 0; i < n_ar; i++) {
        x = (double)(r + 1) + (double)(i & 1);
        bench_sum1(&x, &y);
        acc += y;
    }
    double t_ar = slowest(bench_wtime() - t0);
    /* sum over ranks of (r+1) is P(P+1)/2; odd i add P more */
    double want = (double)n_ar * P * (P + 1) / 2 + (double)(n_ar / 2) * P;
    if (acc != want) {
        fprintf(stderr, "%s: rank %d: allreduce sum %.17g, want %.17g\n", bench_name,
                r, acc, want);
        return 1;
    }

    /* 1 MiB bcast from rank 0 */
    unsigned char *buf = malloc(BCAST_BYTES);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", bench_name);
        return 1;
    }
    memset(buf, r == 0 ? 0x5a : 0, BCAST_BYTES);
    for (long i = 0; i < w_bc; i++)
        bench_bcast(buf, BCAST_BYTES);
    bench_barrier();
    t0 = bench_wtime();
    for (long i = 0; i < n_bc; i++)
        bench_bcast(buf, BCAST_BYTES);
    double t_bc = slowest(bench_wtime() - t0);
    if (buf[0] != 0x5a || buf[BCAST_BYTES - 1] != 0x5a) {
        fprintf(stderr, "%s: rank %d: bcast data wrong\n", bench_name, r);
        return 1;
    }
    free(buf);
    bench_barrier();

    if (r == 0) {
        printf("ranks %d\n", P);
        printf("barrier_us %.3f\n", t_bar / (double)n_bar * 1e6);
        printf("allreduce8_us %.3f\n", t_ar / (double)n_ar * 1e6);
        printf("bcast1m_mibps %.1f\n",
               (double)n_bc * ((double)BCAST_BYTES / (1 << 20)) / t_bc);
        printf("iters %ld %ld %ld\n", n_bar, n_ar, n_bc);
        fflush(stdout);
    }
    bench_finalize();
    return 0;
}
