/* lasso_dist.h — distributed Lasso by coordinate descent: the Loom version
 * of lasso.h's solver beside its serial twin.  apps/loom-lasso.c is the
 * command line around it (flags, the λ path's report, the model file);
 * docs/loom-lasso.md explains the distribution.
 *
 * Who holds what:
 *   - each rank holds every P-th row of X and y (and its residual r);
 *     a problem too small to split (without a batch: under
 *     LOOM_LASSO_SPLIT_MIN values a column) is held whole by every rank,
 *     and each solves it alone, as one rank would, exchanging nothing;
 *   - β is replicated: every rank computes the same updates;
 *   - the working-set solver (the default): an iteration sums the
 *     gradient Xᵀr over the ranks (the duality gap, gap-safe screening),
 *     grows the set by the most violating columns, sums their Gram rows
 *     over the ranks and solves the subproblem through the Gram matrix on
 *     every rank alike (lasso_ws.c): at most 2 allreduces an iteration;
 *   - the priority schedule (STRADS-Dynamic, seed 000 §5.1.2, seed 002
 *     §3): loom_for(LOOM_PRIORITY) draws candidate coordinates with
 *     probability ∝ δβ_j² + η (or uniformly), drops those correlated above
 *     ρ with one already in flight (lasso_corr.c), sums x_jᵀr over the
 *     ranks' rows (push) and applies the soft-threshold update on every
 *     rank (pull, then apply: a rank's threads split its rows);
 *   - the serial twin: loom_lasso_pass, cyclic or random, on one rank.
 * β, this rank's residual, the working set and the path's position
 * (loom_lasso_dist.at) are kept in checkpoints (loom_checkpoint_keep), so
 * a restarted job goes on from the last loom_clock.
 *
 * Every function is collective (all ranks, the same order and arguments)
 * unless it says otherwise. */
#ifndef LOOM_KERNELS_LASSO_DIST_H
#define LOOM_KERNELS_LASSO_DIST_H

#include <loom.h>
#include <stdint.h>

#include "lasso.h"

/* Values a column (on average) below which the rows are not split. */
enum { LOOM_LASSO_SPLIT_MIN = 768 };

typedef struct loom_lasso_dist_opts {
    const char *serial; /* NULL, or the serial twin's order: "cyclic", "random" */
    int workset;        /* 1: the working-set solver; 0: the priority schedule */
    int standardize;    /* centre and scale the columns and y first */
    int uniform;        /* the priority schedule draws uniformly (the baseline) */
    long batch;         /* coordinates a round (0: 8, and small problems held whole) */
    long candidates;    /* drawn a round (0: 2 x batch) */
    long pipeline;      /* rounds in flight (0: 1) */
    long rounds;        /* rounds an iteration (0: p / batch) */
    long rho_rows;      /* rows of the correlation sample */
    double rho;         /* the correlation filter's bound (>= 1: off) */
    double eta;         /* the draw's floor */
    double tol;         /* > 0: the duality gap is computed every iteration */
    uint64_t seed;
    void (*tick)(int64_t n); /* told of each coordinate update of the priority
                                schedule (loom_report_tick); NULL: nobody */
} loom_lasso_dist_opts;

/* Where the λ path stands: kept in the checkpoints. */
typedef struct loom_lasso_at {
    int64_t k, it, stop, updates, ws;
    double obj, gap;
} loom_lasso_at;

typedef struct loom_lasso_dist {
    loom_lasso l;
    loom_lasso_dist_opts o;
    int whole;        /* every rank holds every row: nothing is summed */
    long allreduces;  /* this rank has taken part in (one a window of the
                         priority schedule when the rows are split) */
    double lmax;      /* λ_max = max |Xᵀy| */
    double nz;        /* non-zeros of X, all ranks */
    double f0;        /* F(0) = ½‖y‖², the yardstick of divergence */
    double *mean, *scale, ymean; /* --standardize: the columns' and y's */
    long L, C, rounds;           /* the schedule's batch, candidates, rounds */
    int64_t updates;             /* coordinate updates, in all */
    int back;                    /* a restart: β, r and `at` came back */
    loom_lasso_at at;
    struct loom_lasso_dist_impl *impl;
} loom_lasso_dist;

/* Loads this rank's rows into d->l (files f).  Without a batch, where the
 * rows hold under LOOM_LASSO_SPLIT_MIN values a column (on average),
 * every rank loads every row instead and sets d->whole: a window's
 * allreduce then costs more than the share of its sums it saves, whatever
 * the number of ranks (docs/loom-lasso.md, "Too small to split").  A
 * failure (unreadable or malformed data, no samples, no features: `name`
 * names the data) goes through agree, which ends the job with one message
 * (the apps pass loom_report_agree). */
void loom_lasso_dist_load(loom_lasso_dist *d, const loom_lasso_files *f, const char *name,
                          long batch, void (*agree)(int failed, const char *msg));

/* After the load: standardizes (o->standardize), sums the column norms,
 * computes λ_max, the non-zeros and F(0).  d->lmax is 0 when Xᵀy is
 * (nothing to fit: the caller refuses it before loom_lasso_dist_start). */
void loom_lasso_dist_init(loom_lasso_dist *d, const loom_lasso_dist_opts *o);

/* Then: sets the threads (a thread per
 * 256 values of a column for the schedule, per 2^20 values held for the
 * working set, the serial twin and a batch untouched), builds the
 * correlation filter where the schedule asks conflicts, and registers the
 * checkpointed state (a restart fills β, r, d->at and sets d->back, and
 * the working set's Gram is computed again, the same bits); the working
 * set starts from the gradient Xᵀr. */
void loom_lasso_dist_start(loom_lasso_dist *d);

/* A new λ of the path: unless resumed, the priority schedule's weights
 * restart and the residual is recomputed (the working set keeps r and
 * its gradient). */
void loom_lasso_dist_lambda(loom_lasso_dist *d, int resumed);

/* The coordinate updates one iteration does on this rank (the progress
 * display's total).  Not collective. */
int64_t loom_lasso_dist_work(const loom_lasso_dist *d);

/* One iteration at λ: the serial twin's pass, a working-set step or a
 * loom_for of the priority schedule (a failure ends the job).  Then the
 * objective, returned, and into *gap the duality gap (NAN unless tol > 0
 * or the working set). */
double loom_lasso_dist_iterate(loom_lasso_dist *d, double lambda, double *gap);

/* The intercept in the original units: ȳ − Σ_j (β_j / scale_j) mean_j
 * (standardized only).  Not collective. */
double loom_lasso_dist_intercept(const loom_lasso_dist *d);

/* Writes β in the original units (standardized: β_j / scale_j, then the
 * intercept) to path.  Returns 0 or -1 with errno set.  Not collective. */
int loom_lasso_dist_save(const loom_lasso_dist *d, const char *path);

/* What the solver did, for the caller's summary.  Not collective. */
typedef struct loom_lasso_dist_stats {
    int64_t ws, screened, passes, extrap; /* the working set: columns, screened at the
                                             last iteration, passes, extrapolations */
    int corr;                             /* the correlation filter ran: */
    int64_t corr_computed, corr_rows;     /* its correlations, over its rows */
} loom_lasso_dist_stats;
void loom_lasso_dist_stats_get(const loom_lasso_dist *d, loom_lasso_dist_stats *s);

/* Frees everything d holds (β, the data, the filter, the set).  Not
 * collective. */
void loom_lasso_dist_free(loom_lasso_dist *d);

#endif
