/* lda_eval.c — how good an LDA model is: the collapsed training
 * log-likelihood log p(w, z) in parts that add up across shards and word
 * ranges, held-out perplexity by document completion, the top words of
 * each topic, and the best-match (Hungarian) mean Hellinger distance
 * between recovered and planted topics.  Contracts in lda.h; definitions
 * in docs/lda-kernel.md. */
#include "lda.h"
#include "loom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* log Gamma(x), reentrant (lgamma writes the global signgam). */
static inline double lgam(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

/* ---- training log-likelihood ---- */

double loom_lda_ll_docs(const loom_lda_shard *s)
{
    const double a = s->p.alpha, ka = s->p.K * a, lga = lgam(a), lgka = lgam(ka);
    double ll = 0;
    for (int32_t d = 0; d < s->n_docs; d++) {
        const loom_lda_tc *tc = s->dt + s->doc_off[d];
        double nd = (double)(s->doc_off[d + 1] - s->doc_off[d]);
        ll += lgka - lgam(nd + ka);
        for (int32_t q = 0; q < s->dt_len[d]; q++)
            ll += lgam(tc[q].count + a) - lga;
    }
    return ll;
}

double loom_lda_ll_words(const loom_lda_params *p, int32_t w_lo, int32_t w_hi,
                         const int32_t *rows, size_t stride)
{
    const double b = p->beta, lgb = lgam(b);
    double ll = 0;
    for (int32_t w = w_lo; w < w_hi; w++) {
        const int32_t *row = rows + (size_t)(w - w_lo) * stride;
        for (int32_t k = 0; k < p->K; k++)
            if (row[k] > 0)
                ll += lgam(row[k] + b) - lgb;
    }
    return ll;
}

double loom_lda_ll_topics(const loom_lda_params *p, const int64_t *nk)
{
    const double vb = p->V * p->beta, lgvb = lgam(vb);
    double ll = 0;
    for (int32_t k = 0; k < p->K; k++)
        ll += lgvb - lgam((double)nk[k] + vb);
    return ll;
}

double loom_lda_loglik(const loom_lda_shard *s, const int32_t *wt, const int64_t *nk)
{
    return loom_lda_ll_docs(s) + loom_lda_ll_words(&s->p, 0, s->p.V, wt, (size_t)s->p.K) +
           loom_lda_ll_topics(&s->p, nk);
}

/* ---- held-out perplexity: document completion ---- */

/* Scratch for one completion run. */
struct completion {
    const loom_lda_params *p;
    const int32_t *wt;
    size_t stride;
    double *inv;   /* [K] 1 / (n_k + V b) */
    double *cum;   /* [K] */
    double *theta; /* [K] accumulated theta */
    int32_t *nd;   /* [K] observed-token counts of the document */
    int32_t *z;    /* [longest document] */
};

/* Draw a topic for word w from (n_dk + a) phi_wk. */
static int32_t fold_draw(struct completion *c, int32_t w, loom_rng *rng)
{
    const int32_t K = c->p->K;
    const double a = c->p->alpha, b = c->p->beta;
    const int32_t *row = c->wt + (size_t)w * c->stride;
    double sum = 0;
    for (int32_t k = 0; k < K; k++) {
        sum += (c->nd[k] + a) * (row[k] + b) * c->inv[k];
        c->cum[k] = sum;
    }
    double u = loom_rng_uniform(rng) * sum;
    int32_t k = 0;
    while (k < K - 1 && c->cum[k] <= u)
        k++;
    return k;
}

/* Fold in the tokens w[0], w[step], w[2 step], ... of a document of n
 * tokens with the table fixed: Gibbs sweeps over their topics, c->theta
 * left as theta_dk = (mean n_dk over the second half of the sweeps + a) /
 * (tokens folded + K a).  Returns how many tokens were folded in. */
static int64_t fold_in(struct completion *c, const int32_t *w, int64_t n, int64_t step,
                       int32_t iters, loom_rng *rng)
{
    const int32_t K = c->p->K;
    const double a = c->p->alpha;
    int64_t n_obs = (n + step - 1) / step;
    memset(c->nd, 0, (size_t)K * sizeof *c->nd);
    memset(c->theta, 0, (size_t)K * sizeof *c->theta);
    for (int64_t i = 0; i < n_obs; i++) { /* sequential initialisation */
        c->z[i] = fold_draw(c, w[step * i], rng);
        c->nd[c->z[i]]++;
    }
    int32_t kept = 0;
    for (int32_t it = 1; it <= iters; it++) {
        for (int64_t i = 0; i < n_obs; i++) {
            c->nd[c->z[i]]--;
            c->z[i] = fold_draw(c, w[step * i], rng);
            c->nd[c->z[i]]++;
        }
        if (2 * it > iters) {
            for (int32_t k = 0; k < K; k++)
                c->theta[k] += c->nd[k];
            kept++;
        }
    }
    if (kept == 0) {
        for (int32_t k = 0; k < K; k++)
            c->theta[k] = c->nd[k];
        kept = 1;
    }
    for (int32_t k = 0; k < K; k++)
        c->theta[k] = (c->theta[k] / kept + a) / ((double)n_obs + K * a);
    return n_obs;
}

/* One test document w[0..n): fold in the even positions, score the odd
 * ones; adds to *ll and *n_eval. */
static void complete_doc(struct completion *c, const int32_t *w, int64_t n, int32_t iters,
                         loom_rng rng, double *ll, int64_t *n_eval)
{
    const int32_t K = c->p->K;
    const double b = c->p->beta;
    fold_in(c, w, n, 2, iters, &rng);
    for (int64_t i = 1; i < n; i += 2) {
        const int32_t *row = c->wt + (size_t)w[i] * c->stride;
        double pw = 0;
        for (int32_t k = 0; k < K; k++)
            pw += c->theta[k] * (row[k] + b) * c->inv[k];
        *ll += log(pw);
        ++*n_eval;
    }
}

/* The body of loom_lda_completion (theta == NULL) and loom_lda_fold_in
 * (theta != NULL: every token folded in, each document's theta stored). */
static int complete(const loom_lda_params *p, const int32_t *wt, size_t stride,
                    const int64_t *nk, int32_t n_docs, const int64_t *doc_off,
                    const int32_t *words, int64_t first_doc, int32_t iters, uint64_t seed,
                    double *loglik, int64_t *n_eval, double *theta)
{
    if (!p || p->K < 1 || p->V < 1 || !(p->alpha > 0) || !(p->beta > 0) || !wt ||
        stride < (size_t)p->K || !nk || n_docs < 0 || !doc_off || doc_off[0] != 0 ||
        iters < 0 || (!theta && (!loglik || !n_eval)))
        return LOOM_ERR_ARG;
    int64_t longest = 1;
    for (int32_t d = 0; d < n_docs; d++) {
        int64_t n = doc_off[d + 1] - doc_off[d];
        if (n < 0)
            return LOOM_ERR_ARG;
        longest = n > longest ? n : longest;
        for (int64_t j = doc_off[d]; j < doc_off[d + 1]; j++)
            if (words[j] < 0 || words[j] >= p->V)
                return LOOM_ERR_ARG;
    }
    const size_t K = (size_t)p->K;
    struct completion c = {
        .p = p, .wt = wt, .stride = stride,
        .inv = malloc(K * sizeof(double)), .cum = malloc(K * sizeof(double)),
        .theta = malloc(K * sizeof(double)), .nd = malloc(K * sizeof(int32_t)),
        .z = malloc((size_t)longest * sizeof(int32_t) + sizeof(int32_t)),
    };
    int err = LOOM_ERR_NOMEM;
    if (c.inv && c.cum && c.theta && c.nd && c.z) {
        for (size_t k = 0; k < K; k++)
            c.inv[k] = 1.0 / ((double)nk[k] + p->V * p->beta);
        if (!theta)
            *loglik = 0, *n_eval = 0;
        for (int32_t d = 0; d < n_docs; d++) {
            loom_rng rng = {loom_mix64(seed ^ loom_mix64((uint64_t)(first_doc + d)))};
            const int32_t *w = words + doc_off[d];
            int64_t n = doc_off[d + 1] - doc_off[d];
            if (!theta) {
                complete_doc(&c, w, n, iters, rng, loglik, n_eval);
                continue;
            }
            fold_in(&c, w, n, 1, iters, &rng);
            memcpy(theta + (size_t)d * K, c.theta, K * sizeof *theta);
        }
        err = LOOM_OK;
    }
    free(c.inv);
    free(c.cum);
    free(c.theta);
    free(c.nd);
    free(c.z);
    return err;
}

int loom_lda_completion(const loom_lda_params *p, const int32_t *wt, size_t stride,
                        const int64_t *nk, int32_t n_docs, const int64_t *doc_off,
                        const int32_t *words, int64_t first_doc, int32_t iters,
                        uint64_t seed, double *loglik, int64_t *n_eval)
{
    return complete(p, wt, stride, nk, n_docs, doc_off, words, first_doc, iters, seed,
                    loglik, n_eval, NULL);
}

int loom_lda_fold_in(const loom_lda_params *p, const int32_t *wt, size_t stride,
                     const int64_t *nk, int32_t n_docs, const int64_t *doc_off,
                     const int32_t *words, int64_t first_doc, int32_t iters, uint64_t seed,
                     double *theta)
{
    if (!theta)
        return LOOM_ERR_ARG;
    return complete(p, wt, stride, nk, n_docs, doc_off, words, first_doc, iters, seed, NULL,
                    NULL, theta);
}

double loom_lda_perplexity(const loom_lda_params *p, const int32_t *wt, size_t stride,
                           const int64_t *nk, int32_t n_docs, const int64_t *doc_off,
                           const int32_t *words, int32_t iters, uint64_t seed)
{
    double ll;
    int64_t n;
    if (loom_lda_completion(p, wt, stride, nk, n_docs, doc_off, words, 0, iters, seed, &ll,
                            &n) != LOOM_OK ||
        n == 0)
        return -1;
    return exp(-ll / (double)n);
}

/* ---- topics ---- */

void loom_lda_top_words(const loom_lda_params *p, const int32_t *wt, size_t stride,
                        int32_t n, int32_t *out)
{
    const int32_t K = p->K;
    if (n < 1)
        return;
    int32_t *cnt = calloc((size_t)K * (size_t)n, sizeof *cnt);
    for (size_t i = 0; i < (size_t)K * (size_t)n; i++)
        out[i] = -1;
    if (!cnt)
        return;
    for (int32_t w = 0; w < p->V; w++) {
        const int32_t *row = wt + (size_t)w * stride;
        for (int32_t k = 0; k < K; k++) {
            int32_t c = row[k], *tc = cnt + (size_t)k * n, *tw = out + (size_t)k * n;
            if (c <= tc[n - 1])
                continue;
            int32_t i = n - 1; /* strict comparison: an earlier word keeps its place */
            while (i > 0 && tc[i - 1] < c) {
                tc[i] = tc[i - 1];
                tw[i] = tw[i - 1];
                i--;
            }
            tc[i] = c;
            tw[i] = w;
        }
    }
    free(cnt);
}

void loom_lda_phi(const loom_lda_params *p, const int32_t *wt, size_t stride,
                  const int64_t *nk, double *phi)
{
    for (int32_t k = 0; k < p->K; k++) {
        double inv = 1.0 / ((double)nk[k] + p->V * p->beta);
        for (int32_t w = 0; w < p->V; w++)
            phi[(size_t)k * p->V + w] = (wt[(size_t)w * stride + k] + p->beta) * inv;
    }
}

double loom_lda_hellinger(const double *a, const double *b, int32_t V)
{
    double bc = 0;
    for (int32_t v = 0; v < V; v++)
        bc += sqrt(a[v] * b[v]);
    return bc >= 1 ? 0.0 : sqrt(1 - bc);
}

/* The assignment of rows 0..n-1 to distinct columns 0..m-1 (n <= m) of the
 * n x m matrix cost that minimises the total: the Hungarian algorithm with
 * potentials, O(n^2 m).  col[i] receives row i's column. */
static int hungarian(const double *cost, int32_t n, int32_t m, int32_t *col)
{
    double *u = calloc((size_t)n + 1, sizeof *u), *v = calloc((size_t)m + 1, sizeof *v),
           *minv = malloc(((size_t)m + 1) * sizeof *minv);
    int32_t *row_of = calloc((size_t)m + 1, sizeof *row_of),
            *way = calloc((size_t)m + 1, sizeof *way);
    char *used = malloc((size_t)m + 1);
    int err = LOOM_ERR_NOMEM;
    if (!u || !v || !minv || !row_of || !way || !used)
        goto out;
    /* 1-based: row_of[j] is the row (1..n) on column j, 0 for none */
    for (int32_t i = 1; i <= n; i++) {
        row_of[0] = i;
        int32_t j0 = 0;
        for (int32_t j = 0; j <= m; j++) {
            minv[j] = HUGE_VAL;
            used[j] = 0;
        }
        do {
            used[j0] = 1;
            int32_t i0 = row_of[j0], j1 = 0;
            double delta = HUGE_VAL;
            for (int32_t j = 1; j <= m; j++) {
                if (used[j])
                    continue;
                double cur = cost[(size_t)(i0 - 1) * m + (j - 1)] - u[i0] - v[j];
                if (cur < minv[j]) {
                    minv[j] = cur;
                    way[j] = j0;
                }
                if (minv[j] < delta) {
                    delta = minv[j];
                    j1 = j;
                }
            }
            for (int32_t j = 0; j <= m; j++) {
                if (used[j]) {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else
                    minv[j] -= delta;
            }
            j0 = j1;
        } while (row_of[j0] != 0);
        do {
            int32_t j1 = way[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
        } while (j0);
    }
    for (int32_t j = 1; j <= m; j++)
        if (row_of[j])
            col[row_of[j] - 1] = j - 1;
    err = LOOM_OK;
out:
    free(u);
    free(v);
    free(minv);
    free(row_of);
    free(way);
    free(used);
    return err;
}

double loom_lda_match_topics(const double *a, int32_t na, const double *b, int32_t nb,
                             int32_t V, int32_t *match)
{
    if (!a || !b || na < 1 || nb < 1 || V < 1)
        return -1;
    /* rows of the cost matrix are the smaller set */
    int swap = na > nb;
    int32_t n = swap ? nb : na, m = swap ? na : nb;
    double *cost = malloc((size_t)n * (size_t)m * sizeof *cost);
    int32_t *col = malloc((size_t)n * sizeof *col);
    double mean = -1;
    if (!cost || !col)
        goto out;
    for (int32_t i = 0; i < na; i++)
        for (int32_t j = 0; j < nb; j++) {
            double h = loom_lda_hellinger(a + (size_t)i * V, b + (size_t)j * V, V);
            if (swap)
                cost[(size_t)j * m + i] = h;
            else
                cost[(size_t)i * m + j] = h;
        }
    if (hungarian(cost, n, m, col) != LOOM_OK)
        goto out;
    if (match)
        for (int32_t i = 0; i < na; i++)
            match[i] = -1;
    mean = 0;
    for (int32_t r = 0; r < n; r++) {
        mean += cost[(size_t)r * m + col[r]];
        if (match) {
            if (swap)
                match[col[r]] = r;
            else
                match[r] = col[r];
        }
    }
    mean /= n;
out:
    free(cost);
    free(col);
    return mean;
}
