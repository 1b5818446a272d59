/* lasso_corr.c — the correlation filter of seed 002 §3 (lasso.h).
 *
 * Every rank keeps the same sample of rows of X (seed 000 §5.1: "on large
 * data, it suffices to estimate the correlation with a data subsample"):
 * the first rows of each rank's share, gathered as (row, column, value)
 * entries when the filter is made, so the sample costs its non-zeros, not
 * rows x columns (1 024 x 10⁶ doubles would be 8 GB).  A pair's
 * correlation is then computed from the sample when the schedule first
 * asks for it, with no message.  Every rank computes the same value from
 * the same sample in the same order, so every rank's conflict test
 * answers alike.
 *
 * Most pairs the schedule asks about are new ones (a few rounds' random
 * draws out of p²/2 pairs: 92% on a 2000-column problem run to its
 * optimum), so the cost is the dot product and whatever remembers the
 * answer must cost less than a cache miss:
 *  - every column keeps the list of its non-zero rows and values, and a
 *    column with more than half its rows non-zero is also spread out
 *    (dense); a pair with a sparse column sums over that column's list
 *    only (the same terms in the same order as the dense sum, less exact
 *    zeros: the same value, bit for bit), against the other column spread
 *    into a scratch vector that stays in cache; two dense columns sum in
 *    four lanes;
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
    double *norm;     /* p: ‖sample column‖ */
    int64_t *nzptr;   /* p + 2: column j's non-zero rows, increasing, and values
                         are nzrow and nzval [nzptr[j], nzptr[j+1]) */
    uint32_t *nzrow;
    double *nzval;
    double *dense;    /* m per dense column, spread out */
    int64_t *slot;    /* p: a dense column's place in `dense`, else -1 */
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
    return 2 * (c->nzptr[j + 1] - c->nzptr[j]) <= c->m;
}

/* Column j spread out over the m sample rows: a dense column's own copy,
 * or for a sparse column the scratch vector with j's values spread in (the
 * last column spread there is wiped first).  The schedule asks about one candidate against every
 * coordinate in flight, so a candidate is spread once for all of them. */
