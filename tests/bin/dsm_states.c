/* dsm_states.c — the page path's sharing states, checked exactly after
 * every barrier on every rank (any rank count, any thread count).
 * Usage: dsm_states [UNIT=4096] [UNITS=96] [EPOCHS=4] [COHERENCE=bsp]
 * A page-unit array of UNITS units (block distribution: home units are
 * kept in place, dsm.h) goes through four phases, EPOCHS epochs each;
 * after each epoch's loom_barrier every rank reads every element and
 * compares it with the value the phase defines:
 *   home      every unit written only by its home (in place)
 *   one       every unit written by one rank that is not its home (home
 *             + 1) and read by all
 *   two       every unit written by two ranks, byte-interleaved: even
 *             bytes by its home, odd bytes by home + 1 (the home writes in
 *             place while the other's diff lands in the same unit)
 *   private   units written only by their home for EPOCHS - 1 epochs and
 *             read by nobody else, then read by home + 1, which checks the
 *             last private value and writes the odd bytes while the home
 *             writes the even ones (private becoming shared)
 * A wrong byte stops the job naming the phase, epoch, rank and offset.
 * Prints "dsm_states: ok" on rank 0. */
#include <loom.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t unit, nunits;
static int P, me;

/* The byte at offset i in epoch e of phase ph written by rank w. */
static uint8_t val(int ph, int e, size_t i, int w)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL + (uint64_t)(ph * 131 + e * 7 + w);
    x ^= x >> 29;
    return (uint8_t)(x * 0xbf58476d1ce4e5b9ULL >> 56);
}

static int home_of(size_t u)
{
    size_t per = (nunits + (size_t)P - 1) / (size_t)P;
    return (int)(u / per);
}

/* Which rank writes byte i in epoch e of phase ph. */
static int writer(int ph, int e, int epochs, size_t i)
{
    int h = home_of(i / unit), other = (h + 1) % P;
    switch (ph) {
    case 0: return h;
    case 1: return other;
    case 2: return i % 2 ? other : h;
    default: return e < epochs - 1 || i % 2 == 0 ? h : other;
    }
}

static void check_all(const uint8_t *a, int ph, int e, int epochs)
{
    static const char *names[] = {"home", "one", "two", "private"};
    size_t n = unit * nunits;
    long bad = -1;
    #pragma omp parallel for reduction(max : bad)
    for (size_t i = 0; i < n; i++) {
        if (a[i] != val(ph, e, i, writer(ph, e, epochs, i)) && (long)i > bad)
            bad = (long)i;
    }
    if (bad >= 0)
        loom_abort(1, "dsm_states: phase %s, epoch %d: rank %d reads byte %ld (unit %zu) as %u, "
                   "want %u", names[ph], e, me, bad, (size_t)bad / unit, a[bad],
                   val(ph, e, (size_t)bad, writer(ph, e, epochs, (size_t)bad)));
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    unit = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    nunits = argc > 2 ? (size_t)atol(argv[2]) : 96;
    int epochs = argc > 3 ? atoi(argv[3]) : 4;
    const char *coh = argc > 4 ? argv[4] : NULL;
    P = loom_size(), me = loom_rank();
    size_t n = unit * nunits;
    uint8_t *a = loom_alloc(n, &(loom_alloc_opts){.name = "states", .page_unit = unit,
                                                  .coherence = coh});
    if (!a || epochs < 2)
        return 1;
    for (int ph = 0; ph < 4; ph++)
        for (int e = 0; e < epochs; e++) {
            int last = e == epochs - 1;
            if (ph == 3 && last && P > 1) {
                /* the reader checks the private value before it writes */
                for (size_t u = 0; u < nunits; u++)
                    if ((home_of(u) + 1) % P == me)
                        for (size_t i = u * unit; i < (u + 1) * unit; i++)
                            if (a[i] != val(ph, e - 1, i, home_of(u)))
                                loom_abort(1, "dsm_states: phase private: rank %d reads a "
                                           "stale byte %zu of unit %zu", me, i, u);
                loom_barrier(); /* checked before the home writes again */
            }
            #pragma omp parallel for schedule(static)
            for (size_t i = 0; i < n; i++)
                if (writer(ph, e, epochs, i) == me)
                    a[i] = val(ph, e, i, me);
            loom_barrier();
            /* private phase: only the last epoch is read by everybody */
            if (ph != 3 || last)
                check_all(a, ph, e, epochs);
            else { /* the home checks its own units */
                for (size_t i = 0; i < n; i++)
                    if (home_of(i / unit) == me && a[i] != val(ph, e, i, me))
                        loom_abort(1, "dsm_states: phase private, epoch %d: rank %d lost its "
                                   "own byte %zu", e, me, i);
            }
            loom_barrier(); /* nobody writes the next epoch before all checked */
        }
    if (me == 0)
        printf("dsm_states: ok (%d ranks, %zu units of %zu B)\n", P, nunits, unit);
    loom_free(a);
    return loom_finalize();
}
