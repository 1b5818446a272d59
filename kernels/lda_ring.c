/* lda_ring.c — the LDA word rotation over ranks and threads (lda_ring.h),
 * and its serial twin.
 *
 * The rotation is loom_for_ring's (sched/ring_for.c): the word-topic table
 * is a ring allocation of V rows, cut into P = ranks x threads word
 * blocks; at every sub-step each worker samples its own document shard's
 * tokens of one block it holds alone (loom_lda_sample_range builds each
 * word's F+tree once and sweeps all of the word's tokens against it), and
 * over a round each worker meets every block once.  Why not
 * loom_for(LOOM_SERIALIZABLE): its plan wants an iteration per token
 * touching one row of each of two Loom row allocations — a call and a tree
 * per token and a dense n_docs x K doc-topic table (1.2 GB for NYTimes at
 * K = 1000) — while a document's topic counts are a sparse list inside the
 * worker's shard.  The stale per-worker topic sums, merged once per round
 * with loom_allreduce, stay here.  The vocabulary is relabelled
 * (loom_lda_balance_words) so the P blocks carry equal token counts, so
 * the sub-steps' barriers cost little.
 *
 * The serial twin is the plain serial sampler: loom_lda_sweep over one
 * shard holding every document, a malloc'd table and exact topic sums. */
#include "lda_ring.h"

#include <loom.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tokens per loom_lda_sample_range call: progress ticks at this grain. */
#define CHUNK_TOKENS 65536

struct loom_lda_ring {
    loom_lda_params p;
    int serial, forward;
    void (*tick)(int64_t n); /* progress (opts->tick), or NULL */
    int R, rank, T;
    uint64_t t;              /* sub-epochs so far (the ring's clock) */
    int64_t M;               /* tokens of the whole training corpus */
    int64_t rank_tokens;
    int32_t *wt;             /* V rows of K: ring allocation, or malloc'd (serial) */
    int32_t *new_id;         /* [V] relabelling (NULL: identity, serial) */
    loom_lda_shard *sh;      /* [T] */
    int64_t *nk;             /* [K] synced topic sums */
    size_t kpad;             /* per-worker stride of local/delta (64-byte multiple) */
    int64_t *local;          /* [T * kpad] each worker's copy of the sums */
    int64_t *delta;          /* [T * kpad] each worker's moves of this round */
    int64_t *sampled;        /* [T * 8] tokens sampled this round */
    /* held-out documents: this rank's workers' slices, relabelled */
    int32_t *test_n;         /* [T] documents */
    int64_t *test_first;     /* [T] global id of the first */
    int64_t **test_off;      /* [T][n + 1] */
    int32_t **test_words;    /* [T] */
};

static void *need(size_t n)
{
    void *x = calloc(n ? n : 1, 1);
    if (!x)
        loom_abort(1, "lda: out of memory (%zu bytes)", n);
    return x;
}

/* b[0..P]: the document boundaries of P blocks of about equal tokens
 * (loom_corpus_block), malloc'd. */
static int32_t *blocks(const loom_corpus *c, int P)
{
    int32_t *b = need(sizeof *b * ((size_t)P + 1));
    for (int w = 0; w <= P; w++)
        b[w] = loom_corpus_block(c, w, P);
    return b;
}

/* Documents [d0, d1) of c as a CSR slice with relabelled word ids. */
static void slice(const loom_corpus *c, const int32_t *new_id, int32_t d0, int32_t d1,
                  int64_t **off, int32_t **words)
{
    int64_t base = c->doc_off[d0], n = c->doc_off[d1] - base;
    *off = need(sizeof **off * ((size_t)(d1 - d0) + 1));
    *words = need(sizeof **words * (size_t)n);
    for (int32_t d = d0; d <= d1; d++)
        (*off)[d - d0] = c->doc_off[d] - base;
    for (int64_t j = 0; j < n; j++) {
        int32_t w = c->word[base + j];
        (*words)[j] = new_id ? new_id[w] : w;
    }
}

/* ---- the rotation ---- */

enum op { COUNT, SAMPLE };

