/* loom-lasso.c — Lasso by coordinate descent:
 *     min_β ½‖y − Xβ‖² + λ‖β‖₁
 * Each rank holds every P-th row of X and y (--standardize: centred and
 * scaled first).  By default on a working set (ws_step below): each
 * iteration sums the gradient Xᵀr over the ranks (the duality gap, gap-safe
 * screening), grows the set by the most violating columns, sums their Gram
 * rows over the ranks, and solves the subproblem through the Gram matrix
 * on every rank alike (kernels/lasso_ws.c): at most 2 allreduces an
 * iteration, whatever the ranks.  With --solver priority (or the
 * schedule's flags), the priority schedule (STRADS-Dynamic, seed 000
 * §5.1.2, seed 002 §3): a round draws candidate coordinates with probability
 * ∝ δβ_j² + η, drops those correlated above ρ with one already in flight
 * (estimated on a shared row sample, kernels/lasso_corr.c), sums x_jᵀr
 * over the ranks' rows (push, allreduce) and applies the soft-threshold
 * update on every rank (pull, then apply: a rank's threads split its rows
 * for the sums and the residual); on one rank with one thread each drawn
 * coordinate is updated at once.  A problem too small to split (without
 * --batch: under 768 values a column) is held whole by every rank, and
 * each solves it alone, as one rank would, exchanging nothing.  --select
 * uniform draws uniformly instead (the baseline); --serial runs the
 * serial twin.  Flags, formats, output: docs/loom-lasso.md.
 *
 *   loom-lasso (--X FILE --y FILE | --libsvm FILE)
 *              (--lambda L | --lambda-path N [--lambda-min-ratio R])
 *              [--standardize] [--solver workset|priority] [--select priority|uniform]
 *              [--serial cyclic|random] [--rho R] [--rho-rows M] [--batch L]
 *              [--candidates C] [--pipeline D] [--rounds R] [--iters N]
 *              [--tol T] [--target F] [--eta E] [--seed S] [--log FILE.csv]
 *              [--model FILE]
 *
 * Exit status: 0; 1 for unreadable or malformed data (FILE:LINE named) or
 * a failed write; 2 for bad arguments; 3 when the objective diverges. */
#include "common/flags.h"
#include "../kernels/lasso.h"
#include "common/report.h"

#include <loom.h>

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    const char *x, *y, *libsvm, *log, *model, *select, *serial, *solver;
    double lambda, min_ratio, rho, tol, target, eta;
    long path, batch, candidates, pipeline, rounds, iters, rho_rows;
    uint64_t seed;
    int have_lambda, have_target, standardize, zero_based;
    int workset; /* 1: the working-set solver; 0: the priority schedule */
};

static const char APP[] = "loom-lasso";

/* Fills *o from argv; returns 0, 1 after --help or --version, -1 after
 * saying what is wrong (rank 0). */
