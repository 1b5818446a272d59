/* lda.h — the LDA kernel: collapsed Gibbs sampling for latent Dirichlet
 * allocation, laid out for STRADS word rotation (seed 000 Alg. 5, seed 002
 * §1), and its serial twin.  docs/lda-kernel.md explains the sampler, the
 * layout and the evaluation measures.
 *
 * Who holds what, in the distributed version:
 *   - a worker (one thread of one rank) holds a shard: its documents, their
 *     topic assignments z and their doc-topic counts; nothing else reads
 *     them;
 *   - the word-topic table (V rows of K int32 counts) is cut into word
 *     ranges that rotate between workers; in a sub-epoch a worker owns one
 *     range and calls loom_lda_sample_range on it;
 *   - the topic sums n_k (K int64 counts) are replicated: each worker
 *     samples against its own copy, which sees its own changes at once and
 *     the others' only when the driver merges the deltas at the end of a
 *     round (the "s-error" of seed 002, loom_lda_s_error).
 * The serial twin, loom_lda_sweep, is the same sampler over one shard that
 * holds every document and the whole table, with exact topic sums.
 *
 * Everything is plain memory and plain C types: documents come in as CSR
 * (doc_off, words), the word-topic rows are int32 arrays the caller owns
 * (a ring partition, a malloc'd table), the topic sums int64 arrays.
 * Functions on different shards with disjoint word ranges and their own
 * topic-sum copies may run concurrently; nothing here is global state. */
#ifndef LOOM_KERNELS_LDA_H
#define LOOM_KERNELS_LDA_H

#include <stddef.h>
#include <stdint.h>

#include "../data/rng.h"

/* Which per-token sampler loom_lda_sample_range uses.  Both draw from the
 * exact collapsed conditional; DENSE is the O(K) reference. */
typedef enum loom_lda_sampler {
    LOOM_LDA_FTREE = 0, /* doc bucket O(K_d) + F+tree word bucket O(log K) (default) */
    LOOM_LDA_DENSE = 1, /* naive: all K probabilities, then a linear search */
} loom_lda_sampler;

typedef struct loom_lda_params {
    int32_t K;        /* topics, >= 1 */
    int32_t V;        /* vocabulary size of the whole corpus (word ids 0..V-1) */
    double alpha;     /* symmetric doc-topic Dirichlet prior, > 0 */
    double beta;      /* symmetric topic-word Dirichlet prior, > 0 */
    uint64_t seed;    /* fixes the initial z and every worker's random stream */
    loom_lda_sampler sampler;
} loom_lda_params;

/* A doc-topic count: `count` tokens of a document have topic `topic`. */
typedef struct loom_lda_tc {
    int32_t topic, count;
} loom_lda_tc;

/* One worker's share: its documents with their tokens grouped by word, the
 * topic assignments, the doc-topic counts, and the sampler's scratch and
 * random stream.  Built by loom_lda_shard_init; the fields are public for
 * reading (tests, drivers, model output) and must not be written, except
 * p.sampler, which may be switched between calls.
 *
 * Tokens are stored word-major: the tokens of word word_id[i] are
 * [word_off[i], word_off[i+1]), in ascending document order, so a word
 * range [w_lo, w_hi) is one contiguous run of tokens, found by binary
 * search.  Document d's nonzero topic counts are dt[doc_off[d] ..
 * doc_off[d] + dt_len[d]), in decreasing count order (a document has at
 * most as many distinct topics as tokens, so its doc_off slot always
 * fits). */
typedef struct loom_lda_shard {
    loom_lda_params p;
    int32_t n_docs;      /* documents in the shard */
    int64_t first_doc;   /* global id of document 0 (it seeds the initial z) */
    int64_t n_tokens;
    int64_t *doc_off;    /* [n_docs + 1], doc_off[0] = 0 */
    int32_t n_words;     /* distinct words in the shard */
    int32_t *word_id;    /* [n_words], ascending */
    int64_t *word_off;   /* [n_words + 1] */
    int32_t *tok_doc;    /* [n_tokens] shard-local document of each token */
    int32_t *tok_z;      /* [n_tokens] topic of each token */
    int32_t *dt_len;     /* [n_docs] distinct topics of each document */
    loom_lda_tc *dt;     /* [n_tokens] doc-topic counts, see above */
    /* sampler state (private) */
    loom_rng rng;        /* random stream, seeded from (seed, worker) */
    int32_t kp;          /* leaves of the F+tree: K rounded up to a power of 2 */
    double *tree;        /* [2 kp] F+tree over the word bucket */
    double *inv;         /* [K] 1 / (n_k + V beta) */
    double *cum;         /* [K] doc-bucket terms (FTREE), prefix sums (DENSE) */
    int32_t *nd;         /* [K] DENSE: the current document's counts, dense */
} loom_lda_shard;

