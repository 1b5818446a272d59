/* policy.h — the coherence-policy interface: one table of hooks, one file
 * per policy (policy_local.c, policy_bsp.c, policy_ssp.c, policy_ring.c,
 * policy_priority.c).  The fault path (fault.c) and the row path (row.c)
 * call only these hooks, so a new policy plugs in without touching either.
 *
 * Every hook runs in the rank that owns the working copy:
 *   read_miss, first_write  from the fault path, unit lock held
 *   row_miss                from the row path, row lock held
 *   release, acquire        from loom_release/loom_acquire (and so from
 *                           loom_barrier, loom_lock, loom_unlock), with no
 *                           other thread of the rank inside the allocation
 *   clock                   from loom_clock, likewise
 * A hook that moves data uses diff.c (loom_dsm_fetch, loom_flush_*). */
#ifndef LOOM_DSM_POLICY_H
#define LOOM_DSM_POLICY_H

typedef struct loom_dsm_alloc loom_dsm_alloc;

typedef struct loom_policy {
    const char *name;
    /* A page unit was touched while invalid: make the working copy valid. */
    void (*read_miss)(loom_dsm_alloc *a, size_t unit);
    /* A clean page unit is about to be written: remember how it was. */
    void (*first_write)(loom_dsm_alloc *a, size_t unit);
    /* A row is read while invalid: fetch it (own pending adds re-applied). */
    void (*row_miss)(loom_dsm_alloc *a, size_t row);
    /* Push this rank's writes of a toward their homes (into the flush). */
    void (*release)(loom_dsm_alloc *a);
    /* Drop what may be stale. */
    void (*acquire)(loom_dsm_alloc *a);
    /* Optional: this rank's clock advanced (loom_clock). */
    void (*clock)(loom_dsm_alloc *a);
    /* Optional: set up / tear down the policy's own state (a->policy_data),
     * collectively, at the end of loom_alloc / start of loom_free. */
    int (*init)(loom_dsm_alloc *a);
    void (*fini)(loom_dsm_alloc *a);
} loom_policy;

extern const loom_policy loom_policy_local;
extern const loom_policy loom_policy_bsp;
extern const loom_policy loom_policy_ssp;
extern const loom_policy loom_policy_ring;
extern const loom_policy loom_policy_priority;

/* Release consistency with bounded staleness: bsp's hooks, which ssp
 * shares (bsp is ssp with staleness 0). */
void loom_rc_read_miss(loom_dsm_alloc *a, size_t unit);
void loom_rc_first_write(loom_dsm_alloc *a, size_t unit);
void loom_rc_row_miss(loom_dsm_alloc *a, size_t row);
void loom_rc_release(loom_dsm_alloc *a);
void loom_rc_acquire(loom_dsm_alloc *a);
void loom_rc_clock(loom_dsm_alloc *a);
/* Invalidate every clean copy of a stamped before `older_than` (all of
 * them with UINT64_MAX); dirty units and rows with pending writes stay. */
void loom_rc_invalidate(loom_dsm_alloc *a, uint64_t older_than);
const loom_policy *loom_policy_find(const char *name);

#endif
