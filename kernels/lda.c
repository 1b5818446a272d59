/* lda.c — the LDA kernel's state and sampler: a worker's shard laid out
 * word-major, the exact collapsed Gibbs sampler over a word range
 * (F+tree word bucket + sparse doc bucket, or the dense O(K) reference),
 * the serial twin, the counts, and the word-rotation helpers.  The
 * evaluation measures are in lda_eval.c; lda.h has the contracts and
 * docs/lda-kernel.md the derivation.
 *
 * The conditional of a token of word w in document d, its own assignment
 * removed, is
 *     p(k) ∝ (n_dk + a) (n_wk + b) / (n_k + V b)
 *          = n_dk (n_wk + b) / (n_k + V b)      doc bucket: nonzero n_dk only
 *          + a (n_wk + b) / (n_k + V b)         word bucket: dense over k
 * Tokens are visited word by word, so the word bucket belongs to the word
 * being swept: it is built once per word into an F+tree (a binary sum tree
 * over the K terms; Yu et al., WWW 2015) and each move changes two of its
 * leaves, O(log K) each.  The doc bucket is computed fresh for every token
 * from the document's nonzero topics, kept in decreasing count order so
 * that the search for a draw stops early, O(K_d).  A draw costs O(K_d + log K)
 * plus the O(K) tree build shared by the word's tokens in the range. */
#include "lda.h"
#include "loom.h"

#include <stdlib.h>
#include <string.h>

/* The initial topic of token j of global document gdoc: a function of the
 * seed and the token's place in the corpus only (the first draw of a
 * stream started at a hash of the three, data/rng.h). */
static int32_t initial_topic(uint64_t seed, int64_t gdoc, int64_t j, int32_t K)
{
    loom_rng g = {loom_mix64(loom_mix64(seed ^ 0x6c64615f7a300000ULL) + loom_mix64((uint64_t)gdoc) +
                             (uint64_t)j * 0x9e3779b97f4a7c15ULL)};
    return (int32_t)loom_rng_below(&g, (uint32_t)K);
}

/* ---- the shard ---- */

static int params_ok(const loom_lda_params *p)
{
    return p && p->K >= 1 && p->V >= 1 && p->alpha > 0 && p->beta > 0 &&
           (p->sampler == LOOM_LDA_FTREE || p->sampler == LOOM_LDA_DENSE);
}

void loom_lda_shard_free(loom_lda_shard *s)
{
    if (!s)
        return;
    free(s->doc_off);
    free(s->word_id);
    free(s->word_off);
    free(s->tok_doc);
    free(s->tok_z);
    free(s->dt_len);
    free(s->dt);
    free(s->tree);
    free(s->inv);
    free(s->cum);
    free(s->nd);
    memset(s, 0, sizeof *s);
}

/* Group the tokens by word (a counting sort, stable, so each word's tokens
 * stay in document order) and give each its initial topic. */
static int build_word_major(loom_lda_shard *s, const int32_t *words)
{
    int32_t V = s->p.V;
    int64_t *at = calloc((size_t)V + 1, sizeof *at);
    if (!at)
        return LOOM_ERR_NOMEM;
    for (int64_t j = 0; j < s->n_tokens; j++)
        at[words[j] + 1]++;
    int32_t nw = 0;
    for (int32_t w = 0; w < V; w++)
        nw += at[w + 1] > 0;
    s->n_words = nw;
    s->word_id = malloc(((size_t)nw + 1) * sizeof *s->word_id);
    s->word_off = malloc(((size_t)nw + 1) * sizeof *s->word_off);
    if (!s->word_id || !s->word_off) {
        free(at);
        return LOOM_ERR_NOMEM;
    }
    int32_t i = 0;
    s->word_off[0] = 0;
    for (int32_t w = 0; w < V; w++) {
        if (at[w + 1] > 0) {
            s->word_id[i] = w;
            s->word_off[i + 1] = s->word_off[i] + at[w + 1];
            i++;
        }
        at[w + 1] += at[w]; /* at[w] becomes the first slot of word w */
    }
    for (int32_t d = 0; d < s->n_docs; d++)
        for (int64_t j = s->doc_off[d]; j < s->doc_off[d + 1]; j++) {
            int64_t slot = at[words[j]]++;
            s->tok_doc[slot] = d;
            s->tok_z[slot] = initial_topic(s->p.seed, s->first_doc + d, j - s->doc_off[d],
                                           s->p.K);
        }
    free(at);
    return LOOM_OK;
}

