/* dsm_cases.c — the four page-path cases of docs/bench-dsm.md section 0,
 * each next to the same work on malloc'd memory in the same job where that
 * makes sense.  Driven by tests/perf/dsm_cases.sh; 2 ranks under loomrun.
 *
 *   dsm_cases read UNIT MIB PASSES    (a) rank 1 sums MIB MiB of doubles in
 *       page units of UNIT bytes, every unit homed at rank 0; a barrier
 *       (which invalidates rank 1's copies) before each pass.
 *         read_us_per_unit UNIT US     mean over the timed passes
 *         read_units_per_s UNIT N
 *   dsm_cases pass UNIT MIB PASSES    (b) a[i] = a[i]*0.5 + 1 over MIB MiB
 *       of doubles, each rank over the units it is home of, loom_barrier
 *       after every pass; the same on a malloc'd half per rank with the
 *       same loom_barrier, passes alternating.  Slowest rank's times.
 *         pass_ms UNIT loom|malloc MS  median per pass, barrier included
 *         pass_ratio UNIT R            median of the per-round ratios
 *   dsm_cases false PAGES HOW ITERS   (c) PAGES 4 KiB units (block homes),
 *       both ranks write their interleaved 8-byte elements (HOW = word) or
 *       their half of every page (HOW = half), loom_barrier every
 *       iteration; the same on malloc'd memory.
 *         false_ms PAGES HOW loom|malloc MS   median per iteration
 *   dsm_cases barrier MIB UNIT COUNT ROUNDS  (d) COUNT loom_barriers with
 *       no allocation live, then with MIB MiB live (after one pass of (b)
 *       touched every rank's home half), alternating over ROUNDS.
 *         barrier_us none|live US      median per barrier
 * Every mode checks the values it reads and aborts the job on a wrong
 * one.  Rank 0 prints the results, one "key args value" line each. */
#include <loom.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsm_median.h"

static void die(const char *what)
{
    loom_abort(1, "dsm_cases: %s", what);
}

static double slowest(double t)
{
    loom_allreduce(LOOM_IN_PLACE, &t, 1, LOOM_DOUBLE, LOOM_MAX);
    return t;
}

static int home_zero(size_t u, int P, void *arg)
{
    (void)u, (void)P, (void)arg;
    return 0;
}

static void *alloc_pages(size_t bytes, size_t unit, int all_at_zero)
{
    void *p = loom_alloc(bytes, &(loom_alloc_opts){
        .name = "cases", .page_unit = unit,
        .dist = all_at_zero ? LOOM_DIST_EXPLICIT : LOOM_DIST_BLOCK,
        .home_of = all_at_zero ? home_zero : NULL});
    if (!p)
        die("loom_alloc failed");
    return p;
}

/* Elements [lo, hi) of n doubles that this rank is home of under the block
 * distribution of n*8 bytes in units of `unit` bytes (dist.c's rule). */
static void home_range(size_t n, size_t unit, size_t *lo, size_t *hi)
{
    size_t per_unit = unit / sizeof(double), nu = (n + per_unit - 1) / per_unit;
    size_t P = (size_t)loom_size(), r = (size_t)loom_rank(), per = (nu + P - 1) / P;
    size_t u0 = r * per < nu ? r * per : nu, u1 = (r + 1) * per < nu ? (r + 1) * per : nu;
    *lo = u0 * per_unit;
    *hi = u1 * per_unit < n ? u1 * per_unit : n;
}

/* ---- (a) remote read ------------------------------------------------- */

static void run_read(size_t unit, size_t mib, int passes)
{
    size_t n = (mib << 20) / sizeof(double), nu = (mib << 20) / unit;
    double *a = alloc_pages(n * sizeof *a, unit, 1);
    if (loom_rank() == 0)
        for (size_t i = 0; i < n; i++)
            a[i] = (double)(i & 1023);
    double want = 0;
    for (size_t i = 0; i < n; i++)
        want += (double)(i & 1023);
    double t = 0;
    for (int p = 0; p <= passes; p++) {
        loom_barrier();
        double t0 = loom_wtime(), s = 0;
        if (loom_rank() == 1) {
            for (size_t i = 0; i < n; i++)
                s += a[i];
            if (s != want)
                die("(a) read a wrong sum");
        }
        if (p)
            t += loom_wtime() - t0;
    }
    loom_barrier();
    t = slowest(t) / passes;
    if (loom_rank() == 0) {
        printf("read_us_per_unit %zu %.4g\n", unit, t / (double)nu * 1e6);
        printf("read_units_per_s %zu %.4g\n", unit, (double)nu / t);
    }
    loom_free(a);
}

/* ---- (b) the data-parallel pass ---------------------------------------- */

static void pass(double *a, size_t lo, size_t hi)
{
    #pragma omp parallel for schedule(static)
    for (size_t i = lo; i < hi; i++)
        a[i] = a[i] * 0.5 + 1;
}

/* Every element starts at 2 and stays there (2*0.5+1): the check. */
static void check_twos(const double *a, size_t lo, size_t hi, const char *what)
{
    for (size_t i = lo; i < hi; i += 509)
        if (a[i] != 2.0)
            die(what);
}

