/* ordered_mf.c — the ordered 2D schedule (sched/ordered.c) on SGD matrix
 * factorization, one rank, OMP_NUM_THREADS workers.
 *
 *   ordered_mf same PASSES [shuffled]
 *       PASSES passes with .ordered, then the same from the same start in
 *       the plain serial loop (one thread, index order): prints
 *       "ordered_mf: same=1" when W and H are bitwise equal.  "shuffled"
 *       swaps two records so that one user's items go back a block: the
 *       loop must be refused (prints "ordered_mf: refused").
 *   ordered_mf passes TARGET_PASSES MAX_PASSES STEP
 *       The objective (mean squared error over the ratings) that the
 *       serial order reaches after TARGET_PASSES passes is the target;
 *       then, from the same start, the passes each schedule needs to reach
 *       it (MAX_PASSES + 1 when it never does): ordered, unordered
 *       (serializable rotation), hybrid (Hogwild threads), bsp (private
 *       copies summed every 1/10 pass: data-parallel).
 *   ordered_mf ranks TARGET MAX_PASSES STEP   (under loomrun -n P)
 *       The same count for the multi-rank schedules against a given
 *       TARGET (the one a `passes` run printed): hybrid across ranks (each
 *       rank's writes merged into the others' at a sync point every 1/10
 *       of its share: data-parallel) and unordered (the rotation).
 *
 * Data: 3000 users x 1500 items, 120000 ratings, user and item popularity
 * Zipf-skewed (a few rows take most ratings: conflicts matter), rank-8
 * truth plus noise, sorted by (user, item) as a ratings file is.  The
 * update is seed 000's Algorithm 7 (errata: W first, then H with the new
 * W). */
#include <loom.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../rng.h"

#define K 8
typedef struct { uint32_t u, i; float r; } rating;

static float *W, *H;
static float step = 0.002f, lambda = 0.02f;
static int NU = 3000, NI = 1500;
static long N = 120000;

static void sgd(const void *recs, long n, void *ctx)
{
    (void)ctx;
    const rating *x = recs;
    for (long k = 0; k < n; k++) {
        float *w = loom_at(W, x[k].u), *h = loom_at(H, x[k].i), e = x[k].r;
        for (int d = 0; d < K; d++)
            e -= w[d] * h[d];
        for (int d = 0; d < K; d++)
            w[d] += step * (e * h[d] - lambda * w[d]);
        for (int d = 0; d < K; d++)
            h[d] += step * (e * w[d] - lambda * h[d]);
    }
}

static int by_user_item(const void *a, const void *b)
{
    const rating *x = a, *y = b;
    return x->u != y->u ? (x->u > y->u) - (x->u < y->u) : (x->i > y->i) - (x->i < y->i);
}

/* A Zipf(1)-like draw in [0, n): popular rows first. */
static uint32_t skewed(uint64_t *s, int n)
{
    double u = (double)(next(s) % 1000000 + 1) / 1e6;
    long v = (long)(pow((double)n + 1, u)) - 1;
    return (uint32_t)(v < n ? v : n - 1);
}

static rating *make_data(void)
{
    rating *d = malloc((size_t)N * sizeof *d);
    float *tu = malloc((size_t)NU * K * sizeof *tu), *ti = malloc((size_t)NI * K * sizeof *ti);
    uint64_t s = 12345;
    for (long k = 0; k < (long)NU * K; k++)
        tu[k] = (float)(next(&s) % 1000) / 1000.0f;
    for (long k = 0; k < (long)NI * K; k++)
        ti[k] = (float)(next(&s) % 1000) / 1000.0f;
    for (long k = 0; k < N; k++) {
        uint32_t u = skewed(&s, NU), i = skewed(&s, NI);
        float r = 0;
        for (int q = 0; q < K; q++)
            r += tu[u * K + q] * ti[i * K + q];
        d[k] = (rating){u, i, r + (float)((long)(next(&s) % 200) - 100) / 1000.0f};
    }
    qsort(d, (size_t)N, sizeof *d, by_user_item);
    free(tu);
    free(ti);
    return d;
}

/* The same start for every run; on several ranks rank 0 puts every row
 * and the barrier publishes them. */
static void start(void)
{
    uint64_t s = 777;
    float row[K];
    for (int a = 0; a < 2; a++)
        for (long k = 0; k < (a ? NI : NU); k++) {
            for (int q = 0; q < K; q++)
                row[q] = (float)(next(&s) % 1000) / 4000.0f;
            if (loom_size() == 1)
                memcpy((a ? H : W) + k * K, row, sizeof row);
            else if (loom_rank() == 0)
                loom_row_put(a ? H : W, (size_t)k, row);
        }
    if (loom_size() > 1)
        loom_barrier();
}

/* The objective over every rank's block of ratings, read through
 * loom_row_get, summed over ranks (several ranks). */
static double objective_ranks(const rating *d)
{
    long P = loom_size(), r = loom_rank(), lo = N * r / P, hi = N * (r + 1) / P;
    double sum = 0;
    loom_barrier();
    for (long k = lo; k < hi; k++) {
        const float *w = loom_row_get(W, d[k].u), *h = loom_row_get(H, d[k].i);
        float e = d[k].r;
        for (int q = 0; q < K; q++)
            e -= w[q] * h[q];
        sum += (double)e * e;
    }
    loom_allreduce(LOOM_IN_PLACE, &sum, 1, LOOM_DOUBLE, LOOM_SUM);
    return sum / (double)N;
}