static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.min_ratio = 0.01, .rho = NAN, .tol = 1e-6, .eta = 1e-6, .batch = 0,
                       .iters = 100, .seed = 1, .lambda = NAN, .target = NAN};
    struct { /* the counts as the flag parser writes them (0: not given) */
        long long path, rho_rows, batch, candidates, pipeline, rounds, iters;
    } n = {.iters = 100};
    unsigned long long seed = 1;
    const loom_flag flags[] = {
        {"X", LOOM_FLAG_STR, &o->x, "FILE", 0, 0,
         "MatrixMarket X (coordinate or array); with --y"},
        {"y", LOOM_FLAG_STR, &o->y, "FILE", 0, 0, "MatrixMarket y (n x 1 or a vector)"},
        {"libsvm", LOOM_FLAG_STR, &o->libsvm, "FILE", 0, 0,
         "one LIBSVM file instead: 'y index:value ...' per row"},
        {"zero-based", LOOM_FLAG_SET, &o->zero_based, NULL, 0, 0,
         "the LIBSVM file's indices start at 0 (as\nscikit-learn's dump_svmlight_file writes)"},
        {"lambda", LOOM_FLAG_NUM, &o->lambda, "L", 0, HUGE_VAL, "the penalty"},
        {"lambda-path", LOOM_FLAG_LONG, &n.path, "N", 1, HUGE_VAL,
         "or a path of N values from lambda_max =\nmax|X'y| down to R * lambda_max, warm starts"},
        {"lambda-min-ratio", LOOM_FLAG_NUM, &o->min_ratio, "R", 0, 1,
         "the path's last lambda / lambda_max, 0 < R <= 1\n(default 0.01)"},
        {"standardize", LOOM_FLAG_SET, &o->standardize, NULL, 0, 0,
         "centre and scale every column (mean 0, sum of\nsquares n), centre y and fit an "
         "intercept; the\nmodel is reported in the original units\n(columns are then stored "
         "densely)"},
        {"solver", LOOM_FLAG_STR, &o->solver, "HOW", 0, 0,
         "workset (default: coordinate descent on a\nworking set grown from the duality gap, with\n"
         "gap-safe screening; a few allreduces an\niteration) or priority (the STRADS schedule:\n"
         "an allreduce a round; the default when any of\nits flags below is given)"},
        {"select", LOOM_FLAG_STR, &o->select, "HOW", 0, 0,
         "priority schedule: priority (draw coordinates\nby delta^2 + eta, default) or uniform "
         "(the\nbaseline)"},
        {"serial", LOOM_FLAG_STR, &o->serial, "ORDER", 0, 0,
         "run the serial twin instead (one rank): cyclic\nor random order"},
        {"rho", LOOM_FLAG_NUM, &o->rho, "R", 0, HUGE_VAL,
         "two columns correlated above R are not updated\ntogether (default 0.1; 1 turns the "
         "filter off)"},
        {"rho-rows", LOOM_FLAG_LONG, &n.rho_rows, "M", 1, HUGE_VAL,
         "rows the correlations are estimated on (default\n1024; more than the data set: all, "
         "exact)"},
        {"batch", LOOM_FLAG_LONG, &n.batch, "L", 1, HUGE_VAL,
         "coordinates updated in parallel per round\n(default 8).  Without it a rank runs a "
         "thread\nper 256 values of a column (up to\nOMP_NUM_THREADS; they split the rows), "
         "one\nrank with one thread updates one coordinate at\na time, and with under 768 "
         "values a column\nevery rank solves the whole problem alone"},
        {"candidates", LOOM_FLAG_LONG, &n.candidates, "C", 1, HUGE_VAL,
         "coordinates drawn per round (default 2 * batch)"},
        {"pipeline", LOOM_FLAG_LONG, &n.pipeline, "D", 1, HUGE_VAL,
         "rounds in flight at once, sharing one allreduce\n(default 1; their updates see the "
         "state before\nthe others' results)"},
        {"rounds", LOOM_FLAG_LONG, &n.rounds, "R", 1, HUGE_VAL,
         "rounds per iteration (default features / batch:\none pass)"},
        {"iters", LOOM_FLAG_LONG, &n.iters, "N", 1, HUGE_VAL,
         "iterations at most, per lambda (default 100)"},
        {"tol", LOOM_FLAG_NUM, &o->tol, "T", 0, HUGE_VAL,
         "stop when the duality gap <= T * objective\n(default 1e-6; 0: never, and no gap is "
         "computed)"},
        {"target", LOOM_FLAG_NUM, &o->target, "F", 0, 0, "stop when the objective <= F"},
        {"eta", LOOM_FLAG_NUM, &o->eta, "E", 0, 0, "sampling weight floor, > 0 (default 1e-6)"},
        {"seed", LOOM_FLAG_ULONG, &seed, "S", 0, 0, "of the schedule's draws (default 1)"},
        {"log", LOOM_FLAG_STR, &o->log, "FILE.csv", 0, 0,
         "CSV: iter,updates,seconds,objective,nnz,lambda,\ngap"},
        {"model", LOOM_FLAG_STR, &o->model, "FILE", 0, 0,
         "writes beta (of the last lambda), one value per\nline; with --standardize in "
         "original units,\nthen the intercept"},
        {0}};
    const loom_cli cli = {
        .app = "loom-lasso",
        .usage = "loom-lasso --X FILE --y FILE (--lambda L | --lambda-path N) [OPTION]...\n"
                 "loom-lasso --libsvm FILE (--lambda L | --lambda-path N) [OPTION]...",
        .about = "Lasso by coordinate descent, on a working set (default) or under the\n"
                 "priority schedule (--solver priority).\n"
                 "Minimizes 1/2 |y - X beta|^2 + lambda |beta|_1 on the ranks loomrun starts.\n"
                 "scikit-learn's Lasso(alpha=A) minimizes 1/(2n) |y - X beta|^2 + A |beta|_1\n"
                 "over n samples: the same problem with lambda = n * A (alpha = lambda / n);\n"
                 "its fit_intercept=True on standardized columns is --standardize here.",
        .flags = flags,
        .more = "Exit status: 0; 1 unreadable or empty data, or a failed write; 2 bad\n"
                "arguments; 3 the objective diverged (lower --rho, --batch or --pipeline).\n"
                "See docs/loom-lasso.md."};
    int rc = loom_flags_parse(&cli, argc, argv, 1);
    if (rc)
        return rc;
    o->path = (long)n.path, o->rho_rows = (long)n.rho_rows, o->batch = (long)n.batch;
    o->candidates = (long)n.candidates, o->pipeline = (long)n.pipeline, o->rounds = (long)n.rounds;
    o->iters = (long)n.iters, o->seed = seed;
    o->have_lambda = !isnan(o->lambda);
    o->have_target = !isnan(o->target);
    int sched = o->select || !isnan(o->rho) || n.rho_rows || o->batch || o->candidates ||
                o->pipeline || o->rounds;
    if (o->solver && strcmp(o->solver, "workset") && strcmp(o->solver, "priority"))
        return loom_flags_complain(APP, "--solver must be workset or priority");
    o->workset = o->solver ? !strcmp(o->solver, "workset") : !sched;
    if (o->workset && sched)
        return loom_flags_complain(APP, "--select, --rho, --rho-rows, --batch, --candidates, "
                                        "--pipeline and --rounds belong to --solver priority");
    o->select = o->select ? o->select : "priority";
    o->rho = isnan(o->rho) ? 0.1 : o->rho;
    o->rho_rows = n.rho_rows ? o->rho_rows : 1024;
    if (strcmp(o->select, "priority") && strcmp(o->select, "uniform"))
        return loom_flags_complain(APP, "--select must be priority or uniform");
    if (o->serial && strcmp(o->serial, "cyclic") && strcmp(o->serial, "random"))
        return loom_flags_complain(APP, "--serial must be cyclic or random");
    if (!(o->min_ratio > 0))
        return loom_flags_complain(APP, "--lambda-min-ratio must be > 0");
    if (!(o->eta > 0))
        return loom_flags_complain(APP, "--eta must be > 0");
    if (!o->libsvm && !(o->x && o->y))
        return loom_flags_complain(APP, o->x || o->y ? "--X and --y go together"
                                                     : "missing the data: --X FILE --y FILE, "
                                                       "or --libsvm FILE");
    if (o->libsvm && (o->x || o->y))
        return loom_flags_complain(APP, "--libsvm replaces --X and --y");
    if (o->zero_based && !o->libsvm)
        return loom_flags_complain(APP, "--zero-based goes with --libsvm (MatrixMarket is "
                                        "1-based)");
    if (o->have_lambda == !!o->path)
        return loom_flags_complain(APP, o->path ? "--lambda and --lambda-path exclude each other"
                                                : "missing --lambda L or --lambda-path N");
    if (o->candidates && o->candidates < o->batch)
        return loom_flags_complain(APP, "--candidates must be at least --batch");
    return 0;
}