static int64_t *local_of(loom_lda_ring *g, int i) { return g->local + (size_t)i * g->kpad; }
static int64_t *delta_of(loom_lda_ring *g, int i) { return g->delta + (size_t)i * g->kpad; }

/* What one pass does to each word block. */
struct pass {
    loom_lda_ring *g;
    enum op op;
    int forward; /* forward each finished row of a worker's last block */
};

/* Shard i's tokens of words [lo, hi), which its worker holds alone now:
 * counted into the table and into delta, or nk when delta is NULL (COUNT),
 * or sampled against the topic sums nk, recording moves in delta when not
 * NULL (SAMPLE); in chunks of about CHUNK_TOKENS tokens so that progress
 * ticks; with `forward`, each finished row goes to the ring successor at
 * once. */
static void sweep(loom_lda_ring *g, int i, int32_t lo, int32_t hi, enum op op, int64_t *nk,
                  int64_t *delta, int forward)
{
    loom_lda_shard *s = &g->sh[i];
    const size_t K = (size_t)g->p.K;
    int32_t x = loom_lda_first_word(s, lo), end = loom_lda_first_word(s, hi), w = lo;
    while (w < hi) { /* words [w, w2): the shard's words x .. y-1, about CHUNK_TOKENS tokens */
        int64_t tokens = 0;
        int32_t y = x;
        while (y < end && tokens < CHUNK_TOKENS) {
            tokens += s->word_off[y + 1] - s->word_off[y];
            y++;
        }
        int32_t w2 = y < end ? s->word_id[y] : hi;
        int32_t *rows = g->wt + (size_t)w * K;
        int64_t n = op == COUNT ? loom_lda_count_range(s, w, w2, rows, K, delta ? delta : nk)
                                : loom_lda_sample_range(s, w, w2, rows, K, nk, delta);
        if (n < 0)
            loom_abort(70, "lda: bad word range [%d, %d) (internal error)", (int)w, (int)w2);
        if (op == SAMPLE) {
            g->sampled[(size_t)i * 8] += n;
            if (g->tick)
                g->tick(n);
        }
        if (forward)
            loom_ring_done(g->wt, (size_t)w, (size_t)(w2 - w));
        x = y;
        w = w2;
    }
}

/* The loom_for_ring body: worker (this rank, b->thread) on its word block,
 * against its own copy of the sums. */
static void work(const loom_ring_block *b, void *ctx)
{
    const struct pass *ps = ctx;
    sweep(ps->g, b->thread, (int32_t)b->lo, (int32_t)b->hi, ps->op, local_of(ps->g, b->thread),
          delta_of(ps->g, b->thread), ps->forward && b->last);
}

/* One pass over every token: the rotation (loom_for_ring), or for the
 * serial twin the plain serial sampler, loom_lda_sweep's one shard over
 * the whole vocabulary with the exact sums (cut in chunks for progress:
 * the same draws). */
static void rotate_all(loom_lda_ring *g, enum op op)
{
    if (g->serial) {
        sweep(g, 0, 0, g->p.V, op, g->nk, NULL, 0);
        g->t++;
        return;
    }
    struct pass ps = {g, op, g->forward && g->R > 1 && op == SAMPLE};
    if (loom_for_ring(g->wt, g->p.V, work, &ps))
        loom_abort(70, "lda: loom_for_ring refused the word-topic table (internal error)");
    g->t += (uint64_t)g->R;
}

/* Sum the workers' deltas over ranks into the synced sums; the s-error of
 * the round; every worker restarts from the new sums.  Returns the tokens
 * sampled by all ranks. */