/* Order one document's list by decreasing count (ties by topic). */
static int by_count(const void *x, const void *y)
{
    const loom_lda_tc *a = x, *b = y;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return (a->topic > b->topic) - (a->topic < b->topic);
}

/* The doc-topic counts from the initial topics, one document at a time
 * through a dense K-array that only the touched entries are reset in;
 * each list sorted by decreasing count (see doc_dec below). */
static int build_doc_topics(loom_lda_shard *s)
{
    int32_t K = s->p.K;
    int32_t *cnt = calloc((size_t)K, sizeof *cnt);
    if (!cnt)
        return LOOM_ERR_NOMEM;
    for (int32_t d = 0; d < s->n_docs; d++) {
        loom_lda_tc *tc = s->dt + s->doc_off[d];
        int32_t len = 0;
        for (int64_t j = s->doc_off[d]; j < s->doc_off[d + 1]; j++) {
            int32_t k = initial_topic(s->p.seed, s->first_doc + d, j - s->doc_off[d], K);
            if (cnt[k]++ == 0)
                tc[len++].topic = k;
        }
        for (int32_t q = 0; q < len; q++) {
            tc[q].count = cnt[tc[q].topic];
            cnt[tc[q].topic] = 0;
        }
        qsort(tc, (size_t)len, sizeof *tc, by_count);
        s->dt_len[d] = len;
    }
    free(cnt);
    return LOOM_OK;
}

int loom_lda_shard_init(loom_lda_shard *s, const loom_lda_params *p, int32_t n_docs,
                        const int64_t *doc_off, const int32_t *words, int64_t first_doc,
                        uint64_t worker)
{
    if (!s)
        return LOOM_ERR_ARG;
    memset(s, 0, sizeof *s);
    if (!params_ok(p) || n_docs < 0 || !doc_off || doc_off[0] != 0 || first_doc < 0)
        return LOOM_ERR_ARG;
    for (int32_t d = 0; d < n_docs; d++)
        if (doc_off[d + 1] < doc_off[d])
            return LOOM_ERR_ARG;
    int64_t n = doc_off[n_docs];
    if (n > 0 && !words)
        return LOOM_ERR_ARG;
    for (int64_t j = 0; j < n; j++)
        if (words[j] < 0 || words[j] >= p->V)
            return LOOM_ERR_ARG;

    s->p = *p;
    s->n_docs = n_docs;
    s->first_doc = first_doc;
    s->n_tokens = n;
    s->kp = 1;
    while (s->kp < p->K)
        s->kp *= 2;
    size_t nt = n > 0 ? (size_t)n : 1;
    s->doc_off = malloc(((size_t)n_docs + 1) * sizeof *s->doc_off);
    s->tok_doc = malloc(nt * sizeof *s->tok_doc);
    s->tok_z = malloc(nt * sizeof *s->tok_z);
    s->dt_len = malloc(((size_t)n_docs + 1) * sizeof *s->dt_len);
    s->dt = malloc(nt * sizeof *s->dt);
    s->tree = calloc(2 * (size_t)s->kp, sizeof *s->tree);
    s->inv = malloc((size_t)p->K * sizeof *s->inv);
    s->cum = malloc((size_t)p->K * sizeof *s->cum);
    s->nd = calloc((size_t)p->K, sizeof *s->nd);
    int err = LOOM_ERR_NOMEM;
    if (!s->doc_off || !s->tok_doc || !s->tok_z || !s->dt_len || !s->dt || !s->tree ||
        !s->inv || !s->cum || !s->nd)
        goto fail;
    memcpy(s->doc_off, doc_off, ((size_t)n_docs + 1) * sizeof *s->doc_off);
    if ((err = build_word_major(s, words)) != LOOM_OK ||
        (err = build_doc_topics(s)) != LOOM_OK)
        goto fail;
    s->rng = (loom_rng){loom_mix64(p->seed ^ loom_mix64(worker ^ 0x776f726b65720000ULL))};
    return LOOM_OK;
fail:
    loom_lda_shard_free(s);
    return err;
}

