/* lasso.h — the Lasso kernel: coordinate descent for
 *     min_β  F(β) = ½‖y − Xβ‖² + λ‖β‖₁
 * (seed 000 §5.1.2, seed 002 §3), and its serial twin.
 *
 * The rows (samples) of X and y are split over ranks; a rank holds its rows
 * of X column by column (compressed sparse columns: a dense file is stored
 * the same way), its part of y and of the residual r = y − Xβ, and the
 * whole of β.  One coordinate update is
 *     z  = Σ_i x_ij r_i                    (summed over every rank's rows)
 *     β_j' = S(z + c_j β_j, λ) / c_j         c_j = ‖x_j‖², S the soft threshold
 *     r  −= x_j (β_j' − β_j)                 (each rank over its own rows)
 * which is exactly the priority schedule's push (the local sum) and pull
 * (the update) with an allreduce between (lasso_dist.c).  The serial
 * twin does the same on one rank, one coordinate at a time.
 *
 * Columns should be standardized (mean 0, Σ_i x_ij² = N) for the
 * correlation filter to mean what seed 002 says, but the update is exact
 * for any columns.  Functions named _local compute over this rank's rows
 * only; the caller sums them over ranks. */
#ifndef LOOM_KERNELS_LASSO_H
#define LOOM_KERNELS_LASSO_H

#include <stddef.h>
#include <stdint.h>

#include "../data/lines.h"

typedef struct loom_lasso {
    int64_t n;        /* rows held by this rank */
    int64_t ntotal;   /* rows in the whole data set */
    int64_t p;        /* columns (coordinates) */
    int64_t *colptr;  /* p + 1: column j is [colptr[j], colptr[j+1]) */
    int32_t *row;     /* local row of each value, increasing in a column */
    double *val;      /* the values */
    double *y;        /* n: this rank's responses */
    double *r;        /* n: this rank's part of the residual y − Xβ */
    double *beta;     /* p: the model, the same on every rank */
    double *norm2;    /* p: c_j = ‖x_j‖² over every rank's rows (set by the
                         caller: loom_lasso_norms_local, then a sum) */
    int spread;       /* ranks the rows are spread over: loom_lasso_load's
                         share's parts (1: this rank holds them all); 0, as
                         loom_lasso_build leaves it: loom_size() */
} loom_lasso;

/* Where X and y come from: MatrixMarket files (x_path and y_path), or one
 * LIBSVM file (libsvm_path; x_path and y_path NULL). */
typedef struct loom_lasso_files {
    const char *x_path, *y_path, *libsvm_path;
    int zero_based; /* the LIBSVM file's indices start at 0 */
} loom_lasso_files;

/* Loads this rank's share of the rows (lines.h's loom_rows; NULL keeps
 * all) into *l, with β = 0, r = y and norm2 = the local sums (see
 * loom_lasso_norms_local).  Duplicate coordinate entries are summed.
 * Returns LOOM_OK, or an error with "FILE:LINE: ..." (or "FILE: ...") in
 * err: a malformed line, y not a single column, y's rows not X's. */
int loom_lasso_load(const loom_lasso_files *f, const loom_rows *share, loom_lasso *l,
                    char *err, size_t errlen);

/* Builds *l from this rank's entries (local row, column, value) of an
 * n x p matrix, in any order (summing duplicates), and its n responses;
 * β = 0, r = y, norm2 local.  Returns LOOM_OK, LOOM_ERR_NOMEM or
 * LOOM_ERR_ARG (an index out of range). */
int loom_lasso_build(loom_lasso *l, int64_t n, int64_t ntotal, int64_t p, int64_t nnz,
                     const int64_t *rows, const int64_t *cols, const double *vals,
                     const double *y);

void loom_lasso_free(loom_lasso *l);

/* The soft threshold S(z, λ) = sign(z) max(|z| − λ, 0). */
static inline double loom_lasso_soft(double z, double lambda)
{
    return z > lambda ? z - lambda : z < -lambda ? z + lambda : 0.0;
}

/* Σ_i x_ij r_i over this rank's rows: the push of coordinate j. */
double loom_lasso_dot_local(const loom_lasso *l, int64_t j);

/* The pull of coordinate j: z is Σ_i x_ij r_i over all rows.  Sets
 * β_j = S(z + c_j β_j, λ) / c_j (0 when c_j = 0), takes the change out of
 * this rank's residual and returns it (β_j new − old). */
