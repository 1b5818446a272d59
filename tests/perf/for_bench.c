/* for_bench.c — loom_for against hand-written OpenMP and against the
 * serial twin.
 *
 *   for_bench kernels REPS
 *     memory-bound (STREAM triad over 3 x 2^24 doubles) and compute-bound
 *     (60 fused polynomial steps per element over 2^20 elements): the
 *     same body under `#pragma omp parallel for schedule(static)` and
 *     under loom_for(LOOM_STATIC), under LOOM_FOR (the inlined form, the
 *     body a static function of this file) and, for the triad,
 *     loom_for_range; REPS interleaved runs; prints the median seconds
 *     of each and the median of their per-round ratios to OpenMP.
 *   for_bench mf TRAIN TEST EPOCHS
 *     SGD matrix factorization (rank 20), one data pass per epoch, three
 *     ways from the same initial model: the serial loop, loom_for
 *     serializable (deps, repeated: planned once), and Hogwild
 *     (loom_for static, data-parallel).  Prints the training objective
 *     and test RMSE after each pass, and updates per second.
 *   for_bench plan TRAIN REPS [fields|deps|general]
 *     Planning a serializable loom_for_records over the ratings of TRAIN
 *     (MF's shape: each writes a row of W and a row of H), not cached,
 *     with an empty body, three ways: the rows named by the records'
 *     fields (.fields), by a deps callback (both the k-partite fast path),
 *     and the plan from the access sets (loom_sched_general); REPS
 *     interleaved rounds after an untimed one, medians of wall-clock and
 *     CPU seconds and of the per-round CPU ratios; or one of them alone
 *     (to profile it).
 * Output lines are "key value ..." for tests/perf/loop.sh to parse. */
#include <loom.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../data/ratings.h"
#include "../rng.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- kernels -------------------------------------------------------------- */
typedef struct { double *a, *b, *c, s; } vec;

static void triad(long i, void *ctx)
{
    vec *v = ctx;
    v->a[i] = v->b[i] + v->s * v->c[i];
}

static void triad_range(long lo, long hi, void *ctx)
{
    vec *v = ctx;
    for (long i = lo; i < hi; i++)
        v->a[i] = v->b[i] + v->s * v->c[i];
}

static void poly(long i, void *ctx)
{
    vec *v = ctx;
    double x = v->b[i], y = v->c[i];
    for (int k = 0; k < 60; k++) {
        x = x * 0.999 + y * 1e-3;
        y = y * 0.998 - x * 1e-3 + 1e-6;
    }
    v->a[i] = x + y;
}

static double run_omp(void (*f)(long, void *), vec *v, long n)
{
    double t = loom_wtime();
    if (f == triad) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            triad(i, v);
    } else {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            poly(i, v);
    }
    return loom_wtime() - t;
}

static double run_loom(void (*f)(long, void *), vec *v, long n)
{
    double t = loom_wtime();
    loom_for(0, n, f, v, &(loom_for_opts){.schedule = LOOM_STATIC});
    return loom_wtime() - t;
}

static double run_inline(void (*f)(long, void *), vec *v, long n)
{
    double t = loom_wtime();
    if (f == triad) {
        LOOM_FOR(i, 0, n, NULL)
            triad(i, v);
    } else {
        LOOM_FOR(i, 0, n, NULL)
            poly(i, v);
    }
    return loom_wtime() - t;
}

static double run_range(void (*f)(long, void *), vec *v, long n)
{
    (void)f;
    double t = loom_wtime();
    loom_for_range(0, n, triad_range, v, &(loom_for_opts){.schedule = LOOM_STATIC});
    return loom_wtime() - t;
}

/* REPS rounds; in each, every contender runs once, in rotating order. */
static int kernels(int reps)
{
    struct { const char *name; void (*f)(long, void *); long n; int nc; } k[2] = {
        {"memory", triad, 1L << 24, 4}, {"compute", poly, 1L << 20, 3}};
    double (*run[4])(void (*)(long, void *), vec *, long) = {run_omp, run_loom, run_inline,
                                                             run_range};
    for (int x = 0; x < 2; x++) {
        long n = k[x].n;
        int nc = k[x].nc;
        vec v = {malloc((size_t)n * 8), malloc((size_t)n * 8), malloc((size_t)n * 8), 1.5};
#pragma omp parallel for schedule(static) /* first touch like the runs */
        for (long i = 0; i < n; i++)
            v.a[i] = 0, v.b[i] = (double)(i % 97), v.c[i] = (double)(i % 89);
        double t[4][reps], r[4][reps];
        for (int c = 0; c < nc; c++) /* warm up */
            run[c](k[x].f, &v, n);
        for (int i = 0; i < reps; i++) {
            for (int c = 0; c < nc; c++) {
                int cc = (c + i) % nc;
                t[cc][i] = run[cc](k[x].f, &v, n);
            }
            for (int c = 0; c < nc; c++)
                r[c][i] = t[c][i] / t[0][i];
        }
        printf("%s threads %d n %ld omp_s %.6f loom_s %.6f ratio %.4f inline_s %.6f "
               "inline_ratio %.4f", k[x].name, omp_get_max_threads(), n, median(t[0], reps),
               median(t[1], reps), median(r[1], reps), median(t[2], reps), median(r[2], reps));
        if (nc == 4)
            printf(" range_s %.6f range_ratio %.4f", median(t[3], reps), median(r[3], reps));
        printf("\n");
        free(v.a), free(v.b), free(v.c);
    }
    return 0;
}

