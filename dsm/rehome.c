/* rehome.c — IterStore's data placement (seed 003): move rows' homes to
 * the ranks that use them.
 *
 * An allocation's homes are fixed when it is made (dist.c: block by
 * default), before anyone knows which rank will read and write which row.
 * A repeated loop knows after its first call (sched/prefetch.c records
 * the rows each round touched): a row that one rank touches most is
 * cheaper homed there, since its home reads it from its own store and
 * applies its own diffs without a message.  loom_dsm_rehome moves the
 * homes to a new map at a quiescent point: every rank gets the master
 * copies of the rows it now homes from their old homes (one get per run
 * of consecutive slots, all in flight together), registers its new store,
 * and every rank learns every store's key (one allgather); then the maps
 * change.  Working copies are untouched: they hold the same values.
 *
 * Only row allocations under bsp or ssp with a separate home store (no
 * averaging merge, no check mode: those keep per-home-slot state) are
 * moved.  A checkpoint saves the map in force (checkpoint.c), and a
 * restart puts it back before it fills the stores (restart.c), so a
 * restarted job has the same homes. */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int loom_dsm_rehome_eligible(const loom_dsm_alloc *a)
{
    return a->kind == LOOM_UNIT_ROW && !a->inplace && !a->average && !a->writer &&
           !a->policy->plain &&
           (a->policy == loom_dsm_policy_find("bsp") || a->policy == loom_dsm_policy_find("ssp"));
}

/* Get into store (slot order: the units homed here under home[], in unit
 * order) their master copies from their old homes, a's maps still the old
 * ones: runs of consecutive old slots, batched (diff.c).  Waits. */
static void move_in(loom_dsm_alloc *a, const int *home, size_t nhome, char *store)
{
    size_t *mine = malloc((nhome + 1) * sizeof *mine), k = 0;
    if (!mine)
        loom_rt_die(1, "out of memory moving the homes of '%s'", a->name);
    for (size_t u = 0; u < a->nunits; u++)
        if (home[u] == loom_rt_icv.rank)
            mine[k++] = u;
    loom_dsm_fetch_units(a, mine, k, store);
    free(mine);
}

void loom_dsm_set_homes(loom_dsm_alloc *a, const int *home)
{
    memcpy(a->home, home, a->nunits * sizeof *home);
    if (loom_dsm_dist_slots(a->home, a->nunits, a->slot, &a->nhome))
        loom_rt_die(1, "out of memory placing the homes of '%s'", a->name);
    a->homehash = 0;
}

int loom_dsm_rehome(loom_dsm_alloc *a, const int *newhome)
{
    const int P = loom_rt_icv.nranks, me = loom_rt_icv.rank;
    const size_t N = a->nunits;
    int *home = malloc((N + 1) * sizeof *home);
    uint32_t *slot = malloc((N + 1) * sizeof *slot);
    uint64_t *base = calloc((size_t)P, sizeof *base);
    void **keys = calloc((size_t)P, sizeof *keys);
    size_t nhome = 0;
    int32_t bad = !home || !slot || !base || !keys;
    for (size_t u = 0; !bad && u < N; u++)
        if ((home[u] = newhome[u]) < 0 || home[u] >= P)
            bad = 2;
    if (!bad && loom_dsm_dist_slots(home, N, slot, &nhome))
        bad = 1;
    loom_allreduce(LOOM_IN_PLACE, &bad, 1, LOOM_INT32, LOOM_MAX);
    size_t len = loom_dsm_store_len(nhome, a->unit);
    char *store = bad ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE,
                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int32_t nomem = store == MAP_FAILED;
    loom_allreduce(LOOM_IN_PLACE, &nomem, 1, LOOM_INT32, LOOM_MAX);
    void *memh = NULL;
    int rc = bad == 2 ? LOOM_ERR_ARG : bad || nomem ? LOOM_ERR_NOMEM : LOOM_OK;
    void *rkey = NULL;
    size_t rlen = 0;
    if (!rc) {
        move_in(a, home, nhome, store);
        loom_rt_coll_barrier(); /* every get from an old store has landed */
        int32_t net = loom_rt_tp_mem_map(store, len, &memh, &rkey, &rlen) != 0;
        loom_allreduce(LOOM_IN_PLACE, &net, 1, LOOM_INT32, LOOM_MAX);
        if (net && memh)
            loom_rt_tp_mem_unmap(memh), loom_rt_tp_rkey_buffer_free(rkey);
        rc = net ? LOOM_ERR_NET : LOOM_OK;
    }
    if (!rc)
        loom_dsm_share_keys(store, rkey, rlen, base, keys);
    if (rc) {
        if (store != MAP_FAILED)
            munmap(store, len);
        free(home), free(slot), free(base), free(keys);
        return rc;
    }
    size_t moved = 0;
    for (size_t u = 0; u < N; u++)
        moved += home[u] == me && a->home[u] != me;
    atomic_fetch_add(&a->stats.rehomed, moved);
    /* the new maps */
    loom_dsm_store_free(a);
    free(a->home);
    free(a->slot);
    free(a->rkeys);
    free(a->store_base);
    a->home = home;
    a->slot = slot;
    a->nhome = nhome;
    a->store = store;
    a->memh = memh;
    a->rkeys = keys;
    a->store_base = base;
    a->homehash = 0; /* recomputed when a checkpoint asks */
    loom_rt_coll_barrier(); /* no rank reaches a new home before it has the new maps */
    return LOOM_OK;
}
