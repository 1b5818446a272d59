/* clock.c — loom_clock, the per-rank clock that bounds staleness.
 *
 * A rank's clock c counts the loom_clock calls it has made.  loom_clock
 * releases (every write of the clock that ends is applied at its home and
 * acknowledged), advances c, and tells every other rank.  So when every
 * rank has announced at least m, every update from clocks < m is in the
 * home stores: m = min over ranks is the *global clock*.
 *
 * Every copy a rank fetches is stamped with the global clock it saw
 * before fetching.  An allocation with staleness s (ssp: LOOM_STALENESS or
 * its option; bsp: 0) lets a rank in clock c use a copy stamped >= c - s:
 * at each clock, older copies are dropped, and fetching a new one first
 * waits until the global clock reaches c - s (a *blocked read*).  With
 * s = 0 a rank in clock c waits until all others finished clock c - 1:
 * exactly BSP.  A rank always sees its own writes: they were applied at
 * the home before its clock advanced.
 *
 * The program's own loom_clock calls are also counted apart (calls,
 * loom_clock_now): automatic checkpoints (LOOM_CHECKPOINT_EVERY) fall on
 * them, never on the clocks loom_for takes inside ssp-synchronized loops
 * (loom_dsm_clock_tick), and a restarted job resumes its loop from them. */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>

#define AM_CLOCK 8

struct clock_msg {
    uint32_t src, kind; /* kind 0: clock done; 1: a barrier's write notices */
    uint64_t clock;     /* the clock done, or the barrier's number */
};

static uint64_t now;              /* this rank's clock */
static uint64_t calls;            /* the program's loom_clock calls (loom_clock_now) */
static _Atomic uint64_t *clocks;  /* per rank: clocks it has completed */
static _Atomic uint64_t global;   /* min of clocks[] */

uint64_t loom_clock_now(void) { return calls; }
uint64_t loom_dsm_clock(void) { return now; }
uint64_t loom_dsm_clock_global(void) { return atomic_load(&global); }

/* global = min of clocks[], from the calling thread's reads.  Two threads
 * recompute at once (the program's, after its own clock; the agent's,
 * after another rank's): one may have read an older clocks[] entry and
 * would store a smaller minimum after the other stored the right one,
 * leaving global behind for good once no clock message comes any more (a
 * rank waiting in loom_dsm_wait_fresh while the others wait in a barrier:
 * seen under ThreadSanitizer on a loaded machine).  Clocks only grow, so
 * every minimum read is at most the true one, and the thread that stores
 * the last clock reads every other: raising global only (a CAS loop) makes
 * it the true minimum. */
static void recompute(void)
{
    uint64_t m = UINT64_MAX;
    for (int r = 0; r < loom_rt_icv.nranks; r++) {
        uint64_t c = atomic_load(&clocks[r]);
        if (c < m)
            m = c;
    }
    uint64_t g = atomic_load(&global);
    while (m > g && !atomic_compare_exchange_weak(&global, &g, m))
        ;
}

/* Another rank finished clock m.clock; its write notices of that clock
 * (notice.c) are queued first, so a global clock of m means every notice
 * of clocks < m is here.  Its own clock is only ever advanced by this rank
 * (a message claiming to come from here is forged); clocks only grow, so
 * a late or repeated one changes nothing.  Kind 1 carries a barrier's
 * notices instead. */
static void on_clock(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct clock_msg m;
    if (hlen != sizeof m) {
        loom_rt_log("clock: dropped a message with a %zu-byte header", hlen);
        return;
    }
    memcpy(&m, hdr, sizeof m);
    if (m.src >= (uint32_t)loom_rt_icv.nranks || m.src == (uint32_t)loom_rt_icv.rank || m.kind > 1) {
        loom_rt_log("clock: dropped a clock from %s rank %u",
                 m.src == (uint32_t)loom_rt_icv.rank ? "this" : "unknown", m.src);
        return;
    }
    if (m.kind == 1) {
        loom_dsm_notice_on_barrier(data, len, m.clock, (int)m.src);
        return;
    }
    if (len && m.clock)
        loom_dsm_notice_receive((int)m.src, data, len, m.clock - 1);
    if (m.clock > atomic_load(&clocks[m.src]))
        atomic_store(&clocks[m.src], m.clock);
    recompute();
}