static int64_t merge(loom_lda_ring *g, double *s_error)
{
    const int32_t K = g->p.K;
    int64_t *sum = need(sizeof *sum * ((size_t)K + 1));
    for (int i = 0; i < g->T; i++) {
        for (int32_t k = 0; k < K; k++)
            sum[k] += g->serial ? 0 : delta_of(g, i)[k];
        sum[K] += g->sampled[(size_t)i * 8];
        g->sampled[(size_t)i * 8] = 0;
    }
    if (!g->serial && loom_allreduce(LOOM_IN_PLACE, sum, (size_t)K + 1, LOOM_INT64, LOOM_SUM))
        loom_abort(1, "lda: allreduce of the topic sums failed");
    for (int32_t k = 0; k < K && !g->serial; k++)
        g->nk[k] += sum[k];
    double e = 0;
    for (int i = 0; i < g->T && !g->serial; i++) {
        e += loom_lda_s_error(local_of(g, i), g->nk, K, g->M);
        memcpy(local_of(g, i), g->nk, sizeof *g->nk * (size_t)K);
        memset(delta_of(g, i), 0, sizeof *g->nk * (size_t)K);
    }
    if (!g->serial && loom_allreduce(LOOM_IN_PLACE, &e, 1, LOOM_DOUBLE, LOOM_SUM))
        loom_abort(1, "lda: allreduce of the s-error failed");
    if (s_error)
        *s_error = e / ((double)g->R * g->T);
    int64_t n = sum[K];
    free(sum);
    return n;
}

/* Checkpoints (docs/checkpoint.md): the word-topic table is a Loom
 * allocation, saved as such; what lives in plain memory is kept in every
 * checkpoint with loom_checkpoint_keep — each worker's topic assignments,
 * doc-topic counts and random stream, the synced topic sums and the
 * rotation's sub-epoch (the rest is rebuilt, or zero between rounds).
 * Returns 1 when a restart brought them back (the table then too). */
static int keep(loom_lda_ring *g)
{
    if (g->serial)
        return 0;
    int got = 0, all = 1, rc = 0;
    char name[64];
    for (int i = 0; i < g->T; i++) {
        loom_lda_shard *s = &g->sh[i];
        struct { const char *what; void *p; size_t n; } k[] = {
            {"z", s->tok_z, sizeof *s->tok_z * (size_t)s->n_tokens},
            {"dt_len", s->dt_len, sizeof *s->dt_len * (size_t)s->n_docs},
            {"dt", s->dt, sizeof *s->dt * (size_t)s->n_tokens},
            {"rng", &s->rng, sizeof s->rng}};
        for (size_t j = 0; j < sizeof k / sizeof *k; j++) {
            snprintf(name, sizeof name, "loom-lda worker %d %s", i, k[j].what);
            rc |= loom_checkpoint_keep(name, k[j].p, k[j].n, &got);
            all &= got;
        }
    }
    rc |= loom_checkpoint_keep("loom-lda topic sums", g->nk, sizeof *g->nk * (size_t)g->p.K,
                               &got);
    all &= got;
    rc |= loom_checkpoint_keep("loom-lda sub-epoch", &g->t, sizeof g->t, &got);
    all &= got;
    if (rc)
        loom_abort(1, "lda: out of memory");
    if (loom_restarted() && !all)
        loom_abort(1, "lda: restart: the checkpoint does not hold this rank's topic "
                   "assignments: restart the same program with the same input and options");
    return loom_restarted();
}

/* ---- the API ---- */

static int fail(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
    return LOOM_ERR_ARG;
}

