/* sched.h — the parallel loop's internal structures.
 *
 *   access.c    the row accessors (loom_at), loom_reads/writes, the
 *               per-thread state that says what an accessor must do
 *   collect.c   access sets of a range of iterations (deps or reconnaissance),
 *               or the k-partite shape's two rows per iteration
 *   plan.c      the dispatcher: which plan fits (rotation or groups), the
 *               plan cache, a plan built and run
 *   balance.c   histogram-balanced blocks (the plans' shared helper)
 *   phase.c     per-phase row lists, prefetched and written back; one
 *               iteration run, checked (the plans' shared helpers)
 *   layout.c    iterations (and their records) laid out in plan order:
 *               a parallel histogram-and-scatter
 *   rotation.c  the k-partite block-rotation plan: build and run
 *   groups.c    the general plan: conflict-free groups, build and run
 *   check.c     the serializability checker (LOOM_CHECK=serial)
 *   stage.c     private/staged row copies of the data-parallel modes
 *   shares.c    the ranks' shares of a dynamic data-parallel round, by speed
 *   for.c       loom_for, loom_for_range, loom_for_records, LOOM_FOR:
 *               schedules, data-parallel loops, sync points
 *   priority.c  the STRADS-Dynamic priority schedule
 *   ordered.c   Orion's ordered 2D (wavefront) schedule: .ordered
 *   prefetch.c  prefetch batches and placement of repeated data-parallel loops
 */
#ifndef LOOM_SCHED_H
#define LOOM_SCHED_H

#include "../dsm/dsm.h"

#include <stdint.h>

/* One access of one iteration: a row of allocation `alloc` (its id).  8
 * bytes, as a plan of 10^7 iterations holds 2·10^7 of them: a loop may
 * name rows below 2^32 only (access.c says so otherwise). */
typedef struct loom_acc {
    uint32_t row;
    uint16_t alloc;
    uint16_t write;
} loom_acc;
#define LOOM_ACC_ROWS UINT32_MAX

/* The access sets of n iterations, CSR: iteration k's accesses are
 * acc[off[k] .. off[k+1]). */
typedef struct loom_accset {
    long n;
    size_t *off;
    loom_acc *acc;
    size_t nacc;
} loom_accset;
void loom_sched_accset_free(loom_accset *s);

struct loom_deps {          /* what loom_reads/writes append to */
    loom_acc *acc;
    size_t n, cap;
    int borrowed;           /* acc is a slice of a larger array: copy to grow */
};

/* A loop body: per iteration one(i, ctx), per range range(lo, hi, ctx),
 * or per block of records block(recs, n, ctx) (loom_for_records: record i
 * of data, size bytes each, is iteration i).  Exactly one is set.  A
 * serializable record loop may name its rows by record fields (.fields;
 * fields[x].array NULL: unused), checked by for.c. */
typedef struct loom_body {
    void (*one)(long, void *);
    void (*range)(long, long, void *);
    void (*block)(const void *, long, void *);
    const char *data;
    size_t size;
    void *ctx;
    loom_field fields[2];
    int in_place;               /* serializable records: lay them out in data (.in_place) */
} loom_body;

/* The row that field f of record rec names: UINT64_MAX for none (-1 in
 * a field of 4 or 8 bytes). */
static inline uint64_t loom_sched_field_row(const loom_field *f, const char *rec)
{
    if (f->size == 4) {
        uint32_t r;
        __builtin_memcpy(&r, rec + f->offset, 4);
        return r == UINT32_MAX ? UINT64_MAX : r;
    }
    uint64_t r;
    __builtin_memcpy(&r, rec + f->offset, 8);
    return r;
}

/* Runs iteration i alone (a block body gets a block of one record). */
static inline void loom_sched_body_one(const loom_body *b, long i)
{
    if (b->one)
        b->one(i, b->ctx);
    else
        b->block(b->data + (size_t)i * b->size, 1, b->ctx);
}

