/* lasso_dist.c — distributed Lasso (lasso_dist.h): the priority
 * schedule's callbacks for loom_for, the working-set solver's outer step,
 * the sums over the ranks' rows, standardization, the split-or-whole
 * decision of the load, and the iteration beside its serial twin. */
#include "lasso_dist.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the priority schedule's callbacks ------------------------------------ */

struct run {
    loom_lasso_dist *d;
    loom_lasso *l;
    loom_lasso_corr *corr;
    double lambda;
    double *delta; /* p: each coordinate's last change, from pull to apply */
    int uniform;
    int64_t updates;
    int pushed; /* a window's pushes ran since its last pull: the next pull ends a window */
};

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
    /* one allreduce a window when the rows are split (sched/priority.c's
     * finish_window) */
    u->d->allreduces += u->pushed && loom_size() > 1 && !u->d->whole;
    u->pushed = 0;
    u->d->o.tick(1);
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

/* ---- sums over the ranks' rows ----------------------------------------------- */

/* Sums v[0..n) over the ranks' rows in place (nothing where every rank
 * holds them all); aborts the job if that fails. */
static void sum_all(loom_lasso_dist *d, double *v, size_t n)
{
    int rc = 0;
    if (loom_size() > 1 && !d->whole) {
        d->allreduces++;
        rc = loom_allreduce(LOOM_IN_PLACE, v, n, LOOM_DOUBLE, LOOM_SUM);
    }
    if (rc)
        loom_abort(1, "loom-lasso: allreduce: %s", loom_strerror(rc));
}

/* Objective, and (when xtr is not NULL) the duality gap: one allreduce of
 * the p gradient entries and three sums. */