/* ---- the priority schedule's callbacks ------------------------------------ */

struct run {
    loom_lasso *l;
    loom_lasso_corr *corr;
    double lambda;
    double *delta; /* p: each coordinate's last change, from pull to apply */
    int uniform;
    int64_t updates;
    int pushed; /* a window's pushes ran since its last pull: the next pull ends a window */
};

/* Allreduces this rank has taken part in: sum_all's, and (counted by
 * push and pull) one a window of the priority schedule when the rows are
 * split (sched/priority.c's finish_window). */
static long allreduces;

/* 1: every rank holds every row (load): nothing is summed over ranks. */
static int whole;

/* The first of this rank's rows that thread t of nt works on (the
 * calling thread's share: t = omp_get_thread_num() in push and apply). */
static int64_t share(const loom_lasso *l, int t, int nt)
{
    return l->n * t / nt;
}

static void push(long j, double *partial, void *ctx)
{
    const loom_lasso *l = ((struct run *)ctx)->l;
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    partial[0] = loom_lasso_dot_rows(l, j, share(l, t, nt), share(l, t + 1, nt));
    if (t == 0)
        ((struct run *)ctx)->pushed = 1;
}

static double pull(long j, const double *sum, void *ctx)
{
    struct run *u = ctx;
    double d = u->delta[j] = loom_lasso_decide(u->l, j, sum[0], u->lambda);
    u->updates++;
    allreduces += u->pushed && loom_size() > 1 && !whole;
    u->pushed = 0;
    loom_report_tick(1);
    return u->uniform ? 1.0 : d;
}

static void apply(long j, void *ctx)
{
    struct run *u = ctx;
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    loom_lasso_residual_rows(u->l, j, u->delta[j], share(u->l, t, nt), share(u->l, t + 1, nt));
}

static int conflict(long a, long b, void *ctx)
{
    return loom_lasso_corr_conflict(((struct run *)ctx)->corr, a, b);
}

/* ---- the program ------------------------------------------------------------ */

/* Sums v[0..n) over the ranks' rows in place; aborts the job if that
 * fails. */
static void sum_all(double *v, size_t n)
{
    int rc = 0;
    if (loom_size() > 1 && !whole) {
        allreduces++;
        rc = loom_allreduce(LOOM_IN_PLACE, v, n, LOOM_DOUBLE, LOOM_SUM);
    }
    if (rc)
        loom_abort(1, "loom-lasso: allreduce: %s", loom_strerror(rc));
}

/* Objective, and (when xtr is not NULL) the duality gap: one allreduce of
 * the p gradient entries and three sums. */