/* What the accessors of the calling thread do. */
enum { TS_PLAIN = 0, TS_RECORD, TS_CHECK, TS_STAGE };
struct loom_sched_ts {
    int mode;
    long iter;                  /* loop index running now (check mode) */
    struct loom_deps rec;       /* reconnaissance: this iteration's accesses */
    char **scratch;             /* reconnaissance: where writes go */
    size_t *scratch_size;
    int scratch_used, scratch_n;
    loom_dsm_alloc *last[2];    /* two-entry lookup cache (a body that touches */
    int last_id[2];             /* W and H): live while loom_dsm_allocs[last_id] == last */
    struct loom_stage *stage;   /* TS_STAGE: this thread's staging */
    loom_dsm_alloc *whole[2];   /* TS_STAGE: arrays staged whole in place this round,
                                   whose rows are reached by address arithmetic */
    struct loom_sched_own {     /* TS_STAGE, a thread's own stage: its first two */
        const loom_dsm_alloc *a;/* arrays, whose rows already staged this round */
        char *copy;             /* (state 2) the accessors return from the copy */
        const _Atomic uint8_t *st; /* without a call (stage.c, loom_sched_stage_row) */
        int whole;              /* every row staged: loom_at_base gives the copy */
    } own[2];
};
extern __thread struct loom_sched_ts loom_sched_ts;
/* Non-zero on rank 0 of several inside a LOOM_SINGLE block (single.c):
 * loom_at there marks the row put, so the block's writes reach every rank.
 * (dsm.h's loom_dsm_looping, set by for.c around every loom_for /
 * loom_for_range / loom_for_records, tells the accessors that no loop
 * runs: they then make a dropped row current before giving its address.) */
extern int loom_sched_single;

/* Makes every rank's copy of allocation id current (dsm's
 * loom_dsm_row_refresh) if it is still live; stops the job without memory.
 * For the ends of loops and LOOM_SINGLE blocks (stage.c, for.c, single.c). */
void loom_sched_refresh(int id);

/* The allocation at base `array` if it is a live row allocation, else
 * stops the job naming fn. */
loom_dsm_alloc *loom_sched_rows(void *array, const char *fn);

/* ---- collect.c ----------------------------------------------------- */
/* Access sets of iterations lo..hi-1 (as indices lo..hi-1), by deps or,
 * when deps is NULL, by a reconnaissance run of body on every thread.
 * Collective over this rank's threads only.  Iteration k of the set is
 * index lo + k.  Returns LOOM_OK or LOOM_ERR_NOMEM. */
int loom_sched_collect(long lo, long hi, const loom_body *body,
                 void (*deps)(long, loom_deps *, void *), loom_accset *out);

/* The k-partite shape's access sets (MF's: a row of W and a row of H):
 * row[x][k] is the row of allocation id[x] that iteration k writes
 * (LOOM_ACC_ROWS: none), 8 bytes per iteration instead of an access set. */
typedef struct loom_pair {
    int id[2];                  /* allocation ids, -1 if unused */
    uint32_t *row[2];           /* iteration k's row is row[x][k * step] */
    size_t step;                /* 1: arrays of their own (free them); more: views
                                   into the records' fields (an .in_place loop) */
} loom_pair;
#define LOOM_PAIR_NO 1          /* loom_sched_collect_pair: the loop has another shape */
/* Fills *out when every iteration of lo..hi-1 only writes, at most one
 * row of each of at most two allocations in all (returns LOOM_OK);
 * LOOM_PAIR_NO at the first iteration that does anything else, with
 * nothing kept; LOOM_ERR_NOMEM.  Like loom_sched_collect, not collective.  A
 * record loop with .fields has its rows read from the records, and is the
 * pair shape unless both fields name one array; loom_sched_collect declares
 * the fields' rows as writes.  An .in_place record loop whose fields are
 * aligned 4-byte integers gets views into the records instead of arrays
 * (the checker's runs, LOOM_CHECK=serial, get arrays). */
int loom_sched_collect_pair(long lo, long hi, const loom_body *body,
                      void (*deps)(long, loom_deps *, void *), loom_pair *out);

/* ---- plan.c ---------------------------------------------------------- */
enum { PLAN_ROTATION = 1, PLAN_GROUPS = 2 };
typedef struct loom_plan loom_plan;
struct loom_plan {
    int kind;
    /* the loop site this plan is for */
    loom_body body;
    long begin, end;
    int local, nthreads;
    long first;                 /* loop index of acc iteration 0 */
    loom_accset acc;            /* this rank's iterations' accesses (kept for the
                                   checker only: dropped after planning otherwise) */
    uint8_t uses[LOOM_MAX_ALLOCS];   /* arrays the iterations touch */
    uint8_t written[LOOM_MAX_ALLOCS]; /* arrays any rank's iterations write */
    /* rows of non-ring arrays this rank touches in each phase: fetched
     * before it, the written ones released after it (several ranks) */
    struct loom_rowlist { int phase, alloc; size_t n; size_t *rows; uint8_t *written; } *rl;
    int nrl;
    /* rotation (rotation.c) */
    int a_id, b_id;             /* pinned / rotated allocation, -1 if none */
    int R, T, S;                /* partitions, threads, sub-blocks per partition */
    size_t *bbounds;            /* R + 1: B's partitions (rows) */
    size_t *sub;                /* R * (S + 1): sub-block bounds in each partition */
    size_t *abounds;            /* T + 1 (local) or R*T + 1 (global): A's blocks */
    uint32_t *cell_off;         /* R * S * T + 1 */
    uint32_t *iters;            /* acc indices, grouped by cell (NULL for a block
                                   body with no access sets: recs is enough) */
    char *recs;                 /* block bodies: the records in the order of iters */
    /* groups (groups.c): phase 0 private groups, phase 1+p rank p's shared */
    int nphases;
    uint32_t *gcell_off;        /* nphases * T + 1 */
    uint32_t *giters;
    int broken;                 /* a test broke this plan on purpose */
};