static const double *dense_column(loom_lasso_corr *c, long j)
{
    if (!sparse(c, j))
        return c->dense + (size_t)c->slot[j] * (size_t)c->m;
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
    const double *b = dense_column(c, k);
    double s[4] = {0};
    int64_t i = 0;
    for (; i + 4 <= c->m; i += 4)
        for (int q = 0; q < 4; q++)
            s[q] += a[i + q] * b[i + q];
    for (; i < c->m; i++)
        s[0] += a[i] * b[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

/* One sample entry. */
struct entry {
    double val;
    uint32_t row, col;
};

/* Every rank's entries (rank r of P), rank by rank: each rank's count by
 * one allreduce, then each rank's block by one broadcast.  *all gets them
 * (the caller frees it), *n their number.  P = 1: just mine. */
static int gather(const struct entry *mine, int64_t nmine, int P, int r, struct entry **all,
                  int64_t *n)
{
    int rc = LOOM_OK;
    int64_t *count = calloc((size_t)P, sizeof *count);
    if (!count)
        return LOOM_ERR_NOMEM;
    count[r] = nmine;
    if (P > 1)
        rc = loom_allreduce(LOOM_IN_PLACE, count, (size_t)P, LOOM_INT64, LOOM_SUM);
    *n = 0;
    for (int q = 0; q < P; q++)
        *n += count[q];
    if (!rc && !(*all = malloc((size_t)(*n ? *n : 1) * sizeof **all)))
        rc = LOOM_ERR_NOMEM;
    struct entry *block = *all;
    for (int q = 0; !rc && q < P; block += count[q++]) {
        if (q == r)
            memcpy(block, mine, (size_t)nmine * sizeof *block);
        if (P > 1 && count[q])
            rc = loom_bcast(block, (size_t)count[q] * sizeof *block, q);
    }
    free(count);
    return rc;
}

/* The sample: rank r of the P the rows are spread over (l->spread)
 * contributes the first k = ceil(rows / P) of its rows (fewer if it has
 * fewer) as sample rows r*k .. r*k + k - 1.  Every
 * rank gets every entry, sorts them by column (rank by rank, so rows
 * increase within a column), spreads out the dense columns and takes the
 * norms, summing in row order as a dense sum would. */
static int take_sample(loom_lasso_corr *c, const loom_lasso *l, int64_t rows)
{
    int P = l->spread > 0 ? l->spread : loom_size(), r = P > 1 ? loom_rank() : 0;
    if (rows <= 0 || rows > l->ntotal)
        rows = l->ntotal;
    int64_t k = (rows + P - 1) / P, nmine = 0, n = 0;
    c->m = k * P;
    c->p = l->p;
    size_t m = (size_t)c->m, p = (size_t)c->p;
    if (c->m > UINT32_MAX || c->p > UINT32_MAX)
        return LOOM_ERR_ARG;
    for (size_t j = 0; j < p; j++)
        for (int64_t t = l->colptr[j]; t < l->colptr[j + 1] && l->row[t] < k; t++)
            nmine++;
    struct entry *mine = malloc((size_t)(nmine ? nmine : 1) * sizeof *mine), *all = NULL;
    if (!mine)
        return LOOM_ERR_NOMEM;
    nmine = 0;
    for (size_t j = 0; j < p; j++)
        for (int64_t t = l->colptr[j]; t < l->colptr[j + 1] && l->row[t] < k; t++)
            mine[nmine++] = (struct entry){l->val[t], (uint32_t)(r * k + l->row[t]), (uint32_t)j};
    int rc = gather(mine, nmine, P, r, &all, &n);
    free(mine);
    if (!rc && (!(c->nzptr = calloc(p + 2, sizeof *c->nzptr)) ||
                !(c->slot = malloc((p ? p : 1) * sizeof *c->slot)) ||
                !(c->norm = malloc((p ? p : 1) * sizeof *c->norm)) ||
                !(c->nzrow = malloc((size_t)(n ? n : 1) * sizeof *c->nzrow)) ||
                !(c->nzval = malloc((size_t)(n ? n : 1) * sizeof *c->nzval)) ||
                !(c->scratch = calloc(m ? m : 1, sizeof *c->scratch))))
        rc = LOOM_ERR_NOMEM;
    /* by column, in gathered order (rank by rank: rows increase within a
     * column): the counting sort of lasso.c's build_libsvm */
    for (int64_t e = 0; !rc && e < n; e++)
        c->nzptr[all[e].col + 2]++;
    for (size_t j = 0; !rc && j < p; j++)
        c->nzptr[j + 2] += c->nzptr[j + 1];
    for (int64_t e = 0; !rc && e < n; e++) {
        int64_t t = c->nzptr[all[e].col + 1]++;
        c->nzrow[t] = all[e].row;
        c->nzval[t] = all[e].val;
    }
    free(all);
    size_t ndense = 0;
    for (size_t j = 0; !rc && j < p; j++)
        c->slot[j] = sparse(c, (long)j) ? -1 : (int64_t)ndense++;
    if (!rc && !(c->dense = calloc(ndense * m + 1, sizeof *c->dense)))
        rc = LOOM_ERR_NOMEM;
    for (size_t j = 0; !rc && j < p; j++) { /* the norms, the dense columns */
        double s = 0;
        for (int64_t t = c->nzptr[j]; t < c->nzptr[j + 1]; t++) {
            s += c->nzval[t] * c->nzval[t];
            if (c->slot[j] >= 0)
                c->dense[(size_t)c->slot[j] * m + c->nzrow[t]] = c->nzval[t];
        }
        c->norm[j] = sqrt(s);
    }
    c->scattered = -1;
    return rc;
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
    free(c->dense);
    free(c->slot);
    free(c->norm);
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
