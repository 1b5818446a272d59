/* gen_lasso.h — `loom-gen lasso`: a planted sparse regression problem
 * y = Xβ* + ε with k non-zero coefficients, written in both input formats
 * of loom-lasso (MatrixMarket X and y, LIBSVM) with the planted β*.  The
 * output is a function of the options and the seed only.  The model is
 * described in docs/loom-lasso.md. */
#ifndef LOOM_GEN_LASSO_H
#define LOOM_GEN_LASSO_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_gen_lasso_opts {
    int64_t samples;    /* n, the rows of X */
    int64_t features;   /* p, the columns of X */
    int64_t nonzeros;   /* k <= p planted non-zero coefficients */
    double noise;       /* standard deviation of ε */
    double correlation; /* c in [0, 1): column j = c·column j−1 + sqrt(1−c²)·fresh,
                           so columns j and k correlate about c^|j−k| (dense only) */
    double density;     /* in (0, 1]: the fraction of non-zero entries of X */
    uint64_t seed;
} loom_gen_lasso_opts;

typedef struct loom_gen_lasso_stats {
    int64_t nnz;        /* non-zero entries of X */
    double signal;      /* ‖Xβ*‖² */
    double noise;       /* ‖ε‖² */
} loom_gen_lasso_stats;

/* The defaults: noise 0.5, correlation 0, density 1, seed 1; sizes 0. */
void loom_gen_lasso_defaults(loom_gen_lasso_opts *o);

/* Writes PREFIX.X.mtx (MatrixMarket: "array" when density is 1, else
 * "coordinate"), PREFIX.y.mtx (an n x 1 array), PREFIX.svm (the same rows
 * in LIBSVM format) and PREFIX.beta.txt (β*, one coefficient per line).
 * Columns are standardized: a dense column has mean 0 and Σ x² = n; a
 * sparse one is only scaled to Σ x² = n (centering would fill it in).
 * Values are written "%.17g", so every reader gets the same doubles.
 * Fills *st when not NULL.  Returns LOOM_OK; LOOM_ERR_ARG with the reason
 * in err for bad options; LOOM_ERR_IO with "FILE: strerror";
 * LOOM_ERR_NOMEM. */
int loom_gen_lasso(const loom_gen_lasso_opts *o, const char *prefix, loom_gen_lasso_stats *st,
                   char *err, size_t errlen);

#endif