double loom_lasso_apply(loom_lasso *l, int64_t j, double z, double lambda);

/* The same two steps split, for a rank's threads that share a coordinate
 * by rows (lasso_dist.c): the push over local rows [lo, hi) only;
 * the update of β_j alone (returns the change; r untouched); and the
 * change taken out of the residual's rows [lo, hi).  Summed over a
 * partition of the rows, in order, the pieces are the whole: the residual
 * bitwise (each row updated once, the same product), the dot product up
 * to rounding. */
double loom_lasso_dot_rows(const loom_lasso *l, int64_t j, int64_t lo, int64_t hi);
double loom_lasso_decide(loom_lasso *l, int64_t j, double z, double lambda);
void loom_lasso_residual_rows(loom_lasso *l, int64_t j, double d, int64_t lo, int64_t hi);

/* The serial twin: one pass of p coordinate updates over the data this
 * rank holds (all of it, on one rank), in order 0..p-1 (cyclic) or in
 * p uniform random draws (*rng a SplitMix64 state).  Returns the largest
 * |change| of the pass. */
typedef enum loom_lasso_order { LOOM_LASSO_CYCLIC = 0, LOOM_LASSO_RANDOM } loom_lasso_order;
double loom_lasso_pass(loom_lasso *l, double lambda, loom_lasso_order order, uint64_t *rng);

/* norm2[j] = Σ_i x_ij² over this rank's rows, for every j. */
void loom_lasso_norms_local(loom_lasso *l);

/* g[j] = Σ_i x_ij v_i over this rank's rows, for every j (v = y gives
 * Xᵀy, whose largest |entry| over all rows is λ_max, the smallest λ with
 * β = 0; v = r gives the gradient used by the duality gap).  OpenMP. */
void loom_lasso_xtv_local(const loom_lasso *l, const double *v, double *g);

/* Standardizing (loom-lasso --standardize), over this rank's rows; the
 * caller sums each result over ranks before the next step:
 *   s[j] = Σ_i x_ij for every j, s[p] = Σ_i y_i       (loom_lasso_sums_x_local)
 *   s[j] = Σ_i (x_ij − mean[j])² for every j            (loom_lasso_spread_local)
 * then loom_lasso_standardize replaces column j by (x_j − mean[j]) / scale[j]
 * (a column with scale 0 by zeros) and y by y − ymean, with β = 0, r = y and
 * norm2 local again.  Centering fills a sparse column in: every standardized
 * column is stored densely.  Returns LOOM_OK or LOOM_ERR_NOMEM (then *l is
 * unchanged). */
void loom_lasso_sums_x_local(const loom_lasso *l, double *s);
void loom_lasso_spread_local(const loom_lasso *l, const double *mean, double *s);
int loom_lasso_standardize(loom_lasso *l, const double *mean, const double *scale, double ymean);

/* r = y − Xβ from scratch over this rank's rows (the incremental residual
 * drifts by rounding over many updates). */
void loom_lasso_residual(loom_lasso *l);

/* Σ_i x_ij x_ik over this rank's rows. */
double loom_lasso_cross_local(const loom_lasso *l, int64_t j, int64_t k);

/* ‖β‖₁ and the count of non-zero coordinates. */
double loom_lasso_l1(const loom_lasso *l);
int64_t loom_lasso_nnz(const loom_lasso *l);

/* Local sums for the objective and the duality gap: s[0] = Σ r_i²,
 * s[1] = Σ r_i y_i, s[2] = Σ y_i² over this rank's rows. */
void loom_lasso_sums_local(const loom_lasso *l, double s[3]);

/* F(β) from the summed ‖r‖². */
double loom_lasso_objective(const loom_lasso *l, double rr, double lambda);

/* The duality gap F(β) − D(θ) ≥ F(β) − F*, from the summed Σr², Σr·y and
 * max_j |x_jᵀr|, with the dual point θ = s·r, s = min(1, λ / max_j
 * |x_jᵀr|), D(θ) = θᵀy − ½‖θ‖². */
double loom_lasso_gap(const loom_lasso *l, double rr, double ry, double xtr_max, double lambda);

/* Writes β as text, one coordinate per line ("%.17g": reads back
 * exactly).  Returns 0, or -1 with errno set. */
int loom_lasso_save(const char *path, const double *beta, int64_t p);