static double evaluate(const loom_lasso *l, double lambda, double *xtr, double *gap)
{
    size_t p = (size_t)l->p;
    double *s = xtr ? xtr + p : (double[3]){0};
    loom_lasso_sums_local(l, s);
    if (xtr)
        loom_lasso_xtv_local(l, l->r, xtr);
    sum_all(xtr ? xtr : s, xtr ? p + 3 : 3);
    *gap = NAN;
    if (xtr) {
        double m = 0;
        for (size_t j = 0; j < p; j++)
            m = fmax(m, fabs(xtr[j]));
        *gap = loom_lasso_gap(l, s[0], s[1], m, lambda);
    }
    return loom_lasso_objective(l, s[0], lambda);
}

/* ---- the working-set solver -------------------------------------------------- */

/* The working set: the columns the subproblem is solved on, grown from the
 * gradient g = Xᵀr (celer's and blitz's outer loop, glmnet's active set
 * with covariance updates).  Every rank holds the same set, Gram matrix
 * and β; an iteration costs one allreduce of the new Gram rows (none when
 * the set did not grow) and evaluate's one of g, whatever the ranks. */
struct ws {
    int64_t *set;        /* p: the columns, in the order they joined (checkpointed) */
    int64_t n;           /* columns in the set */
    int64_t built;       /* of which G holds the rows */
    int64_t ld;          /* G's stride */
    double *G;           /* ld x ld: G[a*ld + b] = x_{set[a]}ᵀ x_{set[b]}, all rows */
    double *b, *q;       /* ld: the subproblem's β and X_Wᵀr */
    unsigned char *in;   /* p: 1 for a column in the set */
    unsigned char *scr;  /* p: screened at this iteration (gap-safe) */
    unsigned char *skip; /* ld: scr by position in the set */
    int64_t *cand;       /* p: scratch, the columns that may join */
    int64_t screened;    /* columns screened at the last iteration */
    int64_t passes;      /* passes over the set, in all */
    int64_t extrap;      /* Anderson extrapolations taken, in all */
};

/* Columns the set starts with, and at least adds at a time (celer's 10). */
enum { WS_MIN = 16, WS_PASSES = 10000, WS_VALUES = 1 << 20 };

static const double *sort_key;

static int by_key(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    double ka = sort_key[a], kb = sort_key[b];
    return ka > kb ? -1 : ka < kb ? 1 : (a > b) - (a < b);
}

/* Allocates *w for p columns; aborts the job without memory. */
static void ws_init(struct ws *w, int64_t p)
{
    *w = (struct ws){.set = malloc((size_t)p * sizeof *w->set),
                     .in = calloc((size_t)p, 1), .scr = calloc((size_t)p, 1),
                     .cand = malloc((size_t)p * sizeof *w->cand)};
    if (!w->set || !w->in || !w->scr || !w->cand)
        loom_abort(1, "loom-lasso: out of memory");
}

static void ws_free(struct ws *w)
{
    free(w->set), free(w->in), free(w->scr), free(w->cand);
    free(w->G), free(w->b), free(w->q), free(w->skip);
}

/* One outer step at λ from g = Xᵀr (all rows; g[p], g[p+1] = Σr², Σr·y),
 * whose duality gap is gap: gap-safe screening (column j is 0 at the
 * optimum when |x_jᵀθ| + ‖x_j‖ √(2 gap) < λ, θ the scaled residual);
 * the set grows by the columns that violate |g_j| ≤ λ, unscreened, the
 * most violating first (by |g_j| / ‖x_j‖), at most max(WS_MIN, its size)
 * of them; their Gram rows are summed over ranks (one allreduce); the
 * subproblem is solved to a gap of eps; β and this rank's residual take
 * its result.  Collective; every rank computes the same.  Returns the
 * coordinate updates made. */
