/* cache.c — Bösen's bounded client cache (seed 002): LOOM_CACHE_BYTES
 * caps the bytes of working copies a rank keeps of each allocation.
 *
 * Every copy is a cache entry: a row or page unit that is valid here but
 * not homed in place (U_HOME units are the home store itself).  Each
 * entry remembers the sync point at which it was last fetched or read
 * through loom_row_get (a->used; page units: fetched, as plain loads
 * leave no trace).  At every sync point (barrier, clock, a loop's sync
 * point), after the release and before the acquire (so that write notices
 * do not refresh what is about to go), an allocation holding more than its cap
 * drops its least recently used copies until it fits, and gives their
 * memory back to the system: rows by madvise(MADV_DONTNEED) of every
 * whole OS page all of whose rows are dropped, page units by punching
 * them out of the working copy's memfd.  At a sync point every copy is
 * clean (the release sent every write home), so nothing is written back
 * and nothing lost; a dropped copy is fetched again on its next use, as
 * after an acquire, so every guarantee of the policy holds unchanged.
 * Between two sync points a rank may touch more than the cap; pointers
 * from loom_row_get are good until the next release or acquire, as
 * always.  Only policies with homes and copies fetched on demand (bsp,
 * ssp, priority, writethrough) are bounded; local has no copies, ring's
 * copy is the partition the rank owns.
 *
 * Called only from sync points (loom_dsm_barrier, the clock), with no
 * loop running on this rank; takes no lock (the units' locks are free
 * there). */
#include "dsm.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int loom_dsm_cache_wanted(const loom_policy *p)
{
    return loom_rt_icv.cache_bytes > 0 && loom_rt_icv.nranks > 1 && !p->plain && !p->rotate;
}

/* Copies are dropped in groups of units that share OS pages (a page's
 * worth of small rows: a->cache_k units), so that what is dropped is
 * memory given back. */
struct group { uint32_t used; uint32_t pad; size_t g, held; };

static int by_use(const void *x, const void *y)
{
    const struct group *p = x, *q = y;
    return p->used != q->used ? (p->used > q->used) - (p->used < q->used)
                              : (p->g > q->g) - (p->g < q->g);
}

int loom_dsm_cache_init(loom_dsm_alloc *a)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    a->cache_k = a->unit >= ps ? 1 : ps / a->unit;
    a->used = calloc(a->nunits, sizeof *a->used);
    a->cache_res = calloc((a->nunits + a->cache_k - 1) / a->cache_k, 1);
    return a->used && a->cache_res ? 0 : -1;
}

/* One past the last unit of group g. */
static size_t group_end(const loom_dsm_alloc *a, size_t g)
{
    return (g + 1) * a->cache_k < a->nunits ? (g + 1) * a->cache_k : a->nunits;
}

/* 1 if no unit of group g holds a valid copy. */
static int group_empty(const loom_dsm_alloc *a, size_t g)
{
    for (size_t u = g * a->cache_k; u < group_end(a, g); u++)
        if (atomic_load(&a->state[u]) != U_INVALID)
            return 0;
    return 1;
}

/* Gives back the memory of groups [g0, g1), every unit of which is
 * invalid: rows, the whole OS pages inside; pages, their memfd range. */
static void release(loom_dsm_alloc *a, size_t g0, size_t g1)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    size_t lo = g0 * a->cache_k * a->unit, hi = group_end(a, g1 - 1) * a->unit;
    if (a->kind == LOOM_UNIT_PAGE) {
        fallocate(a->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
                  (off_t)(hi - lo));
    } else {
        lo = (lo + ps - 1) / ps * ps, hi = hi / ps * ps; /* shared pages stay */
        if (hi > lo)
            madvise(a->base + lo, hi - lo, MADV_DONTNEED);
    }
    memset(a->cache_res + g0, 0, g1 - g0);
}

void loom_dsm_cache_trim(loom_dsm_alloc *a)
{
    if (!a->used)
        return;
    a->cache_round++; /* uses from here on are newer than every one before */
    size_t k = a->cache_k, ngroups = (a->nunits + k - 1) / k, held = 0, n = 0;
    size_t cap = loom_rt_icv.cache_bytes / a->unit;
    for (size_t u = 0; u < a->nunits; u++) {
        int st = atomic_load(&a->state[u]);
        held += st != U_INVALID && st != U_HOME;
    }
    struct group *e = held > cap ? malloc(ngroups * sizeof *e) : NULL;
    if (held > cap && !e)
        loom_rt_die(1, "out of memory trimming the cache of '%s'", a->name);
    for (size_t g = 0; e && g < ngroups; g++) { /* groups of clean copies only */
        struct group x = {.g = g};
        int droppable = 1;
        for (size_t u = g * k; u < group_end(a, g); u++) {
            int st = atomic_load(&a->state[u]);
            if (st == U_CLEAN) {
                x.held++;
                x.used = a->used[u] > x.used ? a->used[u] : x.used;
            } else if (st != U_INVALID) {
                droppable = 0;
            }
        }
        if (droppable && x.held)
            e[n++] = x;
    }
    if (e)
        qsort(e, n, sizeof *e, by_use); /* the least recently used first */
    size_t drop = 0, dropped = 0;
    for (; drop < n && held - dropped > cap; drop++)
        dropped += e[drop].held;
    for (size_t i = 0; i < drop; i++) {
        size_t g = e[i].g, end = group_end(a, g);
        for (size_t u = g * k; u < end; u++)
            atomic_store(&a->state[u], U_INVALID);
        atomic_fetch_add(&a->dropped_gen, 1);
        if (a->kind == LOOM_UNIT_PAGE)
            loom_dsm_protect(a, g * k, end, PROT_NONE);
    }
    free(e);
    /* every group that may hold memory and holds no valid copy (dropped
     * now, or by an acquire) gives it back, in runs */
    for (size_t g = 0; g < ngroups;) {
        if (!a->cache_res[g] || !group_empty(a, g)) {
            g++;
            continue;
        }
        size_t g1 = g + 1;
        while (g1 < ngroups && group_empty(a, g1))
            g1++;
        release(a, g, g1);
        g = g1;
    }
    atomic_fetch_add(&a->stats.evicted, dropped);
    atomic_store(&a->stats.cached, (held - dropped) * a->unit);
}
