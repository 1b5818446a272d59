/* access.c — how a loop body reaches rows: loom_at / loom_at_r, and the
 * access declarations loom_reads / loom_writes.
 *
 * An accessor is address arithmetic unless the calling thread's state
 * (loom_sched_ts.mode) says otherwise: in a reconnaissance run it records the
 * access and sends writes to scratch memory; under LOOM_CHECK=serial it
 * reports the access to the checker; in a staged data-parallel loop it
 * returns the thread's (or rank's) copy of the row. */
#include "sched.h"

#include <stdlib.h>
#include <string.h>

__thread struct loom_sched_ts loom_sched_ts;

loom_dsm_alloc *loom_sched_rows(void *array, const char *fn)
{
    loom_dsm_alloc *a = loom_dsm_lookup_base(array);
    if (!a || !a->live || a->kind != LOOM_UNIT_ROW)
        loom_rt_die(2, "%s: %p is not a Loom row allocation (loom_alloc with .unit = LOOM_UNIT_ROW)",
                 fn, array);
    return a;
}

/* The allocation of `array` through the thread's two-entry cache (an
 * entry is still live if still in the table). */
static inline loom_dsm_alloc *rows_of(void *array, const char *fn)
{
    struct loom_sched_ts *t = &loom_sched_ts;
    for (int x = 0; x < 2; x++) {
        loom_dsm_alloc *a = t->last[x];
        if (__builtin_expect(a && loom_dsm_allocs[t->last_id[x]] == a && a->base == array, 1))
            return a;
    }
    t->last[1] = t->last[0], t->last_id[1] = t->last_id[0];
    loom_dsm_alloc *a = t->last[0] = loom_sched_rows(array, fn);
    t->last_id[0] = a->id;
    return a;
}

/* Grows d (a borrowed array is copied out) or stops the job. */
static void grow(struct loom_deps *d)
{
    loom_acc *a;
    if (d->borrowed) { /* copied out into an array of our own, twice as large */
        d->cap = d->cap ? 2 * d->cap : 16;
        if ((a = malloc(d->cap * sizeof *a)))
            memcpy(a, d->acc, d->n * sizeof *a);
    } else {
        a = loom_rt_grow(d->acc, &d->cap, d->n + 1, sizeof *a);
    }
    if (!a)
        loom_rt_die(2, "loom_for: out of memory recording accesses");
    d->acc = a;
    d->borrowed = 0;
}

static inline void append(struct loom_deps *d, loom_dsm_alloc *a, size_t row, int write)
{
    if (__builtin_expect(d->n == d->cap, 0))
        grow(d);
    if (__builtin_expect(row >= LOOM_ACC_ROWS, 0))
        loom_rt_die(2, "loom_for: row %zu of '%s': a serializable loop names rows below 2^32 only",
                 row, a->name);
    d->acc[d->n++] = (loom_acc){(uint32_t)row, (uint16_t)a->id, (uint16_t)write};
}

/* Reconnaissance: a writable scratch copy of the row, valid until the
 * iteration ends (collect.c resets scratch_used between iterations).
 * Each written row of an iteration gets its own buffer, kept for reuse. */
static void *scratch_copy(loom_dsm_alloc *a, const char *p)
{
    struct loom_sched_ts *t = &loom_sched_ts;
    if (t->scratch_used == t->scratch_n) {
        int n = t->scratch_n ? 2 * t->scratch_n : 4;
        char **s = realloc(t->scratch, (size_t)n * sizeof *s);
        size_t *z = realloc(t->scratch_size, (size_t)n * sizeof *z);
        if (!s || !z)
            loom_rt_die(2, "loom_for: out of memory in reconnaissance");
        for (int i = t->scratch_n; i < n; i++)
            s[i] = NULL, z[i] = 0;
        t->scratch = s, t->scratch_size = z, t->scratch_n = n;
    }
    int k = t->scratch_used++;
    if (t->scratch_size[k] < a->unit) {
        free(t->scratch[k]);
        if (!(t->scratch[k] = malloc(a->unit)))
            loom_rt_die(2, "loom_for: out of memory in reconnaissance");
        t->scratch_size[k] = a->unit;
    }
    return memcpy(t->scratch[k], p, a->unit);
}

static void *slow(loom_dsm_alloc *a, size_t row, int write, char *p)
{
    switch (loom_sched_ts.mode) {
    case TS_RECORD:
        append(&loom_sched_ts.rec, a, row, write);
        return write ? scratch_copy(a, p) : p;
    case TS_CHECK:
        loom_sched_check_access(a, row, write);
        return p;
    case TS_STAGE:
        return loom_sched_stage_row(loom_sched_ts.stage, a, row, write);
    }
    return p;
}

/* Plain address arithmetic: no loop, or a row of an array the round
 * staged whole in the rank's own copy (stage.c). */
static inline int direct(const loom_dsm_alloc *a)
{
    const struct loom_sched_ts *t = &loom_sched_ts;
    return __builtin_expect(t->mode == TS_PLAIN, 1) ||
           (t->mode == TS_STAGE && (a == t->whole[0] || a == t->whole[1]));
}

/* 1 if row r's copy at a's base is one a sync point dropped (or never
 * fetched) while no loop runs: code between loops must not read it as it
 * is.  A ring allocation's rows are its owners' (left as they are). */