int loom_lda_ring_init(loom_lda_ring **out, const loom_lda_params *p, const loom_corpus *c,
                       const loom_lda_ring_opts *opts, char *err, size_t errlen)
{
    *out = NULL;
    if (!p || !c || p->K < 1 || p->V != c->nwords || p->V < 1 || !(p->alpha > 0) ||
        !(p->beta > 0))
        return fail(err, errlen, "bad LDA parameters (K >= 1, V = the corpus's vocabulary, "
                                 "alpha > 0, beta > 0)");
    loom_lda_ring *g = need(sizeof *g);
    g->p = *p;
    g->serial = opts && opts->serial;
    g->forward = opts && opts->forward;
    g->tick = opts ? opts->tick : NULL;
    g->R = loom_size();
    g->rank = loom_rank();
    g->T = g->serial ? 1 : omp_get_max_threads();
    g->M = c->ntokens;
    if (g->serial && g->R > 1) {
        free(g);
        return fail(err, errlen, "the serial twin runs on one rank only");
    }
    int32_t tt[2] = {g->T, -g->T};
    loom_allreduce(LOOM_IN_PLACE, tt, 2, LOOM_INT32, LOOM_MIN);
    if (tt[0] != -tt[1]) {
        free(g);
        snprintf(err, errlen, "every rank needs the same number of threads (OMP_NUM_THREADS): "
                 "they range from %d to %d", (int)tt[0], (int)-tt[1]);
        return LOOM_ERR_ARG;
    }
    const int P = g->R * g->T;
    const int32_t V = p->V, K = p->K;

    /* relabel the vocabulary so that the P word blocks weigh the same */
    if (!g->serial) {
        int64_t *freq = need(sizeof *freq * (size_t)V);
        for (int64_t j = 0; j < c->ntokens; j++)
            freq[c->word[j]]++;
        g->new_id = need(sizeof *g->new_id * (size_t)V);
        if (loom_lda_balance_words(freq, V, P, g->new_id))
            loom_abort(1, "lda: out of memory balancing the word blocks");
        free(freq);
    }

    /* the table */
    if (g->serial) {
        g->wt = need(sizeof *g->wt * (size_t)V * (size_t)K);
    } else {
        g->wt = loom_alloc((size_t)V * (size_t)K * sizeof(int32_t),
                           &(loom_alloc_opts){.name = "word_topic", .coherence = "ring",
                                              .unit = LOOM_UNIT_ROW,
                                              .row_size = (size_t)K * sizeof(int32_t)});
        if (!g->wt)
            loom_abort(1, "lda: cannot allocate the word-topic table (%d x %d)", (int)V, (int)K);
        void *start;
        size_t bytes;
        if (loom_ring_part(g->wt, &start, &bytes, NULL, NULL)) {
            loom_free(g->wt);
            free(g->new_id);
            free(g);
            return fail(err, errlen, "the word-topic table is not a ring allocation (internal "
                                     "error)");
        }
        if (!loom_restarted()) /* a restart brought the table back */
            memset(start, 0, bytes);
    }

    /* the shards: worker (rank, i) holds document range rank * T + i */
    int32_t *b = blocks(c, P);
    g->sh = need(sizeof *g->sh * (size_t)g->T);
    g->kpad = ((size_t)K + 7) / 8 * 8;
    g->local = need(sizeof *g->local * g->kpad * (size_t)g->T);
    g->delta = need(sizeof *g->delta * g->kpad * (size_t)g->T);
    g->sampled = need(sizeof *g->sampled * 8 * (size_t)g->T);
    g->nk = need(sizeof *g->nk * (size_t)K);
    int bad = 0;
#pragma omp parallel num_threads(g->T) reduction(| : bad)
    {
        int i = omp_get_thread_num(), w = g->rank * g->T + i;
        if (omp_get_num_threads() != g->T)
            loom_abort(70, "lda: OpenMP gave fewer than %d threads", g->T);
        int64_t *off;
        int32_t *words;
        slice(c, g->new_id, b[w], b[w + 1], &off, &words);
        bad |= loom_lda_shard_init(&g->sh[i], p, b[w + 1] - b[w], off, words, b[w],
                                   (uint64_t)w) != LOOM_OK;
        free(off);
        free(words);
    }
    free(b);
    if (bad)
        loom_abort(1, "lda: out of memory building the shards");
    for (int i = 0; i < g->T; i++)
        g->rank_tokens += g->sh[i].n_tokens;

    if (keep(g)) { /* a restart: the assignments, counts and streams came back */
        for (int i = 0; i < g->T; i++)
            memcpy(local_of(g, i), g->nk, sizeof *g->nk * (size_t)K);
        *out = g;
        return LOOM_OK;
    }
    /* the initial tables: one rotation that counts instead of sampling */
    rotate_all(g, COUNT);
    merge(g, NULL);
    int64_t total = 0;
    for (int32_t k = 0; k < K; k++)
        total += g->nk[k];
    if (total != g->M)
        loom_abort(70, "lda: the topic sums count %lld tokens, the corpus has %lld (internal "
                   "error)", (long long)total, (long long)g->M);
    *out = g;
    return LOOM_OK;
}

