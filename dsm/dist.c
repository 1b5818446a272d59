/* dist.c — distributions: which rank is home of each unit, and where in
 * that home's store the unit lives (its slot). */
#include "dsm.h"

#include <stdlib.h>

/* SplitMix64's finalizer: a cheap, well-mixed hash of a unit index. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int loom_dsm_dist_slots(const int *home, size_t n, uint32_t *slot, size_t *nhome)
{
    uint32_t *count = calloc((size_t)loom_rt_icv.nranks, sizeof *count);
    if (!count)
        return LOOM_ERR_NOMEM;
    for (size_t u = 0; u < n; u++)
        slot[u] = count[home[u]]++;
    *nhome = count[loom_rt_icv.rank];
    free(count);
    return LOOM_OK;
}

int loom_dsm_dist_place(loom_dsm_alloc *a, loom_dist d, int (*fn)(size_t, int, void *),
                    void *arg)
{
    int P = loom_rt_icv.nranks;
    size_t n = a->nunits, per = (n + (size_t)P - 1) / (size_t)P;
    for (size_t u = 0; u < n; u++) {
        int h;
        switch (d) {
        case LOOM_DIST_CYCLIC: h = (int)(u % (size_t)P); break;
        case LOOM_DIST_HASH: h = (int)(mix(u) % (uint64_t)P); break;
        case LOOM_DIST_EXPLICIT:
            h = fn(u, P, arg);
            if (h < 0 || h >= P) {
                loom_rt_log("loom_alloc('%s'): the home function gave rank %d for unit %zu "
                         "(there are %d ranks)", a->name, h, u, P);
                return LOOM_ERR_ARG;
            }
            break;
        default: h = (int)(u / per); break;
        }
        a->home[u] = h;
    }
    return loom_dsm_dist_slots(a->home, n, a->slot, &a->nhome);
}
