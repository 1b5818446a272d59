/* dsm.h — the distributed shared memory's internal structures.
 *
 * An allocation spans [base, base + mapped) of the global arena, the same
 * addresses on every rank, cut into units (pages of `unit` bytes, or rows).
 * Every unit has a home rank (dist.c) whose *home store* holds the master
 * copy: a separate, registered, NUMA-placed buffer of the units it homes,
 * indexed by slot.  What a program touches at `base` is, on every rank
 * (home included), a *working copy* that the coherence policy keeps fresh
 * enough: it is fetched from the home store on a miss, written locally,
 * and diffed back at release.  Because user code never touches a home
 * store, diffs from other ranks are applied to it in message handlers
 * without racing the home's own threads.
 *
 * Page units: the working copy is a memfd mapped twice, at `base` (its
 * protection tracks each unit's state: none = invalid, read = clean,
 * read/write = dirty with a twin) and at `shadow` (always writable), so a
 * fetch lands fully before the unit becomes accessible.
 *
 * Home units in place: when a page-unit allocation merges by overwrite,
 * is not checked (LOOM_CHECK=dsm) and this rank's home units are one
 * contiguous run (block distribution), its home store *is* that run of
 * the working copy (`store` points into `shadow`): the program reads and
 * writes its own units at memory speed, with no fault, twin, copy or
 * diff, and other ranks' diffs land there directly.  That is safe for
 * overwrite merge because a diff carries exactly the bytes its writer
 * changed: bytes the home writes in the same epoch are, in a race-free
 * program, bytes no other rank writes.  (Add merge would race the home's
 * read-modify-write with the handler's; it keeps the separate store.)
 * Row units: the working copy at `base` is plain memory; validity is a
 * per-row state byte, and own additions wait in a per-row delta buffer.
 *
 * With one rank (policy "local") an allocation is plain memory at `base`:
 * no store, no states, no faults. */
#ifndef LOOM_DSM_H
#define LOOM_DSM_H

#include "internal.h"
#include "policy.h"

#include <stdatomic.h>

/* Unit states (page and row).  U_HOME: a page unit this rank is home of,
 * kept in place (see `inplace`): always readable and writable, never
 * fetched, twinned, diffed or invalidated. */
enum { U_INVALID = 0, U_CLEAN = 1, U_DIRTY = 2, U_HOME = 3 };

/* Record kinds inside a diff message: bytes to overwrite, typed deltas to
 * add, or float deltas carried as fp16 (LOOM_WIRE=fp16). */
enum { REC_BYTES = 0, REC_ADD = 1, REC_ADD16 = 2,
       REC_READ = 3 /* check mode: the sender read the row this epoch (no payload) */ };

/* IEEE binary16, the element of a REC_ADD16 payload.  GCC and clang >= 15
 * have _Float16 on x86-64; clang 14 (the fuzz build) has the same format,
 * with the same round-to-nearest-even conversions, only as __fp16. */
#if defined(__clang__) && __clang_major__ < 15
typedef __fp16 loom_half;
#else
typedef _Float16 loom_half;
#endif

/* A record's header inside a DIFF message; its payload follows. */
struct loom_rec_hdr {
    uint64_t unit;
    uint32_t off, len;   /* bytes of the unit; len = payload bytes */
    uint32_t kind, pad;
};

/* Check mode, at a row's home: who read it and who last put it, with the
 * sync-point round (loom_dsm_notice_round) each happened in; ranks + 1, 0 for
 * none.  Two readers suffice: any writer differs from one of two. */
struct loom_readlog {
    uint32_t round[2], put_round;
    uint16_t rank[2], put_rank;
};

