/* lda_bench.c — tokens per second of the LDA kernel's samplers on a
 * generated corpus (docs/lda-kernel.md, "Throughput").
 *
 *   lda_bench [-K topics] [-D docs] [-L mean doc length] [-V vocabulary]
 *             [-T planted topics] [-w warm-up sweeps] [-s timed sweeps]
 *             [-d dense sweeps] [-b word blocks] [-S seed]
 *
 * The corpus is drawn from LDA: T planted topics, each a Zipf(1) law over
 * its own random permutation of the vocabulary, document mixtures
 * Dirichlet(0.1), lengths uniform in [L/2, 3L/2].  The model (K topics,
 * alpha = 0.1, beta = 0.01) is warmed up with w F+tree sweeps, so that the
 * doc-topic counts are as sparse as in a real run; then s sweeps are timed
 * with the F+tree sampler and d with the dense O(K) one (from the same
 * state), each sweep run as b sub-epochs over word blocks (b = 1: the
 * serial twin).  Prints the median tokens/s of the timed sweeps of each
 * sampler and the log-likelihood. */
#include "../../kernels/lda.h"
#include "loom.h"
#include "../rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double unif(uint64_t *s) { return (double)(next(s) >> 11) * 0x1.0p-53; }

/* Gamma(a, 1): Marsaglia and Tsang, a < 1 through Gamma(a + 1) U^(1/a). */
static double gamma_draw(uint64_t *s, double a)
{
    if (a < 1)
        return gamma_draw(s, a + 1) * pow(unif(s) + 1e-300, 1 / a);
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double u1 = unif(s), u2 = unif(s);
        double x = sqrt(-2 * log(u1 + 1e-300)) * cos(2 * M_PI * u2), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        if (log(unif(s) + 1e-300) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

/* Index of the first cumulative weight above u * total (binary search). */
static int32_t pick(const double *cum, int32_t n, double u)
{
    double x = u * cum[n - 1];
    int32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (cum[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One sweep as `blocks` sub-epochs of one worker; returns tokens/s. */
static double timed_sweep(loom_lda_shard *s, int32_t *wt, int64_t *nk, int32_t blocks)
{
    int32_t K = s->p.K, V = s->p.V;
    double t0 = loom_wtime();
    int64_t n = 0;
    for (int32_t x = 0; x < blocks; x++) {
        int32_t lo, hi;
        loom_lda_word_block(V, blocks, x, &lo, &hi);
        n += loom_lda_sample_range(s, lo, hi, wt + (size_t)lo * K, (size_t)K, nk, NULL);
    }
    return (double)n / (loom_wtime() - t0);
}

int main(int argc, char **argv)
{
    int32_t K = 1000, D = 5000, L = 200, V = 20000, T = 100, warm = 5, sweeps = 3, dense = 1,
            blocks = 1;
    uint64_t seed = 1;
    int opt;
    while ((opt = getopt(argc, argv, "K:D:L:V:T:w:s:d:b:S:")) != -1) {
        long v = strtol(optarg, NULL, 10);
        switch (opt) {
        case 'K': K = (int32_t)v; break;
        case 'D': D = (int32_t)v; break;
        case 'L': L = (int32_t)v; break;
        case 'V': V = (int32_t)v; break;
        case 'T': T = (int32_t)v; break;
        case 'w': warm = (int32_t)v; break;
        case 's': sweeps = (int32_t)v; break;
        case 'd': dense = (int32_t)v; break;
        case 'b': blocks = (int32_t)v; break;
        case 'S': seed = (uint64_t)v; break;
        default:
            fprintf(stderr, "usage: %s [-K k] [-D docs] [-L len] [-V vocab] [-T planted] "
                            "[-w warm] [-s sweeps] [-d dense sweeps] [-b blocks] [-S seed]\n",
                    argv[0]);
            return 2;
        }
    }
    if (K < 1 || D < 1 || L < 2 || V < 2 || T < 1 || warm < 0 || sweeps < 1 || dense < 0 ||
        blocks < 1 || blocks > V) {
        fprintf(stderr, "lda_bench: bad arguments\n");
        return 2;
    }

    /* the corpus */
    uint64_t rng = seed;
    double *cum = malloc((size_t)T * V * sizeof *cum), *theta = malloc((size_t)T * sizeof *theta);
    int32_t *perm = malloc((size_t)V * sizeof *perm);
    for (int32_t t = 0; t < T; t++) {
        for (int32_t w = 0; w < V; w++)
            perm[w] = w;
        for (int32_t w = V - 1; w > 0; w--) {
            int32_t j = (int32_t)(next(&rng) % (uint64_t)(w + 1)), x = perm[w];
            perm[w] = perm[j];
            perm[j] = x;
        }
        double *c = cum + (size_t)t * V, acc = 0;
        double *wgt = calloc((size_t)V, sizeof *wgt);
        for (int32_t r = 0; r < V; r++)
            wgt[perm[r]] = 1.0 / (r + 1);
        for (int32_t w = 0; w < V; w++)
            c[w] = acc += wgt[w];
        free(wgt);
    }
    int64_t *off = malloc(((size_t)D + 1) * sizeof *off);
    int32_t *words = malloc((size_t)D * (size_t)(3 * L / 2 + 1) * sizeof *words);
    double *tcum = malloc((size_t)T * sizeof *tcum);
    off[0] = 0;
    for (int32_t d = 0; d < D; d++) {
        double acc = 0;
        for (int32_t t = 0; t < T; t++)
            tcum[t] = acc += theta[t] = gamma_draw(&rng, 0.1);
        int32_t len = L / 2 + (int32_t)(next(&rng) % (uint64_t)(L + 1));
        for (int32_t j = 0; j < len; j++) {
            int32_t t = pick(tcum, T, unif(&rng));
            words[off[d] + j] = pick(cum + (size_t)t * V, V, unif(&rng));
        }
        off[d + 1] = off[d] + len;
    }
    free(cum);
    free(theta);
    free(tcum);
    free(perm);

    loom_lda_params p = {.K = K, .V = V, .alpha = 0.1, .beta = 0.01, .seed = seed};
    loom_lda_shard s;
    if (loom_lda_shard_init(&s, &p, D, off, words, 0, 0) != LOOM_OK) {
        fprintf(stderr, "lda_bench: shard_init failed\n");
        return 1;
    }
    int32_t *wt = calloc((size_t)V * K, sizeof *wt);
    int64_t *nk = calloc((size_t)K, sizeof *nk);
    loom_lda_count_range(&s, 0, V, wt, (size_t)K, nk);
    printf("corpus: %d docs, %lld tokens, V=%d, %d planted topics; model K=%d, %d block(s)\n",
           D, (long long)s.n_tokens, V, T, K, blocks);
    double t0 = loom_wtime();
    for (int32_t i = 0; i < warm; i++)
        loom_lda_sweep(&s, wt, nk);
    double avg_kd = 0;
    for (int32_t d = 0; d < D; d++)
        avg_kd += s.dt_len[d];
    printf("warm-up: %d sweeps in %.2f s; mean nonzero topics per doc %.1f; loglik %.6e\n",
           warm, loom_wtime() - t0, avg_kd / D, loom_lda_loglik(&s, wt, nk));

    double *rate = malloc((size_t)(sweeps > dense ? sweeps : dense) * sizeof *rate);
    for (int32_t i = 0; i < sweeps; i++)
        rate[i] = timed_sweep(&s, wt, nk, blocks);
    qsort(rate, (size_t)sweeps, sizeof *rate, cmp_double);
    printf("ftree K=%d: %.3f Mtokens/s (median of %d sweeps; min %.3f max %.3f)\n", K,
           rate[sweeps / 2] / 1e6, sweeps, rate[0] / 1e6, rate[sweeps - 1] / 1e6);
    if (dense > 0) {
        s.p.sampler = LOOM_LDA_DENSE;
        for (int32_t i = 0; i < dense; i++)
            rate[i] = timed_sweep(&s, wt, nk, blocks);
        qsort(rate, (size_t)dense, sizeof *rate, cmp_double);
        printf("dense K=%d: %.3f Mtokens/s (median of %d sweeps)\n", K, rate[dense / 2] / 1e6,
               dense);
    }
    printf("loglik after timing: %.6e\n", loom_lda_loglik(&s, wt, nk));
    free(rate);
    free(wt);
    free(nk);
    free(off);
    free(words);
    loom_lda_shard_free(&s);
    return 0;
}
