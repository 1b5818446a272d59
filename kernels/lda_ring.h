/* lda_ring.h — distributed LDA: the STRADS word rotation (seed 000 Alg. 5,
 * seed 002 §1-2) of the LDA kernel (lda.h) over ranks and threads, and
 * its serial twin.  apps/loom-lda.c is the command line around it;
 * docs/loom-lda.md explains the distribution.
 *
 * Who holds what:
 *   - the training documents are cut into P = ranks x threads contiguous
 *     ranges of about equal token counts; worker (rank r, thread i) holds
 *     range r*T + i as its shard (doc-topic counts, assignments): local to
 *     its data, never sent anywhere;
 *   - the word-topic table (V rows of K int32) is one loom_alloc ring
 *     allocation (row units): rank r owns one partition of word rows per
 *     sub-epoch, its threads sub-rotate the partition's T word blocks
 *     among themselves, and loom_ring_rotate hands the partition on;
 *   - the topic sums n_k are replicated per worker and merged once per
 *     round with loom_allreduce; the s-error of the merge is reported.
 * The vocabulary is relabelled internally so that the P word blocks carry
 * equal token counts (loom_lda_balance_words); every input and output of
 * this interface uses the corpus's own word ids.
 *
 * Every function but loom_lda_ring_free's NULL case is collective: all
 * ranks call it, in the same order, with the same arguments (each rank
 * passes the whole corpus). */
#ifndef LOOM_KERNELS_LDA_RING_H
#define LOOM_KERNELS_LDA_RING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../data/corpus.h"
#include "lda.h"

typedef struct loom_lda_ring loom_lda_ring;

typedef struct loom_lda_ring_opts {
    int serial;  /* 1: the serial twin — one worker, a malloc'd table, exact
                    topic sums, no relabelling, no Loom allocation (one rank
                    only) */
    int forward; /* 1: macro-synchronization — each finished word row goes to
                    the ring successor at once (loom_ring_done) instead of
                    the whole partition at loom_ring_rotate */
    void (*tick)(int64_t n); /* told of every n tokens sampled, from the
                                sampling thread (a progress display, say
                                loom_report_tick); NULL: nobody */
} loom_lda_ring_opts;

/* Builds this rank's shards from the whole training corpus c (word ids
 * below p->V = c->nwords), allocates the word-topic table and counts the
 * initial state (a function of p->seed only: the same for any ranks and
 * threads).  Threads: omp_get_max_threads(), the same on every rank.
 * opts may be NULL.  Returns LOOM_OK; LOOM_ERR_ARG with the reason in err
 * (bad parameters, unequal thread counts, serial with several ranks,
 * a ring allocation that is not "ring"), the same on every rank.  Out of
 * memory stops the job (loom_abort): ranks could not agree otherwise. */
int loom_lda_ring_init(loom_lda_ring **g, const loom_lda_params *p, const loom_corpus *c,
                       const loom_lda_ring_opts *opts, char *err, size_t errlen);

/* One round: every token of the corpus sampled once (P sub-epochs for
 * every worker, each on another word block), then the topic sums merged.
 * Calls opts->tick as it goes.  *s_error
 * (may be NULL) gets seed 002's s-error of the round: the mean over the P
 * workers of ||local sums - true sums||_1 / M (0 for the serial twin).
 * Returns the tokens sampled by all ranks together (M). */
int64_t loom_lda_ring_round(loom_lda_ring *g, double *s_error);

/* The collapsed training log-likelihood log p(w, z) of the current state
 * (loom_lda_loglik's value, added up over shards and partitions), the
 * same on every rank. */
double loom_lda_ring_loglik(const loom_lda_ring *g);

/* Sets the held-out documents for loom_lda_ring_perplexity (the whole test
 * corpus; word ids below V; each rank keeps its share).  Returns LOOM_OK
 * or LOOM_ERR_ARG (a word id out of range). */
int loom_lda_ring_set_test(loom_lda_ring *g, const loom_corpus *test);

/* Held-out perplexity of the test documents by document completion
 * (loom_lda_completion, `iters` sweeps, random streams from seed): the
 * same value for any ranks and threads up to rounding.  *n_eval (may be
 * NULL) gets the number of held-out tokens scored.  Returns a negative
 * value when there is none. */
double loom_lda_ring_perplexity(loom_lda_ring *g, int32_t iters, uint64_t seed,
                                int64_t *n_eval);

/* This rank's lines of a document-topic file, in global document order:
 * "DOC p_1 ... p_K" (DOC from 1) for the training documents (test = 0,
 * from their current topic assignments) or the held-out ones (test = 1,
 * folded in with `iters` sweeps against the trained table; collective).
 * Ranks write in turn to build the whole file.  Returns 0 or -1. */
int loom_lda_ring_write_theta(loom_lda_ring *g, int test, int32_t iters, uint64_t seed,
                              FILE *f);
/* Gathers the whole table: when wt is not NULL, wt[w * K + k] = n_wk for
 * the corpus's word ids (V rows of K), and when nk is not NULL, nk[k] =
 * n_k.  Ranks that do not want a copy pass NULLs (but still call). */
void loom_lda_ring_table(loom_lda_ring *g, int32_t *wt, int64_t *nk);

/* Tokens of this rank's shards (the denominator of its progress). */
int64_t loom_lda_ring_rank_tokens(const loom_lda_ring *g);

/* Frees everything (collective, for the Loom allocation); NULL is fine. */
void loom_lda_ring_free(loom_lda_ring *g);

#endif