int64_t loom_lda_ring_round(loom_lda_ring *g, double *s_error)
{
    rotate_all(g, SAMPLE);
    return merge(g, s_error);
}

double loom_lda_ring_loglik(const loom_lda_ring *g)
{
    const int R = g->serial ? 1 : g->R, T = g->T;
    /* after whole rounds rank r owns partition r again: its T blocks */
    double *part = need(sizeof *part * (size_t)T);
#pragma omp parallel num_threads(T)
    {
        int i = omp_get_thread_num();
        int32_t lo, hi;
        loom_lda_word_block(g->p.V, R * T, g->rank * T + i, &lo, &hi);
        part[i] = loom_lda_ll_docs(&g->sh[i]) +
                  loom_lda_ll_words(&g->p, lo, hi, g->wt + (size_t)lo * (size_t)g->p.K,
                                    (size_t)g->p.K);
    }
    double ll = 0;
    for (int i = 0; i < T; i++)
        ll += part[i];
    free(part);
    if (!g->serial)
        loom_allreduce(LOOM_IN_PLACE, &ll, 1, LOOM_DOUBLE, LOOM_SUM);
    return ll + loom_lda_ll_topics(&g->p, g->nk);
}

int loom_lda_ring_set_test(loom_lda_ring *g, const loom_corpus *test)
{
    for (int64_t j = 0; j < test->ntokens; j++)
        if (test->word[j] < 0 || test->word[j] >= g->p.V)
            return LOOM_ERR_ARG;
    const int P = g->R * g->T;
    int32_t *b = blocks(test, P);
    if (!g->test_n) {
        g->test_n = need(sizeof *g->test_n * (size_t)g->T);
        g->test_first = need(sizeof *g->test_first * (size_t)g->T);
        g->test_off = need(sizeof *g->test_off * (size_t)g->T);
        g->test_words = need(sizeof *g->test_words * (size_t)g->T);
    }
    for (int i = 0; i < g->T; i++) {
        int w = g->rank * g->T + i;
        free(g->test_off[i]);
        free(g->test_words[i]);
        slice(test, g->new_id, b[w], b[w + 1], &g->test_off[i], &g->test_words[i]);
        g->test_n[i] = b[w + 1] - b[w];
        g->test_first[i] = b[w];
    }
    free(b);
    return LOOM_OK;
}

double loom_lda_ring_perplexity(loom_lda_ring *g, int32_t iters, uint64_t seed, int64_t *n_eval)
{
    if (!g->serial)
        loom_ring_collect(g->wt); /* every rank reads the whole table */
    double acc[2] = {0, 0};
    int bad = 0;
    if (g->test_n) {
        double *part = need(sizeof *part * 2 * (size_t)g->T);
#pragma omp parallel num_threads(g->T) reduction(| : bad)
        {
            int i = omp_get_thread_num();
            double ll = 0;
            int64_t n = 0;
            bad |= loom_lda_completion(&g->p, g->wt, (size_t)g->p.K, g->nk, g->test_n[i],
                                       g->test_off[i], g->test_words[i], g->test_first[i],
                                       iters, seed, &ll, &n) != LOOM_OK;
            part[2 * i] = ll;
            part[2 * i + 1] = (double)n;
        }
        for (int i = 0; i < g->T; i++) {
            acc[0] += part[2 * i];
            acc[1] += part[2 * i + 1];
        }
        free(part);
    }
    if (bad)
        loom_abort(1, "lda: out of memory evaluating the held-out documents");
    if (!g->serial)
        loom_allreduce(LOOM_IN_PLACE, acc, 2, LOOM_DOUBLE, LOOM_SUM);
    if (n_eval)
        *n_eval = (int64_t)acc[1];
    return acc[1] > 0 ? exp(-acc[0] / acc[1]) : -1;
}