struct loom_dsm_alloc {
    int id;                      /* same on every rank */
    uint64_t serial;             /* creation order: the n-th loom_alloc (checkpoints) */
    uint64_t homehash;           /* checkpoints: hash of home[] (0 = not yet computed) */
    _Atomic int live;            /* published; handlers on other threads check it */
    char name[64];
    char *base;                  /* global address */
    size_t bytes, mapped;        /* asked for; rounded up to whole units */
    loom_unit_kind kind;
    size_t unit;                 /* bytes per unit (page unit or row size) */
    size_t nunits;
    loom_merge merge;
    loom_type type;
    size_t esize;                /* element size of `type` */
    const struct loom_policy *policy;

    int *home;                   /* unit -> home rank */
    uint32_t *slot;              /* unit -> index in its home's store */
    size_t nhome;                /* units homed here */
    char *store;                 /* nhome * unit bytes: the master copies */
    void *memh;                  /* its registration */
    void **rkeys;                /* per rank: unpacked key of its store */
    uint64_t *store_base;        /* per rank: its store's address */

    int memfd;                   /* page units: the working copy's memfd */
    char *shadow;                /* page units: always-writable alias */
    _Atomic uint8_t *state;      /* per unit: U_* */
    atomic_flag *ulock;          /* per unit: held while it changes state */
    void **twin;                 /* page: twin of a dirty unit; row: pending adds */
    uint8_t *put;                /* rows: 1 if put since the last release */

    atomic_flag dirty_lock;
    size_t *dirty;               /* units with something to release */
    size_t ndirty, capdirty;
    atomic_flag valid_lock;
    size_t *valid;               /* pages: units made valid since they were last dropped */
    size_t nvalid, capvalid;     /* (what an acquire or a clock must look at) */
    int inplace;                 /* home units in place: store = shadow + home0 * unit */
    size_t home0;

    uint8_t **writer;            /* check mode, per home slot: writer+1 per byte */
    struct loom_readlog *reader; /* check mode, rows, per home slot (diff.c) */
    atomic_flag read_lock;       /* check mode, rows: guards the list below */
    uint8_t *readmark;           /* per row: listed in reads[] */
    size_t *reads, nreads, capreads; /* rows this rank read since its last release */

    void *policy_data;           /* the policy's own state (ring) */
    int agent;                   /* holds the progress agent (agent.c) */
    int policy_up;               /* policy->init ran; destroy runs fini */
    int staleness;               /* clocks a copy may lag (bsp 0, ssp s) */
    uint64_t *stamp;             /* per unit: global clock its copy reflects, or more:
                                  * read it through loom_dsm_stamp */
    uint64_t stamp_floor;        /* rows: every copy not invalid reflects at least this
                                  * clock (set by notice.c at sync points) */
    int sparse;                  /* write notices (notice.c): a sync point refreshes only
                                  * the copies another rank changed */
    _Atomic int prefetched;      /* rows: loom_row_prefetch ran since the last sync point */
    _Atomic uint64_t dropped_gen; /* rows: bumped whenever copies are dropped (made invalid) */
    _Atomic uint64_t fresh_gen;  /* rows: dropped_gen when loom_dsm_row_refresh last left every
                                  * row valid (row.c) */
    int prefetching;             /* rows: sync intervals in a row that it ran in */
    _Atomic(struct loom_rows *) dropped; /* rows: stale copies sync points dropped
                                  * (prefetching), fetched at the next read that misses */
    atomic_flag notice_lock;     /* guards the two lists below */
    struct loom_notice *notice;  /* changes announced, not yet applied here */
    size_t nnotice, capnotice;
    uint32_t *wrote;             /* units released since this rank's last notice */
    size_t nwrote, capwrote;
    uint32_t *used;              /* LOOM_CACHE_BYTES (cache.c): per unit, the sync-point
                                  * round of its last fetch or row read; else NULL */
    uint32_t cache_round;        /* sync points trimmed so far */
    size_t cache_k;              /* units per group (those sharing OS pages) */
    uint8_t *cache_res;          /* per group: 1 if its memory may be resident */
    int average;                 /* add merge by averaging at the home (diff.c) */
    int replicas;                /* asked to average (.average = k, LOOM_MERGE_AVG=true:
                                    k = 1): rows of model replicas, even on one rank,
                                    where a HYBRID loop's threads keep their own and
                                    average by k too (sched/stage.c); else 0 */
    char *avg_base, *avg_sum;    /* averaging, per home slot: the row when the round */
    uint32_t *avg_n, *avg_round; /* began, the deltas' sum, their count, round + 1 */
    char *avg_move;              /* .momentum: per home slot, the row's last round's move
                                  * (NULL: no momentum) */
    struct {                     /* what loom_stats reports */
        _Atomic uint64_t bytes_sent, bytes_recv, hits, misses, blocked, blocked_ns,
            forwarded, early_bytes, age[8], refreshed, prefetched, evicted, cached, rehomed,
            dense_merges, staged_whole, raw_handoffs;
    } stats;
};

