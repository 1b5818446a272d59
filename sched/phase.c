/* phase.c — what the serializable plans (rotation.c, groups.c) do in and
 * around each phase: the per-phase row lists of the non-ring arrays (built
 * from marks, prefetched before a phase, the written rows put back after
 * it) and one iteration run, checked under LOOM_CHECK=serial.  The
 * strategies' shared helpers: plan.c only chooses, caches and dispatches.
 * Calls the DSM's row path and check.c; nothing of plan.c or of the
 * strategies. */
#include "sched.h"

#include <stdlib.h>

/* Contract: appends to p's row lists the rows of allocation id marked in
 * mark[0..nunits) (bit 0 touched, bit 1 written) for `phase`, and clears
 * mark[].  Nothing appended when no row is marked.  Called while a plan is
 * built (one thread).  Returns LOOM_OK or LOOM_ERR_NOMEM (p keeps what it
 * has; loom_sched_plan_free frees it). */
int loom_sched_plan_rowlist(loom_plan *p, int phase, int id, uint8_t *mark)
{
    loom_dsm_alloc *a = loom_dsm_allocs[id];
    size_t n = 0;
    for (size_t r = 0; r < a->nunits; r++)
        n += mark[r] != 0;
    if (!n)
        return LOOM_OK;
    struct loom_rowlist *rl = realloc(p->rl, (size_t)(p->nrl + 1) * sizeof *rl);
    if (!rl)
        return LOOM_ERR_NOMEM;
    p->rl = rl;
    rl = &p->rl[p->nrl++];
    *rl = (struct loom_rowlist){phase, id, 0, malloc(n * sizeof(size_t)), malloc(n)};
    if (!rl->rows || !rl->written)
        return LOOM_ERR_NOMEM;
    for (size_t r = 0; r < a->nunits; r++)
        if (mark[r]) {
            rl->rows[rl->n] = r;
            rl->written[rl->n++] = mark[r] >> 1;
            mark[r] = 0;
        }
    return LOOM_OK;
}

/* Contract: starts fetching every listed row of `phase` (loom_row_prefetch;
 * returns without waiting).  One thread, before the phase's iterations. */
void loom_sched_plan_prefetch(loom_plan *p, int phase)
{
    for (int i = 0; i < p->nrl; i++)
        if (p->rl[i].phase == phase)
            loom_row_prefetch(loom_dsm_allocs[p->rl[i].alloc]->base, p->rl[i].rows, p->rl[i].n);
}

/* Contract: marks every listed row `phase` wrote for the next release to
 * put home (loom_dsm_row_mark_put).  One thread, after the phase's
 * iterations. */
void loom_sched_plan_writeback(loom_plan *p, int phase)
{
    for (int i = 0; i < p->nrl; i++)
        if (p->rl[i].phase == phase)
            for (size_t r = 0; r < p->rl[i].n; r++)
                if (p->rl[i].written[r])
                    loom_dsm_row_mark_put(loom_dsm_allocs[p->rl[i].alloc], p->rl[i].rows[r]);
}

/* Contract: runs iteration k of plan p (index p->first + k) on the calling
 * thread; under LOOM_CHECK=serial the checker records it for `phase` and
 * the accessors check it (loom_sched_ts.mode).  Any plan thread. */
void loom_sched_plan_iter(loom_plan *p, long k, int phase)
{
    if (__builtin_expect(loom_rt_icv.check_serial, 0)) {
        loom_sched_check_iter(p, k, phase);
        loom_sched_ts.mode = TS_CHECK;
        loom_sched_body_one(&p->body, p->first + k);
        loom_sched_ts.mode = TS_PLAIN;
    } else {
        loom_sched_body_one(&p->body, p->first + k);
    }
}
