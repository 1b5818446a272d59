/* policy.h — the coherence-policy interface: one table of hooks, one file
 * per policy (policy_local.c, policy_bsp.c, policy_ssp.c, policy_ring.c,
 * policy_priority.c, policy_writethrough.c), one registry (policy.c) that
 * lists them.  The fault path (fault.c), the row path (row.c), loom_alloc,
 * checkpoints and the loop planner (sched/) ask only this table, so a new
 * policy plugs in without touching any of them: its file, plus one line in
 * policy.c (docs/dsm.md, "Adding a policy").
 *
 * Every hook runs in the rank that owns the working copy:
 *   read_miss, first_write  from the fault path, unit lock held
 *   row_miss                from the row path, row lock held
 *   release, acquire        from loom_release/loom_acquire (and so from
 *                           loom_barrier, loom_lock, loom_unlock), with no
 *                           other thread of the rank inside the allocation
 *   clock                   from loom_clock, likewise
 *   bounds .. restore       from the loop planner, loom_ring_* and
 *                           checkpoints, collectively where they say so
 * A hook that moves data uses diff.c (loom_dsm_fetch, loom_flush_*). */
#ifndef LOOM_DSM_POLICY_H
#define LOOM_DSM_POLICY_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_dsm_alloc loom_dsm_alloc;

typedef struct loom_policy {
    const char *name;
    /* What the policy is (0 = no). */
    int plain;           /* plain memory on each rank: no home, no fault, no agent (local) */
    int uses_staleness;  /* reads may lag by the allocation's staleness (its option, else
                          * LOOM_STALENESS); otherwise the staleness is 0 */
    int notices;         /* every write reaches its home by the release hook, so write
                          * notices can say what changed (notice.c) */
    int homes_in_place;  /* a release sends exactly the bytes written, so home units may
                          * be the working copy itself (dsm.h, "Home units in place") */
    int background;      /* a thread of the policy reads row copies between sync points
                          * (priority's sender): a loop may not stage rows in place */
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
    /* Optional: once per job, at loom_init with several ranks: register
     * the policy's message handlers. */
    void (*setup)(void);
    /* Optional, all or none: rotating ownership (ring).  The units are cut
     * into P partitions, each owned by one rank per sub-epoch.
     *   bounds      the P + 1 partition boundaries (units) and the
     *               partition this rank owns now (*owned)
     *   set_bounds  collective, between rotations: move the boundaries,
     *               mirror the ring or not (policy_ring.c) (LOOM_ERR_ARG,
     *               nothing changed, if it cannot)
     *   rotate      collective: end the sub-epoch of every allocation of
     *               the policy (loom_ring_rotate)
     *   subepoch    the sub-epoch (a checkpoint saves it with the bounds)
     *   restore     restart, before a is published: put the rotation back
     *               at sub-epoch t with boundaries lo[0..P] (LOOM_ERR_ARG
     *               for boundaries that do not cut a's units)
     *   saved_part  restart: the partition rank q of a job of P owned at
     *               the sub-epoch t a checkpoint saved (subepoch's value)
     * A checkpoint of such an allocation saves the partition the rank owns;
     * of a plain one, the rank's copy; of any other, the home store. */
    const size_t *(*bounds)(loom_dsm_alloc *a, int *owned);
    int (*set_bounds)(loom_dsm_alloc *a, const size_t *lo, int mirrored);
    int (*rotate)(void);
    uint64_t (*subepoch)(loom_dsm_alloc *a);
    int (*restore)(loom_dsm_alloc *a, uint64_t t, const uint64_t *lo);
    int (*saved_part)(uint64_t t, int q, int P);
} loom_policy;

/* ---- policy.c: the registry ------------------------------------------- */
/* The policy called name (any case), or NULL. */
const loom_policy *loom_dsm_policy_find(const char *name);
/* The registered names, "local, bsp, ..., ring or priority", into buf. */
void loom_dsm_policy_names(char *buf, size_t n);
/* Check the policy names LOOM_COHERENCE and LOOM_COHERENCE_<NAME> gave
 * (lib/env.c keeps them as strings): LOOM_OK, or LOOM_ERR_ENV with one
 * message naming the variable, its value and the registered names. */
int loom_dsm_policy_check_env(char *err, size_t errlen);
/* Run every registered policy's setup (loom_dsm_init, several ranks). */
void loom_dsm_policy_setup_all(void);
/* 1 if p rotates ownership (has the rotation hooks). */
static inline int loom_dsm_policy_rotates(const loom_policy *p) { return p->bounds != NULL; }
/* The registered policy that rotates ownership (the ring), or NULL: what
 * a restart asks about a rotating allocation's saved partitions, whatever
 * policy the allocation has in the restarted job (one rank: local). */
const loom_policy *loom_dsm_policy_rotating(void);

/* Release consistency with bounded staleness: bsp's hooks, which ssp,
 * priority and writethrough share (bsp is ssp with staleness 0). */
void loom_dsm_rc_read_miss(loom_dsm_alloc *a, size_t unit);
void loom_dsm_rc_first_write(loom_dsm_alloc *a, size_t unit);
void loom_dsm_rc_row_miss(loom_dsm_alloc *a, size_t row);
void loom_dsm_rc_release(loom_dsm_alloc *a);
void loom_dsm_rc_acquire(loom_dsm_alloc *a);
void loom_dsm_rc_clock(loom_dsm_alloc *a);
/* Invalidate every clean copy of a stamped before `older_than` (all of
 * them with UINT64_MAX); dirty units and rows with pending writes stay. */
void loom_dsm_rc_invalidate(loom_dsm_alloc *a, uint64_t older_than);

#endif
