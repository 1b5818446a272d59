/* policy_bsp.c — release consistency, bulk-synchronous style.
 *
 * Guarantee: after an acquire (every loom_barrier ends with one), a rank's
 * reads see every write released before it by any rank (every
 * loom_barrier starts with a release), and always its own writes.
 *   read miss    fetch the unit from its home
 *   first write  keep a twin of the clean unit
 *   release      diff each dirty unit against its twin (changed bytes for
 *                overwrite merge, element deltas for add merge) and send
 *                the records home; rows send their put and pending adds
 *   acquire      invalidate every clean unit (dirty ones keep their data);
 *                at a barrier or clock, only those another rank changed
 *                are refetched, in one batch (write notices, notice.c)
 *   loom_clock   (clock.c) drops copies older than the clock: with
 *                staleness 0, a rank in clock c reads only data that
 *                reflects every rank's clocks < c.
 * These hooks are exported as loom_rc_*: policy_ssp.c shares them. */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Units fetched per fault when access is sequential (the unit before is
 * valid): about 512 KiB, between 1 and 64 units. */
static size_t window(const loom_dsm_alloc *a)
{
    size_t w = ((size_t)512 << 10) / a->unit;
    return w < 1 ? 1 : w > 64 ? 64 : w;
}

/* Contract (read_miss): unit u (locked by the caller, invalid) and, when
 * the unit before it is valid, up to window() - 1 invalid units after it
 * that no other thread holds, are fetched together (loom_dsm_fetch_many).  The extra units are made clean and readable
 * here (one mprotect) and unlocked; u is left to the caller. */
void loom_dsm_rc_read_miss(loom_dsm_alloc *a, size_t u)
{
    size_t n = 1, w = window(a);
    if (u > 0 && w > 1) {
        int prev = atomic_load(&a->state[u - 1]);
        if (prev == U_CLEAN || prev == U_DIRTY)
            while (n < w && u + n < a->nunits &&
                   atomic_load(&a->state[u + n]) == U_INVALID &&
                   !atomic_flag_test_and_set_explicit(&a->ulock[u + n], memory_order_acquire)) {
                if (atomic_load(&a->state[u + n]) != U_INVALID) {
                    loom_dsm_unit_unlock(a, u + n);
                    break;
                }
                n++;
            }
    }
    uint64_t stamp = loom_dsm_wait_fresh(a);
    loom_dsm_fetch_many(a, u, n, a->shadow + u * a->unit);
    for (size_t i = 0; i < n; i++) {
        a->stamp[u + i] = stamp;
        loom_dsm_cache_use(a, u + i);
        loom_dsm_mark_valid(a, u + i);
        loom_dsm_note_read(a, stamp);
        if (i)
            atomic_store(&a->state[u + i], U_CLEAN);
    }
    atomic_fetch_add(&a->stats.misses, n);
    if (n > 1) {
        loom_dsm_protect(a, u + 1, u + n, PROT_READ);
        for (size_t i = 1; i < n; i++)
            loom_dsm_unit_unlock(a, u + i);
    }
}

void loom_dsm_rc_first_write(loom_dsm_alloc *a, size_t u)
{
    void *t = malloc(a->unit);
    if (!t)
        loom_rt_die(1, "out of memory (twin of '%s')", a->name);
    memcpy(t, a->shadow + u * a->unit, a->unit);
    a->twin[u] = t;
    loom_dsm_mark_dirty(a, u);
}

void loom_dsm_rc_row_miss(loom_dsm_alloc *a, size_t row)
{
    char *p = a->base + row * a->unit;
    a->stamp[row] = loom_dsm_wait_fresh(a);
    loom_dsm_cache_use(a, row);
    loom_dsm_fetch(a, row, p);
    atomic_fetch_add(&a->stats.misses, 1);
    if (a->put[row] & 2) /* own adds not yet released stay visible */
        loom_rt_reduce_local(p, a->twin[row], a->unit / a->esize, a->type, LOOM_SUM);
}