/* Where the working copy of unit u lives, always writable: the shadow
 * alias for page units (whatever their protection), the rows themselves
 * for row units.  For code that moves a unit's bytes without touching it
 * as the program does (ring hand-offs, checkpoints, restarts). */
static inline char *loom_dsm_unit_data(loom_dsm_alloc *a, size_t u)
{
    return (a->kind == LOOM_UNIT_PAGE ? a->shadow : a->base) + u * a->unit;
}



/* ---- arena.c ----------------------------------------------------------- */
/* Reserve the global arena (collective; same address on every rank). */
int loom_dsm_arena_init(void);
/* Deterministic first-fit: same sequence of calls -> same addresses. */
char *loom_dsm_arena_take(size_t bytes);
void loom_dsm_arena_give(char *p, size_t bytes);

/* ---- lookup.c: the table ---------------------------------------------- */
extern loom_dsm_alloc *_Atomic loom_dsm_allocs[]; /* read by the handlers: published atomically */
extern _Atomic int loom_dsm_nallocs;
#define LOOM_MAX_ALLOCS 1024
/* The live allocation holding address p, or NULL.  Async-signal-safe. */
loom_dsm_alloc *loom_dsm_find(const void *p);
/* The live allocation whose base is exactly p, or NULL. */
loom_dsm_alloc *loom_dsm_lookup_base(const void *p);

/* ---- alloc.c ----------------------------------------------------------- */
extern int loom_dsm_check; /* LOOM_CHECK includes dsm conflict checks */
extern int loom_dsm_looping; /* sched/: this rank runs a loop (loom_for and its kin) */
/* Check mode (diff.c): the program read row `row` of a outside loops and
 * locks; the row's home hears of it at the next release (REC_READ) and
 * stops the job if another rank wrote the row in the same epoch (a read
 * racing a loom_row_put: it may see the row before or after).  Any
 * thread. */
void loom_dsm_note_read_row(loom_dsm_alloc *a, size_t row);
/* Check mode: sends the rows noted since the last release to their homes;
 * called by loom_release inside its flush. */
void loom_dsm_send_reads(loom_dsm_alloc *a);
/* lock.c: locks this rank holds now (reads under a lock are ordered by
 * it, not racing). */
int loom_dsm_locks_held(void);

/* A layer above (the scheduler's plan cache) learns of every allocation
 * loom_free is about to destroy through fn, called with a still intact
 * (one hook; NULL removes it). */
void loom_dsm_on_free(void (*fn)(const loom_dsm_alloc *a));

/* The DSM's part of the lifecycle (lifecycle/lifecycle.c calls them, in
 * this order).  loom_dsm_init: after the runtime is up; with several
 * ranks, the message handlers, the fault handler and the collectives'
 * bounce test; then, with LOOM_RESTART, the checkpoint to resume from
 * (collective).  loom_dsm_quiesce: finalize, nothing of the SSP allreduce
 * left in flight.  loom_dsm_fini: after the last loom_dsm_barrier, free
 * every allocation left (LOOM_STATS first prints them).
 * loom_dsm_fini_records: after the transport closed (no handler runs any
 * more), free the lock records. */