/* The plan for this loop call: the cached one for a repeated site, else a
 * fresh one.  Collective.  NULL after a message on error. */
loom_plan *loom_sched_plan_get(long begin, long end, const loom_body *body, const loom_for_opts *o);
void loom_sched_plan_free(loom_plan *p);
/* 1 if p is in the cache (the caller must not free it). */
int loom_sched_plan_cached(const loom_plan *p);
/* The scheduler's part of loom_init (lifecycle/): the plan cache learns,
 * through the DSM's free hook, of every allocation freed, and drops the
 * plans that use it. */
void loom_sched_init(void);
/* Run the plan (rotation or groups).  Collective. */
int loom_sched_plan_run(loom_plan *p);
/* ---- balance.c ---------------------------------------------------------- */
/* Split rows [lo, hi) into k contiguous blocks of about equal weight:
 * bounds[0] = lo, bounds[k] = hi. w may be NULL (equal rows). */
void loom_sched_balance(const uint32_t *w, size_t lo, size_t hi, int k, size_t *bounds);
/* ---- layout.c ------------------------------------------------------------ */
/* malloc for a plan's large arrays (free with free): 2 MiB-aligned and
 * marked for transparent huge pages, so planning 10^7 iterations takes
 * thousands of page faults, not millions.  NULL when out of memory. */
void *loom_sched_alloc(size_t bytes);
/* Parallel passes over n iterations cut them into slices, several per
 * thread, taken dynamically (a thread the machine holds back does not
 * hold up the others): loom_sched_slices is how many, given `per` bytes of
 * state per slice (fewer when that would outgrow the iterations' 4
 * bytes each); slice x is [loom_sched_slice(n, ns, x), loom_sched_slice(n, ns, x+1)). */
int loom_sched_slices(long n, size_t per);
static inline long loom_sched_slice(long n, int ns, int x) { return (long)((__int128)n * x / ns); }
/* Group iterations 0..n-1 by key (UINT32_MAX: none), a stable bucket
 * sort: off[nkey + 1] gets where each key's run starts, iters (if not
 * NULL) the iterations in key order, index order inside a key.  With
 * recs, also copies record k of b (b->data, b->size bytes each) to recs
 * at the position of k.  Parallel over this rank's threads; not
 * collective.  Returns LOOM_OK or LOOM_ERR_NOMEM. */
int loom_sched_bucket(long n, const uint32_t *key, size_t nkey, uint32_t *off, uint32_t *iters,
                const loom_body *b, char *recs);
/* The same grouping of n records of sz bytes done in data itself (no
 * copy, no array of keys), from what the records hold: record rec is in
 * group(rec, ctx) of ngroup (UINT32_MAX: none), and with base (ngroup +
 * 1 increasing bounds) its key is base[g] + sub(rec, ctx, g) (below
 * base[g + 1] - base[g]); without, its key is its group.  off[k] gets
 * where key k's run starts, off[nkey] the end of the last (nkey: base[
 * ngroup] or ngroup); the records of no group follow.  By group on this
 * thread, then each group by key on this rank's threads.  The order
 * inside a key is not the records' (but the same records in the same
 * order give the same layout).  Not collective.  Returns LOOM_OK or
 * LOOM_ERR_NOMEM. */
int loom_sched_bucket_in_place(char *data, size_t sz, long n, uint32_t (*group)(const char *, const void *),
                         size_t ngroup, uint32_t (*sub)(const char *, const void *, uint32_t),
                         const uint32_t *base, const void *ctx, uint32_t *off);
/* ---- phase.c ------------------------------------------------------------ */
/* Non-ring rows this rank touches in `phase`: fetch them before it / put
 * the written ones back after it. */
