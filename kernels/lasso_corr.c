/* lasso_corr.c — the correlation filter of seed 002 §3 (lasso.h): the
 * correlations between a round's candidate columns, computed over every
 * rank's rows with one allreduce and cached in an open-addressing table,
 * so that the priority schedule's conflict test gives the same answer on
 * every rank without any further message. */
#include "lasso.h"
#include "rng.h"

#include <loom.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct loom_lasso_corr {
    const loom_lasso *l;
    size_t mask;      /* slots - 1 */
    size_t used;
    uint64_t *key;    /* 0 = empty, else (j << 32 | k) + 1 with j < k */
    float *val;       /* |correlation| */
    int64_t computed;
    long *pj, *pk;    /* this round's missing pairs */
    double *dot;
    size_t cap;       /* of pj, pk, dot */
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
    free(c->key);
    free(c->val);
    c->key = key;
    c->val = val;
    c->mask = s - 1;
    c->used = 0;
    return LOOM_OK;
}

loom_lasso_corr *loom_lasso_corr_new(const loom_lasso *l, size_t slots)
{
    loom_lasso_corr *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->l = l;
    if (table(c, slots)) {
        free(c);
        return NULL;
    }
    return c;
}

void loom_lasso_corr_free(loom_lasso_corr *c)
{
    if (!c)
        return;
    free(c->key);
    free(c->val);
    free(c->pj);
    free(c->pk);
    free(c->dot);
    free(c);
}

double loom_lasso_corr_get(const loom_lasso_corr *c, long j, long k)
{
    size_t h = find(c, pair_key(j, k));
    return c->key[h] ? c->val[h] : -1.0;
}

int64_t loom_lasso_corr_computed(const loom_lasso_corr *c)
{
    return c->computed;
}

/* Lists the pairs among cand[0..n) that the table lacks; returns the
 * count, or -1 when out of memory. */
static long missing(loom_lasso_corr *c, const long *cand, long n)
{
    size_t all = (size_t)n * (size_t)(n > 0 ? n - 1 : 0) / 2;
    if (all > c->cap) {
        long *pj = realloc(c->pj, all * sizeof *pj), *pk;
        if (pj)
            c->pj = pj;
        pk = realloc(c->pk, all * sizeof *pk);
        if (pk)
            c->pk = pk;
        double *dot = realloc(c->dot, all * sizeof *dot);
        if (dot)
            c->dot = dot;
        if (!pj || !pk || !dot)
            return -1;
        c->cap = all;
    }
    long m = 0;
    for (long a = 0; a < n; a++)
        for (long b = a + 1; b < n; b++)
            if (!c->key[find(c, pair_key(cand[a], cand[b]))]) {
                c->pj[m] = cand[a];
                c->pk[m++] = cand[b];
            }
    return m;
}

int loom_lasso_corr_prepare(loom_lasso_corr *c, const long *cand, long n)
{
    long m = missing(c, cand, n);
    if (m < 0)
        return LOOM_ERR_NOMEM;
    if (m == 0)
        return LOOM_OK;
    /* Keep the table at most three quarters full.  A clear happens on every
     * rank at the same call, since every rank sees the same lists. */
    if (4 * (c->used + (size_t)m) > 3 * (c->mask + 1)) {
        size_t need = 2 * (size_t)n * (size_t)n;
        if (table(c, need > c->mask + 1 ? need : c->mask + 1))
            return LOOM_ERR_NOMEM;
        m = missing(c, cand, n);
    }
    const loom_lasso *l = c->l;
#pragma omp parallel for schedule(dynamic, 4) if (m > 16)
    for (long t = 0; t < m; t++)
        c->dot[t] = loom_lasso_cross_local(l, c->pj[t], c->pk[t]);
    if (loom_size() > 1) {
        int rc = loom_allreduce(LOOM_IN_PLACE, c->dot, (size_t)m, LOOM_DOUBLE, LOOM_SUM);
        if (rc)
            return rc;
    }
    for (long t = 0; t < m; t++) {
        double cj = l->norm2[c->pj[t]], ck = l->norm2[c->pk[t]];
        double r = cj > 0 && ck > 0 ? fabs(c->dot[t]) / sqrt(cj * ck) : 0.0;
        uint64_t key = pair_key(c->pj[t], c->pk[t]);
        size_t h = find(c, key);
        c->key[h] = key;
        c->val[h] = (float)r;
        c->used++;
    }
    c->computed += m;
    return LOOM_OK;
}