int loom_dsm_init(void);
void loom_dsm_quiesce(void);
void loom_dsm_fini(void);
void loom_dsm_fini_records(void);
/* The DSM's synchronization point, which the public loom_barrier is:
 * release this rank's writes, the runtime's barrier, drop what may be
 * stale, and a new epoch (check mode).  Collective; LOOM_ERR_STATE outside
 * loom_init..loom_finalize. */
int loom_dsm_barrier(void);
/* 1 if p lies in the global arena of Loom's multi-rank allocations. */
int loom_dsm_arena_contains(const void *p);
void loom_dsm_allreduce_ssp_init(void);
void loom_dsm_allreduce_ssp_quiesce(void); /* nothing left in flight */
void loom_dsm_allreduce_ssp_fini(void);
void loom_dsm_allreduce_hypercube_init(void); /* from loom_dsm_allreduce_ssp_init */
void loom_dsm_allreduce_hypercube_fini(void); /* from loom_dsm_allreduce_ssp_fini */
void loom_dsm_lock_init(void);
void loom_dsm_lock_fini(void);       /* free the lock records (after the last message) */
size_t loom_dsm_lock_records(void);  /* live lock records this rank manages (tests) */

/* ---- dist.c ------------------------------------------------------------ */
/* Fill a->home, a->slot, a->nhome.  Returns LOOM_OK or LOOM_ERR_ARG (an
 * explicit home function returned a rank out of range). */
int loom_dsm_dist_place(loom_dsm_alloc *a, loom_dist d,
                    int (*fn)(size_t, int, void *), void *arg);
/* Number the units of each home in unit order: slot[u] for home[u] (every
 * rank in range), *nhome the units homed here (dist_place, rehome.c).
 * LOOM_OK or LOOM_ERR_NOMEM. */
int loom_dsm_dist_slots(const int *home, size_t n, uint32_t *slot, size_t *nhome);

/* ---- alloc.c: the home store -------------------------------------------- */
/* Bytes of a home store of nhome units (at least a page, to register). */
static inline size_t loom_dsm_store_len(size_t nhome, size_t unit)
{
    return nhome ? nhome * unit : 4096;
}
/* store.c: give a's home store back: its registration, the peers' keys,
 * its memory (not when in place); store and memh become NULL (destroy,
 * rehome.c). */
void loom_dsm_store_free(loom_dsm_alloc *a);
/* Give every rank every store's address and key (collective): store and
 * its packed key in (the key buffer is freed), base[] and keys[] out. */
void loom_dsm_share_keys(const void *store, void *rkey, size_t rlen, uint64_t *base, void **keys);

/* ---- rehome.c: IterStore's placement ------------------------------------ */
/* Whether a's homes can move (row units under bsp or ssp, separate store,
 * no averaging, no check mode). */
int loom_dsm_rehome_eligible(const loom_dsm_alloc *a);
/* Collective, at a quiescent point (after loom_dsm_barrier, no thread in
 * a's rows), every rank with the same newhome[0..nunits): unit u's home
 * becomes rank newhome[u], its master copy moved there; working copies
 * stay.  a must be eligible.  LOOM_OK, or an error with nothing changed. */
int loom_dsm_rehome(loom_dsm_alloc *a, const int *newhome);
/* Before a's store is made (restart.c): install the home map home[] (the
 * same on every rank; ranks in range), its slots and this rank's count. */
void loom_dsm_set_homes(loom_dsm_alloc *a, const int *home);

/* ---- diff.c: moving writes home ---------------------------------------- */
void loom_dsm_wire_init(void);
/* Bring unit u's working copy up to date from its home (blocking). */
void loom_dsm_fetch(loom_dsm_alloc *a, size_t u, char *dst);
/* The same, started: *done becomes 1 when dst holds the unit (at once for
 * a unit homed here). */
void loom_dsm_fetch_start(loom_dsm_alloc *a, size_t u, char *dst, volatile int *done);
/* Fetch units [u, u + n) into dst (blocking): one series of gets per run
 * of consecutive slots of one home, all in flight together. */
