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
 *   ordered_mf ranks_same PASSES [swapped]   (under loomrun -n P)
 *       W "local", H "ring"; rank r takes the r-th of P runs of whole
 *       users (about N / P ratings, in file order) and runs PASSES passes
 *       with .ordered and .local; then every rank runs the plain serial
 *       loop over all N ratings from the same start and compares its own
 *       users' rows of W and all of H: prints "ordered_mf: ranks=P
 *       passes=.. same=1" when every rank found them bitwise equal.
 *       "swapped": ranks 0 and 1 exchange their shares, so the ranks'
 *       users are not in rank order: the loop must be refused.
 *   ordered_mf ranks_ring TARGET MAX_PASSES STEP   (under loomrun -n P)
 *       Passes to TARGET with W "local" and H "ring", each rank its run of
 *       users: ordered (the wavefront across ranks) and unordered (the
 *       rotation), and the time a pass takes (the loop call alone).
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

/* Rank r's share of the ratings for the ranks_* modes: the r-th of P
 * runs of whole users, about N / P ratings each, in file order. */
static void share(const rating *d, int r, int P, long *lo, long *hi)
{
    long b[2];
    for (int e = 0; e < 2; e++) {
        long k = N * (r + e) / P;
        while (k > 0 && k < N && d[k].u == d[k - 1].u)
            k++;
        b[e] = k;
    }
    *lo = b[0];
    *hi = b[1];
}

/* start() for W "local" and H "ring" (or, all, both local: the serial
 * reference): every rank writes all of its W and the rows of H it owns,
 * the values start() writes. */
static void start_ring(int all)
{
    uint64_t s = 777;
    size_t first = 0, n = (size_t)NI;
    if (!all)
        loom_ring_part(H, NULL, NULL, &first, &n);
    for (int a = 0; a < 2; a++)
        for (long k = 0; k < (a ? NI : NU); k++)
            for (int q = 0; q < K; q++) {
                float v = (float)(next(&s) % 1000) / 4000.0f;
                if (!a)
                    W[k * K + q] = v;
                else if ((size_t)k >= first && (size_t)k < first + n)
                    H[k * K + q] = v;
            }
    loom_barrier();
}

/* One pass of the ranks_* modes over this rank's share [lo, hi). */
static int pass_ring(const rating *d, long lo, long hi, int ordered)
{
    loom_for_opts o = {.schedule = LOOM_SERIALIZABLE, .local = 1, .ordered = ordered,
                       .fields = {LOOM_FIELD(W, rating, u), LOOM_FIELD(H, rating, i)}};
    return loom_for_records(d + lo, sizeof *d, hi - lo, sgd, NULL, &o);
}

/* The objective of the ranks_* modes: every rank's share, H collected. */
static double objective_ring(const rating *d, long lo, long hi)
{
    double sum = 0;
    loom_ring_collect(H);
    for (long k = lo; k < hi; k++) {
        float e = d[k].r;
        for (int q = 0; q < K; q++)
            e -= W[d[k].u * K + q] * H[d[k].i * K + q];
        sum += (double)e * e;
    }
    loom_allreduce(LOOM_IN_PLACE, &sum, 1, LOOM_DOUBLE, LOOM_SUM);
    return sum / (double)N;
}

/* ranks_same: see the top.  Returns 0 when every rank matched. */
static int ranks_same(const rating *d, int passes, int swapped)
{
    int P = loom_size(), r = loom_rank(), rc = 0;
    long lo, hi;
    share(d, swapped && r < 2 ? 1 - r : r, P, &lo, &hi);
    start_ring(0);
    for (int p = 0; p < passes && !rc; p++)
        rc = pass_ring(d, lo, hi, 1);
    if (rc) {
        if (r == 0)
            printf("ordered_mf: refused (%d)\n", rc);
        return rc;
    }
    loom_ring_collect(H);
    loom_alloc_opts lo_opts = {.unit = LOOM_UNIT_ROW, .row_size = K * sizeof(float),
                               .coherence = "local"};
    float *w0 = W, *h0 = H, *ws = loom_alloc((size_t)NU * K * sizeof(float), &lo_opts),
          *hs = loom_alloc((size_t)NI * K * sizeof(float), &lo_opts);
    W = ws;
    H = hs;
    start_ring(1);
    for (int p = 0; p < passes; p++)
        sgd(d, N, NULL);
    W = w0;
    H = h0;
    int32_t same = !memcmp(hs, H, (size_t)NI * K * sizeof(float));
    for (long k = lo; k < hi; k++)
        same &= !memcmp(ws + d[k].u * K, W + d[k].u * K, K * sizeof(float));
    loom_allreduce(LOOM_IN_PLACE, &same, 1, LOOM_INT32, LOOM_MIN);
    if (r == 0)
        printf("ordered_mf: ranks=%d passes=%d same=%d\n", P, passes, same);
    loom_free(ws);
    loom_free(hs);
    return !same;
}

/* ranks_ring: passes to target of ordered and unordered; rank 0 prints. */
static int ranks_ring(const rating *d, double target, int max)
{
    long lo, hi;
    int rc = 0;
    share(d, loom_rank(), loom_size(), &lo, &hi);
    for (int ordered = 1; ordered >= 0 && !rc; ordered--) {
        int p = 0;
        double busy = 0;
        start_ring(0);
        double obj = objective_ring(d, lo, hi);
        while (p < max && !(obj <= target)) {
            double t0 = loom_wtime();
            if ((rc = pass_ring(d, lo, hi, ordered)))
                break;
            busy += loom_wtime() - t0;
            p++;
            obj = objective_ring(d, lo, hi);
        }
        if (loom_rank() == 0)
            printf("ordered_mf: ranks=%d %s passes %d objective %.6f%s; %.2f ms a pass\n",
                   loom_size(), ordered ? "ordered" : "unordered", obj <= target ? p : max + 1,
                   obj, obj <= target ? "" : " (not reached)", p ? busy / p * 1e3 : 0.0);
    }
    return rc;
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
    int ring = !strncmp(argv[1], "ranks_", 6); /* W local, H ring */
    ro.name = "W";
    ro.coherence = ring ? "local" : NULL;
    W = loom_alloc((size_t)NU * K * sizeof(float), &ro);
    ro.name = "H";
    ro.coherence = ring ? "ring" : NULL;
    H = loom_alloc((size_t)NI * K * sizeof(float), &ro);
    int rc = 0;
    if (!strcmp(argv[1], "ranks_same")) {
        rc = ranks_same(d, atoi(argv[2]), argc > 3 && !strcmp(argv[3], "swapped"));
    } else if (!strcmp(argv[1], "ranks_ring")) {
        if (argc > 4)
            step = (float)atof(argv[4]);
        rc = ranks_ring(d, atof(argv[2]), argc > 3 ? atoi(argv[3]) : 50);
    } else if (!strcmp(argv[1], "same")) {
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
