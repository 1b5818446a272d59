/* lr.h — logistic regression by SGD: the multinomial (softmax) model on
 * dense features and the binary model on sparse features, one sample per
 * step, and the serial twin of each epoch.  The loops over samples are
 * lr_dist.h's (data-parallel under loom_for, or the serial twin's plain
 * loop); these are the per-sample pieces they call.
 *
 * Multinomial: C classes, D features (the caller appends a constant 1 for
 * the bias); W[c] is a row of D floats; p = softmax(W x); the loss is
 * −log p_y; a step is W[c] −= γ ((p_c − [c = y]) x + λ W[c]).
 * Binary: w is a dense vector indexed by feature id; p = σ(w·x) with x
 * sparse (ids, values); the loss is −log p(y), y ∈ {0, 1}; a step is
 * w_f −= γ ((p − y) x_f + λ w_f) for the sample's features only.
 * Sparse multinomial: row f of W holds feature f's C weights, one per
 * class (the bias is a row whose value is 1 in every sample); z = Σ_f x_f
 * row_f; p = softmax(z); a step is row_f[c] −= γ ((p_c − [c = y]) x_f +
 * λ row_f[c]) for the sample's features only (lazy L2: a weight decays
 * when its feature occurs).  The caller hands the rows of a sample's
 * features as pointers, in chunks of its choosing. */
#ifndef LOOM_KERNELS_LR_H
#define LOOM_KERNELS_LR_H

#include <stdint.h>

#define LOOM_LR_MAXC 1024

/* p[c] = softmax(W[c]·x) over C classes; returns −log p[y] (y < 0: 0). */
double loom_lr_softmax(float *const *W, int C, const float *x, int D, int y, float *p);

/* One SGD step of the multinomial model for sample (x, y), given the p of
 * loom_lr_softmax. */
void loom_lr_softmax_step(float *const *W, int C, const float *x, int D, int y, const float *p,
                          float step, float lambda);

/* The class with the largest W[c]·x. */
int loom_lr_predict(float *const *W, int C, const float *x, int D);

/* The serial twin: one step per sample of X (n rows of D floats) in order;
 * W is C rows of D floats, contiguous.  Returns the summed loss (each
 * sample's, before its step). */
double loom_lr_softmax_epoch(const float *X, const int32_t *y, int64_t n, float *W, int C, int D,
                             float step, float lambda);

/* z[c] += Σ_k val[k] rows[k][c], c < C: a chunk of a sparse sample's
 * features (the sparse multinomial model). */
void loom_lr_sparse_logits(float *z, float *const *rows, const double *val, int64_t nnz, int C);

/* The same over a plain model W of rows of C floats, row f at W + f C:
 * z[c] += Σ_k val[k] W[idx[k] C + c]. */
void loom_lr_sparse_logits_plain(float *z, const float *W, const int64_t *idx, const double *val,
                                 int64_t nnz, int C);

/* z (C logits) becomes the softmax p in place; returns −log p[y]. */
double loom_lr_softmax_z(float *z, int C, int y);

/* rows[k][c] −= step (g[c] val[k] + lambda rows[k][c]): one step over a
 * chunk of a sparse sample's features, g = p − onehot(y). */
void loom_lr_sparse_step(float *const *rows, const double *val, int64_t nnz, int C, const float *g,
                         float step, float lambda);

/* σ(w·x) for the sparse sample (idx[0..nnz), val[0..nnz)); w is indexed
 * by feature id through wrow(id) = the float holding w_id. */
static inline float loom_lr_sigmoid(float z) { return z >= 0 ? 1 / (1 + __builtin_expf(-z))
                                                          : __builtin_expf(z) / (1 + __builtin_expf(z)); }

#endif