void loom_dsm_fetch_many(loom_dsm_alloc *a, size_t u, size_t n, char *dst);
/* The same for the listed units u[0..n), the i-th to dst + i * unit. */
void loom_dsm_fetch_units(loom_dsm_alloc *a, const size_t *u, size_t n, char *dst);
/* Fetch the listed units (sorted ascending, distinct) into their working
 * copies (loom_dsm_unit_data), all in flight together: one series of gets
 * per run of consecutive units in consecutive slots of one home.  No
 * other thread may touch those units meanwhile. */
void loom_dsm_fetch_list(loom_dsm_alloc *a, const size_t *u, size_t n);
/* Start/finish a flush: between them, loom_flush_* add records. */
void loom_dsm_flush_begin(void);
void loom_dsm_flush_bytes(loom_dsm_alloc *a, size_t u, size_t off, const void *p, size_t len);
void loom_dsm_flush_add(loom_dsm_alloc *a, size_t u, size_t off, const void *delta, size_t len);
void loom_dsm_flush_end(void); /* sends, applies local ones, waits for acks */
/* Append one record to a growing message buffer. */
void loom_dsm_rec_append(uint8_t **buf, size_t *len, size_t *cap, size_t unit, size_t off,
                     const void *payload, size_t plen, uint32_t kind);
/* Send a DIFF of nrec records (buf: malloc'd, taken) to home h, or apply
 * it here if h is this rank.  Counted for loom_dsm_flush_end's wait. */
void loom_dsm_send_diff(int h, loom_dsm_alloc *a, void *buf, size_t len, uint32_t nrec);
/* DIFF messages sent and not yet acknowledged. */
long loom_dsm_unacked(void);
/* Record unit u as having something to release (once per epoch). */
void loom_dsm_mark_dirty(loom_dsm_alloc *a, size_t u);
/* Record page unit u as made valid (once until it is dropped again). */
void loom_dsm_mark_valid(loom_dsm_alloc *a, size_t u);
/* Forget check-mode writers at an epoch boundary. */
void loom_dsm_new_epoch(loom_dsm_alloc *a);

/* ---- notice.c: write notices ------------------------------------------ */
/* One change another rank announced: unit, and the clock in which it was
 * released (UINT64_MAX: at a barrier, or this rank's own averaged row). */
struct loom_notice {
    uint64_t unit, clock;
};
/* A list of rows, in increasing order (malloc'd with its rows). */
struct loom_rows {
    size_t n;
    size_t row[];
};
/* Whether a gets write notices: a policy with `notices`, units numbered in
 * 32 bits, and no home units in place (the home's own writes there never
 * pass through a release). */
int loom_dsm_notice_wanted(const loom_dsm_alloc *a, const loom_policy *p);
/* The release hook saw units v[0..n) of a go home (pages: dirty units;
 * rows: put or added). */
void loom_dsm_notice_released(loom_dsm_alloc *a, const size_t *v, size_t n);
/* Sync points passed (clocks and barriers): the round a release belongs
 * to, the same on every rank for the same sync point. */
uint64_t loom_dsm_notice_round(void);
/* The notices of every sparse allocation released since the last call,
 * as a message body (malloc'd; NULL with *len 0 when there is nothing);
 * advances the round.  From the clock and the barrier only. */
void *loom_dsm_notice_pack(size_t *len);
/* A notice body from rank src, about writes of clock `clock`: checked
 * whole, queued on each allocation.  Message handlers only. */
void loom_dsm_notice_receive(int src, const void *data, size_t len, uint64_t clock);
/* The barrier's part: send this rank's notices to every other rank (after
 * the release), and wait for theirs (after the runtime's barrier). */
