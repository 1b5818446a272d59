/* stage.c — staged row copies for the data-parallel modes (STRADS-AP
 * SyncFor, seed 000 §7.2.4).
 *
 * A stage holds, for each row allocation a loop reaches through loom_at,
 * a working copy and an original of every row touched since the last sync
 * point.  The first touch fetches the row (loom_row_get: as fresh as the
 * array's policy promises); at a sync point the difference copy - original
 * of every row that changed is added home (loom_dsm_row_add_diff: summed,
 * nothing lost; a row only read sends nothing) and the copies are
 * forgotten.  A BSP/SSP loop gives each thread its own stage; a HYBRID
 * loop on several ranks gives all threads of a rank one shared stage
 * (Hogwild inside the rank), so first touches are made thread-safe with a
 * per-row state byte.
 *
 * A stage shared by all of the rank's threads works **in place**: the
 * working copy of a row is the rank's own copy (valid from the first
 * touch to the sync point: nothing else writes it between sync points,
 * unless the policy sends from it in the background), so a first touch
 * copies only the original, and the flush adds the difference to the twin
 * alone (the copy has it already).  An array whose last round changed
 * most of it (three quarters of its bytes, counting each changed row's
 * record header: most()) is staged **whole** before the next
 * round (loom_sched_stage_begin): its invalid rows fetched in one batch, the
 * originals copied in one pass, no first touch left to make, and its rows
 * reached by address arithmetic (loom_sched_stage_whole; a word2vec round writes
 * nearly every output vector: ~5 000 first touches of 200 bytes, each with
 * two atomic operations, cost more than copying all 5 367).  When every
 * rank staged an array whole, its round merges by one allreduce (dense(),
 * dsm/dense.c) instead of row by row.
 *
 * On one rank a HYBRID loop with a sync interval gives each thread its
 * own stage of the small model replicas it reaches (loom_sched_stage_new_own,
 * for.c's own_rounds): the thread flushes it at the end of each of its
 * rounds, while the others run, adding its changes averaged over the
 * threads (as the ranks' replicas are) and taking the rows back in one
 * pass each under the row's lock (own_flush), and keeps the rows it
 * touched for its next round (all of them, reached by address, once a
 * round reached most of them), so a model every sample changes stops
 * bouncing between the threads' caches.
 *
 * Other copies and the originals are anonymous mappings touched only where
 * rows were staged; under LOOM_CACHE_BYTES (dsm/cache.c) every flush gives
 * their memory back, so a stage holds one round's rows at most. */
#include "sched.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAXARR 16

struct staged {
    loom_dsm_alloc *a;
    char *copy, *orig;           /* nunits * unit each, touched rows valid;
                                  * copy == a->base: in place */
    _Atomic uint8_t *st;         /* per row: 0 absent, 1 filling, 2 ready;
                                  * own stages: 3 kept from the last round */
    size_t *touched;
    size_t *kept, nkept;         /* own stages: the rows the last round kept */
    _Atomic size_t ntouched;
    int whole;                   /* the last round changed most of it (most());
                                  * own stages: staged whole from then on */
    int dense;                   /* this round merged by one allreduce (dsm/dense.c) */
    char *delta;                 /* its scratch, nunits * unit, made at the first */
};

struct loom_stage {
    pthread_mutex_t lock;        /* adding an array */
    int shared;                  /* used by every thread of the rank */
    int own;                     /* one thread's of `own` threads, one rank: small
                                    replicas only (loom_sched_stage_new_own) */
    _Atomic int n;
    struct staged arr[MAXARR];
};

loom_stage *loom_sched_stage_new(int shared)
{
    loom_stage *s = calloc(1, sizeof *s);
    if (s) {
        pthread_mutex_init(&s->lock, NULL);
        s->shared = shared;
    }
    return s;
}

int loom_sched_stage_owns(const loom_dsm_alloc *a)
{
    return a->replicas && a->nunits * a->unit <= ((size_t)1 << 20);
}