static int64_t ws_step(struct ws *w, loom_lasso *l, const double *g, double lambda, double gap,
                       double eps)
{
    int64_t p = l->p, nc = 0;
    double m = 0;
    for (int64_t j = 0; j < p; j++)
        m = fmax(m, fabs(g[j]));
    double sc = m > lambda ? lambda / m : 1, radius = sqrt(2 * fmax(gap, 0));
    w->screened = 0;
    for (int64_t j = 0; j < p; j++) {
        w->scr[j] = l->beta[j] == 0 && sc * fabs(g[j]) + sqrt(l->norm2[j]) * radius < lambda;
        w->screened += w->scr[j];
        if (!w->in[j] && !w->scr[j] && l->norm2[j] > 0 && fabs(g[j]) > lambda)
            w->cand[nc++] = j;
    }
    double *key = malloc((size_t)p * sizeof *key);
    if (!key)
        loom_abort(1, "loom-lasso: out of memory");
    for (int64_t c = 0; c < nc; c++)
        key[w->cand[c]] = fabs(g[w->cand[c]]) / sqrt(l->norm2[w->cand[c]]);
    sort_key = key;
    qsort(w->cand, (size_t)nc, sizeof *w->cand, by_key);
    free(key);
    int64_t add = w->n > WS_MIN ? w->n : WS_MIN;
    for (int64_t c = 0; c < nc && c < add; c++)
        w->in[w->cand[c]] = 1, w->set[w->n++] = w->cand[c];
    if (w->n > w->ld) { /* room for the new rows: a larger G, the old rows copied */
        int64_t ld = w->n > 2 * w->ld ? w->n : 2 * w->ld;
        double *G = malloc((size_t)ld * (size_t)ld * sizeof *G);
        double *b = malloc((size_t)ld * sizeof *b), *q = malloc((size_t)ld * sizeof *q);
        unsigned char *skip = malloc((size_t)ld);
        if (!G || !b || !q || !skip)
            loom_abort(1, "loom-lasso: out of memory for the Gram matrix of %lld columns",
                       (long long)w->n);
        for (int64_t a = 0; a < w->built; a++)
            memcpy(G + a * ld, w->G + a * w->ld, (size_t)w->built * sizeof *G);
        free(w->G), free(w->b), free(w->q), free(w->skip);
        w->G = G, w->b = b, w->q = q, w->skip = skip, w->ld = ld;
    }
    if (w->built < w->n) { /* the new rows, over every rank's rows: one allreduce */
        size_t lo = (size_t)w->built * (size_t)(w->built + 1) / 2;
        size_t hi = (size_t)w->n * (size_t)(w->n + 1) / 2;
        double *pack = malloc((hi - lo) * sizeof *pack);
        if (!pack || loom_lasso_gram_local(l, w->set, w->built, w->n, pack))
            loom_abort(1, "loom-lasso: out of memory for the Gram matrix of %lld columns",
                       (long long)w->n);
        sum_all(pack, hi - lo);
        for (int64_t a = w->built; a < w->n; a++)
            for (int64_t b = 0; b <= a; b++) {
                double v = pack[(size_t)a * (size_t)(a + 1) / 2 + (size_t)b - lo];
                w->G[a * w->ld + b] = w->G[b * w->ld + a] = v;
            }
        free(pack);
        w->built = w->n;
    }
    for (int64_t a = 0; a < w->n; a++) {
        int64_t j = w->set[a];
        w->b[a] = l->beta[j], w->q[a] = g[j], w->skip[a] = w->scr[j];
    }
    loom_lasso_sub sub = {.w = w->n, .ld = w->ld, .G = w->G, .b = w->b, .q = w->q,
                          .skip = w->skip, .rr = g[p]};
    int64_t updates = loom_lasso_sub_solve(&sub, lambda, eps, WS_PASSES);
    w->passes += sub.passes;
    w->extrap += sub.extrapolated;
    for (int64_t a = 0; a < w->n; a++) {
        int64_t j = w->set[a];
        double d = w->b[a] - l->beta[j];
        if (d != 0) {
            l->beta[j] = w->b[a];
            loom_lasso_residual_rows(l, j, d, 0, l->n);
        }
    }
    return updates;
}

/* --standardize: column means and spreads over every rank's rows, then
 * the columns and y standardized in place (lasso.h).  mean and scale get
 * p values, *ymean the mean of y.  Collective. */
static void standardize(loom_lasso *l, double *mean, double *scale, double *ymean)
{
    size_t p = (size_t)l->p;
    double *s = malloc((p + 1) * sizeof *s);
    if (!s)
        loom_abort(1, "loom-lasso: out of memory");
    loom_lasso_sums_x_local(l, s);
    sum_all(s, p + 1);
    double N = (double)l->ntotal;
    for (size_t j = 0; j < p; j++)
        mean[j] = s[j] / N;
    *ymean = s[p] / N;
    loom_lasso_spread_local(l, mean, s);
    sum_all(s, p);
    for (size_t j = 0; j < p; j++)
        scale[j] = sqrt(s[j] / N);
    free(s);
    if (loom_lasso_standardize(l, mean, scale, *ymean))
        loom_abort(1, "loom-lasso: out of memory for %lld x %lld standardized values",
                   (long long)l->n, (long long)l->p);
}

/* The intercept in the original units: ȳ − Σ_j (β_j / scale_j) mean_j. */
static double intercept(const loom_lasso *l, const double *mean, const double *scale,
                        double ymean)
{
    double b0 = ymean;
    for (int64_t j = 0; j < l->p; j++)
        b0 -= (scale[j] > 0 ? l->beta[j] / scale[j] : 0) * mean[j];
    return b0;
}

/* Writes β in the original units (with --standardize: β_j / scale_j, then
 * the intercept) to path.  Returns 0 or -1 with errno set. */
static int save_model(const char *path, const loom_lasso *l, const double *mean,
                      const double *scale, double ymean)
{
    if (!mean)
        return loom_lasso_save(path, l->beta, l->p);
    double *b = malloc(((size_t)l->p + 1) * sizeof *b);
    if (!b)
        return -1;
    for (int64_t j = 0; j < l->p; j++)
        b[j] = scale[j] > 0 ? l->beta[j] / scale[j] : 0;
    b[l->p] = intercept(l, mean, scale, ymean);
    int rc = loom_lasso_save(path, b, l->p + 1);
    free(b);
    return rc;
}

