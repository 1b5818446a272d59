/* lasso_corr.c — the correlation filter of seed 002 §3 (lasso.h).
 *
 * Every rank keeps the same sample of rows of X (seed 000 §5.1: "on large
 * data, it suffices to estimate the correlation with a data subsample"):
 * the first rows of each rank's share, summed into one dense block with
 * one allreduce when the filter is made.  A pair's correlation is then
 * computed from the sample when the schedule first asks for it, with no
 * message, and kept in an open-addressing table that doubles when three
 * quarters full, so no pair is ever computed twice.  Every rank computes
 * the same value from the same sample in the same order, so every rank's
 * conflict test answers alike. */
#include "lasso.h"
#include "../data/rng.h"

#include <loom.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct loom_lasso_corr {
    int64_t m, p;     /* sample rows, columns */
    double *sample;   /* m x p, column-major */
    double *norm;     /* p: ‖sample column‖ */
    size_t mask;      /* slots - 1 */
    size_t used;
    uint64_t *key;    /* 0 = empty, else (j << 32 | k) + 1 with j < k */
    float *val;       /* |correlation| */
    int64_t computed;
};

static uint64_t pair_key(long j, long k)
{
    if (j > k) {
        long t = j;
        j = k;
        k = t;
    }
    return ((uint64_t)j << 32 | (uint64_t)k) + 1;
}

static size_t find(const loom_lasso_corr *c, uint64_t key)
{
    size_t h = (size_t)loom_mix64(key) & c->mask;
    while (c->key[h] && c->key[h] != key)
        h = (h + 1) & c->mask;
    return h;
}

/* Makes the table at least `slots` (a power of two, at least 64) and
 * moves every known pair into it: growing never forgets a pair. */
static int table(loom_lasso_corr *c, size_t slots)
{
    size_t s = 64;
    while (s < slots)
        s *= 2;
    uint64_t *key = calloc(s, sizeof *key);
    float *val = malloc(s * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return LOOM_ERR_NOMEM;
    }
    loom_lasso_corr old = *c;
    c->key = key;
    c->val = val;
    c->mask = s - 1;
    for (size_t h = 0; old.key && h <= old.mask; h++)
        if (old.key[h]) {
            size_t at = find(c, old.key[h]);
            c->key[at] = old.key[h];
            c->val[at] = old.val[h];
        }
    free(old.key);
    free(old.val);
    return LOOM_OK;
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
    return LOOM_OK;
}

loom_lasso_corr *loom_lasso_corr_new(const loom_lasso *l, int64_t rows, int *rc)
{
    loom_lasso_corr *c = calloc(1, sizeof *c);
    *rc = c ? table(c, 1024) : LOOM_ERR_NOMEM;
    if (!*rc)
        *rc = take_sample(c, l, rows);
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
    free(c->key);
    free(c->val);
    free(c);
}

int64_t loom_lasso_corr_rows(const loom_lasso_corr *c)
{
    return c->m;
}

double loom_lasso_corr_get(loom_lasso_corr *c, long j, long k)
{
    uint64_t key = pair_key(j, k);
    size_t h = find(c, key);
    if (c->key[h])
        return c->val[h];
    if (4 * (c->used + 1) > 3 * (c->mask + 1)) {
        if (table(c, 2 * (c->mask + 1)))
            return 1.0; /* no room to remember it: call them correlated */
        h = find(c, key);
    }
    const double *a = c->sample + (size_t)j * (size_t)c->m;
    const double *b = c->sample + (size_t)k * (size_t)c->m;
    double s = 0;
    for (int64_t i = 0; i < c->m; i++)
        s += a[i] * b[i];
    double den = c->norm[j] * c->norm[k];
    c->key[h] = key;
    c->val[h] = (float)(den > 0 ? fabs(s) / den : 0.0);
    c->used++;
    c->computed++;
    return c->val[h];
}

int64_t loom_lasso_corr_computed(const loom_lasso_corr *c)
{
    return c->computed;
}