loom_stage *loom_sched_stage_new_own(int threads)
{
    loom_stage *s = loom_sched_stage_new(0);
    if (s)
        s->own = threads;
    return s;
}

/* 1 if a round that changed `changed` rows of a changed most of it: the
 * changed rows, each with the record that would carry it home (struct
 * loom_rec_hdr), hold three quarters of the array's bytes or more.  Then
 * staging (and merging) the whole array costs less than row by row, and
 * a dense merge moves at most 4/3 of what the rows' records would.  For
 * rows of hundreds of bytes that is about three quarters of the rows; for
 * a distributed map's one-float rows, a ninth (its unused capacity no
 * longer keeps it row by row). */
static int most(size_t changed, const loom_dsm_alloc *a)
{
    return 4 * changed * (a->unit + sizeof(struct loom_rec_hdr)) >= 3 * a->nunits * a->unit;
}

/* 1 if a stage of a works in the rank's copy of a itself. */
static int in_place(const loom_stage *s, const loom_dsm_alloc *a)
{
    return s->shared && !a->policy->background;
}

/* The staged entry of a in the stage s, or NULL. */
static struct staged *find(loom_stage *s, const loom_dsm_alloc *a)
{
    for (int x = 0; x < atomic_load(&s->n); x++)
        if (s->arr[x].a == a)
            return &s->arr[x];
    return NULL;
}

/* An anonymous mapping of a's size, touched only where written (a stage's
 * copies, originals and dense scratch), or NULL. */
