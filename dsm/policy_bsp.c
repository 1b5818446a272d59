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
 *   acquire      invalidate every clean unit (dirty ones keep their data)
 *   loom_clock   (clock.c) drops copies older than the clock: with
 *                staleness 0, a rank in clock c reads only data that
 *                reflects every rank's clocks < c.
 * These hooks are exported as loom_rc_*: policy_ssp.c shares them. */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void loom_rc_read_miss(loom_dsm_alloc *a, size_t u)
{
    a->stamp[u] = loom_dsm_wait_fresh(a);
    loom_dsm_fetch(a, u, a->shadow + u * a->unit);
    atomic_fetch_add(&a->stats.misses, 1);
    loom_dsm_note_read(a, a->stamp[u]);
}

void loom_rc_first_write(loom_dsm_alloc *a, size_t u)
{
    void *t = malloc(a->unit);
    if (!t)
        loom_die(1, "out of memory (twin of '%s')", a->name);
    memcpy(t, a->shadow + u * a->unit, a->unit);
    a->twin[u] = t;
    loom_dsm_mark_dirty(a, u);
}

void loom_rc_row_miss(loom_dsm_alloc *a, size_t row)
{
    char *p = a->base + row * a->unit;
    a->stamp[row] = loom_dsm_wait_fresh(a);
    loom_dsm_fetch(a, row, p);
    atomic_fetch_add(&a->stats.misses, 1);
    if (a->put[row] & 2) /* own adds not yet released stay visible */
        loom_reduce_local(p, a->twin[row], a->unit / a->esize, a->type, LOOM_SUM);
}

/* Records for one dirty page unit: runs of changed bytes, or runs of
 * non-zero element deltas. */
static void diff_page(loom_dsm_alloc *a, size_t u)
{
    const char *cur = a->shadow + u * a->unit, *old = a->twin[u];
    size_t n = a->unit;
    if (a->merge == LOOM_MERGE_OVERWRITE) {
        for (size_t i = 0; i < n;) {
            if (cur[i] == old[i]) {
                i++;
                continue;
            }
            size_t j = i;
            while (j < n && cur[j] != old[j])
                j++;
            loom_flush_bytes(a, u, i, cur + i, j - i);
            i = j;
        }
        return;
    }
    /* add merge: delta = current - twin, element by element, in the twin */
    size_t es = a->esize, ne = n / es;
    char *d = a->twin[u];
    for (size_t k = 0; k < ne; k++) {
        switch (a->type) {
        case LOOM_INT32: { int32_t x, y; memcpy(&x, cur + k * es, 4); memcpy(&y, d + k * es, 4);
                           x = (int32_t)((uint32_t)x - (uint32_t)y); memcpy(d + k * es, &x, 4); break; }
        case LOOM_INT64: { int64_t x, y; memcpy(&x, cur + k * es, 8); memcpy(&y, d + k * es, 8);
                           x = (int64_t)((uint64_t)x - (uint64_t)y); memcpy(d + k * es, &x, 8); break; }
        case LOOM_FLOAT: { float x, y; memcpy(&x, cur + k * es, 4); memcpy(&y, d + k * es, 4);
                           x -= y; memcpy(d + k * es, &x, 4); break; }
        case LOOM_DOUBLE: { double x, y; memcpy(&x, cur + k * es, 8); memcpy(&y, d + k * es, 8);
                            x -= y; memcpy(d + k * es, &x, 8); break; }
        }
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
        loom_flush_add(a, u, k * es, d + k * es, (j - k) * es);
        k = j;
    }
}

void loom_rc_release(loom_dsm_alloc *a)
{
    for (size_t i = 0; i < a->ndirty; i++) {
        size_t u = a->dirty[i];
        if (a->kind == LOOM_UNIT_PAGE) {
            diff_page(a, u);
            free(a->twin[u]);
            a->twin[u] = NULL;
            atomic_store(&a->state[u], U_CLEAN);
            loom_dsm_protect(a, u, u + 1, PROT_READ);
            continue;
        }
        loom_unit_lock(a, u); /* priority's sender may be moving its deltas */
        if (a->put[u] & 1)
            loom_flush_bytes(a, u, 0, a->base + u * a->unit, a->unit);
        if (a->put[u] & 2) {
            loom_flush_add(a, u, 0, a->twin[u], a->unit);
            memset(a->twin[u], 0, a->unit);
        }
        a->put[u] = 0;
        loom_unit_unlock(a, u);
    }
    a->ndirty = 0;
}

void loom_rc_invalidate(loom_dsm_alloc *a, uint64_t older_than)
{
    if (a->kind == LOOM_UNIT_ROW) {
        for (size_t r = 0; r < a->nunits; r++)
            if (!a->put[r] && a->stamp[r] < older_than)
                atomic_store(&a->state[r], U_INVALID);
        return;
    }
    size_t run = 0; /* coalesce the mprotect calls over runs of dropped units */
    for (size_t u = 0; u <= a->nunits; u++) {
        if (u < a->nunits && atomic_load(&a->state[u]) == U_CLEAN &&
            a->stamp[u] < older_than) {
            atomic_store(&a->state[u], U_INVALID);
            continue;
        }
        if (u > run)
            loom_dsm_protect(a, run, u, PROT_NONE);
        run = u + 1;
    }
}

void loom_rc_acquire(loom_dsm_alloc *a)
{
    loom_rc_invalidate(a, UINT64_MAX);
}

void loom_rc_clock(loom_dsm_alloc *a)
{
    loom_rc_invalidate(a, loom_dsm_oldest(a));
}

const loom_policy loom_policy_bsp = {
    .name = "bsp",
    .read_miss = loom_rc_read_miss,
    .first_write = loom_rc_first_write,
    .row_miss = loom_rc_row_miss,
    .release = loom_rc_release,
    .acquire = loom_rc_acquire,
    .clock = loom_rc_clock,
};
