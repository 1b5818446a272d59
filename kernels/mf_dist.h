/* mf_dist.h — distributed SGD matrix factorization (seed 000 Algorithm
 * 7) on the ring schedule, beside its serial twin (mf.h's loom_mf_block,
 * the same update word for word).  apps/loom-mf.c is the command line
 * around it (flags, reading and numbering the ratings, the per-epoch
 * report, the saved model); docs/loom-mf.md explains the distribution.
 *
 * Who holds what, over R ranks x T threads:
 *   - each rank keeps the ratings of one block of users (the caller's:
 *     loom_ratings_split), and the rows W[u] of those users in a "local"
 *     allocation (nobody else reads them);
 *   - H (one row per item) is a "ring" allocation: its R partitions
 *     rotate, so in each of an epoch's R sub-epochs a rank owns one
 *     partition and updates the ratings whose item falls in it;
 *   - an epoch is loom_for_records(.schedule = LOOM_SERIALIZABLE, .local)
 *     over the rank's ratings, each naming its rows by its fields
 *     (W[u], H[i]); the planner lays them out in cells (user block x item
 *     sub-block) once, in place (.in_place: the caller's array is
 *     reordered), and every epoch runs the same plan (.repeated), so the
 *     result equals some serial order of the updates.
 * Every function is collective (all ranks, the same order) unless it says
 * otherwise; out of memory ends the job (loom_abort). */
#ifndef LOOM_KERNELS_MF_DIST_H
#define LOOM_KERNELS_MF_DIST_H

#include <loom.h>
#include <stdint.h>

#include "../data/ratings.h"
#include "mf.h"

typedef struct loom_mf_dist {
    loom_mf m;               /* W and H (Loom allocations), K, D, mu, this epoch's rates */
    int32_t nu, ni;          /* rows of W and H */
    int serial, ordered;     /* the serial twin (one rank, file order); Orion's ordered plan */
    double *loss;            /* each thread's squared errors, a cache line apart */
    void (*tick)(int64_t n); /* progress: n more updates (may be NULL) */
} loom_mf_dist;

/* d arrives with m.lambda, m.lambda_bias, serial, ordered and tick set.
 * Allocates W (nu rows, this rank's users [mine->lo, mine->hi) current
 * here) and H (ni rows, on the ring) for K factors, and, unless the job
 * was restarted (the rows came back), initializes this rank's rows:
 * cu[u] and ci[i] are the training ratings of user u (this rank's) and
 * item i (all ranks'), a row without any starting at zero.  mu is the
 * training ratings' mean; rates are set per epoch. */
void loom_mf_dist_init(loom_mf_dist *d, int32_t nu, int32_t ni, int K, float mu,
                       const loom_user_range *mine, const uint32_t *cu, const uint32_t *ci,
                       unsigned long long seed);

/* One epoch of updates over this rank's ratings v[0..n) at step `step`
 * (the serial twin's loop in file order, else the Loom loop, which may
 * reorder v); returns the sum of the updates' squared errors (before each
 * update), this rank's. */
double loom_mf_dist_epoch(loom_mf_dist *d, loom_rating *v, int64_t n, float step);

void loom_mf_dist_free(loom_mf_dist *d);

#endif
