/* rng.c — the variates and alias tables declared in rng.h. */
#include "rng.h"

#include <loom.h>

#include <math.h>
#include <stdlib.h>

double loom_rng_normal(loom_rng *g)
{
    double u1 = loom_rng_uniform_pos(g), u2 = loom_rng_uniform(g);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double loom_rng_log_gamma(loom_rng *g, double shape)
{
    double boost = 0;
    if (shape < 1) { /* G(a) = G(a+1) * U^(1/a) */
        boost = log(loom_rng_uniform_pos(g)) / shape;
        shape += 1;
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = loom_rng_normal(g), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = loom_rng_uniform_pos(g);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return log(d) + log(v) + boost;
    }
}

void loom_rng_dirichlet(loom_rng *g, const double *alpha, double alpha0, int32_t n, double *p)
{
    double m = -INFINITY, sum = 0;
    for (int32_t k = 0; k < n; k++) {
        p[k] = loom_rng_log_gamma(g, alpha ? alpha[k] : alpha0);
        if (p[k] > m)
            m = p[k];
    }
    for (int32_t k = 0; k < n; k++)
        sum += p[k] = exp(p[k] - m);
    for (int32_t k = 0; k < n; k++)
        p[k] /= sum;
}

int64_t loom_rng_poisson(loom_rng *g, double mean)
{
    if (mean <= 0)
        return 0;
    if (mean < 12) {
        double limit = exp(-mean), p = loom_rng_uniform_pos(g);
        int64_t k = 0;
        while (p > limit) {
            p *= loom_rng_uniform_pos(g);
            k++;
        }
        return k;
    }
    /* PTRS: W. Hörmann, "The transformed rejection method for generating
     * Poisson random variables", Insurance: Math. and Econ. 12 (1993). */
    double slam = sqrt(mean), loglam = log(mean), b = 0.931 + 2.53 * slam;
    double a = -0.059 + 0.02483 * b, invalpha = 1.1239 + 1.1328 / (b - 3.4);
    double vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double u = loom_rng_uniform(g) - 0.5, v = loom_rng_uniform_pos(g);
        double us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + mean + 0.43);
        if (us >= 0.07 && v <= vr)
            return (int64_t)k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        int sign;
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <=
            -mean + k * loglam - lgamma_r(k + 1, &sign))
            return (int64_t)k;
    }
}

int loom_alias_build(loom_alias *a, const double *w, int32_t n)
{
    a->n = 0;
    a->thresh = NULL;
    a->alias = NULL;
    double sum = 0;
    for (int32_t j = 0; j < n; j++) {
        if (!(w[j] >= 0) || !isfinite(w[j]))
            return LOOM_ERR_ARG;
        sum += w[j];
    }
    if (n < 1 || !(sum > 0))
        return LOOM_ERR_ARG;
    double *q = malloc(sizeof *q * (size_t)n);
    int32_t *small = malloc(sizeof *small * (size_t)n), *large = malloc(sizeof *large * (size_t)n);
    a->thresh = malloc(sizeof *a->thresh * (size_t)n);
    a->alias = malloc(sizeof *a->alias * (size_t)n);
    if (!q || !small || !large || !a->thresh || !a->alias) {
        free(q);
        free(small);
        free(large);
        loom_alias_free(a);
        return LOOM_ERR_NOMEM;
    }
    int32_t ns = 0, nl = 0;
    for (int32_t j = 0; j < n; j++) {
        q[j] = w[j] * n / sum;
        if (q[j] < 1)
            small[ns++] = j;
        else
            large[nl++] = j;
    }
    while (ns && nl) {
        int32_t s = small[--ns], l = large[nl - 1];
        a->thresh[s] = q[s] > 0 ? (uint32_t)(q[s] * 0x1p32) : 0;
        a->alias[s] = l;
        q[l] -= 1 - q[s];
        if (q[l] < 1) {
            nl--;
            small[ns++] = l;
        }
    }
    /* What is left holds probability 1 up to rounding: always kept. */
    while (nl) {
        int32_t l = large[--nl];
        a->thresh[l] = UINT32_MAX;
        a->alias[l] = l;
    }
    while (ns) {
        int32_t s = small[--ns];
        a->thresh[s] = UINT32_MAX;
        a->alias[s] = s;
    }
    a->n = n;
    free(q);
    free(small);
    free(large);
    return LOOM_OK;
}

void loom_alias_free(loom_alias *a)
{
    free(a->thresh);
    free(a->alias);
    a->thresh = NULL;
    a->alias = NULL;
    a->n = 0;
}
