/* lda_model.h — an LDA model on disk: the directory loom-lda --model DIR
 * writes (docs/loom-lda.md, "The model"), from the gathered word-topic
 * table (loom_lda_ring_table) and the workers' document-topic proportions
 * (loom_lda_ring_write_theta). */
#ifndef LOOM_KERNELS_LDA_MODEL_H
#define LOOM_KERNELS_LDA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "lda.h"
#include "lda_ring.h"

/* DIR/topics.txt: line k = "k<TAB>w1 w2 ..." (the top `top` words of
 * topic k, most frequent first; word strings when the vocabulary is
 * known, else 1-based word ids); DIR/vocab.txt when the vocabulary is
 * known (vocab not NULL): word k on line k, the ids of word_topic.txt;
 * DIR/word_topic.txt: the counts wt (V rows of K) in the UCI layout —
 * lines V, K, NNZ, then "wordID topicID count" (both 1-based) for every
 * nonzero count.  DIR is created if missing.  Not collective (rank 0's
 * job).  Returns 0, or -1 with "PATH: why" in err. */
int loom_lda_model_save(const char *dir, const loom_lda_params *p, const int32_t *wt,
                        char **vocab, int32_t top, char *err, size_t errlen);

/* DIR/NAME: the document-topic proportions of the training (test = 0) or
 * held-out (test = 1) documents of g, one line per document in order
 * (held-out ones sampled `iters` sweeps from seed); every rank writes its
 * own documents in turn (DIR must be one directory for all ranks, as for
 * checkpoints).  Collective.  Returns 0, or -1 on every rank (with "PATH:
 * cannot write the document-topic proportions" in err) if any rank could
 * not write. */
int loom_lda_model_theta(const char *dir, const char *name, loom_lda_ring *g, int test,
                         int32_t iters, uint64_t seed, char *err, size_t errlen);

/* Best-match mean Hellinger distance between the planted topics (Kp rows
 * of p->V) and the learned ones (wt, nk: the gathered table and topic
 * sums).  Not collective. */
double loom_lda_model_match(const loom_lda_params *p, const int32_t *wt, const int64_t *nk,
                            const double *planted, int32_t Kp);

#endif
