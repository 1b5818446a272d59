/* lasso_corr.c — the correlation filter of seed 002 §3 (lasso.h).
 *
 * Every rank keeps the same sample of rows of X (seed 000 §5.1: "on large
 * data, it suffices to estimate the correlation with a data subsample"):
 * the first rows of each rank's share, summed into one dense block with
 * one allreduce when the filter is made.  A pair's correlation is then
 * computed from the sample when the schedule first asks for it, with no
 * message.  Every rank computes the same value from the same sample in
 * the same order, so every rank's conflict test answers alike.
 *
 * Most pairs the schedule asks about are new ones (a few rounds' random
 * draws out of p²/2 pairs: 92% on a 2000-column problem run to its
 * optimum), so the cost is the dot product and whatever remembers the
 * answer must cost less than a cache miss:
 *  - a column with at most half its sample rows non-zero keeps the list of
 *    those rows and values, and a pair with such a column sums over that
 *    list only (the same terms in the same order as the dense sum, less
 *    exact zeros: the same value, bit for bit), against the other column
 *    spread into a scratch vector that stays in cache; two dense columns
 *    sum in four lanes;
 *  - answers are remembered in two bits a pair (asked, conflicting), a
 *    quarter of a byte per pair: 0.5 MB for 2000 columns, and not at all
 *    above MEMO_BYTES (about 23 000 columns), where each ask computes. */
#include "lasso.h"

#include <loom.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct loom_lasso_corr {
    int64_t m, p;     /* sample rows, columns */
    double *sample;   /* m x p, column-major */
    double *norm;     /* p: ‖sample column‖ */
    int64_t *nnz;     /* p: non-zero sample rows of each column */
    int64_t *nzptr;   /* p + 1: a sparse column j's non-zero rows and values
                         are nzrow and nzval [nzptr[j], nzptr[j+1]) */
    int32_t *nzrow;
    double *nzval;
    double *scratch;  /* m: the sparse column `scattered`, spread out */
    long scattered;   /* -1: none */
    double rho;
    uint64_t *memo;   /* 2 bits a pair j < k at k(k-1)/2 + j: asked, conflicting;
                         NULL: too many columns, nothing remembered */
    int64_t computed;
};

enum { MEMO_BYTES = 64 << 20 };

/* A column is sparse when at most half its sample rows are non-zero. */
static int sparse(const loom_lasso_corr *c, long j)
{
    return 2 * c->nnz[j] <= c->m;
}

/* Counts each sample column's non-zero rows and lists them, with their
 * values, for the sparse columns. */
static int list_rows(loom_lasso_corr *c)
{
    size_t m = (size_t)c->m, p = (size_t)c->p, listed = 0;
    if (!(c->nnz = malloc((p ? p : 1) * sizeof *c->nnz)) ||
        !(c->nzptr = malloc((p + 1) * sizeof *c->nzptr)) ||
        !(c->scratch = calloc(m ? m : 1, sizeof *c->scratch)))
        return LOOM_ERR_NOMEM;
    for (size_t j = 0; j < p; j++) {
        const double *x = c->sample + j * m;
        int64_t k = 0;
        for (size_t i = 0; i < m; i++)
            k += x[i] != 0;
        c->nnz[j] = k;
        c->nzptr[j] = (int64_t)listed;
        listed += sparse(c, (long)j) ? (size_t)k : 0;
    }
    c->nzptr[p] = (int64_t)listed;
    if (!(c->nzrow = malloc((listed ? listed : 1) * sizeof *c->nzrow)) ||
        !(c->nzval = malloc((listed ? listed : 1) * sizeof *c->nzval)))
        return LOOM_ERR_NOMEM;
    for (size_t j = 0; j < p; j++) {
        const double *x = c->sample + j * m;
        int64_t t = c->nzptr[j];
        for (size_t i = 0; sparse(c, (long)j) && i < m; i++)
            if (x[i] != 0)
                c->nzrow[t] = (int32_t)i, c->nzval[t++] = x[i];
    }
    c->scattered = -1;
    return LOOM_OK;
}

/* Column j, dense: the sample's own column, or for a sparse column the
 * scratch vector with j's values spread in (the last column spread there
 * is wiped first).  The schedule asks about one candidate against every
 * coordinate in flight, so a candidate is spread once for all of them. */
static const double *dense_column(loom_lasso_corr *c, long j)
{
    if (!sparse(c, j))
        return c->sample + (size_t)j * (size_t)c->m;
    if (c->scattered != j) {
        for (int64_t t = c->scattered < 0 ? 0 : c->nzptr[c->scattered];
             c->scattered >= 0 && t < c->nzptr[c->scattered + 1]; t++)
            c->scratch[c->nzrow[t]] = 0;
        for (int64_t t = c->nzptr[j]; t < c->nzptr[j + 1]; t++)
            c->scratch[c->nzrow[t]] = c->nzval[t];
        c->scattered = j;
    }
    return c->scratch;
}