static double objective(const rating *d)
{
    double sum = 0;
    for (long k = 0; k < N; k++) {
        float e = d[k].r;
        for (int q = 0; q < K; q++)
            e -= W[d[k].u * K + q] * H[d[k].i * K + q];
        sum += (double)e * e;
    }
    return sum / (double)N;
}

enum { ORDERED, UNORDERED, HYBRID, BSP, SERIAL };
static const char *names[] = {"ordered", "unordered", "hybrid", "bsp", "serial"};

static int pass(const rating *d, int mode)
{
    loom_for_opts o = {.schedule = LOOM_SERIALIZABLE, .repeated = 1,
                       .fields = {LOOM_FIELD(W, rating, u), LOOM_FIELD(H, rating, i)}};
    if (mode == SERIAL) {
        sgd(d, N, NULL);
        return 0;
    }
    if (mode == ORDERED)
        o.ordered = 1;
    if (mode == HYBRID || mode == BSP) /* on several ranks: a sync every 1/10 of a share */
        o = (loom_for_opts){.schedule = LOOM_STATIC, .sync = mode == BSP ? LOOM_BSP : LOOM_HYBRID,
                            .sync_every = mode == BSP || loom_size() > 1 ? N / 10 / loom_size() : 0};
    return loom_for_records(d, sizeof *d, N, sgd, NULL, &o);
}

/* From the start, passes of schedule m until the objective is <= target
 * (at most max); rank 0 prints how many (max + 1: never).  Returns the
 * loop's error, if any. */
static int to_target(const rating *d, int m, double target, int max)
{
    double (*obj_of)(const rating *) = loom_size() > 1 ? objective_ranks : objective;
    int p = 0, rc = 0;
    start();
    double obj = obj_of(d);
    while (p < max && !(obj <= target) && !(rc = pass(d, m))) {
        p++;
        obj = obj_of(d);
    }
    if (loom_rank() == 0)
        printf("ordered_mf: ranks=%d %s passes %d objective %.6f%s\n", loom_size(), names[m],
               obj <= target ? p : max + 1, obj, obj <= target ? "" : " (not reached)");
    return rc;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 3) {
        fprintf(stderr, "usage: ordered_mf same PASSES [shuffled] | passes TARGET MAX STEP\n");
        return 2;
    }
    rating *d = make_data();
    loom_alloc_opts ro = {.unit = LOOM_UNIT_ROW, .row_size = K * sizeof(float), .type = LOOM_FLOAT,
                          .merge = LOOM_MERGE_ADD};
    ro.name = "W";
    W = loom_alloc((size_t)NU * K * sizeof(float), &ro);
    ro.name = "H";
    H = loom_alloc((size_t)NI * K * sizeof(float), &ro);
    int rc = 0;
    if (!strcmp(argv[1], "same")) {
        int passes = atoi(argv[2]);
        if (argc > 3 && !strcmp(argv[3], "shuffled")) { /* user 0's last item before its first */
            long a = 0, b = 0;
            while (b + 1 < N && d[b + 1].u == d[0].u)
                b++;
            rating t = d[a];
            d[a] = d[b];
            d[b] = t;
        }
        start();
        for (int p = 0; p < passes && !rc; p++)
            rc = pass(d, ORDERED);
        if (rc) {
            printf("ordered_mf: refused (%d)\n", rc);
        } else {
            float *w1 = malloc((size_t)NU * K * 4), *h1 = malloc((size_t)NI * K * 4);
            memcpy(w1, W, (size_t)NU * K * 4);
            memcpy(h1, H, (size_t)NI * K * 4);
            start();
            for (int p = 0; p < passes; p++)
                pass(d, SERIAL);
            int same = !memcmp(w1, W, (size_t)NU * K * 4) && !memcmp(h1, H, (size_t)NI * K * 4);
            printf("ordered_mf: threads=%d passes=%d same=%d objective=%.6f\n",
                   omp_get_max_threads(), passes, same, objective(d));
            rc = !same;
            free(w1);
            free(h1);
        }
    } else if (!strcmp(argv[1], "ranks")) {
        double target = atof(argv[2]);
        int max = argc > 3 ? atoi(argv[3]) : 50;
        if (argc > 4)
            step = (float)atof(argv[4]);
        for (int m = UNORDERED; m <= HYBRID && !rc; m++)
            rc = to_target(d, m, target, max);
    } else {
        int target_passes = atoi(argv[2]), max = argc > 3 ? atoi(argv[3]) : 50;
        if (argc > 4)
            step = (float)atof(argv[4]);
        start();
        for (int p = 0; p < target_passes; p++) {
            pass(d, SERIAL);
            if (getenv("ORDERED_MF_TRACE"))
                printf("serial pass %d objective %.6f\n", p + 1, objective(d));
        }
        double target = objective(d);
        printf("ordered_mf: threads=%d step=%g target=%.6f (serial after %d passes), start "
               "objective ", omp_get_max_threads(), step, target, target_passes);
        start();
        printf("%.6f\n", objective(d));
        for (int m = ORDERED; m <= BSP && !rc; m++)
            rc = to_target(d, m, target, max);
    }
    loom_free(W);
    loom_free(H);
    free(d);
    loom_finalize();
    return rc;
}
