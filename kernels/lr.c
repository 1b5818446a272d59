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
    float m = p[logits(W, C, x, D, p)];
    double s = 0;
    for (int c = 0; c < C; c++)
        s += (p[c] = expf(p[c] - m));
    for (int c = 0; c < C; c++)
        p[c] = (float)(p[c] / s);
    return y >= 0 ? -log(p[y] > 1e-30f ? p[y] : 1e-30f) : 0;
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
