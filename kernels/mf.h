/* mf.h — the SGD matrix-factorization kernel (seed 000 Algorithm 7) and
 * its serial twin.  A rating r(u, i) is predicted by W[u]·H[i] (rank K
 * rows of floats); one update, for one rating, is
 *     err = r − W[u]·H[i]
 *     W[u] += γ (err·H[i] − λ W[u]);   H[i] += γ (err·W[u] − λ H[i])
 * with both right-hand sides read before either row changes.  The loop
 * over ratings is the app's (apps/loom-mf.c runs it serializable under
 * loom_for); loom_mf_epoch is the same loop run serially, in file order.
 * Every function works on plain float arrays with row stride K. */
#ifndef LOOM_KERNELS_MF_H
#define LOOM_KERNELS_MF_H

#include <stdint.h>

#include "ratings.h"

/* One SGD update of rows w and h towards rating r (Algorithm 7). */
static inline void loom_mf_update(float *restrict w, float *restrict h, int K, float r,
                                  float step, float lambda)
{
    float err = r;
    for (int f = 0; f < K; f++)
        err -= w[f] * h[f];
    for (int f = 0; f < K; f++) {
        float wf = w[f], hf = h[f];
        w[f] = wf + step * (err * hf - lambda * wf);
        h[f] = hf + step * (err * wf - lambda * hf);
    }
}

/* Fills rows [first, first + n) of M (row r at M + (r − first)·K) so that
 * row r depends only on (seed, r): the same model for any number of ranks
 * or threads.  Entries are uniform in [0, 2·sqrt(mean/K)), so that W[u]·H[i]
 * starts near `mean` (the mean rating) on average. */
void loom_mf_init_rows(float *M, int64_t first, int64_t n, int K, double mean, uint64_t seed);

/* The serial twin: one update per rating of v[0..n), in order. */
void loom_mf_epoch(const loom_rating *v, int64_t n, float *W, float *H, int K, float step,
                   float lambda);

/* Σ (r − W[u]·H[i])² over v[0..n) (OpenMP-parallel, summed in double). */
double loom_mf_sq_error(const loom_rating *v, int64_t n, const float *W, const float *H, int K);

/* Σ M[x]² over rows·K entries. */
double loom_mf_sq_norm(const float *M, int64_t rows, int K);

/* Writes rows·K floats as text, one row per line ("%.7g" separated by
 * spaces).  Returns 0, or -1 with errno set. */
int loom_mf_save(const char *path, const float *M, int64_t rows, int K);

#endif
