/* lr.c — multinomial logistic regression by SGD (lr.h). */
#include "lr.h"

#include <math.h>
#include <string.h>

/* w·x over n floats in four independent vector sums (GCC's vector
 * extension, 4 floats each: one chain of adds per register, where the
 * single accumulator of an `omp simd` reduction waits on its own adds;
 * this dot product was 62% of loom-lr's training on Fashion-MNIST),
 * added up pairwise, then the lanes in order, then the tail. */
typedef float v4f __attribute__((vector_size(16)));
static inline v4f load4(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v); /* unaligned */
    return v;
}
static float dot(const float *w, const float *x, int n)
{
    v4f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    int f = 0;
    for (; f + 16 <= n; f += 16) {
        a0 += load4(w + f) * load4(x + f);
        a1 += load4(w + f + 4) * load4(x + f + 4);
        a2 += load4(w + f + 8) * load4(x + f + 8);
        a3 += load4(w + f + 12) * load4(x + f + 12);
    }
    v4f t = (a0 + a1) + (a2 + a3);
    float s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; f < n; f++)
        s += w[f] * x[f];
    return s;
}

/* z[c] = W[c]·x; returns the class of the largest. */
static int logits(float *const *W, int C, const float *x, int D, float *z)
{
    int best = 0;
    for (int c = 0; c < C; c++) {
        float s = dot(W[c], x, D);
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
