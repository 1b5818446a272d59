/* rng.h — random numbers for the data generator and the apps: SplitMix64
 * streams (Steele, Lea, Flood 2014), uniform, normal, gamma, Dirichlet and
 * Poisson variates, and Walker alias tables for drawing from a fixed
 * discrete distribution in O(1).  Every draw depends only on the stream's
 * state, so a stream per user or per document makes parallel output
 * independent of the number of threads. */
#ifndef LOOM_RNG_H
#define LOOM_RNG_H

#include <stdint.h>

typedef struct loom_rng {
    uint64_t s;
} loom_rng;

/* A well-mixed 64-bit hash of x (SplitMix64's output function). */
static inline uint64_t loom_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Stream number `stream` of generator `seed`: distinct (seed, stream)
 * pairs start at unrelated points of the SplitMix64 sequence. */
static inline loom_rng loom_rng_stream(uint64_t seed, uint64_t stream)
{
    return (loom_rng){loom_mix64(loom_mix64(seed) ^ loom_mix64(stream ^ 0x5851f42d4c957f2dULL))};
}

static inline uint64_t loom_rng_next(loom_rng *g)
{
    uint64_t x = loom_mix64(g->s);
    g->s += 0x9e3779b97f4a7c15ULL;
    return x;
}

/* Uniform in [0, 1), 53 random bits. */
static inline double loom_rng_uniform(loom_rng *g)
{
    return (double)(loom_rng_next(g) >> 11) * 0x1p-53;
}

/* Uniform in (0, 1]: safe to take the log of. */
static inline double loom_rng_uniform_pos(loom_rng *g)
{
    return (double)((loom_rng_next(g) >> 11) + 1) * 0x1p-53;
}

/* Uniform integer in [0, n), n >= 1 (multiply-shift; bias below n/2^32). */
static inline uint32_t loom_rng_below(loom_rng *g, uint32_t n)
{
    return (uint32_t)(((loom_rng_next(g) >> 32) * n) >> 32);
}

/* A standard normal variate (Box-Muller). */
double loom_rng_normal(loom_rng *g);

/* The logarithm of a Gamma(shape, 1) variate, shape > 0 (Marsaglia-Tsang;
 * shapes below 1 by G(a) = G(a+1) U^(1/a)).  Stays finite where the
 * variate itself underflows (shape 1e-6), so Dirichlet draws with tiny
 * parameters can be normalized in log space. */
double loom_rng_log_gamma(loom_rng *g, double shape);

/* A Dirichlet(alpha[0..n-1]) draw into p (alpha == NULL means every
 * parameter is alpha0); the p sum to 1.  Components whose gamma variate
 * underflows come out as exactly 0. */
void loom_rng_dirichlet(loom_rng *g, const double *alpha, double alpha0, int32_t n, double *p);

/* A Poisson(mean) variate, mean >= 0 (multiplication below 12, Hörmann's
 * PTRS rejection above). */
int64_t loom_rng_poisson(loom_rng *g, double mean);

/* A Walker alias table over n outcomes. */
typedef struct loom_alias {
    int32_t n;
    uint32_t *thresh; /* keep j when a 32-bit coin is below thresh[j] */
    int32_t *alias;   /* else take alias[j] */
} loom_alias;

/* Builds a over weights w[0..n-1] (>= 0, not all 0; need not sum to 1),
 * Vose's O(n) method.  Returns LOOM_OK, LOOM_ERR_ARG or LOOM_ERR_NOMEM. */
int loom_alias_build(loom_alias *a, const double *w, int32_t n);

/* One draw from a: outcome j with probability w[j] / sum(w), up to the
 * 2^-32 resolution of the table. */
static inline int32_t loom_alias_draw(const loom_alias *a, loom_rng *g)
{
    uint64_t r = loom_rng_next(g);
    int32_t j = (int32_t)(((r >> 32) * (uint64_t)a->n) >> 32);
    return (uint32_t)r < a->thresh[j] ? j : a->alias[j];
}

void loom_alias_free(loom_alias *a);

#endif