/* 1 if the 64 bytes at x and y are equal: a loop the compiler vectorizes. */
static int block_equal(const char *x, const char *y)
{
    uint64_t d = 0;
    for (int k = 0; k < 8; k++) {
        uint64_t p, q;
        memcpy(&p, x + 8 * k, 8);
        memcpy(&q, y + 8 * k, 8);
        d |= p ^ q;
    }
    return d == 0;
}

/* 1 if every byte of the 8 at x differs from the one at y. */
static int word_all_differ(const char *x, const char *y)
{
    uint64_t p, q;
    memcpy(&p, x, 8);
    memcpy(&q, y, 8);
    uint64_t v = p ^ q; /* a zero byte in v is an unchanged byte */
    return !((v - 0x0101010101010101ULL) & ~v & 0x8080808080808080ULL);
}

/* Overwrite merge: one BYTES record per run of changed bytes, exactly
 * (an unchanged byte is never sent: another rank may own it).  Equal
 * 64-byte blocks are skipped whole, and runs grow 8 bytes at a time. */
static void diff_bytes(loom_dsm_alloc *a, size_t u, const char *cur, const char *old)
{
    size_t n = a->unit;
    for (size_t i = 0; i < n;) {
        if (!(i & 63) && block_equal(cur + i, old + i)) {
            i += 64;
            continue;
        }
        if (cur[i] == old[i]) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n) {
            if (!(j & 7) && j + 8 <= n && word_all_differ(cur + j, old + j))
                j += 8;
            else if (cur[j] != old[j])
                j++;
            else
                break;
        }
        loom_dsm_flush_bytes(a, u, i, cur + i, j - i);
        i = j;
    }
}

/* Add merge: the twin becomes current - twin, element by element (typed
 * loops the compiler vectorizes), then one ADD record per run of non-zero
 * deltas. */
#define DELTA(T) do { T *restrict d_ = (T *)(void *)d; const T *restrict c_ = (const T *)(const void *)cur; \
                      for (size_t k = 0; k < ne; k++) d_[k] = (T)(c_[k] - d_[k]); } while (0)
static void diff_add(loom_dsm_alloc *a, size_t u, const char *cur, char *d)
{
    size_t es = a->esize, ne = a->unit / es;
    switch (a->type) {
    case LOOM_INT32: DELTA(uint32_t); break;
    case LOOM_INT64: DELTA(uint64_t); break;
    case LOOM_FLOAT: DELTA(float); break;
    case LOOM_DOUBLE: DELTA(double); break;
    }
    static const char zero[8];
    for (size_t k = 0; k < ne;) {
        if (!memcmp(d + k * es, zero, es)) {
            k++;
            continue;
        }
        size_t j = k;
        while (j < ne && memcmp(d + j * es, zero, es))
            j++;
        loom_dsm_flush_add(a, u, k * es, d + k * es, (j - k) * es);
        k = j;
    }
}
#undef DELTA

static int by_unit(const void *x, const void *y)
{
    size_t p = *(const size_t *)x, q = *(const size_t *)y;
    return (p > q) - (p < q);
}

/* Sort a unit list (usually sorted already) and set each run of
 * consecutive units to prot with one mprotect. */
static void protect_list(loom_dsm_alloc *a, size_t *v, size_t n, int prot)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] < v[i - 1]) {
            qsort(v, n, sizeof *v, by_unit);
            break;
        }
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j] == v[j - 1] + 1)
            j++;
        loom_dsm_protect(a, v[i], v[j - 1] + 1, prot);
        i = j;
    }
}

/* Contract (release): every unit on the dirty list, and only those, is
 * diffed into the flush; page units become clean (read-only, one mprotect
 * per run).  Runs with no other thread of the rank inside a. */