void loom_lda_doc_topics(const loom_lda_shard *s, int32_t d, int32_t *out)
{
    memset(out, 0, (size_t)s->p.K * sizeof *out);
    const loom_lda_tc *tc = s->dt + s->doc_off[d];
    for (int32_t q = 0; q < s->dt_len[d]; q++)
        out[tc[q].topic] = tc[q].count;
}

int32_t loom_lda_first_word(const loom_lda_shard *s, int32_t w)
{
    int32_t lo = 0, hi = s->n_words;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->word_id[mid] < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int range_ok(const loom_lda_shard *s, int32_t w_lo, int32_t w_hi, const int32_t *rows,
                    size_t stride)
{
    return s && w_lo >= 0 && w_lo <= w_hi && w_hi <= s->p.V &&
           (rows || w_lo == w_hi) && stride >= (size_t)s->p.K;
}

int64_t loom_lda_count_range(const loom_lda_shard *s, int32_t w_lo, int32_t w_hi,
                             int32_t *rows, size_t stride, int64_t *nk)
{
    if (!range_ok(s, w_lo, w_hi, rows, stride))
        return -1;
    int32_t i0 = loom_lda_first_word(s, w_lo), i1 = loom_lda_first_word(s, w_hi);
    for (int32_t i = i0; i < i1; i++) {
        int32_t *row = rows + (size_t)(s->word_id[i] - w_lo) * stride;
        for (int64_t j = s->word_off[i]; j < s->word_off[i + 1]; j++) {
            row[s->tok_z[j]]++;
            if (nk)
                nk[s->tok_z[j]]++;
        }
    }
    return s->word_off[i1] - s->word_off[i0];
}

/* ---- the F+tree: tree[kp + k] is leaf k, tree[i] = tree[2i] + tree[2i+1] ---- */

/* Set leaf k to v and add the change to its ancestors.  The adds do not
 * depend on each other, so they pipeline (recomputing each ancestor from
 * its children would chain a store and a load per level); the rounding
 * they leave is bounded by the tokens of one word, since every word starts
 * from a fresh build, and tree_find tolerates it. */
static inline void tree_set(double *tree, int32_t kp, int32_t k, double v)
{
    int32_t i = kp + k;
    double d = v - tree[i];
    tree[i] = v;
    for (i >>= 1; i >= 1; i >>= 1)
        tree[i] += d;
}

/* The leaf where the running sum first exceeds u, for u in [0, tree[1]).
 * A right subtree whose sum is 0 (padding leaves, or u at the top edge
 * after rounding) is never entered. */
static inline int32_t tree_find(const double *tree, int32_t kp, double u)
{
    int32_t i = 1;
    while (i < kp) {
        int32_t l = 2 * i;
        if (u < tree[l] || tree[l + 1] <= 0)
            i = l;
        else {
            u -= tree[l];
            i = l + 1;
        }
    }
    return i - kp;
}

/* ---- doc-topic list edits ----
 *
 * A document's list is kept in decreasing count order (as in SparseLDA):
 * the doc bucket's mass sits in its first entries, so the search for a
 * draw usually stops early.  A count changes by one at a time, so an entry
 * only has to trade places with the first (increment) or last (decrement)
 * entry of its run of equal counts, found by binary search. */

static inline void tc_swap(loom_lda_tc *tc, int32_t i, int32_t j)
{
    loom_lda_tc x = tc[i];
    tc[i] = tc[j];
    tc[j] = x;
}

/* Take one from entry q of the list tc[0..*len); an entry that reaches
 * zero leaves the list. */
static inline void doc_dec(loom_lda_tc *tc, int32_t *len, int32_t q)
{
    int32_t c = tc[q].count, lo = q, hi = *len - 1;
    while (lo < hi) { /* the last entry with count >= c */
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (tc[mid].count >= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    tc_swap(tc, q, lo);
    if (--tc[lo].count == 0)
        --*len; /* the run of ones is the tail, so lo was the last entry */
}

/* Add one to topic k of the list tc[0..*len), appending it if absent. */
static inline void doc_inc(loom_lda_tc *tc, int32_t *len, int32_t k)
{
    int32_t q = 0;
    while (q < *len && tc[q].topic != k)
        q++;
    if (q == *len) {
        tc[q].topic = k;
        tc[q].count = 0;
        ++*len;
    }
    int32_t c = tc[q].count, lo = 0, hi = q;
    while (lo < hi) { /* the first entry with count <= c */
        int32_t mid = lo + (hi - lo) / 2;
        if (tc[mid].count <= c)
            hi = mid;
        else
            lo = mid + 1;
    }
    tc_swap(tc, q, lo);
    tc[lo].count++;
}

/* ---- the sweep over a word range ---- */

/* Tokens [word_off[i0], word_off[i1]) with the F+tree sampler.  The tree's
 * leaves hold r_k = (n_wk + b) / (n_k + V b) for the word being swept: the
 * word bucket is a * tree[1], and the doc bucket's terms are n_dk r_k, read
 * off the same leaves. */
static void sweep_ftree(loom_lda_shard *s, int32_t i0, int32_t i1, int32_t w_lo,
                        int32_t *rows, size_t stride, int64_t *nk, int64_t *delta)
{
    const int32_t K = s->p.K, kp = s->kp;
    const double a = s->p.alpha, inv_a = 1.0 / a, b = s->p.beta, vb = s->p.V * b;
    double *tree = s->tree, *leaf = s->tree + kp, *inv = s->inv, *cum = s->cum;
    for (int32_t i = i0; i < i1; i++) {
        int32_t *row = rows + (size_t)(s->word_id[i] - w_lo) * stride;
        for (int32_t k = 0; k < K; k++)
            leaf[k] = (row[k] + b) * inv[k];
        for (int32_t n = kp - 1; n >= 1; n--)
            tree[n] = tree[2 * n] + tree[2 * n + 1];
        for (int64_t j = s->word_off[i]; j < s->word_off[i + 1]; j++) {
            int32_t d = s->tok_doc[j], t = s->tok_z[j];
            loom_lda_tc *tc = s->dt + s->doc_off[d];
            int32_t *len = &s->dt_len[d];
            /* take the token out */
            row[t]--;
            nk[t]--;
            inv[t] = 1.0 / (nk[t] + vb);
            tree_set(tree, kp, t, (row[t] + b) * inv[t]);
            /* the doc bucket's terms, each independent of the others (four
             * partial sums: no chain of dependent adds), with t's count as
             * it was; then t's term corrected for the removal */
            const int32_t n = *len;
            int32_t qt = 0, q = 0;
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (; q + 4 <= n; q += 4) {
                s0 += cum[q] = tc[q].count * leaf[tc[q].topic];
                s1 += cum[q + 1] = tc[q + 1].count * leaf[tc[q + 1].topic];
                s2 += cum[q + 2] = tc[q + 2].count * leaf[tc[q + 2].topic];
                s3 += cum[q + 3] = tc[q + 3].count * leaf[tc[q + 3].topic];
                qt = tc[q].topic == t ? q : qt;
                qt = tc[q + 1].topic == t ? q + 1 : qt;
                qt = tc[q + 2].topic == t ? q + 2 : qt;
                qt = tc[q + 3].topic == t ? q + 3 : qt;
            }
            for (; q < n; q++) {
                s0 += cum[q] = tc[q].count * leaf[tc[q].topic];
                qt = tc[q].topic == t ? q : qt;
            }
            double sum = (s0 + s1) + (s2 + s3) - leaf[t];
            cum[qt] -= leaf[t];
            /* draw */
            double u = loom_rng_uniform(&s->rng) * (sum + a * tree[1]);
            int32_t k;
            if (u < sum) {
                double acc = cum[0];
                for (q = 0; acc <= u && q < n - 1;)
                    acc += cum[++q];
                k = tc[q].topic;
            } else
                k = tree_find(tree, kp, (u - sum) * inv_a);
            if (k != t) { /* the document's list: one from t, one to k */
                doc_dec(tc, len, qt);
                doc_inc(tc, len, k);
            }
            /* put it back */
            row[k]++;
            nk[k]++;
            inv[k] = 1.0 / (nk[k] + vb);
            tree_set(tree, kp, k, (row[k] + b) * inv[k]);
            s->tok_z[j] = k;
            if (delta && k != t) {
                delta[t]--;
                delta[k]++;
            }
        }
    }
}

/* The same tokens with the naive sampler: all K terms
 * (n_dk + a)(n_wk + b)/(n_k + V b), then a linear search. */
static void sweep_dense(loom_lda_shard *s, int32_t i0, int32_t i1, int32_t w_lo,
                        int32_t *rows, size_t stride, int64_t *nk, int64_t *delta)
{
    const int32_t K = s->p.K;
    const double a = s->p.alpha, b = s->p.beta, vb = s->p.V * b;
    double *cum = s->cum;
    int32_t *nd = s->nd;
    for (int32_t i = i0; i < i1; i++) {
        int32_t *row = rows + (size_t)(s->word_id[i] - w_lo) * stride;
        for (int64_t j = s->word_off[i]; j < s->word_off[i + 1]; j++) {
            int32_t d = s->tok_doc[j], t = s->tok_z[j];
            loom_lda_tc *tc = s->dt + s->doc_off[d];
            int32_t *len = &s->dt_len[d];
            int32_t qt = 0;
            for (int32_t q = 0; q < *len; q++) {
                nd[tc[q].topic] = tc[q].count;
                qt = tc[q].topic == t ? q : qt;
            }
            nd[t]--;
            row[t]--;
            nk[t]--;
            double sum = 0;
            for (int32_t k = 0; k < K; k++) {
                sum += (nd[k] + a) * (row[k] + b) / (nk[k] + vb);
                cum[k] = sum;
            }
            for (int32_t q = 0; q < *len; q++)
                nd[tc[q].topic] = 0;
            double u = loom_rng_uniform(&s->rng) * sum;
            int32_t k = 0;
            while (k < K - 1 && cum[k] <= u)
                k++;
            if (k != t) {
                doc_dec(tc, len, qt);
                doc_inc(tc, len, k);
            }
            row[k]++;
            nk[k]++;
            s->tok_z[j] = k;
            if (delta && k != t) {
                delta[t]--;
                delta[k]++;
            }
        }
    }
}

int64_t loom_lda_sample_range(loom_lda_shard *s, int32_t w_lo, int32_t w_hi,
                              int32_t *rows, size_t stride, int64_t *nk,
                              int64_t *nk_delta)
{
    if (!range_ok(s, w_lo, w_hi, rows, stride) || !nk)
        return -1;
    int32_t i0 = loom_lda_first_word(s, w_lo), i1 = loom_lda_first_word(s, w_hi);
    if (i0 == i1)
        return 0;
    double vb = s->p.V * s->p.beta;
    for (int32_t k = 0; k < s->p.K; k++)
        s->inv[k] = 1.0 / (nk[k] + vb);
    if (s->p.sampler == LOOM_LDA_DENSE)
        sweep_dense(s, i0, i1, w_lo, rows, stride, nk, nk_delta);
    else
        sweep_ftree(s, i0, i1, w_lo, rows, stride, nk, nk_delta);
    return s->word_off[i1] - s->word_off[i0];
}

int64_t loom_lda_sweep(loom_lda_shard *s, int32_t *wt, int64_t *nk)
{
    if (!s)
        return -1;
    return loom_lda_sample_range(s, 0, s->p.V, wt, (size_t)s->p.K, nk, NULL);
}

/* ---- rotation helpers ---- */

double loom_lda_s_error(const int64_t *nk_local, const int64_t *nk_true, int32_t K,
                        int64_t n_tokens)
{
    int64_t l1 = 0;
    for (int32_t k = 0; k < K; k++)
        l1 += llabs(nk_local[k] - nk_true[k]);
    return n_tokens > 0 ? (double)l1 / (double)n_tokens : 0.0;
}

void loom_lda_word_block(int32_t V, int32_t P, int32_t x, int32_t *w_lo, int32_t *w_hi)
{
    *w_lo = (int32_t)((int64_t)x * V / P);
    *w_hi = (int32_t)((int64_t)(x + 1) * V / P);
}

struct word_freq {
    int64_t f;
    int32_t w;
};

/* Decreasing frequency, then increasing id. */
static int by_freq(const void *x, const void *y)
{
    const struct word_freq *a = x, *b = y;
    if (a->f != b->f)
        return a->f > b->f ? -1 : 1;
    return (a->w > b->w) - (a->w < b->w);
}

/* A block's load for the min-heap of balance_words. */
struct block_load {
    int64_t load;
    int32_t x;
};

static int lighter(struct block_load a, struct block_load b)
{
    return a.load < b.load || (a.load == b.load && a.x < b.x);
}

/* Restore the heap property of h[0..n) below position i. */
static void sift_down(struct block_load *h, int32_t n, int32_t i)
{
    for (;;) {
        int32_t l = 2 * i + 1, m = i;
        if (l < n && lighter(h[l], h[m]))
            m = l;
        if (l + 1 < n && lighter(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        struct block_load t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

int loom_lda_balance_words(const int64_t *freq, int32_t V, int32_t P, int32_t *new_id)
{
    if (!freq || !new_id || V < 1 || P < 1)
        return LOOM_ERR_ARG;
    struct word_freq *order = malloc((size_t)V * sizeof *order);
    struct block_load *heap = malloc((size_t)P * sizeof *heap);
    int32_t *filled = calloc((size_t)P, sizeof *filled);
    if (!order || !heap || !filled) {
        free(order);
        free(heap);
        free(filled);
        return LOOM_ERR_NOMEM;
    }
    for (int32_t w = 0; w < V; w++)
        order[w] = (struct word_freq){freq[w], w};
    qsort(order, (size_t)V, sizeof *order, by_freq);
    /* longest-processing-time first: the next heaviest word goes to the
     * lightest block that still has a free id; full blocks leave the heap */
    int32_t n = 0;
    for (int32_t x = 0; x < P; x++) {
        int32_t lo, hi;
        loom_lda_word_block(V, P, x, &lo, &hi);
        if (hi > lo)
            heap[n++] = (struct block_load){0, x};
    }
    for (int32_t i = n / 2 - 1; i >= 0; i--)
        sift_down(heap, n, i);
    for (int32_t r = 0; r < V; r++) {
        int32_t x = heap[0].x, lo, hi;
        loom_lda_word_block(V, P, x, &lo, &hi);
        new_id[order[r].w] = lo + filled[x]++;
        heap[0].load += order[r].f;
        if (filled[x] == hi - lo)
            heap[0] = heap[--n];
        sift_down(heap, n, 0);
    }
    free(order);
    free(heap);
    free(filled);
    return LOOM_OK;
}
