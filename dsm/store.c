/* store.c — a rank's memory of an allocation below the coherence
 * protocol: its home store freed and its remote keys shared with every
 * rank, and the protection of a range of its copy's units (the page
 * path's tool).  Leaf helpers: they call only the runtime. */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Contract (dsm.h): a's home store unmapped and its memory handle and
 * remote keys released; a->store NULL.  From loom_free and rehome.c. */
void loom_dsm_store_free(loom_dsm_alloc *a)
{
    if (a->memh)
        loom_rt_tp_mem_unmap(a->memh);
    for (int r = 0; a->rkeys && r < loom_rt_icv.nranks; r++)
        if (a->rkeys[r])
            loom_rt_tp_rkey_destroy(a->rkeys[r]);
    if (a->store && !a->inplace)
        munmap(a->store, loom_dsm_store_len(a->nhome, a->unit));
    a->memh = NULL;
    a->store = NULL;
}

/* Give every rank every store's address and key: store and its packed
 * key (rkey, rlen bytes; freed here) in, base[r] and keys[r] (NULL for
 * this rank) out.  Collective (make_store below, and rehome.c). */
void loom_dsm_share_keys(const void *store, void *rkey, size_t rlen, uint64_t *base, void **keys)
{
    int64_t maxlen = (int64_t)rlen;
    loom_allreduce(LOOM_IN_PLACE, &maxlen, 1, LOOM_INT64, LOOM_MAX);
    size_t rec = 16 + (size_t)maxlen, P = (size_t)loom_rt_icv.nranks;
    uint8_t *mine = calloc(1, rec), *all = calloc(P, rec);
    if (!mine || !all)
        loom_rt_die(1, "out of memory exchanging the keys of a store");
    uint64_t sb = (uint64_t)(uintptr_t)store;
    memcpy(mine, &sb, 8);
    memcpy(mine + 8, &rlen, 8);
    memcpy(mine + 16, rkey, rlen);
    loom_rt_tp_rkey_buffer_free(rkey);
    loom_rt_allgather(mine, all, rec);
    for (size_t r = 0; r < P; r++) {
        memcpy(&base[r], all + r * rec, 8);
        keys[r] = (int)r != loom_rt_icv.rank ? loom_rt_tp_rkey_unpack((int)r, all + r * rec + 16) : NULL;
    }
    free(mine);
    free(all);
}

/* Contract (dsm.h): units [u0, u1) of a's copy get protection prot; an
 * mprotect failure ends the job with the likely cause. */
void loom_dsm_protect(loom_dsm_alloc *a, size_t u0, size_t u1, int prot)
{
    if (u1 > u0 && mprotect(a->base + u0 * a->unit, (u1 - u0) * a->unit, prot))
        loom_rt_die(1, "mprotect of '%s' failed (vm.max_map_count too low for %zu units? "
                 "use a larger page_unit)", a->name, a->nunits);
}
