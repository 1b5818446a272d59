/* lr.h — logistic regression by SGD: the multinomial (softmax) model on
 * dense features and the binary model on sparse features, one sample per
 * step, and the serial twin of each epoch.  The loops over samples are the
 * app's (apps/loom-lr.c runs them data-parallel under loom_for); these
 * are the per-sample pieces they call.
 *
 * Multinomial: C classes, D features (the caller appends a constant 1 for
 * the bias); W[c] is a row of D floats; p = softmax(W x); the loss is
 * −log p_y; a step is W[c] −= γ ((p_c − [c = y]) x + λ W[c]).
 * Binary: w is a dense vector indexed by feature id; p = σ(w·x) with x
 * sparse (ids, values); the loss is −log p(y), y ∈ {0, 1}; a step is
 * w_f −= γ ((p − y) x_f + λ w_f) for the sample's features only. */
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

/* σ(w·x) for the sparse sample (idx[0..nnz), val[0..nnz)); w is indexed
 * by feature id through wrow(id) = the float holding w_id. */
static inline float loom_lr_sigmoid(float z) { return z >= 0 ? 1 / (1 + __builtin_expf(-z))
                                                          : __builtin_expf(z) / (1 + __builtin_expf(z)); }

#endif