void loom_dsm_rc_release(loom_dsm_alloc *a)
{
    if (a->kind == LOOM_UNIT_PAGE) {
        for (size_t i = 0; i < a->ndirty; i++) {
            size_t u = a->dirty[i];
            const char *cur = a->shadow + u * a->unit;
            if (a->merge == LOOM_MERGE_OVERWRITE)
                diff_bytes(a, u, cur, a->twin[u]);
            else
                diff_add(a, u, cur, a->twin[u]);
            free(a->twin[u]);
            a->twin[u] = NULL;
            atomic_store(&a->state[u], U_CLEAN);
        }
        protect_list(a, a->dirty, a->ndirty, PROT_READ);
        loom_dsm_notice_released(a, a->dirty, a->ndirty);
        a->ndirty = 0;
        return;
    }
    for (size_t i = 0; i < a->ndirty; i++) {
        size_t u = a->dirty[i];
        loom_dsm_unit_lock(a, u); /* priority's sender may be moving its deltas */
        if (a->put[u] & 1)
            loom_dsm_flush_bytes(a, u, 0, a->base + u * a->unit, a->unit);
        if (a->put[u] & 2) {
            loom_dsm_flush_add(a, u, 0, a->twin[u], a->unit);
            memset(a->twin[u], 0, a->unit);
        }
        if (a->used) { /* a bounded cache (cache.c): no per-row buffer outlives a release */
            free(a->twin[u]);
            a->twin[u] = NULL;
        }
        a->put[u] = 0;
        loom_dsm_unit_unlock(a, u);
    }
    loom_dsm_notice_released(a, a->dirty, a->ndirty);
    a->ndirty = 0;
}

/* Contract: drop every clean copy stamped before older_than.  Pages: only
 * the units on the valid list are looked at (cost grows with what was
 * touched, not with a's size); the dropped ones leave it and become
 * PROT_NONE, one mprotect per run.  Rows: every row.  Same callers as
 * release. */
void loom_dsm_rc_invalidate(loom_dsm_alloc *a, uint64_t older_than)
{
    if (a->kind == LOOM_UNIT_ROW) {
        for (size_t r = 0; r < a->nunits; r++)
            if (!a->put[r] && loom_dsm_stamp(a, r) < older_than)
                atomic_store(&a->state[r], U_INVALID);
        atomic_fetch_add(&a->dropped_gen, 1);
        return;
    }
    /* Partition the list in place: valid[0, keep) stays, valid[keep,
     * keep + ndrop) is dropped (both behind i, so no slot is overwritten
     * before it is read); entries already invalid leave it. */
    size_t keep = 0, ndrop = 0, *v = a->valid;
    for (size_t i = 0; i < a->nvalid; i++) {
        size_t u = v[i];
        int st = atomic_load(&a->state[u]);
        if (st == U_CLEAN && loom_dsm_stamp(a, u) < older_than) {
            atomic_store(&a->state[u], U_INVALID);
            v[keep + ndrop++] = u;
        } else if (st != U_INVALID) {
            v[keep + ndrop] = v[keep]; /* the first dropped moves to the end */
            v[keep++] = u;
        }
    }
    a->nvalid = keep;
    protect_list(a, v + keep, ndrop, PROT_NONE);
}

void loom_dsm_rc_acquire(loom_dsm_alloc *a)
{
    loom_dsm_rc_invalidate(a, UINT64_MAX);
}

/* Contract (clock): copies too old for this rank's new clock are dropped;
 * with write notices, the rank first waits for the global clock its
 * staleness allows (as its next miss would) and refreshes only what
 * another rank changed (notice.c). */
void loom_dsm_rc_clock(loom_dsm_alloc *a)
{
    if (a->sparse)
        loom_dsm_notice_apply(a, loom_dsm_wait_fresh(a));
    else
        loom_dsm_rc_invalidate(a, loom_dsm_oldest(a));
}

const loom_policy loom_dsm_policy_bsp = {
    .name = "bsp",
    .notices = 1,
    .homes_in_place = 1,
    .read_miss = loom_dsm_rc_read_miss,
    .first_write = loom_dsm_rc_first_write,
    .row_miss = loom_dsm_rc_row_miss,
    .release = loom_dsm_rc_release,
    .acquire = loom_dsm_rc_acquire,
    .clock = loom_dsm_rc_clock,
};
