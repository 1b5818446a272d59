/* w2v.c — skip-gram with negative sampling (w2v.h). */
#include "w2v.h"
#include "dot.h"

#include <loom.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXDIM 1024

static inline float sigmoid(float x) { return 1 / (1 + expf(-x)); }

/* Row r of the input (which = 0) or output (which = 1) vectors. */
static inline float *row(const loom_w2v_model *m, int which, int32_t r)
{
    float *b = m->base[which];
    return b ? b + (size_t)r * (size_t)m->p.dim : m->row(m->ctx, which, r);
}

double loom_w2v_sentence(const loom_w2v_model *m, const int32_t *words, int64_t n, float alpha,
                         loom_rng *g, int64_t *pairs)
{
    int dim = m->p.dim;
    int32_t kept[4096];
    double loss = 0;
    *pairs = 0;
    /* long sentences are trained in pieces of 4096 kept words */
    for (int64_t at = 0; at < n;) {
        int64_t k = 0;
        for (; at < n && k < 4096; at++)
            if (m->keep[words[at]] >= 1 || loom_rng_uniform(g) < m->keep[words[at]])
                kept[k++] = words[at];
        /* the product of the piece's outcome probabilities: one log a
         * piece (or when it nears underflow), not one a pair (the logs
         * and fmax calls were ~2.5% of a run's samples) */
        double prob = 1;
        for (int64_t t = 0; t < k; t++) {
            int b = 1 + (int)loom_rng_below(g, (uint32_t)m->p.window);
            float *in = row(m, 0, kept[t]);
            for (int64_t c = t - b; c <= t + b; c++) {
                if (c < 0 || c >= k || c == t)
                    continue;
                float delta[MAXDIM]; /* zeroed to dim only: a whole {0} was 10% of this function */
#pragma omp simd
                for (int f = 0; f < dim; f++)
                    delta[f] = 0;
                for (int s = 0; s <= m->p.negative; s++) {
                    int32_t x = s ? loom_alias_draw(m->neg, g) : kept[c];
                    if (s && x == kept[c])
                        continue;
                    float *out = row(m, 1, x), z = loom_dot(in, out, dim);
                    float q = sigmoid(z), gr = alpha * ((s == 0) - q);
                    double p = s ? 1 - q : q;
                    prob *= p > 1e-30 ? p : 1e-30; /* fmax without the call: a NaN gives 1e-30 too */
                    if (prob < 1e-200) { /* before it underflows */
                        loss -= log(prob);
                        prob = 1;
                    }
#pragma omp simd
                    for (int f = 0; f < dim; f++) {
                        delta[f] += gr * out[f];
                        out[f] += gr * in[f];
                    }
                }
#pragma omp simd
                for (int f = 0; f < dim; f++)
                    in[f] += delta[f];
                ++*pairs;
            }
        }
        loss -= log(prob);
    }
    return loss;
}

int loom_w2v_tables(const int64_t *count, int32_t V, int64_t T, double sample, float *keep,
                    loom_alias *neg)
{
    double *w = malloc((size_t)(V ? V : 1) * sizeof *w);
    if (!w)
        return LOOM_ERR_NOMEM;
    for (int32_t v = 0; v < V; v++) {
        double f = (double)count[v], st = sample * (double)T;
        keep[v] = sample > 0 && f > 0 ? (float)((sqrt(f / st) + 1) * st / f) : 1.0f;
        w[v] = pow(f, 0.75);
    }
    int rc = loom_alias_build(neg, w, V);
    free(w);
    return rc;
}

void loom_w2v_init_rows(float *in, int64_t first, int64_t n, int dim, uint64_t seed)
{
    for (int64_t r = 0; r < n; r++) {
        loom_rng g = loom_rng_stream(seed, (uint64_t)(first + r));
        for (int f = 0; f < dim; f++)
            in[r * dim + f] = (float)((loom_rng_uniform(&g) - 0.5) / dim);
    }
}

int loom_w2v_save(const char *path, char *const *vocab, int32_t V, int dim,
                  const loom_w2v_model *m)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "%d %d\n", V, dim);
    for (int32_t v = 0; v < V; v++) {
        const float *x = row(m, 0, v);
        fputs(vocab[v], f);
        for (int d = 0; d < dim; d++)
            fprintf(f, " %.6g", x[d]);
        fputc('\n', f);
    }
    return fclose(f) ? -1 : 0;
}