/* ---- SGD-MF ------------------------------------------------------------- */
typedef struct { int u, i; float r; } rating;
enum { K = 20 };
static rating *tr, *te;
static long ntr, nte;
static int nu, ni;
static float *W, *H;
static const float gam = 0.01f, lam = 0.05f;

static long load(const char *path, rating **out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    long n = 0, cap = 1 << 16;
    rating *v = malloc((size_t)cap * sizeof *v);
    int u, i;
    float r;
    long ts;
    while (fscanf(f, "%d %d %f %ld", &u, &i, &r, &ts) == 4) {
        if (n == cap)
            v = realloc(v, (size_t)(cap *= 2) * sizeof *v);
        v[n++] = (rating){u - 1, i - 1, r};
        if (u > nu) nu = u;
        if (i > ni) ni = i;
    }
    fclose(f);
    *out = v;
    return n;
}

/* The serial body, unchanged in all three runs. */
static void sgd(long k, void *ctx)
{
    (void)ctx;
    float *w = W + (size_t)tr[k].u * K, *h = H + (size_t)tr[k].i * K;
    float err = tr[k].r;
    for (int f = 0; f < K; f++)
        err -= w[f] * h[f];
    for (int f = 0; f < K; f++) {
        float wf = w[f];
        w[f] += gam * (err * h[f] - lam * wf);
        h[f] += gam * (err * wf - lam * h[f]);
    }
}
static void sgd_deps(long k, loom_deps *d, void *ctx)
{
    (void)ctx;
    loom_writes(d, W, (size_t)tr[k].u);
    loom_writes(d, H, (size_t)tr[k].i);
}

static double objective(void)
{
    double o = 0;
    for (long k = 0; k < ntr; k++) {
        const float *w = W + (size_t)tr[k].u * K, *h = H + (size_t)tr[k].i * K;
        double e = tr[k].r;
        for (int f = 0; f < K; f++)
            e -= w[f] * h[f];
        o += e * e;
    }
    double reg = 0;
    for (long x = 0; x < (long)nu * K; x++)
        reg += W[x] * W[x];
    for (long x = 0; x < (long)ni * K; x++)
        reg += H[x] * H[x];
    return o + lam * reg;
}
static double rmse(void)
{
    double s = 0;
    for (long k = 0; k < nte; k++) {
        const float *w = W + (size_t)te[k].u * K, *h = H + (size_t)te[k].i * K;
        double e = te[k].r;
        for (int f = 0; f < K; f++)
            e -= w[f] * h[f];
        s += e * e;
    }
    return sqrt(s / (double)nte);
}
static void init_model(void)
{
    uint64_t s = 7;
    for (long x = 0; x < (long)nu * K; x++)
        W[x] = (float)((next(&s) >> 11) * 0x1.0p-53) * 0.3f;
    for (long x = 0; x < (long)ni * K; x++)
        H[x] = (float)((next(&s) >> 11) * 0x1.0p-53) * 0.3f;
}

static int mf(const char *train, const char *test, int epochs)
{
    ntr = load(train, &tr);
    nte = load(test, &te);
    loom_alloc_opts o = {.unit = LOOM_UNIT_ROW, .row_size = K * sizeof(float)};
    o.name = "W";
    W = loom_alloc((size_t)nu * K * sizeof(float), &o);
    o.name = "H";
    H = loom_alloc((size_t)ni * K * sizeof(float), &o);
    const char *how[3] = {"serial", "serializable", "hogwild"};
    for (int m = 0; m < 3; m++) {
        init_model();
        double busy = 0;
        for (int e = 1; e <= epochs; e++) {
            double t = loom_wtime();
            if (m == 0)
                for (long k = 0; k < ntr; k++)
                    sgd(k, NULL);
            else if (m == 1)
                loom_for(0, ntr, sgd, NULL, &(loom_for_opts){.schedule = LOOM_SERIALIZABLE,
                                                           .deps = sgd_deps, .repeated = 1});
            else
                loom_for(0, ntr, sgd, NULL, &(loom_for_opts){.schedule = LOOM_STATIC});
            double dt = loom_wtime() - t;
            if (e > 1) /* the first pass of serializable includes planning */
                busy += dt;
            printf("mf %s epoch %d objective %.6f test_rmse %.6f seconds %.6f\n", how[m], e,
                   objective(), rmse(), dt);
        }
        printf("mf %s updates_per_s %.0f\n", how[m], (double)ntr * (epochs - 1) / busy);
    }
    return 0;
}

