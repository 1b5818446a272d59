/* w2v.h — word2vec skip-gram with negative sampling (Mikolov et al.
 * 2013; seed 000 §7.3 runs it as a hybrid SyncFor), and its serial twin.
 *
 * For every kept position t of a sentence and every context word o within
 * a window b ≤ `window` (b drawn per position), one logistic step pulls
 * the input vector of w_t towards the output vector of o and pushes it
 * away from `negative` words drawn from the unigram^0.75 distribution:
 *     g = α (label − σ(in[w_t]·out[x]))      for x = o (label 1), negatives (0)
 *     out[x] += g in[w_t];   Δin += g out[x];   then in[w_t] += Δin
 * Frequent words are dropped at random first (subsampling: keep w with
 * probability (sqrt(f/(s·T)) + 1)·s·T/f, T tokens, f its count, s the
 * `sample` threshold).  Rows are reached by address arithmetic where the
 * caller gives a base (the serial twin's plain arrays, or Loom rows that
 * loom_at_base says are plain now), else through a callback (loom_at in a
 * data-parallel loom_for), so the same sentence code runs on both. */
#ifndef LOOM_KERNELS_W2V_H
#define LOOM_KERNELS_W2V_H

#include <stdint.h>

#include "../data/rng.h"

typedef struct loom_w2v_params {
    int dim;          /* vector size */
    int window;       /* largest context distance */
    int negative;     /* negatives per context word */
    double sample;    /* subsampling threshold (0: keep every word) */
} loom_w2v_params;

/* What one sentence needs besides its words. */
typedef struct loom_w2v_model {
    loom_w2v_params p;
    const float *keep;      /* per word: probability of keeping it (subsampling) */
    const loom_alias *neg;  /* unigram^0.75 */
    /* row r of the input (which = 0) or output (which = 1) vectors: at
     * base[which] + r * dim, or where row() says if that base is NULL */
    float *base[2];
    float *(*row)(void *ctx, int which, int32_t r);
    void *ctx;
} loom_w2v_model;

/* Trains on one sentence words[0..n) with step alpha, drawing from g.
 * Returns the summed loss −log σ(±x) of its steps; *pairs gets how many
 * (input, context) pairs it trained. */
double loom_w2v_sentence(const loom_w2v_model *m, const int32_t *words, int64_t n, float alpha,
                         loom_rng *g, int64_t *pairs);

/* Fills keep[0..V) from the counts (total T tokens) and builds the
 * negative-sampling table over count^0.75.  Returns LOOM_OK or an error
 * of loom_alias_build. */
int loom_w2v_tables(const int64_t *count, int32_t V, int64_t T, double sample, float *keep,
                    loom_alias *neg);

/* Initial input vectors: row r uniform in [−0.5/dim, 0.5/dim) from
 * stream (seed, r) (output vectors start at 0). */
void loom_w2v_init_rows(float *in, int64_t first, int64_t n, int dim, uint64_t seed);

/* Writes the word2vec text format: "V dim", then "word v1 ... vdim" per
 * row (the input vectors, as the sentences reach them).  Returns 0 or -1
 * with errno. */
int loom_w2v_save(const char *path, char *const *vocab, int32_t V, int dim,
                  const loom_w2v_model *m);

#endif