/* Build a worker's shard from its documents in CSR form: document d is
 * words[doc_off[d] .. doc_off[d+1]) (doc_off[0] = 0, non-decreasing, word
 * ids in [0, V)).  The inputs are copied; the caller may free them.  The
 * initial topic of token j of document d is a hash of (seed, first_doc + d,
 * j) mod K, so the initial state of a corpus does not depend on how it is
 * cut into shards; the shard's random stream is seeded from (seed,
 * worker).  Counts in word-topic rows and topic sums are not touched: add
 * them with loom_lda_count_range.  Returns LOOM_OK, LOOM_ERR_ARG (bad
 * parameters or a word out of range) or LOOM_ERR_NOMEM; on error *s is
 * left empty (safe to free). */
int loom_lda_shard_init(loom_lda_shard *s, const loom_lda_params *p, int32_t n_docs,
                        const int64_t *doc_off, const int32_t *words, int64_t first_doc,
                        uint64_t worker);

/* Release what loom_lda_shard_init allocated; *s becomes empty. */
void loom_lda_shard_free(loom_lda_shard *s);

/* The first index of the shard's words (s->word_id, increasing) at or
 * after word w: where its tokens of words >= w begin. */
int32_t loom_lda_first_word(const loom_lda_shard *s, int32_t w);

/* Add the shard's current assignments of the tokens whose word lies in
 * [w_lo, w_hi) to the word-topic rows (row of word w at rows + (w - w_lo) *
 * stride, stride >= K) and, if nk is not NULL, to the topic sums.  This is
 * how a driver (or the serial twin, over [0, V)) builds the tables after
 * loom_lda_shard_init.  Returns the number of tokens counted, -1 on bad
 * arguments. */
int64_t loom_lda_count_range(const loom_lda_shard *s, int32_t w_lo, int32_t w_hi,
                             int32_t *rows, size_t stride, int64_t *nk);

/* One sub-epoch of a worker: Gibbs-sample, in word-major order, every token
 * of the shard whose word lies in [w_lo, w_hi).  rows holds the word-topic
 * rows of that range (row of word w at rows + (w - w_lo) * stride), which
 * the caller owns exclusively for the call; nk is this worker's copy of the
 * topic sums (read, and updated in place for each move, so the worker sees
 * its own changes); if nk_delta is not NULL each move is also added there
 * (-1 on the old topic, +1 on the new) for the driver to merge.  Uses the
 * shard's random stream: the same calls in the same order give the same
 * result.  Returns the number of tokens sampled, -1 on bad arguments. */
int64_t loom_lda_sample_range(loom_lda_shard *s, int32_t w_lo, int32_t w_hi,
                              int32_t *rows, size_t stride, int64_t *nk,
                              int64_t *nk_delta);

/* The serial twin: one sweep over every token of the shard with the whole
 * word-topic table wt (V rows of K, row-major) and the exact topic sums
 * nk.  Same as loom_lda_sample_range(s, 0, V, wt, K, nk, NULL).  Returns
 * the number of tokens sampled, -1 on bad arguments. */
int64_t loom_lda_sweep(loom_lda_shard *s, int32_t *wt, int64_t *nk);

/* Fill out[0..K) with document d's topic counts (dense). */
void loom_lda_doc_topics(const loom_lda_shard *s, int32_t d, int32_t *out);

/* The s-error of one worker (seed 002, eq. 1): ||nk_local - nk_true||_1 /
 * n_tokens, where nk_true are the exact sums (the synced sums plus every
 * worker's delta) and n_tokens the corpus size M.  Seed 002's Delta_t is
 * the mean of this over the P workers.  In [0, 2]. */
double loom_lda_s_error(const int64_t *nk_local, const int64_t *nk_true, int32_t K,
                        int64_t n_tokens);

/* The word ranges of the rotation (seed 000 Alg. 5): block x of P is
 * [x V / P, (x+1) V / P), the same cut as the ring policy's partitions. */
void loom_lda_word_block(int32_t V, int32_t P, int32_t x, int32_t *w_lo, int32_t *w_hi);

/* A relabelling of the vocabulary that balances the word blocks: given the
 * corpus frequency of each word, new_id[w] is w's new id such that the P
 * blocks of loom_lda_word_block hold about equal token counts (greedy
 * longest-first: by decreasing frequency, ties by id, each word goes to the
 * lightest block with a free id, and takes its lowest free id).  Without
 * it a Zipfian vocabulary puts most tokens in the block of the frequent
 * words.  Returns LOOM_OK, LOOM_ERR_ARG or LOOM_ERR_NOMEM. */
int loom_lda_balance_words(const int64_t *freq, int32_t V, int32_t P, int32_t *new_id);

/* ---- evaluation (lda_eval.c) ---- */