static void run_pass(size_t unit, size_t mib, int passes)
{
    size_t n = (mib << 20) / sizeof(double), lo, hi;
    home_range(n, unit, &lo, &hi);
    double *a = alloc_pages(n * sizeof *a, unit, 0);
    double *m = malloc((hi - lo) * sizeof *m + 1);
    if (!m)
        die("malloc failed");
    #pragma omp parallel for schedule(static)
    for (size_t i = lo; i < hi; i++)
        a[i] = m[i - lo] = 2.0;
    loom_barrier();
    double *tl = calloc((size_t)passes, sizeof *tl), *tm = calloc((size_t)passes, sizeof *tm);
    double *rt = calloc((size_t)passes, sizeof *rt);
    for (int p = 0; p < passes; p++) {
        for (int k = 0; k < 2; k++) { /* the order flips every round */
            int loomfirst = (p + k) % 2 == 0;
            double t0 = loom_wtime();
            if (loomfirst)
                pass(a, lo, hi);
            else
                pass(m, 0, hi - lo);
            loom_barrier();
            *(loomfirst ? &tl[p] : &tm[p]) = slowest(loom_wtime() - t0);
        }
        rt[p] = tl[p] / tm[p];
    }
    check_twos(a, lo, hi, "(b) wrong value in Loom memory");
    check_twos(m, 0, hi - lo, "(b) wrong value in malloc'd memory");
    if (loom_rank() == 0) {
        printf("pass_ms %zu loom %.4g\n", unit, median(tl, passes) * 1e3);
        printf("pass_ms %zu malloc %.4g\n", unit, median(tm, passes) * 1e3);
        printf("pass_ratio %zu %.4g\n", unit, median(rt, passes));
    }
    free(tl), free(tm), free(rt), free(m);
    loom_free(a);
}

/* ---- (c) false sharing ------------------------------------------------- */

/* Iteration `it` of rank r: its elements of every page get it + r. */
static void write_mine(double *a, size_t pages, int half, double v)
{
    size_t per = 4096 / sizeof(double), r = (size_t)loom_rank();
    for (size_t p = 0; p < pages; p++) {
        double *pg = a + p * per;
        if (half)
            for (size_t i = r * per / 2; i < (r + 1) * per / 2; i++)
                pg[i] = v;
        else
            for (size_t i = r; i < per; i += 2)
                pg[i] = v;
    }
}

static void check_both(const double *a, size_t pages, int half, double v0, double v1)
{
    size_t per = 4096 / sizeof(double);
    for (size_t i = 0; i < pages * per; i++) {
        size_t k = i % per, owner = half ? k / (per / 2) : k % 2;
        if (a[i] != (owner ? v1 : v0))
            die("(c) a rank's writes were lost");
    }
}

static void run_false(size_t pages, int half, int iters)
{
    double *a = alloc_pages(pages * 4096, 4096, 0);
    double *m = calloc(pages, 4096);
    if (!m)
        die("calloc failed");
    double *tl = calloc((size_t)iters, sizeof *tl), *tm = calloc((size_t)iters, sizeof *tm);
    for (int it = 0; it < iters; it++) {
        double v = it * 2 + loom_rank();
        double t0 = loom_wtime();
        write_mine(a, pages, half, v);
        loom_barrier();
        tl[it] = slowest(loom_wtime() - t0);
        check_both(a, pages, half, it * 2, it * 2 + 1);
        loom_barrier(); /* nobody writes before everybody checked */
        t0 = loom_wtime();
        write_mine(m, pages, half, v);
        loom_barrier();
        tm[it] = slowest(loom_wtime() - t0);
    }
    if (loom_rank() == 0) {
        const char *how = half ? "half" : "word";
        printf("false_ms %zu %s loom %.4g\n", pages, how, median(tl, iters) * 1e3);
        printf("false_ms %zu %s malloc %.4g\n", pages, how, median(tm, iters) * 1e3);
    }
    free(tl), free(tm), free(m);
    loom_free(a);
}

/* ---- (d) barrier latency ----------------------------------------------- */

static double barriers(int count)
{
    loom_barrier();
    double t0 = loom_wtime();
    for (int i = 0; i < count; i++)
        loom_barrier();
    return slowest(loom_wtime() - t0) / count;
}

static void run_barrier(size_t mib, size_t unit, int count, int rounds)
{
    size_t n = (mib << 20) / sizeof(double), lo, hi;
    home_range(n, unit, &lo, &hi);
    double *none = calloc((size_t)rounds, sizeof *none), *live = calloc((size_t)rounds, sizeof *live);
    for (int r = 0; r < rounds; r++) {
        none[r] = barriers(count);
        double *a = alloc_pages(n * sizeof *a, unit, 0);
        #pragma omp parallel for schedule(static)
        for (size_t i = lo; i < hi; i++)
            a[i] = 2.0;
        loom_barrier();
        pass(a, lo, hi);
        live[r] = barriers(count);
        check_twos(a, lo, hi, "(d) wrong value");
        loom_free(a);
    }
    if (loom_rank() == 0) {
        printf("barrier_us none %.4g\n", median(none, rounds) * 1e6);
        printf("barrier_us live %.4g\n", median(live, rounds) * 1e6);
    }
    free(none), free(live);
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 5 || loom_size() != 2) {
        fprintf(stderr, "usage (2 ranks): dsm_cases read UNIT MIB PASSES | pass UNIT MIB PASSES | "
                        "false PAGES word|half ITERS | barrier MIB UNIT COUNT ROUNDS\n");
        loom_finalize();
        return 2;
    }
    const char *mode = argv[1];
    size_t x = (size_t)atol(argv[2]);
    if (!strcmp(mode, "read"))
        run_read(x, (size_t)atol(argv[3]), atoi(argv[4]));
    else if (!strcmp(mode, "pass"))
        run_pass(x, (size_t)atol(argv[3]), atoi(argv[4]));
    else if (!strcmp(mode, "false"))
        run_false(x, !strcmp(argv[3], "half"), atoi(argv[4]));
    else if (!strcmp(mode, "barrier") && argc > 5)
        run_barrier(x, (size_t)atol(argv[3]), atoi(argv[4]), atoi(argv[5]));
    else
        die("unknown mode");
    return loom_finalize();
}