void loom_sched_plan_prefetch(loom_plan *p, int phase);
void loom_sched_plan_writeback(loom_plan *p, int phase);
/* Run iteration k (index into p->acc) of plan p on this thread, checked
 * when LOOM_CHECK=serial. */
void loom_sched_plan_iter(loom_plan *p, long k, int phase);
/* Adds to p's row lists the rows of allocation id marked in mark[] (bit
 * 0: touched, bit 1: written) for `phase`, and clears mark[]. */
int loom_sched_plan_rowlist(loom_plan *p, int phase, int id, uint8_t *mark);
/* Test hooks: the next plan built gets one iteration moved to a wrong
 * place, so the checker must catch it (defined in check.c); while
 * loom_sched_general is set, plans are built from the access sets even for
 * the k-partite shape (the fast path's reference; plan.c). */
extern int loom_sched_break_next_plan;
extern int loom_sched_general;

/* ---- rotation.c / groups.c --------------------------------------------- */
/* Builds p's rotation plan from the rows of A and B that each of the n
 * iterations touches (arow, brow: row k at [k * step], LOOM_ACC_ROWS for
 * none; arrays of their own at step 1, which may be rewritten; views
 * into the records, laid out in place, above).  Collective. */
int loom_sched_rotation_build(loom_plan *p, uint32_t *arow, uint32_t *brow, size_t step);
/* B's partition q of row, and its sub-block *j in q. */
int loom_sched_rotation_part(const loom_plan *p, size_t row, int *j);
int loom_sched_rotation_run(loom_plan *p);
int loom_sched_groups_build(loom_plan *p);
int loom_sched_groups_run(loom_plan *p);

/* ---- check.c ----------------------------------------------------------- */
/* Start checking one run of plan p (clears the tables). Collective. */
void loom_sched_check_begin(loom_plan *p);
/* The calling thread now holds sub-block j of partition q (rotation), or
 * -1 (groups). */
void loom_sched_check_hold(int q, int j);
/* Start of iteration k (index into p->acc) on this thread, in `phase`:
 * checks its declared accesses. */
void loom_sched_check_iter(loom_plan *p, long k, int phase);
/* A real access through an accessor (called by loom_at in TS_CHECK). */
void loom_sched_check_access(loom_dsm_alloc *a, size_t row, int write);
/* End of a phase: compares the rows every rank touched.  Collective. */
void loom_sched_check_phase_end(loom_plan *p, int phase);

/* ---- stage.c --------------------------------------------------------- */
/* Staging of a data-parallel loop: private (BSP/SSP: per thread) or
 * shared (HYBRID on several ranks, or one thread: per rank) copies of the
 * rows reached through loom_at, merged at sync points.  A shared stage
 * works in the rank's own copies (stage.c). */
typedef struct loom_stage loom_stage;
loom_stage *loom_sched_stage_new(int shared);
/* One thread's stage of a one-rank HYBRID loop with a sync interval on
 * `threads` threads (for.c, own_rounds): only the arrays
 * loom_sched_stage_owns are staged, each thread working on its own copies
 * of their rows; any other array is reached in place, as in plain OpenMP.
 * Its flush may run while other threads' bodies run (its rows' additions
 * take the row locks): it adds min(k, threads) / threads of its changes
 * (the array's .average = k: the threads' copies averaged, as the ranks'
 * are), keeps the rows its round touched, current as of the flush, for
 * the next round, and drops those the round before kept and this one left
 * alone. */
loom_stage *loom_sched_stage_new_own(int threads);
/* 1 if a thread's own stage keeps its own copy of a's rows: model
 * replicas (.average) of at most 1 MiB, a copy that stays in a core's
 * cache (a small model every sample changes, whose shared cache lines
 * the threads would otherwise fight over; a larger one is mostly touched
 * sparsely, and copying it each round would cost more). */
int loom_sched_stage_owns(const loom_dsm_alloc *a);
/* Before each round: stage whole the arrays the last round mostly changed. */
void loom_sched_stage_begin(loom_stage **ss, int n);
/* Up to two arrays of s staged whole in place this round into w (the
 * rest NULL): the accessor's fast path. */
void loom_sched_stage_whole(loom_stage *s, loom_dsm_alloc *w[2]);
/* Before the first round: stage a whole from it on, where s may. */
void loom_sched_stage_expect_whole(loom_stage *s, loom_dsm_alloc *a);
void *loom_sched_stage_row(loom_stage *s, loom_dsm_alloc *a, size_t row, int write);
/* The calling thread leaves its own stage: loom_sched_ts.own emptied. */
void loom_sched_own_forget(void);
/* Push the changes of every stage in ss[0..n) home (loom_row_add), then
 * forget the copies. */