/* The training log-likelihood log p(w, z) of the collapsed model with
 * symmetric Dirichlet priors is the sum of three parts, so that a driver
 * can add them up over shards and word ranges:
 *   docs:   sum_d [ lgG(K a) - lgG(n_d + K a) + sum_k (lgG(n_dk + a) - lgG(a)) ]
 *   words:  sum_w sum_k [ lgG(n_wk + b) - lgG(b) ]
 *   topics: sum_k [ lgG(V b) - lgG(n_k + V b) ]
 * (lgG = log Gamma).  loom_lda_ll_docs is the docs part of one shard;
 * loom_lda_ll_words the words part of [w_lo, w_hi) (rows as in
 * loom_lda_count_range); loom_lda_ll_topics the topics part from exact
 * sums; loom_lda_loglik the total for a serial shard and table. */
double loom_lda_ll_docs(const loom_lda_shard *s);
double loom_lda_ll_words(const loom_lda_params *p, int32_t w_lo, int32_t w_hi,
                         const int32_t *rows, size_t stride);
double loom_lda_ll_topics(const loom_lda_params *p, const int64_t *nk);
double loom_lda_loglik(const loom_lda_shard *s, const int32_t *wt, const int64_t *nk);

/* Held-out evaluation by document completion (Wallach et al. 2009): in
 * every test document (CSR, as for loom_lda_shard_init) the tokens at even
 * positions are observed and those at odd positions held out.  With the
 * trained table fixed, phi_wk = (n_wk + b) / (n_k + V b), the observed
 * tokens are Gibbs-sampled for `iters` sweeps (O(K) per token); theta_d is
 * averaged over the second half of the sweeps, theta_dk = (n_dk + a) /
 * (n_obs + K a); then *loglik = sum over held-out tokens of log sum_k
 * theta_dk phi_wk and *n_eval = their number.  Perplexity is
 * exp(-*loglik / *n_eval) (loom_lda_perplexity).  wt is the whole table
 * (V rows of stride >= K), nk its exact sums.  Randomness comes from (seed,
 * first_doc + d) per document, so the result does not depend on how the
 * test set is split.  Returns LOOM_OK, LOOM_ERR_ARG or LOOM_ERR_NOMEM. */
int loom_lda_completion(const loom_lda_params *p, const int32_t *wt, size_t stride,
                        const int64_t *nk, int32_t n_docs, const int64_t *doc_off,
                        const int32_t *words, int64_t first_doc, int32_t iters,
                        uint64_t seed, double *loglik, int64_t *n_eval);

/* Document-topic proportions of documents the model did not train on: as
 * loom_lda_completion, but every token is folded in and nothing is
 * scored; theta (n_docs rows of K) gets each document's theta_dk.  Same
 * randomness per (seed, first_doc + d).  Returns LOOM_OK, LOOM_ERR_ARG or
 * LOOM_ERR_NOMEM. */
int loom_lda_fold_in(const loom_lda_params *p, const int32_t *wt, size_t stride,
                     const int64_t *nk, int32_t n_docs, const int64_t *doc_off,
                     const int32_t *words, int64_t first_doc, int32_t iters, uint64_t seed,
                     double *theta);

/* exp(-loglik / n_eval) of loom_lda_completion on the given test set; a
 * negative value if it failed or held out no token. */
double loom_lda_perplexity(const loom_lda_params *p, const int32_t *wt, size_t stride,
                           const int64_t *nk, int32_t n_docs, const int64_t *doc_off,
                           const int32_t *words, int32_t iters, uint64_t seed);

/* The n most frequent words of every topic: out[k * n + i] is the word
 * with the i-th largest n_wk (ties: smaller id first), -1 where topic k
 * has fewer than n words with a nonzero count (all -1 if out of memory).
 * wt: V rows of stride >= K. */
void loom_lda_top_words(const loom_lda_params *p, const int32_t *wt, size_t stride,
                        int32_t n, int32_t *out);

/* The topic-word distributions of a trained table: phi[k * V + w] = (n_wk +
 * b) / (n_k + V b), K rows of V doubles (rows sum to 1). */
void loom_lda_phi(const loom_lda_params *p, const int32_t *wt, size_t stride,
                  const int64_t *nk, double *phi);

/* Hellinger distance between two distributions over V outcomes:
 * sqrt(1 - sum_v sqrt(a_v b_v)), in [0, 1]. */
double loom_lda_hellinger(const double *a, const double *b, int32_t V);

/* Best-match mean Hellinger distance between topic sets a (na rows of V,
 * e.g. the planted topics) and b (nb rows, e.g. loom_lda_phi): the
 * one-to-one matching of min(na, nb) pairs that minimises the total
 * distance (Hungarian algorithm, exact), and the mean distance over the
 * matched pairs.  If match is not NULL, match[i] is the row of b matched
 * to row i of a, or -1.  O(na nb V + min^2 max) time.  Returns the mean,
 * or -1 on bad arguments or no memory. */
double loom_lda_match_topics(const double *a, int32_t na, const double *b, int32_t nb,
                             int32_t V, int32_t *match);

#endif