static double evaluate(loom_lasso_dist *d, double lambda, double *xtr, double *gap)
{
    const loom_lasso *l = &d->l;
    size_t p = (size_t)l->p;
    double *s = xtr ? xtr + p : (double[3]){0};
    loom_lasso_sums_local(l, s);
    if (xtr)
        loom_lasso_xtv_local(l, l->r, xtr);
    sum_all(d, xtr ? xtr : s, xtr ? p + 3 : 3);
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
static int64_t ws_step(loom_lasso_dist *d, struct ws *w, const double *g, double lambda,
                       double gap, double eps)
{
    loom_lasso *l = &d->l;
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
        sum_all(d, pack, hi - lo);
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
static void standardize(loom_lasso_dist *d, double *mean, double *scale, double *ymean)
{
    loom_lasso *l = &d->l;
    size_t p = (size_t)l->p;
    double *s = malloc((p + 1) * sizeof *s);
    if (!s)
        loom_abort(1, "loom-lasso: out of memory");
    loom_lasso_sums_x_local(l, s);
    sum_all(d, s, p + 1);
    double N = (double)l->ntotal;
    for (size_t j = 0; j < p; j++)
        mean[j] = s[j] / N;
    *ymean = s[p] / N;
    loom_lasso_spread_local(l, mean, s);
    sum_all(d, s, p);
    for (size_t j = 0; j < p; j++)
        scale[j] = sqrt(s[j] / N);
    free(s);
    if (loom_lasso_standardize(l, mean, scale, *ymean))
        loom_abort(1, "loom-lasso: out of memory for %lld x %lld standardized values",
                   (long long)l->n, (long long)l->p);
}

/* Contract: lasso_dist.h. */
double loom_lasso_dist_intercept(const loom_lasso_dist *d)
{
    const loom_lasso *l = &d->l;
    const double *mean = d->mean, *scale = d->scale;
    double ymean = d->ymean;
    double b0 = ymean;
    for (int64_t j = 0; j < l->p; j++)
        b0 -= (scale[j] > 0 ? l->beta[j] / scale[j] : 0) * mean[j];
    return b0;
}

/* Contract: lasso_dist.h. */
int loom_lasso_dist_save(const loom_lasso_dist *d, const char *path)
{
    const loom_lasso *l = &d->l;
    const double *mean = d->mean, *scale = d->scale;
    if (!mean)
        return loom_lasso_save(path, l->beta, l->p);
    double *b = malloc(((size_t)l->p + 1) * sizeof *b);
    if (!b)
        return -1;
    for (int64_t j = 0; j < l->p; j++)
        b[j] = scale[j] > 0 ? l->beta[j] / scale[j] : 0;
    b[l->p] = loom_lasso_dist_intercept(d);
    int rc = loom_lasso_save(path, b, l->p + 1);
    free(b);
    return rc;
}


/* ---- the solver's life ----------------------------------------------------------- */

/* What the solver keeps beside the public record. */
struct loom_lasso_dist_impl {
    struct run u;
    loom_priority pr;
    loom_for_opts fo;
    struct ws w;
    double *xtr; /* p + 3: Xᵀr (Xᵀy at first), then the three sums */
    uint64_t rng; /* the serial twin's random order */
};

static void no_tick(int64_t n) { (void)n; }

/* Contract: lasso_dist.h.  Collective; every rank decides alike. */
void loom_lasso_dist_load(loom_lasso_dist *d, const loom_lasso_files *f, const char *name,
                          long batch, void (*agree)(int failed, const char *msg))
{
    char err[1024] = "", msg[1200];
    loom_lasso *l = &d->l;
    loom_rows share = {loom_rank(), loom_size()};
    for (;;) {
        int rc = loom_lasso_load(f, &share, l, err, sizeof err);
        snprintf(msg, sizeof msg, "loom-lasso: %s", err);
        agree(rc != LOOM_OK, msg);
        snprintf(msg, sizeof msg, "loom-lasso: %s has %s", name,
                 !l->ntotal ? "no samples" : "no features (no column holds a value)");
        agree(!l->ntotal || !l->p, msg);
        if (d->whole || share.parts == 1 || batch)
            return;
        double values = (double)l->colptr[l->p];
        sum_all(d, &values, 1);
        if (values / (double)l->p >= LOOM_LASSO_SPLIT_MIN)
            return;
        loom_lasso_free(l);
        d->whole = 1, share = (loom_rows){0, 1};
    }
}

/* Contract: lasso_dist.h.  c_j and Xᵀy over every rank's rows; λ_max =
 * max |Xᵀy|. */
void loom_lasso_dist_init(loom_lasso_dist *d, const loom_lasso_dist_opts *o)
{
    loom_lasso *l = &d->l;
    int64_t p = l->p;
    struct loom_lasso_dist_impl *x = calloc(1, sizeof *x);
    if (!x)
        loom_abort(1, "loom-lasso: out of memory");
    d->impl = x;
    d->o = *o;
    d->o.tick = o->tick ? o->tick : no_tick;
    if (o->standardize) {
        d->mean = malloc((size_t)p * sizeof *d->mean);
        d->scale = malloc((size_t)p * sizeof *d->scale);
        if (!d->mean || !d->scale)
            loom_abort(1, "loom-lasso: out of memory");
        standardize(d, d->mean, d->scale, &d->ymean);
    }
    double *xtr = x->xtr = malloc((size_t)(p + 3) * sizeof *xtr);
    if (!xtr)
        loom_abort(1, "loom-lasso: out of memory");
    sum_all(d, l->norm2, (size_t)p);
    loom_lasso_xtv_local(l, l->y, xtr);
    sum_all(d, xtr, (size_t)p);
    d->lmax = 0;
    for (int64_t j = 0; j < p; j++)
        d->lmax = fmax(d->lmax, fabs(xtr[j]));
    double f0[3];
    d->nz = (double)l->colptr[p];
    sum_all(d, &d->nz, 1);
    loom_lasso_sums_local(l, f0); /* F(0) = ½‖y‖², the yardstick of divergence */
    sum_all(d, f0, 3);
    d->f0 = 0.5 * f0[2];
}

/* Contract: lasso_dist.h. */
void loom_lasso_dist_start(loom_lasso_dist *d)
{
    struct loom_lasso_dist_impl *x = d->impl;
    const loom_lasso_dist_opts *o = &d->o;
    loom_lasso *l = &d->l;
    int64_t p = l->p;
    int rc;
    /* Without a batch, a thread per 256 values of a column (this rank's
     * average), up to OMP's count: below that a thread's share of a window
     * costs less than the window's draws and barriers, and one rank then
     * runs one thread, one coordinate at a time (measured: docs/loom-lasso.md,
     * "Threads"). */
    if (!o->batch && !o->serial && !o->workset) {
        long fit = (long)(l->colptr[p] / p / 256), T = omp_get_max_threads();
        omp_set_num_threads((int)(fit < 1 ? 1 : fit < T ? fit : T));
    }
    /* The working set's threads share the gradient's and the Gram rows'
     * sums, between long serial solves: a thread per WS_VALUES values this
     * rank holds (on 569 x 495, 2 threads took twice the time of one:
     * docs/loom-lasso.md). */
    if (o->workset) {
        long fit = (long)(l->colptr[p] / WS_VALUES), T = omp_get_max_threads();
        omp_set_num_threads((int)(fit < 1 ? 1 : fit < T ? fit : T));
    }
    d->L = o->batch ? o->batch : 8, d->C = o->candidates ? o->candidates : 2 * d->L;
    d->rounds = o->rounds ? o->rounds : (long)((p + d->L - 1) / d->L);
    struct run *u = &x->u;
    *u = (struct run){.d = d, .l = l, .uniform = o->uniform,
                      .delta = calloc((size_t)p, sizeof(double))};
    if (!u->delta)
        loom_abort(1, "loom-lasso: out of memory");
    /* The filter, unless off, or unused: on one rank with one thread the
     * schedule runs one coordinate at a time and asks no conflicts. */
    if (!o->serial && !o->workset && o->rho < 1 &&
        ((loom_size() > 1 && !d->whole) || omp_get_max_threads() > 1) &&
        !(u->corr = loom_lasso_corr_new(l, o->rho_rows, o->rho, &rc)))
        loom_abort(1, "loom-lasso: the correlation sample of %ld rows: %s", o->rho_rows,
                   loom_strerror(rc));
    x->pr = (loom_priority){.rounds = d->rounds, .candidates = d->C, .select = d->L,
                            .eta = o->eta, .width = 1, .seed = o->seed,
                            .pipeline = (int)o->pipeline, .push = push, .pull = pull,
                            .apply = apply, .conflict = u->corr ? conflict : NULL,
                            .whole_data = d->whole};
    x->fo = (loom_for_opts){.schedule = LOOM_PRIORITY, .priority = &x->pr};
    x->rng = o->seed;
    /* Restartable (docs/checkpoint.md): the caller's loom_clock per
     * iteration; beta, this rank's residual and where the path stands are
     * kept in them (the priority schedule keeps its weights itself). */
    struct ws *w = &x->w;
    if (o->workset)
        ws_init(w, p);
    if (!o->serial &&
        (loom_checkpoint_keep("loom-lasso beta", l->beta, (size_t)p * 8, &d->back) ||
         loom_checkpoint_keep("loom-lasso residual", l->r, (size_t)l->n * 8, NULL) ||
         loom_checkpoint_keep("loom-lasso path", &d->at, sizeof d->at, NULL) ||
         (o->workset &&
          loom_checkpoint_keep("loom-lasso working set", w->set, (size_t)p * 8, NULL))))
        loom_abort(1, "loom-lasso: out of memory");
    d->updates = d->at.updates;
    w->n = d->at.ws; /* a restart's set: its Gram is computed again, the same bits */
    for (int64_t a = 0; a < w->n; a++)
        w->in[w->set[a]] = 1;
    double gap;
    if (o->workset) /* g = Xᵀr and the sums: every iteration starts from them */
        evaluate(d, 0, x->xtr, &gap);
}

/* Contract: lasso_dist.h. */
void loom_lasso_dist_lambda(loom_lasso_dist *d, int resumed)
{
    if (!resumed && !d->o.workset) { /* the working set keeps r and its g exact enough */
        d->impl->pr.restart = 1; /* a new lambda: the old deltas say little */
        loom_lasso_residual(&d->l);
    }
}

/* Contract: lasso_dist.h: p for the serial twin, rounds x batch else. */
int64_t loom_lasso_dist_work(const loom_lasso_dist *d)
{
    return d->o.serial ? d->l.p : d->rounds * d->L;
}

/* Contract: lasso_dist.h. */
double loom_lasso_dist_iterate(loom_lasso_dist *d, double lambda, double *gap)
{
    struct loom_lasso_dist_impl *x = d->impl;
    const loom_lasso_dist_opts *o = &d->o;
    loom_lasso *l = &d->l;
    int64_t p = l->p;
    double *xtr = x->xtr;
    int rc;
    x->u.lambda = lambda;
    x->u.updates = d->updates;
    if (o->serial) {
        loom_lasso_pass(l, lambda,
                        !strcmp(o->serial, "random") ? LOOM_LASSO_RANDOM : LOOM_LASSO_CYCLIC,
                        &x->rng);
        x->u.updates += p;
    } else if (o->workset) {
        double m = 0;
        for (int64_t j = 0; j < p; j++)
            m = fmax(m, fabs(xtr[j]));
        double g0 = loom_lasso_gap(l, xtr[p], xtr[p + 1], m, lambda);
        double f = loom_lasso_objective(l, xtr[p], lambda);
        /* celer's 0.3: each subproblem a little past the gap it starts from */
        x->u.updates += ws_step(d, &x->w, xtr, lambda, g0, fmax(0.3 * g0, 0.3 * o->tol * f));
    } else if ((rc = loom_for(0, p, NULL, &x->u, &x->fo))) {
        loom_abort(1, "loom-lasso: loom_for: %s", loom_strerror(rc));
    }
    d->updates = x->u.updates;
    x->pr.restart = 0;
    double obj = evaluate(d, lambda, o->tol > 0 || o->workset ? xtr : NULL, gap);
    d->at.ws = x->w.n;
    return obj;
}

/* Contract: lasso_dist.h. */
void loom_lasso_dist_stats_get(const loom_lasso_dist *d, loom_lasso_dist_stats *s)
{
    const struct loom_lasso_dist_impl *x = d->impl;
    *s = (loom_lasso_dist_stats){.ws = x->w.n, .screened = x->w.screened,
                                 .passes = x->w.passes, .extrap = x->w.extrap,
                                 .corr = x->u.corr != NULL};
    if (x->u.corr) {
        s->corr_computed = loom_lasso_corr_computed(x->u.corr);
        s->corr_rows = loom_lasso_corr_rows(x->u.corr);
    }
}

/* Contract: lasso_dist.h.  Not collective (no Loom allocation). */
void loom_lasso_dist_free(loom_lasso_dist *d)
{
    struct loom_lasso_dist_impl *x = d->impl;
    if (x) {
        loom_lasso_corr_free(x->u.corr);
        ws_free(&x->w);
        free(x->u.delta);
        free(x->xtr);
        free(x);
    }
    loom_lasso_free(&d->l);
    free(d->mean);
    free(d->scale);
    d->impl = NULL;
}