void loom_dsm_notice_barrier_send(void);
void loom_dsm_notice_barrier_wait(void);
void loom_dsm_notice_on_barrier(const void *data, size_t len, uint64_t seq, int src);
/* Apply a's queued notices at a sync point where the global clock is g
 * (every notice of clocks < g is queued): each copy another rank changed
 * since it was fetched is refetched, all of them in one batch; the others
 * stay valid and are stamped g.  Same callers as the release hook. */
void loom_dsm_notice_apply(loom_dsm_alloc *a, uint64_t g);

/* ---- clock.c ----------------------------------------------------------- */
void loom_dsm_clock_init(void);
/* The DSM clock: loom_clock's, plus the clocks loom_for takes inside
 * ssp-synchronized loops (loom_clock_now counts only the program's). */
uint64_t loom_dsm_clock(void);
uint64_t loom_dsm_clock_global(void);
/* A clock without the program's bookkeeping: what loom_clock does minus
 * counting the call and the automatic checkpoint (loops use it). */
int loom_dsm_clock_tick(void);
/* Restart (restart.c): every rank's DSM clock becomes `clock`, and the
 * program's loom_clock count `calls`.  Before any allocation exists. */
void loom_dsm_clock_restore(uint64_t clock, uint64_t calls);
/* Send {kind, value} with a copy of body (len bytes; may be NULL) to
 * every other rank: kind 0, "clock value done" with its write notices;
 * kind 1, barrier `value`'s write notices (notice.c). */
void loom_dsm_sync_msg_send(uint32_t kind, uint64_t value, const void *body, size_t len);
/* Wait until a copy fetched now is fresh enough for a in this rank's
 * clock; returns the stamp to give it.  Counts blocked reads. */
uint64_t loom_dsm_wait_fresh(loom_dsm_alloc *a);
/* Record the age of data read (histogram). */
void loom_dsm_note_read(loom_dsm_alloc *a, uint64_t stamp);
/* 1 if a's float deltas travel as fp16 (LOOM_WIRE=fp16: add-merge float
 * allocations that do not average). */
static inline int loom_dsm_half_wire(const loom_dsm_alloc *a)
{
    return loom_rt_icv.wire_fp16 && a->type == LOOM_FLOAT && a->merge == LOOM_MERGE_ADD &&
           !a->average;
}

/* ---- cache.c: the bounded cache (LOOM_CACHE_BYTES) ------------------- */
/* 1 if allocations of policy p are bounded (LOOM_CACHE_BYTES set, several
 * ranks, a policy with homes and copies fetched on demand). */
int loom_dsm_cache_wanted(const loom_policy *p);
/* Sets up a's cache bookkeeping (a->unit and a->nunits known); 0 or -1. */
int loom_dsm_cache_init(loom_dsm_alloc *a);
/* Note a use of unit u's copy (a fetch, a row read): recency for eviction. */
static inline void loom_dsm_cache_use(loom_dsm_alloc *a, size_t u)
{
    if (a->used) {
        a->used[u] = a->cache_round;
        a->cache_res[u / a->cache_k] = 1;
    }
}
/* At a sync point, after the release and before the acquire: drop the
 * least recently used clean copies until a's fit LOOM_CACHE_BYTES, and
 * give back the memory of every copy no longer valid. */
void loom_dsm_cache_trim(loom_dsm_alloc *a);

/* The global clock unit u's copy reflects (meaningless while invalid). */
static inline uint64_t loom_dsm_stamp(const loom_dsm_alloc *a, size_t u)
{
    uint64_t f = __atomic_load_n(&a->stamp_floor, __ATOMIC_RELAXED);
    return a->stamp[u] > f ? a->stamp[u] : f;
}
/* The oldest global clock a copy of a may reflect in this rank's clock. */
uint64_t loom_dsm_oldest(const loom_dsm_alloc *a);

/* ---- agent.c ----------------------------------------------------------- */
/* Keep the background progress agent running while held (counted). */
/* dmap.c: register the map's message handlers (the first loom_dmap_create). */
void loom_dsm_dmap_init(void);

