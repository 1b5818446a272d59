/* rng.h — the seeded generator the test programs share: the one SplitMix64
 * of data/rng.h (Steele, Lea, Flood 2014) under short names, so that a
 * serial replay draws exactly what the ranks drew. */
#ifndef LOOM_TEST_RNG_H
#define LOOM_TEST_RNG_H
#include <stdint.h>

#include "../data/rng.h"

/* A well-mixed hash of x. */
static inline uint64_t mix(uint64_t x)
{
    return loom_mix64(x);
}

/* The next number of the stream whose state is *s. */
static inline uint64_t next(uint64_t *s)
{
    loom_rng g = {*s};
    uint64_t x = loom_rng_next(&g);
    *s = g.s;
    return x;
}
#endif