static inline int stale(const loom_dsm_alloc *a, size_t row)
{
    return a->state && !loom_dsm_looping &&
           atomic_load_explicit(&a->state[row], memory_order_relaxed) == U_INVALID &&
           !loom_dsm_policy_rotates(a->policy);
}

/* Between loops: the row made current in place (loom_row_get), so that
 * the address arithmetic reads what the row path would.  Inside a
 * LOOM_SINGLE block (single.c) the row is also marked put: what the block
 * writes through the address is released whole at its end. */
static char *refreshed(loom_dsm_alloc *a, size_t row)
{
    const char *p = loom_row_get(a->base, row);
    if (!p)
        loom_rt_die(2, "loom_at: cannot read row %zu of '%s'", row, a->name);
    return (char *)p;
}

static char *single_write(loom_dsm_alloc *a, size_t row, char *p)
{
    if (!a->state || loom_dsm_policy_rotates(a->policy))
        return p;
    if (stale(a, row))
        refreshed(a, row);
    loom_dsm_row_mark_put(a, row);
    return p;
}

/* 1 if a row reached by address arithmetic needs nothing more: inside a
 * loop, or one rank; not under LOOM_CHECK=dsm, not in a LOOM_SINGLE
 * block.  One test on the accessors' fast path. */
static inline int plain_row(const loom_dsm_alloc *a)
{
    return !(a->readmark || loom_sched_single || (a->state && !loom_dsm_looping));
}

/* The rest for a row plain_row() refused: the checker notes the read; a
 * LOOM_SINGLE block's write (write = 1) is marked put; a dropped row is
 * made current first. */
static char *between(loom_dsm_alloc *a, size_t row, int write, char *p)
{
    if (a->readmark) /* LOOM_CHECK=dsm */
        loom_dsm_note_read_row(a, row);
    if (write && loom_sched_single)
        return single_write(a, row, p);
    return stale(a, row) ? refreshed(a, row) : p;
}

/* A thread's own stage (stage.c): a's entry on the accessors' fast path,
 * or NULL. */
static inline const struct loom_sched_own *own_of(const loom_dsm_alloc *a)
{
    const struct loom_sched_own *f = loom_sched_ts.own;
    return f[0].a == a ? &f[0] : f[1].a == a ? &f[1] : NULL;
}

/* The row's copy in the thread's own stage if the round staged it
 * already, else NULL. */
static inline char *own_copy(const loom_dsm_alloc *a, size_t row)
{
    const struct loom_sched_own *f = own_of(a);
    if (!f || atomic_load_explicit(&f->st[row], memory_order_relaxed) != 2)
        return NULL;
    return f->copy + row * a->unit;
}

void *loom_at(void *array, size_t row)
{
    loom_dsm_alloc *a = rows_of(array, "loom_at");
    if (__builtin_expect(row >= a->nunits, 0))
        loom_rt_die(2, "loom_at: row %zu of '%s' is out of range (%zu rows)", row, a->name, a->nunits);
    char *p = a->base + row * a->unit, *c;
    if (__builtin_expect(direct(a), 1))
        return __builtin_expect(plain_row(a), 1) ? p : between(a, row, 1, p);
    return (c = own_copy(a, row)) ? c : slow(a, row, 1, p);
}

const void *loom_at_r(void *array, size_t row)
{
    loom_dsm_alloc *a = rows_of(array, "loom_at_r");
    if (__builtin_expect(row >= a->nunits, 0))
        loom_rt_die(2, "loom_at_r: row %zu of '%s' is out of range (%zu rows)", row, a->name, a->nunits);
    char *p = a->base + row * a->unit, *c;
    if (__builtin_expect(direct(a), 1))
        return __builtin_expect(plain_row(a), 1) ? p : between(a, row, 0, p);
    return (c = own_copy(a, row)) ? c : slow(a, row, 0, p);
}

void *loom_at_base(void *array)
{
    loom_dsm_alloc *a = rows_of(array, "loom_at_base");
    const struct loom_sched_own *f = own_of(a);
    if (f && f->whole) /* a thread's own copy, staged whole (stage.c) */
        return f->copy;
    if (!direct(a))
        return NULL;
    if (!a->state || loom_dsm_looping) /* one rank, or inside a loop */
        return a->base;
    int rc = loom_dsm_row_refresh(a); /* between loops: every row current first */
    if (rc == LOOM_ERR_NOMEM)
        loom_rt_die(2, "loom_at_base: out of memory refreshing '%s'", a->name);
    return rc ? NULL : a->base;
}

int loom_recording(void) { return loom_sched_ts.mode == TS_RECORD; }

static inline void declare(loom_deps *d, void *array, size_t row, int write, const char *fn)
{
    loom_dsm_alloc *a = rows_of(array, fn);
    if (row >= a->nunits)
        loom_rt_die(2, "%s: row %zu of '%s' is out of range (%zu rows)", fn, row, a->name, a->nunits);
    append(d, a, row, write);
}
void loom_reads(loom_deps *d, void *array, size_t row) { declare(d, array, row, 0, "loom_reads"); }
void loom_writes(loom_deps *d, void *array, size_t row) { declare(d, array, row, 1, "loom_writes"); }

void loom_sched_accset_free(loom_accset *s)
{
    free(s->off);
    free(s->acc);
    memset(s, 0, sizeof *s);
}
