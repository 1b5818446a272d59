/* rng.h — the seeded generator the test programs share: SplitMix64
 * (Steele, Lea, Flood 2014), so that a serial replay draws exactly what the
 * ranks drew. */
#ifndef LOOM_TEST_RNG_H
#define LOOM_TEST_RNG_H
#include <stdint.h>

/* A well-mixed hash of x. */
static inline uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The next number of the stream whose state is *s. */
static inline uint64_t next(uint64_t *s)
{
    uint64_t x = mix(*s);
    *s += 0x9e3779b97f4a7c15ULL;
    return x;
}
#endif