/* Σ_i sample_ij sample_ik.  With a sparse column, over its listed rows
 * only, against the other column dense: the terms of the dense sum in its
 * order, less exact zeros, so the same value bit for bit.  Two dense
 * columns sum in four lanes. */
static double dot(loom_lasso_corr *c, long j, long k)
{
    if (!sparse(c, k) && sparse(c, j)) {
        long t = j;
        j = k;
        k = t;
    }
    const double *a = dense_column(c, j);
    if (sparse(c, k)) {
        double s = 0;
        for (int64_t t = c->nzptr[k]; t < c->nzptr[k + 1]; t++)
            s += a[c->nzrow[t]] * c->nzval[t];
        return s;
    }
    const double *b = c->sample + (size_t)k * (size_t)c->m;
    double s[4] = {0};
    int64_t i = 0;
    for (; i + 4 <= c->m; i += 4)
        for (int q = 0; q < 4; q++)
            s[q] += a[i + q] * b[i + q];
    for (; i < c->m; i++)
        s[0] += a[i] * b[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

/* The sample: rank r of P puts the first k = ceil(rows / P) of its rows
 * (fewer if it has fewer) at sample rows r*k .. r*k + k - 1, zeros
 * elsewhere; the allreduce's sum is then every rank's rows, exactly. */
static int take_sample(loom_lasso_corr *c, const loom_lasso *l, int64_t rows)
{
    int P = loom_size(), r = loom_rank();
    if (rows <= 0 || rows > l->ntotal)
        rows = l->ntotal;
    int64_t k = (rows + P - 1) / P;
    c->m = k * P;
    c->p = l->p;
    size_t all = (size_t)c->m * (size_t)c->p;
    if (!(c->sample = calloc(all ? all : 1, sizeof *c->sample)) ||
        !(c->norm = malloc((size_t)(c->p ? c->p : 1) * sizeof *c->norm)))
        return LOOM_ERR_NOMEM;
    for (int64_t j = 0; j < l->p; j++)
        for (int64_t t = l->colptr[j]; t < l->colptr[j + 1] && l->row[t] < k; t++)
            c->sample[(size_t)j * (size_t)c->m + (size_t)(r * k + l->row[t])] = l->val[t];
    if (P > 1) {
        int rc = loom_allreduce(LOOM_IN_PLACE, c->sample, all, LOOM_DOUBLE, LOOM_SUM);
        if (rc)
            return rc;
    }
    for (int64_t j = 0; j < c->p; j++) {
        const double *x = c->sample + (size_t)j * (size_t)c->m;
        double s = 0;
        for (int64_t i = 0; i < c->m; i++)
            s += x[i] * x[i];
        c->norm[j] = sqrt(s);
    }
    return list_rows(c);
}

loom_lasso_corr *loom_lasso_corr_new(const loom_lasso *l, int64_t rows, double rho, int *rc)
{
    loom_lasso_corr *c = calloc(1, sizeof *c);
    *rc = c ? take_sample(c, l, rows) : LOOM_ERR_NOMEM;
    double pairs = (double)l->p * (double)(l->p - 1) / 2;
    if (!*rc && pairs / 4 <= MEMO_BYTES &&
        !(c->memo = calloc((size_t)(pairs / 32) + 1, sizeof *c->memo)))
        *rc = LOOM_ERR_NOMEM;
    if (c)
        c->rho = rho;
    if (*rc) {
        loom_lasso_corr_free(c);
        return NULL;
    }
    return c;
}

void loom_lasso_corr_free(loom_lasso_corr *c)
{
    if (!c)
        return;
    free(c->sample);
    free(c->norm);
    free(c->nnz);
    free(c->nzptr);
    free(c->nzrow);
    free(c->nzval);
    free(c->scratch);
    free(c->memo);
    free(c);
}

int64_t loom_lasso_corr_rows(const loom_lasso_corr *c)
{
    return c->m;
}

double loom_lasso_corr_get(loom_lasso_corr *c, long j, long k)
{
    double den = c->norm[j] * c->norm[k], s = dot(c, j, k);
    c->computed++;
    return (float)(den > 0 ? fabs(s) / den : 0.0);
}

int loom_lasso_corr_conflict(loom_lasso_corr *c, long j, long k)
{
    if (!c->memo)
        return loom_lasso_corr_get(c, j, k) > c->rho;
    size_t lo = (size_t)(j < k ? j : k), hi = (size_t)(j < k ? k : j);
    size_t bit = 2 * (hi * (hi - 1) / 2 + lo);
    uint64_t *w = c->memo + bit / 64, asked = 1ull << bit % 64;
    if (!(*w & asked))
        *w |= asked | (uint64_t)(loom_lasso_corr_get(c, j, k) > c->rho) << (bit % 64 + 1);
    return (int)(*w >> (bit % 64 + 1) & 1);
}

int64_t loom_lasso_corr_computed(const loom_lasso_corr *c)
{
    return c->computed;
}
