/* mf.c — SGD matrix factorization: initialization, the serial twin,
 * objective terms and model files (mf.h). */
#include "mf.h"

#include <math.h>
#include <stdio.h>

#include "rng.h"

void loom_mf_init_rows(float *M, int64_t first, int64_t n, int K, double mean, uint64_t seed)
{
    double hi = 2.0 * sqrt((mean > 0 ? mean : 1.0) / K);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; r++) {
        loom_rng g = loom_rng_stream(seed, (uint64_t)(first + r));
        for (int f = 0; f < K; f++)
            M[r * K + f] = (float)(hi * loom_rng_uniform(&g));
    }
}

void loom_mf_epoch(const loom_rating *v, int64_t n, float *W, float *H, int K, float step,
                   float lambda)
{
    for (int64_t k = 0; k < n; k++)
        loom_mf_update(W + (int64_t)v[k].u * K, H + (int64_t)v[k].i * K, K, v[k].r, step, lambda);
}

double loom_mf_sq_error(const loom_rating *v, int64_t n, const float *W, const float *H, int K)
{
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int64_t k = 0; k < n; k++) {
        const float *w = W + (int64_t)v[k].u * K, *h = H + (int64_t)v[k].i * K;
        float e = v[k].r;
        for (int f = 0; f < K; f++)
            e -= w[f] * h[f];
        s += (double)e * e;
    }
    return s;
}

double loom_mf_sq_norm(const float *M, int64_t rows, int K)
{
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int64_t x = 0; x < rows * K; x++)
        s += (double)M[x] * M[x];
    return s;
}

int loom_mf_save(const char *path, const float *M, int64_t rows, int K)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (int64_t r = 0; r < rows; r++)
        for (int c = 0; c < K; c++)
            fprintf(f, "%.7g%c", M[r * K + c], c + 1 < K ? ' ' : '\n');
    return fclose(f) ? -1 : 0;
}