/* Values a column (on average) below which the rows are not split. */
enum { SPLIT_MIN = 768 };

/* Loads this rank's rows; on failure the lowest failing rank prints its
 * message and every rank returns the error.  Without --batch, where the
 * rows hold under SPLIT_MIN values a column (on average), every rank
 * loads every row instead and sets `whole`: a window's allreduce then
 * costs more than the share of its sums it saves, whatever the number of
 * ranks (measured on 2-16 ranks: docs/loom-lasso.md, "Too small to
 * split").  Collective; every rank decides alike. */
static void load(const struct opts *o, loom_lasso *l)
{
    char err[1024] = "", msg[1200];
    loom_lasso_files f = {o->x, o->y, o->libsvm, o->zero_based};
    loom_rows share = {loom_rank(), loom_size()};
    for (;;) {
        int rc = loom_lasso_load(&f, &share, l, err, sizeof err);
        snprintf(msg, sizeof msg, "loom-lasso: %s", err);
        loom_report_agree(rc != LOOM_OK, msg);
        snprintf(msg, sizeof msg, "loom-lasso: %s has %s", o->libsvm ? o->libsvm : o->x,
                 !l->ntotal ? "no samples" : "no features (no column holds a value)");
        loom_report_agree(!l->ntotal || !l->p, msg);
        if (whole || share.parts == 1 || o->batch)
            return;
        double values = (double)l->colptr[l->p];
        sum_all(&values, 1);
        if (values / (double)l->p >= SPLIT_MIN)
            return;
        loom_lasso_free(l);
        whole = 1, share = (loom_rows){0, 1};
    }
}