/* ---- planning ------------------------------------------------------------ */
static double cpu_seconds(void) /* of every thread of the process */
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void nothing(const void *recs, long n, void *ctx) { (void)recs, (void)n, (void)ctx; }
static void rating_deps(long k, loom_deps *d, void *ctx)
{
    const loom_rating *v = ctx;
    loom_writes(d, W, (size_t)v[k].u);
    loom_writes(d, H, (size_t)v[k].i);
}

static int plan(const char *train, int reps, const char *only)
{
    extern int loom_sched_general;
    loom_ratings tr;
    char err[512];
    if (loom_ratings_load(train, NULL, &tr, err, sizeof err)) {
        fprintf(stderr, "for_bench: %s\n", err);
        return 2;
    }
    const loom_rating *v = tr.v;
    long n = tr.n;
    loom_alloc_opts o = {.unit = LOOM_UNIT_ROW, .row_size = 64, .name = "W"};
    W = loom_alloc((size_t)tr.nusers * 64, &o);
    o.name = "H";
    H = loom_alloc((size_t)tr.nitems * 64, &o);
    /* the contenders: the rows named by record fields, by the deps
     * callback (both the k-partite fast path), from the access sets */
    const char *name[3] = {"fields", "deps", "general"};
    loom_for_opts f[3] = {
        {.schedule = LOOM_SERIALIZABLE,
         .fields = {LOOM_FIELD(W, loom_rating, u), LOOM_FIELD(H, loom_rating, i)}},
        {.schedule = LOOM_SERIALIZABLE, .deps = rating_deps},
        {.schedule = LOOM_SERIALIZABLE, .deps = rating_deps}};
    double t[3][reps], cpu[3][reps], r[2][reps];
    /* one untimed plan first: the process's first touch of fresh memory
     * (the VM backs it slowly) would land on whichever contender runs
     * first */
    if (loom_for_records(v, sizeof *v, n, nothing, (void *)v, &f[1]))
        return 1;
    for (int i = 0; i < reps; i++) {
        for (int c = 0; c < 3; c++) {
            int cc = (c + i) % 3;
            if (only && strcmp(only, name[cc])) {
                t[cc][i] = cpu[cc][i] = 1;
                continue;
            }
            loom_sched_general = cc == 2;
            double t0 = loom_wtime(), c0 = cpu_seconds();
            if (loom_for_records(v, sizeof *v, n, nothing, (void *)v, &f[cc]))
                return 1;
            t[cc][i] = loom_wtime() - t0;
            cpu[cc][i] = cpu_seconds() - c0;
        }
        r[0][i] = cpu[0][i] / cpu[1][i];
        r[1][i] = cpu[0][i] / cpu[2][i];
    }
    loom_sched_general = 0;
    printf("plan threads %d n %ld", omp_get_max_threads(), n);
    for (int c = 0; c < 3; c++)
        printf(" %s_s %.4f %s_cpu_s %.4f", name[c], median(t[c], reps), name[c],
               median(cpu[c], reps));
    printf(" fields_over_deps_cpu %.4f fields_over_general_cpu %.4f\n", median(r[0], reps),
           median(r[1], reps));
    loom_free(W);
    loom_free(H);
    loom_ratings_free(&tr);
    return 0;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 2;
    int rc = 2;
    if (argc >= 3 && !strcmp(argv[1], "kernels"))
        rc = kernels(atoi(argv[2]));
    else if (argc >= 5 && !strcmp(argv[1], "mf"))
        rc = mf(argv[2], argv[3], atoi(argv[4]));
    else if (argc >= 4 && !strcmp(argv[1], "plan"))
        rc = plan(argv[2], atoi(argv[3]), argc > 4 ? argv[4] : NULL);
    else
        fprintf(stderr, "usage: for_bench kernels REPS | for_bench mf TRAIN TEST EPOCHS | "
                        "for_bench plan TRAIN REPS [fields|deps|general]\n");
    loom_finalize();
    return rc;
}
