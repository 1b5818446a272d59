/* mf.h — the SGD matrix-factorization kernel (seed 000 Algorithm 7, with
 * a global mean and user and item biases) and its serial twin.  A rating
 * r(u, i) is predicted by
 *     p = μ + b_u + b_i + W[u]·H[i]
 * and one update, for one rating, is (all right-hand sides read first)
 *     e = r − p
 *     b_u ← (b_u + γ e) / (1 + γ β / n_u);   b_i ← (b_i + γ e) / (1 + γ β / n_i)
 *     W[u] += γ (e·H[i] − λ W[u]);   H[i] += γ (e·W[u] − λ H[i])
 * where n_u (n_i) is the row's number of training ratings: over an epoch a
 * bias is shrunk by β in all, whatever its count (the objective's
 * β (Σ b_u² + Σ b_i²), the user + item bias model's), while each factor
 * row is shrunk by λ per rating (LIBMF's λ).  The bias step is the
 * implicit (proximal) one, stable for any γ β.
 * A row holds K factors, then the bias, then 1/n (set by
 * loom_mf_init_rows), padded to a stride of D floats (loom_mf_stride), so a
 * row of W or H is one Loom row and the bias and its weight move with it.
 * The loop over ratings is loom_mf_block: the serial twin runs it over
 * every rating in file order, and apps/loom-mf.c runs the same function as
 * the block body of a serializable loom_for_records. */
#ifndef LOOM_KERNELS_MF_H
#define LOOM_KERNELS_MF_H

#include <stdint.h>

#include "../data/ratings.h"

/* The model and this epoch's rates: what the loop body reads. */
typedef struct loom_mf {
    float *W, *H;        /* users x D and items x D floats */
    int K, D;            /* factors; row stride (K + 2 rounded up to 8) */
    float mu;            /* the global mean of the training ratings */
    float step, lambda;  /* γ and λ of this epoch */
    float lambda_bias;   /* β: the biases' regularization over an epoch */
} loom_mf;

/* The row stride for K factors: K + 2 (the bias and 1/n) rounded up to 8
 * floats. */
static inline int loom_mf_stride(int K) { return (K + 2 + 7) / 8 * 8; }

/* One SGD update of rows w and h towards rating r; returns the error
 * before the update. */
static inline float loom_mf_update(float *restrict w, float *restrict h, float r,
                                   const loom_mf *m)
{
    const int K = m->K;
    const float g = m->step, l = m->lambda, gb = m->step * m->lambda_bias;
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int f = 0; f < K; f++)
        dot += w[f] * h[f];
    float e = r - (m->mu + w[K] + h[K] + dot);
#pragma omp simd
    for (int f = 0; f < K; f++) {
        float wf = w[f], hf = h[f];
        w[f] = wf + g * (e * hf - l * wf);
        h[f] = hf + g * (e * wf - l * hf);
    }
    w[K] = (w[K] + g * e) / (1 + gb * w[K + 1]);
    h[K] = (h[K] + g * e) / (1 + gb * h[K + 1]);
    return e;
}

/* The loop: one update per rating of v[0..n), in order.  Returns Σ e²
 * (the errors before each update). */
double loom_mf_block(const loom_rating *v, long n, const loom_mf *m);

/* Fills rows [first, first + n) of M (row r at M + (r − first)·D): K
 * factors uniform in [−s, s) with s = 0.1/√K, a zero bias, the bias's
 * weight 1/count[r] and zero padding, so that row r depends only on
 * (seed, r, count[r]): the same model for any number of ranks or threads.
 * Rows with count[r] == 0 stay all zero: a user or item unseen in training
 * is predicted from the mean and the other side's bias (and no update
 * touches it). */
void loom_mf_init_rows(float *M, int64_t first, int64_t n, int K, int D, const uint32_t *count,
                       uint64_t seed);

/* Σ (r − p)² over v[0..n) (OpenMP-parallel, summed in double). */
double loom_mf_sq_error(const loom_rating *v, int64_t n, const loom_mf *m);

/* Rows M[0..rows) (stride D): Σ of the squared factors into out[0], of
 * the squared biases into out[1]. */
void loom_mf_sq_norm(const float *M, int64_t rows, int K, int D, double out[2]);

/* Writes columns [c0, c0 + nc) of rows M[0..rows) (stride D) as text, one
 * row per line, "%.7g" separated by spaces: the factors (0, K) or the
 * bias (K, 1).  Returns 0, or -1 with errno set. */
int loom_mf_save(const char *path, const float *M, int64_t rows, int D, int c0, int nc);

#endif