/* This rank's lines of a document-topic file, in global document order
 * (its workers hold consecutive ranges): "DOC p_1 ... p_K", DOC counted
 * from 1.  Training documents (test = 0) take theta_dk = (n_dk + a) /
 * (N_d + K a) from their current assignments; held-out ones are folded in
 * against the whole table (loom_lda_fold_in).  Collective when test is
 * set (the table is collected).  Returns 0, or -1 if writing failed. */
int loom_lda_ring_write_theta(loom_lda_ring *g, int test, int32_t iters, uint64_t seed,
                              FILE *f)
{
    const size_t K = (size_t)g->p.K;
    const double a = g->p.alpha;
    if (!test) {
        double *row = need(K * sizeof *row);
        for (int i = 0; i < g->T; i++) {
            const loom_lda_shard *s = &g->sh[i];
            for (int32_t d = 0; d < s->n_docs; d++) {
                int64_t n = s->doc_off[d + 1] - s->doc_off[d];
                for (size_t k = 0; k < K; k++)
                    row[k] = a;
                for (int32_t j = 0; j < s->dt_len[d]; j++)
                    row[s->dt[s->doc_off[d] + j].topic] += s->dt[s->doc_off[d] + j].count;
                fprintf(f, "%lld", (long long)(s->first_doc + d + 1));
                for (size_t k = 0; k < K; k++)
                    fprintf(f, " %.6g", row[k] / ((double)n + (double)K * a));
                fputc('\n', f);
            }
        }
        free(row);
        return ferror(f) ? -1 : 0;
    }
    if (!g->serial)
        loom_ring_collect(g->wt); /* every rank reads the whole table */
    for (int i = 0; g->test_n && i < g->T; i++) {
        double *theta = need((size_t)g->test_n[i] * K * sizeof *theta);
        if (loom_lda_fold_in(&g->p, g->wt, K, g->nk, g->test_n[i], g->test_off[i],
                             g->test_words[i], g->test_first[i], iters, seed, theta))
            loom_abort(1, "lda: out of memory folding in the held-out documents");
        for (int32_t d = 0; d < g->test_n[i]; d++) {
            fprintf(f, "%lld", (long long)(g->test_first[i] + d + 1));
            for (size_t k = 0; k < K; k++)
                fprintf(f, " %.6g", theta[(size_t)d * K + k]);
            fputc('\n', f);
        }
        free(theta);
    }
    return ferror(f) ? -1 : 0;
}

void loom_lda_ring_table(loom_lda_ring *g, int32_t *wt, int64_t *nk)
{
    if (!g->serial)
        loom_ring_collect(g->wt);
    const size_t K = (size_t)g->p.K;
    for (int32_t w = 0; wt && w < g->p.V; w++)
        memcpy(wt + (size_t)w * K, g->wt + (size_t)(g->new_id ? g->new_id[w] : w) * K,
               K * sizeof *wt);
    if (nk)
        memcpy(nk, g->nk, K * sizeof *nk);
}

int64_t loom_lda_ring_rank_tokens(const loom_lda_ring *g)
{
    return g->rank_tokens;
}

void loom_lda_ring_free(loom_lda_ring *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->T; i++) {
        loom_lda_shard *s = &g->sh[i];
        if (!g->serial) { /* kept in checkpoints until now */
            loom_checkpoint_forget(s->tok_z);
            loom_checkpoint_forget(s->dt_len);
            loom_checkpoint_forget(s->dt);
            loom_checkpoint_forget(&s->rng);
        }
        loom_lda_shard_free(s);
        if (g->test_n) {
            free(g->test_off[i]);
            free(g->test_words[i]);
        }
    }
    if (g->serial)
        free(g->wt);
    else
        loom_free(g->wt);
    loom_checkpoint_forget(g->nk);
    loom_checkpoint_forget(&g->t);
    free(g->test_n);
    free(g->test_first);
    free(g->test_off);
    free(g->test_words);
    free(g->new_id);
    free(g->sh);
    free(g->nk);
    free(g->local);
    free(g->delta);
    free(g->sampled);
    free(g);
}
