/* loom-demo.c — the main job until the apps exist: a recommender baseline
 * trained on real ratings by every rank together, through the collectives.
 *
 * Model: rating(u, i) ~ mu + b_u + b_i (global mean, user and item biases),
 * fitted by alternating exact least squares with ridge lambda:
 *   b_u = sum_{i in I(u)} (r - mu - b_i) / (lambda + |I(u)|), then b_i alike.
 * Each rank keeps every P-th line of the training file; per-user and
 * per-item sums are combined by loom_allreduce, so every rank holds the
 * same model; rank 0 broadcasts the options (loom_bcast) and prints the
 * train and test RMSE after every round.  The result is the same for any
 * number of ranks (up to float rounding of the sums).
 *
 *   loom-demo --train FILE --test FILE [--rounds N] [--lambda L]
 *   loom-demo --synthetic USERS [--rounds N]      (no data files needed)
 * FILE: MovieLens "user item rating [timestamp]" lines, tab or space. */
#include <loom.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int u, i; float r; } rating;
typedef struct { rating *v; long n, cap; } ratings;

struct opts {
    char train[1024], test[1024];
    int rounds, synthetic;
    double lambda;
};

static void push(ratings *rs, int u, int i, float r)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 4096;
        rs->v = realloc(rs->v, (size_t)rs->cap * sizeof *rs->v);
        if (!rs->v)
            loom_abort(1, "out of memory");
    }
    rs->v[rs->n++] = (rating){u, i, r};
}

/* Keep the lines of path whose index is this rank's (every P-th).  A bad
 * line ends the job naming file:line. */
static void load(const char *path, ratings *rs)
{
    FILE *f = fopen(path, "r");
    if (!f)
        loom_abort(1, "%s: %s", path, strerror(errno));
    char line[512];
    long lineno = 0;
    int P = loom_size(), me = loom_rank();
    while (fgets(line, sizeof line, f)) {
        lineno++;
        int u, i;
        float r;
        char extra;
        if (line[0] == '\n' || line[0] == '#')
            continue;
        if (sscanf(line, "%d %d %f %*d %c", &u, &i, &r, &extra) < 3 || u < 1 || i < 1 ||
            !(r >= 0 && r <= 100))
            loom_abort(1, "%s:%ld: expected 'user item rating [timestamp]' with ids >= 1",
                       path, lineno);
        if ((lineno - 1) % P == me)
            push(rs, u - 1, i - 1, r);
    }
    fclose(f);
}

/* A planted model: ratings = 3.5 + bu + bi + noise, users x 60 items each. */
static void synthesize(int users, ratings *train, ratings *test)
{
    int items = users / 2 + 10;
    unsigned s = 12345;
#define RND() ((s = s * 1103515245u + 12345u) >> 8 & 0xffff) / 65536.0
    double *bu = malloc(sizeof(double) * (size_t)users), *bi = malloc(sizeof(double) * (size_t)items);
    for (int u = 0; u < users; u++) bu[u] = RND() - 0.5;
    for (int i = 0; i < items; i++) bi[i] = 2 * RND() - 1;
    long k = 0;
    for (int u = 0; u < users; u++)
        for (int j = 0; j < 60; j++, k++) {
            int i = (int)(RND() * items);
            float r = (float)(3.5 + bu[u] + bi[i] + (RND() - 0.5));
            if (k % loom_size() == loom_rank())
                push(k % 10 ? train : test, u, i, r);
        }
    free(bu);
    free(bi);
}

static double sq(double x) { return x * x; }

/* Sum of squared errors and count over this rank's ratings, then over all. */
static double rmse(const ratings *rs, double mu, const double *bu, const double *bi)
{
    double acc[2] = {0, (double)rs->n};
    for (long k = 0; k < rs->n; k++)
        acc[0] += sq(rs->v[k].r - mu - bu[rs->v[k].u] - bi[rs->v[k].i]);
    loom_allreduce(LOOM_IN_PLACE, acc, 2, LOOM_DOUBLE, LOOM_SUM);
    return acc[1] ? sqrt(acc[0] / acc[1]) : NAN;
}

/* One half-round: refit the biases `b` (indexed by field `who` of a rating)
 * with the others held fixed. */
static void refit(const ratings *rs, int by_user, double mu, double *b, const double *other,
                  const double *count, int n, double lambda, double *scratch)
{
    memset(scratch, 0, sizeof(double) * (size_t)n);
    for (long k = 0; k < rs->n; k++) {
        const rating *x = &rs->v[k];
        int me = by_user ? x->u : x->i, them = by_user ? x->i : x->u;
        scratch[me] += x->r - mu - other[them];
    }
    loom_allreduce(LOOM_IN_PLACE, scratch, (size_t)n, LOOM_DOUBLE, LOOM_SUM);
    for (int j = 0; j < n; j++)
        b[j] = scratch[j] / (lambda + count[j]);
}