void loom_dsm_clock_init(void)
{
    clocks = calloc((size_t)loom_rt_icv.nranks, sizeof *clocks);
    if (!clocks)
        loom_rt_die(1, "out of memory");
    loom_rt_tp_am_register(AM_CLOCK, on_clock);
}

/* Contract: what the program's loom_clock promises (docs/dsm.md), without
 * counting the call: loom_for's ssp-synchronized loops clock through it,
 * so that automatic checkpoints fall only between the program's own
 * steps.  Same callers and locking as loom_clock. */
int loom_dsm_clock_tick(void)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    if (loom_rt_icv.nranks == 1) {
        now++;
        return LOOM_OK;
    }
    loom_release();
    now++;
    atomic_store(&clocks[loom_rt_icv.rank], now);
    recompute();
    size_t len;
    void *notices = loom_dsm_notice_pack(&len);
    loom_dsm_sync_msg_send(0, now, notices, len);
    free(notices);
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++) { /* policies with clocks drop what got too old */
        if (loom_dsm_allocs[i] && loom_dsm_allocs[i]->live)
            loom_dsm_cache_trim(loom_dsm_allocs[i]); /* first: what it drops is not refreshed */
        if (loom_dsm_allocs[i] && loom_dsm_allocs[i]->live && loom_dsm_allocs[i]->policy->clock)
            loom_dsm_allocs[i]->policy->clock(loom_dsm_allocs[i]);
    }
    return LOOM_OK;
}

void loom_dsm_sync_msg_send(uint32_t kind, uint64_t value, const void *body, size_t len)
{
    struct clock_msg m = {.src = (uint32_t)loom_rt_icv.rank, .kind = kind, .clock = value};
    for (int r = 0; r < loom_rt_icv.nranks; r++) {
        if (r == loom_rt_icv.rank)
            continue;
        void *copy = len ? malloc(len) : NULL;
        if (len && !copy)
            loom_rt_die(1, "out of memory");
        if (len)
            memcpy(copy, body, len);
        loom_rt_tp_am_send(r, AM_CLOCK, &m, sizeof m, copy, len);
    }
}

int loom_clock(void)
{
    int rc = loom_dsm_clock_tick();
    if (rc)
        return rc;
    calls++;
    return loom_dsm_ckpt ? loom_dsm_ckpt->clock(calls) : LOOM_OK;
}

/* Contract: from restart.c only, in loom_init (no allocation exists, no
 * clock message has been sent): every rank resumes at the same clock. */
void loom_dsm_clock_restore(uint64_t clock, uint64_t ncalls)
{
    now = clock;
    calls = ncalls;
    for (int r = 0; clocks && r < loom_rt_icv.nranks; r++)
        atomic_store(&clocks[r], clock);
    atomic_store(&global, clock);
}

uint64_t loom_dsm_oldest(const loom_dsm_alloc *a)
{
    return now > (uint64_t)a->staleness ? now - (uint64_t)a->staleness : 0;
}

uint64_t loom_dsm_wait_fresh(loom_dsm_alloc *a)
{
    uint64_t need = loom_dsm_oldest(a);
    if (atomic_load(&global) < need) {
        double t0 = loom_wtime();
        while (atomic_load(&global) < need)
            loom_rt_tp_wait_flag_until(&global, need);
        atomic_fetch_add(&a->stats.blocked, 1);
        atomic_fetch_add(&a->stats.blocked_ns, (uint64_t)((loom_wtime() - t0) * 1e9));
    }
    return atomic_load(&global);
}

void loom_dsm_note_read(loom_dsm_alloc *a, uint64_t stamp)
{
    uint64_t age = now > stamp ? now - stamp : 0;
    atomic_fetch_add(&a->stats.age[age < 7 ? age : 7], 1);
}