static char *array_map(const loom_dsm_alloc *a)
{
    char *p = mmap(NULL, a->nunits * a->unit, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static struct staged *staged_of(loom_stage *s, loom_dsm_alloc *a)
{
    struct staged *g = find(s, a);
    if (g)
        return g;
    pthread_mutex_lock(&s->lock);
    if ((g = find(s, a))) {
        pthread_mutex_unlock(&s->lock);
        return g;
    }
    int n = atomic_load(&s->n);
    if (n == MAXARR)
        loom_rt_die(2, "loom_for: a data-parallel loop may reach at most %d arrays", MAXARR);
    if (a->merge != LOOM_MERGE_ADD)
        loom_rt_die(2, "loom_for: '%s' needs .merge = LOOM_MERGE_ADD (and a .type) in a BSP, SSP "
                 "or multi-rank HYBRID loop, whose writes are summed", a->name);
    g = &s->arr[n];
    g->a = a;
    g->copy = in_place(s, a) ? a->base : array_map(a);
    g->orig = array_map(a);
    g->st = calloc(a->nunits, sizeof *g->st);
    g->touched = malloc(a->nunits * sizeof *g->touched);
    g->kept = s->own ? malloc(a->nunits * sizeof *g->kept) : NULL;
    if (!g->copy || !g->orig || !g->st || !g->touched || (s->own && !g->kept))
        loom_rt_die(2, "loom_for: out of memory staging '%s'", a->name);
    atomic_store(&s->n, n + 1);
    pthread_mutex_unlock(&s->lock);
    return g;
}

/* An own stage's array g is the calling thread's: the first two go to
 * the accessors' fast path (loom_sched_ts.own). */
static void own_fast(struct staged *g)
{
    struct loom_sched_own *f = loom_sched_ts.own;
    int k = f[0].a == g->a ? 0 : f[1].a == g->a ? 1 : !f[0].a ? 0 : !f[1].a ? 1 : -1;
    if (k >= 0)
        f[k] = (struct loom_sched_own){g->a, g->copy, g->st, g->whole};
}

void loom_sched_own_forget(void)
{
    memset(loom_sched_ts.own, 0, sizeof loom_sched_ts.own);
}

void *loom_sched_stage_row(loom_stage *s, loom_dsm_alloc *a, size_t row, int write)
{
    (void)write;
    if (s->own && !loom_sched_stage_owns(a)) /* a thread's own stage: small model replicas only */
        return a->base + row * a->unit;
    struct staged *g = staged_of(s, a);
    if (s->own)
        own_fast(g);
    char *copy = g->copy + row * a->unit;
    uint8_t st = atomic_load_explicit(&g->st[row], memory_order_acquire);
    if (st == 2)
        return copy;
    if (st == 3) { /* an own stage's row, current as of its last flush */
        atomic_store_explicit(&g->st[row], 2, memory_order_relaxed);
        g->touched[atomic_fetch_add(&g->ntouched, 1)] = row;
        return copy;
    }
    uint8_t zero = 0;
    if (st == 0 && atomic_compare_exchange_strong(&g->st[row], &zero, 1)) {
        const void *src = loom_row_get(a->base, row);
        if (!src)
            loom_rt_die(2, "loom_for: cannot read row %zu of '%s'", row, a->name);
        if (s->own) /* other threads add their changes to the row meanwhile */
            loom_dsm_unit_lock(a, row);
        if (copy != src)
            memcpy(copy, src, a->unit);
        memcpy(g->orig + row * a->unit, src, a->unit);
        if (s->own)
            loom_dsm_unit_unlock(a, row);
        g->touched[atomic_fetch_add(&g->ntouched, 1)] = row;
        atomic_store_explicit(&g->st[row], 2, memory_order_release);
        return copy;
    }
    while (atomic_load_explicit(&g->st[row], memory_order_acquire) != 2)
        sched_yield();
    return copy;
}

/* Contract: called by one thread while no loop body runs, before a
 * round.  Stages whole every in-place array whose last round changed most
 * of its rows: every row valid (loom_row_prefetch), its original
 * taken, its state ready, and all listed as touched. */
void loom_sched_stage_begin(loom_stage **ss, int n)
{
    for (int i = 0; i < n; i++)
        for (int x = 0; ss[i] && x < atomic_load(&ss[i]->n); x++) {
            struct staged *g = &ss[i]->arr[x];
            loom_dsm_alloc *a = g->a;
            if (!g->whole || atomic_load(&g->ntouched))
                continue;
            for (size_t r = 0; r < a->nunits; r++)
                g->touched[r] = r;
            if (loom_row_prefetch(a->base, g->touched, a->nunits))
                loom_rt_die(2, "loom_for: cannot read the rows of '%s'", a->name);
            memcpy(g->orig, a->base, a->nunits * a->unit);
            for (size_t r = 0; r < a->nunits; r++)
                atomic_store_explicit(&g->st[r], 2, memory_order_relaxed);
            atomic_store(&g->ntouched, a->nunits);
            atomic_fetch_add(&a->stats.staged_whole, 1);
        }
}

/* Contract: called by one thread before a loop's first round
 * (prefetch.c: a repeated site whose last call ended with a staged
 * whole).  From the first round a is staged whole, as if the round before
 * had changed most of its rows, where the stage may do so (in place, no
 * bounded cache, add merge); elsewhere nothing changes. */
void loom_sched_stage_expect_whole(loom_stage *s, loom_dsm_alloc *a)
{
    if (in_place(s, a) && !a->used && a->kind == LOOM_UNIT_ROW && a->merge == LOOM_MERGE_ADD)
        staged_of(s, a)->whole = 1;
}

/* Contract: from the round's threads, after loom_sched_stage_begin. */
void loom_sched_stage_whole(loom_stage *s, loom_dsm_alloc *w[2])
{
    int k = 0;
    w[0] = w[1] = NULL;
    for (int x = 0; x < atomic_load(&s->n) && k < 2; x++)
        if (s->arr[x].whole)
            w[k++] = s->arr[x].a;
}

/* With several ranks: the arrays that every rank staged whole in place
 * this round and that allow it merge by one allreduce each (dsm/dense.c),
 * in allocation order; the ranks agree on which in one small allreduce
 * first.  Collective: every rank's flush calls it, whatever its stages
 * hold (per-thread stages take no part). */
static void dense(loom_stage **ss, int n)
{
    int N = atomic_load(&loom_dsm_nallocs);
    if (loom_rt_icv.nranks == 1 || N == 0)
        return;
    int32_t *want = calloc((size_t)N, sizeof *want);
    if (!want)
        loom_rt_die(2, "loom_for: out of memory at a sync point");
    loom_stage *s = n == 1 && ss[0]->shared ? ss[0] : NULL;
    for (int x = 0; s && x < atomic_load(&s->n); x++) {
        struct staged *g = &s->arr[x];
        if (g->whole && g->a->id < N && loom_dsm_dense_ok(g->a))
            want[g->a->id] = 1;
    }
    loom_allreduce(LOOM_IN_PLACE, want, (size_t)N, LOOM_INT32, LOOM_MIN);
    for (int id = 0; id < N; id++) {
        struct staged *g = want[id] ? find(s, loom_dsm_allocs[id]) : NULL;
        if (!g)
            continue; /* every rank agreed, so every rank has it */
        loom_dsm_alloc *a = g->a;
        if (!g->delta && !(g->delta = array_map(a)))
            loom_rt_die(2, "loom_for: out of memory merging '%s'", a->name);
        size_t changed = loom_dsm_dense_merge(a, g->orig, g->delta);
        for (size_t r = 0; r < a->nunits; r++)
            atomic_store_explicit(&g->st[r], 0, memory_order_relaxed);
        atomic_store(&g->ntouched, 0);
        g->whole = most(changed, a);
        g->dense = 1;
    }
    free(want);
}

/* An own stage's flush (its thread's, one rank, T threads): the rows the
 * round touched add min(k, T) / T of their changes (the threads' copies
 * averaged as the ranks' replicas are, .average = k) and are made current
 * in one pass each (loom_dsm_row_add_diff_take) and kept for the next
 * round; rows kept from the round before and not touched since are
 * dropped, so a kept row is never older than the start of the round
 * before.  A round that touched most rows (most()) stages the array
 * whole: every row taken, ready, and reached by address (own_fast's
 * whole: loom_at_base gives the copy); from then on each flush takes
 * every row. */
static void own_take(struct staged *g, size_t row, double w)
{
    loom_dsm_alloc *a = g->a;
    if (loom_dsm_row_add_diff_take(a, row, g->copy + row * a->unit, g->orig + row * a->unit, w))
        loom_rt_die(2, "loom_for: cannot add row %zu of '%s' home", row, a->name);
}

static void own_flush(struct staged *g, int T)
{
    loom_dsm_alloc *a = g->a;
    double w = (double)(a->replicas < T ? a->replicas : T) / T;
    if (g->whole) { /* every row staged, reached by address: each adds its change, if any */
        for (size_t row = 0; row < a->nunits; row++)
            own_take(g, row, w);
        return;
    }
    for (size_t k = 0; k < g->nkept; k++)
        if (atomic_load_explicit(&g->st[g->kept[k]], memory_order_relaxed) == 3)
            atomic_store_explicit(&g->st[g->kept[k]], 0, memory_order_relaxed);
    size_t nt = atomic_load(&g->ntouched);
    for (size_t t = 0; t < nt; t++) {
        size_t row = g->touched[t];
        own_take(g, row, w);
        atomic_store_explicit(&g->st[row], 3, memory_order_relaxed);
        g->kept[t] = row;
    }
    g->nkept = nt;
    atomic_store(&g->ntouched, 0);
    if (!most(nt, a))
        return;
    /* the round reached most rows: from the next on, all are staged (a row
     * never touched, or dropped, has copy == orig: the take only makes it
     * current), and the body reaches them by address (loom_at_base) */
    for (size_t row = 0; row < a->nunits; row++) {
        if (atomic_load_explicit(&g->st[row], memory_order_relaxed) != 3)
            own_take(g, row, w);
        atomic_store_explicit(&g->st[row], 2, memory_order_relaxed);
    }
    g->whole = 1;
    own_fast(g);
}

/* Contract: called by one thread while no loop body runs; collective with
 * several ranks (dense()).  Adds every stage's changes home, in stage
 * order, and empties the stages.  A thread's own stage (one rank) is
 * flushed by its thread alone, whatever the others run. */
void loom_sched_stage_flush(loom_stage **ss, int n)
{
    dense(ss, n);
    for (int i = 0; i < n; i++) {
        loom_stage *s = ss[i];
        for (int x = 0; s && x < atomic_load(&s->n); x++) {
            struct staged *g = &s->arr[x];
            loom_dsm_alloc *a = g->a;
            if (g->dense) { /* merged above */
                g->dense = 0;
                continue;
            }
            if (s->own) {
                own_flush(g, s->own);
                continue;
            }
            size_t nt = atomic_load(&g->ntouched), changed = 0;
            for (size_t t = 0; t < nt; t++) {
                size_t row = g->touched[t];
                const char *copy = g->copy + row * a->unit, *orig = g->orig + row * a->unit;
                /* a row only read (or changed back) was not written: nothing
                 * to add, and an averaging home must not count this rank */
                if (memcmp(copy, orig, a->unit) && ++changed &&
                    loom_dsm_row_add_diff(a, row, copy, orig))
                    loom_rt_die(2, "loom_for: out of memory adding row %zu of '%s' home", row, a->name);
                atomic_store(&g->st[row], 0);
            }
            g->whole = g->copy == a->base && !a->used && most(changed, a);
            if (a->used && nt) { /* a bounded cache: the stage keeps no memory either */
                if (g->copy != a->base)
                    madvise(g->copy, a->nunits * a->unit, MADV_DONTNEED);
                madvise(g->orig, a->nunits * a->unit, MADV_DONTNEED);
            }
            atomic_store(&g->ntouched, 0);
        }
    }
}

void loom_sched_stage_settle(loom_stage **ss, int n, int barrier)
{
    int N = atomic_load(&loom_dsm_nallocs);
    if (barrier)
        loom_dsm_barrier(); /* every rank's last round home */
    int32_t *reached = calloc((size_t)N + 1, sizeof *reached);
    if (!reached)
        loom_rt_die(2, "loom_for: out of memory at the end of a loop");
    for (int i = 0; i < n; i++)
        for (int x = 0; ss[i] && x < atomic_load(&ss[i]->n); x++)
            if (ss[i]->arr[x].a->id < N)
                reached[ss[i]->arr[x].a->id] = 1;
    loom_allreduce(LOOM_IN_PLACE, reached, (size_t)N + 1, LOOM_INT32, LOOM_MAX);
    for (int id = 0; id < N; id++)
        if (reached[id])
            loom_sched_refresh(id);
    free(reached);
}

void loom_sched_refresh(int id)
{
    loom_dsm_alloc *a = id < atomic_load(&loom_dsm_nallocs) ? loom_dsm_allocs[id] : NULL;
    if (a && a->live && loom_dsm_row_refresh(a) == LOOM_ERR_NOMEM)
        loom_rt_die(2, "out of memory refreshing '%s'", a->name);
}

void loom_sched_stage_each(loom_stage **ss, int n,
                     void (*fn)(loom_dsm_alloc *a, const size_t *rows, size_t nrows, void *arg),
                     void *arg)
{
    for (int i = 0; i < n; i++)
        for (int x = 0; ss[i] && x < atomic_load(&ss[i]->n); x++)
            fn(ss[i]->arr[x].a, ss[i]->arr[x].touched, atomic_load(&ss[i]->arr[x].ntouched), arg);
}

void loom_sched_stage_free(loom_stage *s)
{
    if (!s)
        return;
    for (int x = 0; x < atomic_load(&s->n); x++) {
        if (s->arr[x].copy != s->arr[x].a->base)
            munmap(s->arr[x].copy, s->arr[x].a->nunits * s->arr[x].a->unit);
        if (s->arr[x].delta)
            munmap(s->arr[x].delta, s->arr[x].a->nunits * s->arr[x].a->unit);
        munmap(s->arr[x].orig, s->arr[x].a->nunits * s->arr[x].a->unit);
        free((void *)s->arr[x].st);
        free(s->arr[x].touched);
        free(s->arr[x].kept);
    }
    pthread_mutex_destroy(&s->lock);
    free(s);
}