static void usage(void)
{
    fprintf(stderr, "usage: loom-demo --train FILE --test FILE [--rounds N] [--lambda L]\n"
                    "       loom-demo --synthetic USERS [--rounds N]\n");
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    struct opts o = {.rounds = 8, .lambda = 5.0};
    if (loom_rank() == 0) {
        for (int a = 1; a < argc; a++) {
            const char *v = a + 1 < argc ? argv[a + 1] : NULL;
            if (!strcmp(argv[a], "--train") && v) snprintf(o.train, sizeof o.train, "%s", argv[++a]);
            else if (!strcmp(argv[a], "--test") && v) snprintf(o.test, sizeof o.test, "%s", argv[++a]);
            else if (!strcmp(argv[a], "--rounds") && v) o.rounds = atoi(argv[++a]);
            else if (!strcmp(argv[a], "--lambda") && v) o.lambda = atof(argv[++a]);
            else if (!strcmp(argv[a], "--synthetic") && v) o.synthetic = atoi(argv[++a]);
            else { usage(); loom_abort(2, "bad argument '%s'", argv[a]); }
        }
        if ((!o.synthetic && (!o.train[0] || !o.test[0])) || o.rounds < 1 || o.lambda < 0) {
            usage();
            loom_abort(2, "need --train and --test (or --synthetic N), rounds >= 1, lambda >= 0");
        }
    }
    loom_bcast(&o, sizeof o, 0); /* every rank runs rank 0's options */

    double t0 = loom_wtime();
    ratings train = {0}, test = {0};
    if (o.synthetic)
        synthesize(o.synthetic, &train, &test);
    else {
        load(o.train, &train);
        load(o.test, &test);
    }
    /* Sizes: the largest ids over every rank's share of both files. */
    int64_t dims[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        const ratings *rs = s ? &test : &train;
        for (long k = 0; k < rs->n; k++) {
            if (rs->v[k].u + 1 > dims[0]) dims[0] = rs->v[k].u + 1;
            if (rs->v[k].i + 1 > dims[1]) dims[1] = rs->v[k].i + 1;
        }
    }
    loom_allreduce(LOOM_IN_PLACE, dims, 2, LOOM_INT64, LOOM_MAX);
    int nu = (int)dims[0], ni = (int)dims[1];
    double *bu = calloc((size_t)nu, sizeof *bu), *bi = calloc((size_t)ni, sizeof *bi);
    double *cu = calloc((size_t)nu, sizeof *cu), *ci = calloc((size_t)ni, sizeof *ci);
    double *scratch = malloc(sizeof(double) * (size_t)(nu > ni ? nu : ni));
    double tot[2] = {0, (double)train.n};
    for (long k = 0; k < train.n; k++) {
        tot[0] += train.v[k].r;
        cu[train.v[k].u]++;
        ci[train.v[k].i]++;
    }
    loom_allreduce(LOOM_IN_PLACE, tot, 2, LOOM_DOUBLE, LOOM_SUM);
    loom_allreduce(LOOM_IN_PLACE, cu, (size_t)nu, LOOM_DOUBLE, LOOM_SUM);
    loom_allreduce(LOOM_IN_PLACE, ci, (size_t)ni, LOOM_DOUBLE, LOOM_SUM);
    double mu = tot[0] / tot[1];
    if (loom_rank() == 0)
        printf("loom-demo: %d ranks, %.0f training ratings, %d users, %d items, "
               "mean %.4f (loaded in %.2f s)\n", loom_size(), tot[1], nu, ni, mu,
               loom_wtime() - t0);
    double test_rmse = rmse(&test, mu, bu, bi);
    if (loom_rank() == 0)
        printf("round %2d/%d  test_rmse %.4f  (mean only)\n", 0, o.rounds, test_rmse);
    for (int round = 1; round <= o.rounds; round++) {
        double t = loom_wtime();
        refit(&train, 1, mu, bu, bi, cu, nu, o.lambda, scratch);
        refit(&train, 0, mu, bi, bu, ci, ni, o.lambda, scratch);
        double train_rmse = rmse(&train, mu, bu, bi);
        test_rmse = rmse(&test, mu, bu, bi);
        if (loom_rank() == 0)
            printf("round %2d/%d  train_rmse %.4f  test_rmse %.4f  %.3f s\n", round,
                   o.rounds, train_rmse, test_rmse, loom_wtime() - t);
    }
    loom_barrier();
    if (loom_rank() == 0)
        printf("final test_rmse=%.4f (%.2f s)\n", test_rmse, loom_wtime() - t0);
    free(bu); free(bi); free(cu); free(ci); free(scratch);
    free(train.v);
    free(test.v);
    return loom_finalize();
}