/* The correlation filter of seed 002: coordinates j and k conflict when
 * their columns correlate above ρ: |x_jᵀx_k| / (‖x_j‖‖x_k‖) > ρ (for
 * standardized columns, |Pearson correlation| > ρ).  Estimated, as seed
 * 000 §5.1 allows, on a sample of rows every rank holds alike (the first
 * rows of each rank's share); exact when the sample is every row.  Pairs
 * are computed when first asked about and the answer remembered (up to
 * about 23 000 columns).  lasso_corr.c. */
typedef struct loom_lasso_corr loom_lasso_corr;

/* Takes the sample: about `rows` rows (0 or more than the data set: all
 * of them), split evenly over the ranks the rows are spread over (l's
 * spread), for the threshold rho.  Collective when they are more than one
 * (an allreduce of counts, a broadcast per rank of its entries).
 * LOOM_ERR_ARG above 2^32 rows or columns.  NULL with *rc set on failure
 * (LOOM_ERR_NOMEM or the allreduce's error). */
loom_lasso_corr *loom_lasso_corr_new(const loom_lasso *l, int64_t rows, double rho, int *rc);
void loom_lasso_corr_free(loom_lasso_corr *c);

/* Rows in the sample (rows rounded up to a multiple of the ranks). */
int64_t loom_lasso_corr_rows(const loom_lasso_corr *c);

/* The |correlation| of columns j and k (j != k) over the sample, rounded
 * to float, computed now.  The same on every rank.  Not thread-safe. */
double loom_lasso_corr_get(loom_lasso_corr *c, long j, long k);

/* Whether columns j and k (j != k) conflict: loom_lasso_corr_get > rho,
 * computed when first asked and then remembered (below about 23 000
 * columns; above, computed at every ask).  Not thread-safe. */
int loom_lasso_corr_conflict(loom_lasso_corr *c, long j, long k);

/* Correlations computed so far (with the memory, each pair at most once). */
int64_t loom_lasso_corr_computed(const loom_lasso_corr *c);

/* The working-set solver (lasso_ws.c; the outer loop is loom-lasso's).
 *
 * loom_lasso_gram_local: the rows [from, to) of the working set's Gram
 * matrix over this rank's rows, packed lower-triangular: out holds, for
 * a = from..to-1 and b = 0..a, Σ_i x_{i,set[a]} x_{i,set[b]} at
 * a(a+1)/2 + b − from(from+1)/2 (the caller sums them over ranks).  A
 * pair's value depends on its two columns and their positions only.
 * Returns LOOM_OK or LOOM_ERR_NOMEM (a scratch vector of n per thread).
 * OpenMP; any thread may call it outside a parallel region. */
int loom_lasso_gram_local(const loom_lasso *l, const int64_t *set, int64_t from, int64_t to,
                          double *out);

/* The subproblem on a working set W of w columns:
 *     min_b  ½‖ỹ − X_W b‖² + λ‖b‖₁,   ỹ = r + X_W β_W
 * through its Gram matrix G = X_WᵀX_W alone: q = X_Wᵀ(ỹ − X_W b) and
 * rr = ‖ỹ − X_W b‖² are kept current, an update of b_a costs O(w), and
 * no row of X is read, so every rank solves it alike from the same
 * summed G, q and rr without sending anything. */
typedef struct loom_lasso_sub {
    int64_t w;                 /* columns in the working set */
    int64_t ld;                /* G's row stride (>= w) */
    const double *G;           /* w x w, symmetric: row a at G + a*ld */
    double *b;                 /* w: β on W; in: the start, out: the result */
    double *q;                 /* w: in X_Wᵀr at the start, out at the result */
    const unsigned char *skip; /* w or NULL: columns proven 0 (screened), left at 0 */
    double rr;                 /* in: ‖r‖² at the start; out: at the result */
    double gap;                /* out: the subproblem's duality gap at the result */
    int64_t passes;            /* out: passes over W made */
    int64_t extrapolated;      /* in/out: Anderson steps taken, added to */
} loom_lasso_sub;

/* Cyclic coordinate descent on *s until its duality gap (dual point
 * θ = s·r, s = min(1, λ / max_a |q_a|)) is at most eps, a pass changes
 * nothing, or max_passes passes were made; every 5 passes an Anderson
 * extrapolation of the last 5 is taken where it lowers the objective
 * (without memory for its 7w values, plain passes).  Returns the coordinate
 * updates made.  Deterministic: the same inputs give the same bits. */
int64_t loom_lasso_sub_solve(loom_lasso_sub *s, double lambda, double eps, int64_t max_passes);

#endif
