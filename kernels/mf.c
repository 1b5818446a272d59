/* mf.c — SGD matrix factorization: the loop over ratings (the serial
 * twin's loop and the Loom loop's block body), initialization, objective
 * terms and model files (mf.h). */
#include "mf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../data/rng.h"

/* How many ratings ahead the loop asks for the rows of W and H: a row
 * missing from the cache then arrives while the updates before it run.  On
 * 10^8 ratings (2 000 000 users, 100 000 items, K = 32), where the rows
 * of W come from memory, 8 ahead ran 1.8x the updates/s of none
 * (docs/loom-mf.md, "Measured"); 10^7 ratings fit the caches better. */
#define PREFETCH 8

/* Compiled for AVX-512, AVX2 and the baseline; the loader picks the best
 * the CPU has (GCC's target_clones), so the update's simd loops use the
 * widest vectors without -march flags. */
__attribute__((target_clones("avx512f", "avx2", "default")))
double loom_mf_block(const loom_rating *v, long n, const loom_mf *m)
{
    double loss = 0;
    const size_t row = (size_t)m->D * sizeof(float);
    for (long k = 0; k < n; k++) {
        if (k + PREFETCH < n) { /* the rows PREFETCH ratings ahead, every line */
            const long P = PREFETCH;
            const char *w = (const char *)(m->W + (int64_t)v[k + P].u * m->D);
            const char *h = (const char *)(m->H + (int64_t)v[k + P].i * m->D);
            for (size_t b = 0; b < row; b += 64) {
                __builtin_prefetch(w + b, 1, 3);
                __builtin_prefetch(h + b, 1, 3);
            }
            __builtin_prefetch(w + row - 1, 1, 3);
            __builtin_prefetch(h + row - 1, 1, 3);
        }
        float e = loom_mf_update(m->W + (int64_t)v[k].u * m->D, m->H + (int64_t)v[k].i * m->D,
                                 v[k].r, m);
        loss += (double)e * e;
    }
    return loss;
}

void loom_mf_init_rows(float *M, int64_t first, int64_t n, int K, int D, const uint32_t *count,
                       uint64_t seed)
{
    double s = 0.1 / sqrt((double)K);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; r++) {
        float *row = M + r * D;
        memset(row, 0, (size_t)D * sizeof *row);
        if (!count[r])
            continue;
        loom_rng g = loom_rng_stream(seed, (uint64_t)(first + r));
        for (int f = 0; f < K; f++)
            row[f] = (float)(s * (2 * loom_rng_uniform(&g) - 1));
        row[K + 1] = 1.0f / (float)count[r];
    }
}

double loom_mf_sq_error(const loom_rating *v, int64_t n, const loom_mf *m)
{
    double s = 0;
    const int K = m->K;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int64_t k = 0; k < n; k++) {
        const float *w = m->W + (int64_t)v[k].u * m->D, *h = m->H + (int64_t)v[k].i * m->D;
        float dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int f = 0; f < K; f++)
            dot += w[f] * h[f];
        double e = v[k].r - (m->mu + w[K] + h[K] + dot);
        s += e * e;
    }
    return s;
}

void loom_mf_sq_norm(const float *M, int64_t rows, int K, int D, double out[2])
{
    double s = 0, b = 0;
#pragma omp parallel for schedule(static) reduction(+ : s, b)
    for (int64_t r = 0; r < rows; r++) {
        for (int f = 0; f < K; f++)
            s += (double)M[r * D + f] * M[r * D + f];
        b += (double)M[r * D + K] * M[r * D + K];
    }
    out[0] = s;
    out[1] = b;
}

int loom_mf_save(const char *path, const float *M, int64_t rows, int D, int c0, int nc)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (int64_t r = 0; r < rows; r++)
        for (int c = c0; c < c0 + nc; c++)
            fprintf(f, "%.7g%c", M[r * D + c], c + 1 < c0 + nc ? ' ' : '\n');
    return fclose(f) ? -1 : 0;
}
