/* lr.c — multinomial logistic regression by SGD (lr.h). */
#include "lr.h"
#include "dot.h"

#include <math.h>

/* z[c] = W[c]·x; returns the class of the largest. */
static int logits(float *const *W, int C, const float *x, int D, float *z)
{
    int best = 0;
    for (int c = 0; c < C; c++) {
        float s = loom_dot(W[c], x, D); /* dot.h */
        z[c] = s;
        if (s > z[best])
            best = c;
    }
    return best;
}

double loom_lr_softmax(float *const *W, int C, const float *x, int D, int y, float *p)
{
    logits(W, C, x, D, p);
    return loom_lr_softmax_z(p, C, y);
}

double loom_lr_softmax_z(float *z, int C, int y)
{
    float m = z[0];
    for (int c = 1; c < C; c++)
        m = z[c] > m ? z[c] : m;
    double s = 0;
    for (int c = 0; c < C; c++)
        s += (z[c] = expf(z[c] - m));
    for (int c = 0; c < C; c++)
        z[c] = (float)(z[c] / s);
    return y >= 0 ? -log(z[y] > 1e-30f ? z[y] : 1e-30f) : 0;
}

void loom_lr_sparse_logits(float *z, float *const *rows, const double *val, int64_t nnz, int C)
{
    for (int64_t k = 0; k < nnz; k++) {
        const float *w = rows[k], v = (float)val[k];
#pragma omp simd
        for (int c = 0; c < C; c++)
            z[c] += v * w[c];
    }
}

void loom_lr_sparse_logits_plain(float *z, const float *W, const int64_t *idx, const double *val,
                                 int64_t nnz, int C)
{
    for (int64_t k = 0; k < nnz; k++) {
        const float *w = W + idx[k] * C, v = (float)val[k];
#pragma omp simd
        for (int c = 0; c < C; c++)
            z[c] += v * w[c];
    }
}

void loom_lr_sparse_step(float *const *rows, const double *val, int64_t nnz, int C, const float *g,
                         float step, float lambda)
{
    for (int64_t k = 0; k < nnz; k++) {
        float *w = rows[k], v = (float)val[k];
#pragma omp simd
        for (int c = 0; c < C; c++)
            w[c] -= step * (g[c] * v + lambda * w[c]);
    }
}

void loom_lr_softmax_step(float *const *W, int C, const float *x, int D, int y, const float *p,
                          float step, float lambda)
{
    for (int c = 0; c < C; c++) {
        float g = p[c] - (c == y), *w = W[c];
#pragma omp simd
        for (int f = 0; f < D; f++)
            w[f] -= step * (g * x[f] + lambda * w[f]);
    }
}

int loom_lr_predict(float *const *W, int C, const float *x, int D)
{
    float z[LOOM_LR_MAXC];
    return logits(W, C, x, D, z);
}

double loom_lr_softmax_epoch(const float *X, const int32_t *y, int64_t n, float *W, int C, int D,
                             float step, float lambda)
{
    float *rows[LOOM_LR_MAXC], p[LOOM_LR_MAXC];
    for (int c = 0; c < C; c++)
        rows[c] = W + (int64_t)c * D;
    double loss = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *x = X + i * D;
        loss += loom_lr_softmax(rows, C, x, D, y[i], p);
        loom_lr_softmax_step(rows, C, x, D, y[i], p, step, lambda);
    }
    return loss;
}