void loom_dsm_agent_hold(void);
void loom_dsm_agent_release(void);
void loom_dsm_agent_fini(void); /* finalize: stop the thread */

/* ---- checkpointing's hooks (dsm/ckpt/, docs/checkpoint.md) ----------- */
/* The core (alloc, clock, diff, fault, lock, notice) names no checkpoint
 * or restart function: dsm/ckpt/ sets these at loom_init
 * (loom_ckpt_start), and with none set nothing is checkpointed.
 *   clock      after the program's calls-th loom_clock: LOOM_CHECKPOINT_EVERY
 *              and LOOM_TEST_KILL (collective like loom_clock)
 *   restoring  1 between a restart and the first clock or checkpoint after it
 *   check      collective, from loom_alloc while restoring: a (laid out, not
 *              filled) against the checkpoint's allocation of its serial
 *   fill       a's data from the checkpoint, before a is published */
struct loom_dsm_ckpt_hooks {
    int (*clock)(uint64_t calls);
    int (*restoring)(void);
    void (*check)(loom_dsm_alloc *a);
    void (*fill)(loom_dsm_alloc *a);
};
extern const struct loom_dsm_ckpt_hooks *loom_dsm_ckpt; /* alloc.c; NULL: none */

/* ---- fault.c ----------------------------------------------------------- */
int loom_dsm_fault_init(void);
/* Start the fault server (once; loom_alloc, for page units). */
int loom_dsm_fault_server_start(void);
/* Finalize: stop the fault server (after the last barrier). */
void loom_dsm_fault_fini(void);

/* Spin lock on a unit; yields the core while waiting. */
void loom_dsm_unit_lock(loom_dsm_alloc *a, size_t u);
/* row.c: release row (written in place by its only writer) as a put. */
void loom_dsm_row_mark_put(loom_dsm_alloc *a, size_t row);
/* dense.c: whether a may merge a staged round by one allreduce of the
 * whole array; that merge (collective, at a staged loop's sync point, every
 * row valid and changed in place since orig): every copy becomes orig +
 * the ranks' summed changes, each home's store gains them.  Returns the
 * rows this rank changed.  diff.c: a dense merge's sum added to the rows
 * homed here. */
int loom_dsm_dense_ok(const loom_dsm_alloc *a);
size_t loom_dsm_dense_merge(loom_dsm_alloc *a, const void *orig, void *delta);
void loom_dsm_home_add_rows(loom_dsm_alloc *a, const void *sum);
/* row.c: loom_row_add of the difference copy - orig (a staged loop's
 * change to the row, sched/stage.c), computed and added in one pass;
 * copy may be the rank's copy of the row, changed in place. */
int loom_dsm_row_add_diff(loom_dsm_alloc *a, size_t row, const void *copy, const void *orig);
/* row.c: w times that difference, and copy and orig then both hold the
 * row as the add left it (a thread's own copy made current in the same
 * pass, one rank: sched/stage.c's own stages); float and double rows. */
int loom_dsm_row_add_diff_take(loom_dsm_alloc *a, size_t row, void *copy, void *orig, double w);
/* Contract: makes every row of a's working copy (a->base) current, as
 * loom_row_get would row by row, fetching the invalid ones in batches;
 * nothing to do when no copy was dropped since its last call.  For code
 * between loops that reads rows by plain loads or a base pointer.  Any
 * thread (row locks as loom_row_get's).  LOOM_OK; LOOM_ERR_ARG where the
 * rank's copy cannot hold every row at once (a bounded cache,
 * LOOM_CACHE_BYTES), nothing fetched; a ring allocation is left as it is
 * (its owner holds each partition). */
int loom_dsm_row_refresh(loom_dsm_alloc *a);
void loom_dsm_unit_unlock(loom_dsm_alloc *a, size_t u);

/* store.c: the page-unit protection helper: set [u0, u1) to prot (coalesced). */
void loom_dsm_protect(loom_dsm_alloc *a, size_t u0, size_t u1, int prot);

#endif
