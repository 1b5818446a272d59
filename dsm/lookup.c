/* lookup.c — the table of allocations, and finding an allocation by an
 * address in it: the leaf every other DSM file (and sched/) looks
 * allocations up through.  The table only grows (a freed allocation's
 * entry stays, not live), so a reader needs no lock. */
#include "dsm.h"

loom_dsm_alloc *_Atomic loom_dsm_allocs[LOOM_MAX_ALLOCS];
_Atomic int loom_dsm_nallocs; /* table entries in use (live or freed) */

/* Contract (dsm.h): the live allocation whose mapping holds p, or NULL.
 * Any thread; no lock (entries are published before nallocs grows). */
loom_dsm_alloc *loom_dsm_find(const void *p)
{
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++) {
        loom_dsm_alloc *a = loom_dsm_allocs[i];
        if (a && a->live && (const char *)p >= a->base && (const char *)p < a->base + a->mapped)
            return a;
    }
    return NULL;
}

loom_dsm_alloc *loom_dsm_lookup_base(const void *p)
{
    loom_dsm_alloc *a = loom_dsm_find(p);
    return a && a->base == p ? a : NULL;
}
