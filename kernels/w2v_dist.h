/* w2v_dist.h — distributed word2vec: skip-gram with negative sampling
 * (w2v.h) as a hybrid SyncFor (seed 000 §7.3), beside its serial twin.
 * apps/loom-w2v.c is the command line around it (flags, the text, the
 * per-epoch report); docs/loom-w2v.md explains the distribution.
 *
 * Who holds what, over R ranks x T threads:
 *   - every rank holds the whole text (one sentence per line), and the
 *     word counts, subsampling probabilities and unigram^0.75 table of all
 *     of it (the caller's), so they are the same everywhere;
 *   - the input and output vectors are two row allocations (V rows of
 *     `dim` floats) with additive merge, "bsp" or "ssp" (staleness);
 *   - an epoch is loom_for(dynamic) over the sentences with .sync =
 *     hybrid: inside a rank the threads share its copy of the rows
 *     (Hogwild, as the original word2vec); each round of `sync_every`
 *     words per rank is shared among the ranks by their speed
 *     (sched/shares.c), and at its end the ranks merge their changes
 *     (loom_w2v_merge) and take a clock.
 * Each sentence draws from its own random stream (seed, epoch, sentence),
 * and the step α falls linearly with the progress through its block of
 * the text (each rank starts on its own block, of about equal words: the
 * loop's blocks), as it would on the rank that owns it.  The serial twin
 * runs the same sentence code over plain arrays, in file order.
 *
 * Every function is collective (all ranks, the same order) unless it
 * says otherwise; out of memory ends the job (loom_abort). */
#ifndef LOOM_KERNELS_W2V_DIST_H
#define LOOM_KERNELS_W2V_DIST_H

#include <loom.h>
#include <stdint.h>

#include "../data/corpus.h"
#include "w2v.h"

/* How the ranks' changes to a vector meet at a sync point (the
 * allocations' .average).  Summed changes overshoot on many ranks: a
 * frequent word's output vector gets every rank's whole step at once, and
 * on 8 and 16 ranks the loss ran away (docs/loom-w2v.md, "Which merge").
 * The mean of the ranks' versions cannot leave them, but its vectors
 * scored far worse on WordNet similarity; twice the mean (two ranks'
 * changes add) overshoots at most as 2 ranks summing do and, every
 * 10 000 words, scored within the seeds' spread of one rank on 2, 3 and 4
 * ranks, so it is the default (on 2 ranks it is the sum, and dsm runs it
 * as one).  Block momentum (dsm.md) gives back the progress the mean
 * takes from the rows every rank trains, once sync points are close
 * enough for the moves to settle: every 8000 words of the job, as many
 * an epoch on any number of ranks, 8 ranks ended 3 epochs 2.8% above one
 * rank's loss where capped every 10 000 words of each rank ended 5.2%
 * above (docs/loom-w2v.md, "Which merge"). */
enum { LOOM_W2V_SUM = 0, LOOM_W2V_AVG = 1, LOOM_W2V_CAPPED = 2 };

/* The default sync interval, words of each rank, for `merge` on R ranks:
 * summed deltas diverge when ranks see too little of each other; capped
 * and averaged rows lose quality when they mix too seldom.  Not
 * collective. */
long long loom_w2v_sync_every(int merge, int R);

typedef struct loom_w2v_dist_opts {
    loom_w2v_params p;
    int serial;            /* 1: the serial twin (one rank), plain arrays */
    int merge;             /* LOOM_W2V_SUM, _AVG or _CAPPED */
    int staleness;         /* > 0: "ssp" rows and an ssp loop */
    long long sync_every;  /* words of each rank between sync points */
    int epochs;            /* the step falls to 0 over them */
    double alpha;          /* the first step */
    uint64_t seed;
    void (*tick)(int64_t n); /* told of n words done, from the worker thread
                                (loom_report_tick); NULL: nobody */
} loom_w2v_dist_opts;

typedef struct loom_w2v_dist loom_w2v_dist;

/* Allocates the vectors for corpus c (c->nwords words; keep and neg: the
 * tables of w2v.h, the caller's, kept until loom_w2v_dist_free) and
 * initializes them (rank 0 writes the first input vectors, a barrier
 * publishes them; a restarted job keeps those that came back), then
 * fetches both tables in one batch each (every rank reads nearly every
 * row). */
loom_w2v_dist *loom_w2v_dist_new(const loom_corpus *c, const float *keep, const loom_alias *neg,
                                 const loom_w2v_dist_opts *o);

/* Epoch e (1-based): the serial twin's loop or loom_for (a failure ends
 * the job).  s[0] gets the summed loss of its steps, s[1] the pairs
 * trained, over all ranks. */
void loom_w2v_dist_epoch(loom_w2v_dist *d, int e, double s[2]);

/* After the last epoch: every rank's last changes go home (a barrier),
 * so that loom_w2v_dist_save reads them there. */
void loom_w2v_dist_finish(loom_w2v_dist *d);

/* Writes the vectors in the word2vec text format (w2v.h's
 * loom_w2v_save), reading the merged rows.  Rank 0 only, after
 * loom_w2v_dist_finish.  Returns 0 or -1 with errno. */
int loom_w2v_dist_save(loom_w2v_dist *d, const char *path, char *const *vocab);

/* Frees the vectors (NULL is fine). */
void loom_w2v_dist_free(loom_w2v_dist *d);

#endif