void loom_sched_stage_flush(loom_stage **ss, int n);
void loom_sched_stage_free(loom_stage *s);
/* Contract: collective, after a data-parallel loop's last sync point on
 * several ranks, while no loop body runs.  Code after the loop then reads
 * current rows however it reads them (plain loads of the array, loom_at,
 * loom_at_base): with barrier set (an ssp or hybrid loop, whose last sync
 * point was a clock) every rank's last round reaches home first; then
 * every rank makes its whole copy of every array any rank's stage reached
 * current (dsm's loom_dsm_row_refresh: one batch of the dropped rows; ring
 * allocations and bounded caches stay as they are). */
void loom_sched_stage_settle(loom_stage **ss, int n, int barrier);

/* Calls fn(a, rows, nrows, arg) for each array of each stage in ss[0..n)
 * with the rows it touched since the last flush (one thread, no loop body
 * running). */
void loom_sched_stage_each(loom_stage **ss, int n,
                     void (*fn)(loom_dsm_alloc *a, const size_t *rows, size_t nrows, void *arg),
                     void *arg);

/* ---- shares.c ---------------------------------------------------------- */
/* The rounds of one dynamic data-parallel loop on the job's range [lo, hi),
 * shared among the ranks by speed (shares.c); cum: the weights' running
 * total, cum[i - lo] the weight of [lo, i) (NULL: 1 per iteration), kept
 * by the caller. */
typedef struct loom_shares loom_shares;
loom_shares *loom_sched_shares_new(long lo, long hi, const int64_t *cum);
void loom_sched_shares_free(loom_shares *s);
/* A rank's part of a round: [a[0], z[0]) from the front of its own block,
 * then [a[1], z[1]) from the back of another's; either may be empty. */
typedef struct {
    long a[2], z[2];
} loom_part;
/* The next round, of about R x every weight (or what is left, if less):
 * 1 and this rank's part, or 0 once the range is done.  Every rank calls
 * it alike; the parts of a round tile what it takes. */
int loom_sched_shares_next(loom_shares *s, double every, loom_part *p);
/* Collective, after each round: this rank ran part p in secs seconds of
 * its threads; every rank learns every rank's rate (loom_sched_shares_rates). */
void loom_sched_shares_learn(loom_shares *s, const loom_part *p, double secs);
/* The rates from one round's figures, x[k] the weight rank k ran and
 * x[R + k] its seconds (a rank with either 0 keeps its rate).  Pure: the
 * same x gives every rank the same parts (tests/unit/test_shares.c). */
void loom_sched_shares_rates(loom_shares *s, const double *x);

/* ---- prefetch.c -------------------------------------------------------- */
/* IterStore's prefetch batches for a .repeated data-parallel loop: the
 * site's record (NULL if none could be made), each round's rows
 * prefetched before it runs, and recorded after it (before the flush). */
typedef struct loom_pf loom_pf;
loom_pf *loom_sched_pf_site(const loom_body *b, long lo, long hi, long every, int64_t rounds);
void loom_sched_pf_before(loom_pf *p, int64_t round);
void loom_sched_pf_after(loom_pf *p, int64_t round, loom_stage **ss, int n);
/* Before a call's first round: the arrays the site's last call had
 * staged whole at its end are staged whole from the start (a stage of
 * its own, ss[0], only); after its last flush: remember them. */
void loom_sched_pf_start(loom_pf *p, loom_stage **ss, int n);
void loom_sched_pf_end(loom_pf *p, loom_stage **ss, int n);
/* After a repeated site's first call: move rows' homes to the ranks that
 * touched them most (collective; once per site). */
void loom_sched_pf_place(loom_pf *p);

/* ---- priority.c -------------------------------------------------------- */
int loom_sched_priority_run(long begin, long end, void *ctx, const loom_priority *p);

/* ordered.c: a serializable loom_for_records with .ordered: conflicting
 * records in index order (several ranks: each its own records, .local),
 * the result bitwise the serial loop's.  LOOM_ERR_ARG after a message
 * when it cannot (collective: every rank alike). */
int loom_sched_ordered_run(const loom_body *b, long n, int local, int repeated);
/* loom_free's hook (through plan.c): drop the cached plan that uses a. */
void loom_sched_ordered_forget(const loom_dsm_alloc *a);

#endif