int main(int argc, char **argv)
{
    struct opts o;
    if (loom_init(&argc, &argv))
        return 1;
    int rc = parse(argc, argv, &o); /* after loom_init: only rank 0 complains */
    if (rc) {
        loom_finalize();
        return rc < 0 ? 2 : 0;
    }
    if (o.serial && loom_size() > 1) {
        if (loom_rank() == 0)
            fprintf(stderr, "loom-lasso: --serial runs the serial twin on one rank, not %d\n",
                    loom_size());
        loom_finalize();
        return 2;
    }
    loom_lasso l;
    load(&o, &l); /* collective: bad or empty data ends the job with one message */
    int64_t p = l.p;
    double *mean = NULL, *scale = NULL, ymean = 0;
    if (o.standardize) {
        mean = malloc((size_t)p * sizeof *mean);
        scale = malloc((size_t)p * sizeof *scale);
        if (!mean || !scale)
            loom_abort(1, "loom-lasso: out of memory");
        standardize(&l, mean, scale, &ymean);
    }
    /* c_j and Xᵀy over every rank's rows; λ_max = max |Xᵀy|. */
    double *xtr = malloc((size_t)(p + 3) * sizeof *xtr);
    if (!xtr)
        loom_abort(1, "loom-lasso: out of memory");
    sum_all(l.norm2, (size_t)p);
    loom_lasso_xtv_local(&l, l.y, xtr);
    sum_all(xtr, (size_t)p);
    double lmax = 0;
    for (int64_t j = 0; j < p; j++)
        lmax = fmax(lmax, fabs(xtr[j]));
    loom_report_agree(!(lmax > 0), "loom-lasso: X'y is 0 (y is all zero, or constant with "
                      "--standardize): beta = 0 for every lambda, nothing to fit");
    double nz = (double)l.colptr[p], f0[3];
    sum_all(&nz, 1);
    loom_lasso_sums_local(&l, f0); /* F(0) = ½‖y‖², the yardstick of divergence */
    sum_all(f0, 3);

    /* Without --batch, a thread per 256 values of a column (this rank's
     * average), up to OMP's count: below that a thread's share of a window
     * costs less than the window's draws and barriers, and one rank then
     * runs one thread, one coordinate at a time (measured: docs/loom-lasso.md,
     * "Threads"). */
    if (!o.batch && !o.serial && !o.workset) {
        long fit = (long)(l.colptr[p] / p / 256), T = omp_get_max_threads();
        omp_set_num_threads((int)(fit < 1 ? 1 : fit < T ? fit : T));
    }
    /* The working set's threads share the gradient's and the Gram rows'
     * sums, between long serial solves: a thread per WS_VALUES values this
     * rank holds (on 569 x 495, 2 threads took twice the time of one:
     * docs/loom-lasso.md). */
    if (o.workset) {
        long fit = (long)(l.colptr[p] / WS_VALUES), T = omp_get_max_threads();
        omp_set_num_threads((int)(fit < 1 ? 1 : fit < T ? fit : T));
    }
    long L = o.batch ? o.batch : 8, C = o.candidates ? o.candidates : 2 * L;
    long rounds = o.rounds ? o.rounds : (long)((p + L - 1) / L);
    struct run u = {.l = &l, .uniform = !strcmp(o.select, "uniform"),
                    .delta = calloc((size_t)p, sizeof(double))};
    if (!u.delta)
        loom_abort(1, "loom-lasso: out of memory");
    /* The filter, unless off, or unused: on one rank with one thread the
     * schedule runs one coordinate at a time and asks no conflicts. */
    if (!o.serial && !o.workset && o.rho < 1 &&
        ((loom_size() > 1 && !whole) || omp_get_max_threads() > 1) &&
        !(u.corr = loom_lasso_corr_new(&l, o.rho_rows, o.rho, &rc)))
        loom_abort(1, "loom-lasso: the correlation sample of %ld rows: %s", o.rho_rows,
                   loom_strerror(rc));
    loom_priority pr = {.rounds = rounds, .candidates = C, .select = L, .eta = o.eta,
                        .width = 1, .seed = o.seed, .pipeline = (int)o.pipeline,
                        .push = push, .pull = pull, .apply = apply,
                        .conflict = u.corr ? conflict : NULL, .whole_data = whole};
    loom_for_opts fo = {.schedule = LOOM_PRIORITY, .priority = &pr};

    if (loom_rank() == 0) {
        printf("loom-lasso: %lld samples x %lld features, %.0f non-zeros, %d rank%s x %d "
               "thread%s; lambda_max %.6g; ",
               (long long)l.ntotal, (long long)p, nz, loom_size(), loom_size() > 1 ? "s" : "",
               omp_get_max_threads(), omp_get_max_threads() > 1 ? "s" : "", lmax);
        if (o.serial)
            printf("serial twin, %s order\n", o.serial);
        else if (o.workset)
            printf("working-set solver%s\n", o.standardize ? ", standardized" : "");
        else
            printf("%s selection, batch %ld of %ld candidates, rho %g, pipeline %ld, %ld rounds "
                   "per iteration%s\n",
                   o.select, L, C, o.rho, o.pipeline ? o.pipeline : 1, rounds,
                   o.standardize ? ", standardized" : "");
        if (whole)
            printf("loom-lasso: %.0f values a column, under %d, too few to split over the "
                   "ranks: every rank holds the whole problem and solves it alone, as one rank "
                   "would (--batch splits it anyway)\n", nz / (double)p, SPLIT_MIN);
        fflush(stdout);
    }
    char err[1024];
    loom_report *rep = loom_report_open("loom-lasso", o.log,
                                        "iter,updates,seconds,objective,nnz,lambda,gap", err,
                                        sizeof err);
    if (!rep) {
        fprintf(stderr, "loom-lasso: %s\n", err);
        loom_finalize();
        return 1;
    }

    long nl = o.path ? o.path : 1, iter = 0;
    int diverged = 0;
    double t0 = loom_wtime(), obj = NAN, gap = NAN;
    uint64_t rng = o.seed;
    /* Restartable (docs/checkpoint.md): a loom_clock per iteration, so
     * LOOM_CHECKPOINT_EVERY=N checkpoints every N; beta, this rank's
     * residual and where the path stands are kept in them (the priority
     * schedule keeps its weights itself), and a restart goes on from there. */
    struct { int64_t k, it, stop, updates, ws; double obj, gap; } at = {0};
    int back = 0;
    struct ws w = {0};
    if (o.workset)
        ws_init(&w, p);
    if (!o.serial && (loom_checkpoint_keep("loom-lasso beta", l.beta, (size_t)p * 8, &back) ||
                      loom_checkpoint_keep("loom-lasso residual", l.r, (size_t)l.n * 8, NULL) ||
                      loom_checkpoint_keep("loom-lasso path", &at, sizeof at, NULL) ||
                      (o.workset && loom_checkpoint_keep("loom-lasso working set", w.set,
                                                         (size_t)p * 8, NULL))))
        loom_abort(1, "loom-lasso: out of memory");
    iter = (long)loom_clock_now();
    long iter0 = iter;
    u.updates = at.updates;
    obj = back ? at.obj : obj;
    gap = back ? at.gap : gap;
    w.n = at.ws; /* a restart's set: its Gram is computed again, the same bits */
    for (int64_t a = 0; a < w.n; a++)
        w.in[w.set[a]] = 1;
    if (o.workset) /* g = Xᵀr and the sums: every iteration starts from them */
        evaluate(&l, 0, xtr, &gap);
    long setup = allreduces;
    for (long k = at.k; k < nl; k++) {
        double lambda = !o.path     ? o.lambda
                        : nl == 1   ? lmax * o.min_ratio
                                    : lmax * pow(o.min_ratio, (double)k / (double)(nl - 1));
        u.lambda = lambda;
        int resumed = back && k == at.k; /* beta, residual and weights came back */
        if (!resumed && !o.workset) { /* the working set keeps r and its g exact enough */
            pr.restart = 1; /* a new lambda: the old deltas say little */
            loom_lasso_residual(&l);
        }
        int stop = resumed ? (int)at.stop : 0;
        for (long it = resumed ? at.it : 0; it < o.iters && !stop; it++) {
            loom_report_begin(rep, ++iter, o.serial ? p : rounds * L);
            if (o.serial) {
                loom_lasso_pass(&l, lambda,
                                !strcmp(o.serial, "random") ? LOOM_LASSO_RANDOM
                                                            : LOOM_LASSO_CYCLIC,
                                &rng);
                u.updates += p;
            } else if (o.workset) {
                double m = 0;
                for (int64_t j = 0; j < p; j++)
                    m = fmax(m, fabs(xtr[j]));
                double g0 = loom_lasso_gap(&l, xtr[p], xtr[p + 1], m, lambda);
                double f = loom_lasso_objective(&l, xtr[p], lambda);
                /* celer's 0.3: each subproblem a little past the gap it starts from */
                u.updates += ws_step(&w, &l, xtr, lambda, g0, fmax(0.3 * g0, 0.3 * o.tol * f));
            } else if ((rc = loom_for(0, p, NULL, &u, &fo))) {
                loom_abort(1, "loom-lasso: loom_for: %s", loom_strerror(rc));
            }
            pr.restart = 0;
            obj = evaluate(&l, lambda, o.tol > 0 || o.workset ? xtr : NULL, &gap);
            loom_report_row(rep, (double[]){(double)iter, (double)u.updates,
                                            loom_wtime() - t0, obj,
                                            (double)loom_lasso_nnz(&l), lambda, gap});
            stop = (o.tol > 0 && gap <= o.tol * obj) || (o.have_target && obj <= o.target);
            if (!isfinite(obj) || obj > 10 * 0.5 * f0[2]) { /* every rank sees the same obj */
                if (loom_rank() == 0)
                    fprintf(stderr,
                            "loom-lasso: the objective diverged at iteration %ld (%.6g, more "
                            "than 10 times its value %.6g at beta = 0): coordinates updated "
                            "together interfere; lower --rho (now %g), --batch (now %ld) or "
                            "--pipeline (now %ld), or use --serial\n",
                            iter, obj, 0.5 * f0[2], o.rho, L, o.pipeline ? o.pipeline : 1);
                diverged = 1;
                break;
            }
            if (!o.serial) {
                at = (__typeof__(at)){k, it + 1, stop, u.updates, w.n, obj, gap};
                loom_clock(); /* LOOM_CHECKPOINT_EVERY=N: a checkpoint every N iterations */
            }
        }
        if (diverged)
            break;
        if (loom_rank() == 0) {
            printf("loom-lasso: lambda %.17g: objective %.17g, duality gap %.3g, %lld "
                   "non-zeros, %lld updates%s\n",
                   lambda, obj, gap, (long long)loom_lasso_nnz(&l), (long long)u.updates,
                   stop ? "" : " (stopped at --iters)");
            fflush(stdout);
        }
    }
    long iters = iter - iter0;
    if (loom_rank() == 0) {
        printf("loom-lasso: %ld allreduces in %ld iterations (%.3g an iteration), %ld more to "
               "set up\n", allreduces - setup, iters,
               iters ? (double)(allreduces - setup) / (double)iters : 0.0, setup);
        if (o.workset)
            printf("loom-lasso: working set of %lld columns, %lld screened at the last "
                   "iteration, %lld passes over the set, %lld extrapolated\n", (long long)w.n,
                   (long long)w.screened, (long long)w.passes, (long long)w.extrap);
    }
    if (u.corr && loom_rank() == 0)
        printf("loom-lasso: %lld column correlations computed for the filter, over %lld rows\n",
               (long long)loom_lasso_corr_computed(u.corr),
               (long long)loom_lasso_corr_rows(u.corr));
    rc = diverged ? 3 : 0;
    if (!diverged && o.standardize && loom_rank() == 0)
        printf("loom-lasso: intercept %.17g (coefficients in the original units: beta_j / "
               "scale_j; --model writes them)\n", intercept(&l, mean, scale, ymean));
    if (!diverged && o.model && loom_rank() == 0 && save_model(o.model, &l, mean, scale, ymean)) {
        fprintf(stderr, "loom-lasso: %s: %s\n", o.model, strerror(errno));
        rc = 1;
    }
    loom_report_close(rep);
    if (!diverged && loom_rank() == 0)
        printf("final objective=%.17g\n", obj);
    loom_lasso_corr_free(u.corr);
    ws_free(&w);
    loom_lasso_free(&l);
    free(u.delta);
    free(xtr);
    free(mean);
    free(scale);
    loom_finalize();
    return rc;
}
