/* single.c — sequential code between loops, once for the whole job:
 * LOOM_SINGLE (loom.h).
 *
 * Code between loops runs on every rank, so a write there is made once per
 * rank, and writes of different ranks to one row race.  LOOM_SINGLE runs
 * its block on rank 0 only (OpenMP's `single`, across ranks) and ends in a
 * barrier after which every rank sees its writes: page units through the
 * fault path as always; rows written through loom_at inside the block are
 * released whole (loom_at marks them put, access.c), and every row
 * allocation rank 0 changed in the block is made current in every rank's
 * copy, so plain loads after the block read it too. */
#include "sched.h"

#include <stdlib.h>

int loom_sched_single;

int loom_single_begin(void)
{
    if (loom_rt_icv.rank != 0)
        return 2;
    loom_sched_single = loom_rt_icv.nranks > 1;
    return 1;
}

/* Contract: every rank calls it once per LOOM_SINGLE (collective with
 * several ranks), with no other thread of the rank inside an allocation.
 * Rank 0's writes are released, every rank waits for them (a barrier),
 * and then makes its copy of each row allocation rank 0 changed current
 * (dsm's loom_dsm_row_refresh).  Returns 0, which ends the macro's loop. */
int loom_single_end(void)
{
    loom_sched_single = 0;
    if (loom_rt_icv.nranks == 1)
        return 0;
    int N = atomic_load(&loom_dsm_nallocs);
    int32_t *changed = calloc((size_t)N + 1, sizeof *changed);
    if (!changed)
        loom_rt_die(2, "LOOM_SINGLE: out of memory at the end of the block");
    for (int id = 0; id < N; id++) {
        loom_dsm_alloc *a = loom_dsm_allocs[id];
        changed[id] = a && a->live && a->kind == LOOM_UNIT_ROW && a->ndirty > 0;
    }
    loom_allreduce(LOOM_IN_PLACE, changed, (size_t)N + 1, LOOM_INT32, LOOM_MAX);
    loom_dsm_barrier();
    for (int id = 0; id < N; id++)
        if (changed[id])
            loom_sched_refresh(id);
    free(changed);
    return 0;
}
