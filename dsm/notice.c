/* notice.c — write notices: at a sync point, only what changed is refetched.
 *
 * Without them an acquire (every loom_barrier) and a clock drop every
 * clean copy, and each later read refetches its unit alone, changed or not.
 * With them (policies with `notices`: bsp, ssp), each rank tells every
 * other which units it released since its last sync point:
 *   at loom_clock   in the clock message itself (clock.c), queued by the
 *                   receiver before it counts the clock, so once the global
 *                   clock reaches m every notice of clocks < m is queued;
 *   at a barrier    in one message per other rank, sent after the release
 *                   and awaited after the runtime's barrier.
 * At the sync point (loom_dsm_notice_apply) a copy is refetched only if some
 * notice names its unit with a clock at or after the copy's stamp (it may
 * predate that write); all of those go in one batch of gets
 * (loom_dsm_fetch_list) — unless the program prefetches those rows at
 * every sync interval (prefetching()): then they are dropped, and its next
 * prefetch fetches the ones it reads next.  Every other copy stays valid:
 * no rank changed its unit since it was fetched, so it still reflects
 * every release up to now, and it is stamped with the global clock.  So the guarantees of bsp and
 * ssp (policy_bsp.c, policy_ssp.c) hold unchanged; only reads that would
 * have refetched identical bytes are saved.
 *
 * An averaging allocation (diff.c) also notices its own released units: the
 * home's average differs from the rank's own version.
 *
 * Wire body: blocks {u32 allocation id, u32 n, u32 unit[n]}, or, where
 * shorter, {u32 allocation id | BITMAP, u32 n, u32 bits[n]}: bit u of the
 * n = ceil(units / 32) words set for each unit written. */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>

static uint64_t round_no;              /* sync points passed */
static _Atomic uint64_t barrier_got[2]; /* barrier notices received, by parity of seq */
static uint64_t barrier_seq;           /* barriers passed */

uint64_t loom_dsm_notice_round(void) { return round_no; }

int loom_dsm_notice_wanted(const loom_dsm_alloc *a, const loom_policy *p)
{
    return p->notices && a->nunits <= UINT32_MAX &&
           !(a->kind == LOOM_UNIT_PAGE && a->merge == LOOM_MERGE_OVERWRITE);
}

static void lock(loom_dsm_alloc *a)
{
    while (atomic_flag_test_and_set_explicit(&a->notice_lock, memory_order_acquire))
        ;
}
static void unlock(loom_dsm_alloc *a)
{
    atomic_flag_clear_explicit(&a->notice_lock, memory_order_release);
}

/* Grow v (element size es) to hold need elements; dies without memory. */
static void *grow(void *v, size_t *cap, size_t need, size_t es)
{
    if (!(v = loom_rt_grow(v, cap, need, es)))
        loom_rt_die(1, "out of memory (write notices)");
    return v;
}

/* Queue n notices (units, clock) on a.  Handlers and the sync point. */
static void queue(loom_dsm_alloc *a, const uint32_t *u, const size_t *uz, size_t n,
                  uint64_t clock)
{
    lock(a);
    a->notice = grow(a->notice, &a->capnotice, a->nnotice + n, sizeof *a->notice);
    for (size_t i = 0; i < n; i++)
        a->notice[a->nnotice++] = (struct loom_notice){u ? u[i] : uz[i], clock};
    unlock(a);
}

static int by_u32(const void *x, const void *y)
{
    uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
    return (p > q) - (p < q);
}

/* Sort v[0..n) and drop repeats; returns the new length. */
static size_t distinct(uint32_t *v, size_t n)
{
    qsort(v, n, sizeof *v, by_u32);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || v[m - 1] != v[i])
            v[m++] = v[i];
    return m;
}

void loom_dsm_notice_released(loom_dsm_alloc *a, const size_t *v, size_t n)
{
    if (!a->sparse || !n)
        return;
    if (a->nwrote + n > 2 * a->nunits + 1024) /* releases without sync points: keep it short */
        a->nwrote = distinct(a->wrote, a->nwrote);
    a->wrote = grow(a->wrote, &a->capwrote, a->nwrote + n, sizeof *a->wrote);
    for (size_t i = 0; i < n; i++)
        a->wrote[a->nwrote++] = (uint32_t)v[i];
    /* the home's average, or its sum of fp16-rounded deltas, is not what
     * this rank wrote: its own copies are fetched again too */
    if (a->average || loom_dsm_half_wire(a))
        queue(a, NULL, v, n, UINT64_MAX);
}

/* The words of a's notice block: its written units as a list (one u32
 * each, repeats included) or as a bitmap of all its units (one bit each,
 * BITMAP set in the block's id), whichever is shorter.  A sync point that
 * changed a large share of the rows (a parameter server's clock, word2vec's
 * input vectors) sends nunits / 8 bytes instead of 4 per change. */
#define BITMAP 0x80000000u
static size_t bitmap_words(const loom_dsm_alloc *a) { return (a->nunits + 31) / 32; }
static int as_bitmap(const loom_dsm_alloc *a) { return bitmap_words(a) < a->nwrote; }
static size_t block_words(const loom_dsm_alloc *a)
{
    return as_bitmap(a) ? bitmap_words(a) : a->nwrote;
}

void *loom_dsm_notice_pack(size_t *len)
{
    round_no++;
    size_t n = 0;
    int na = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < na; i++) {
        loom_dsm_alloc *a = loom_dsm_allocs[i];
        if (a && a->live && a->sparse && a->nwrote)
            n += 2 + block_words(a);
    }
    *len = n * sizeof(uint32_t);
    if (!n)
        return NULL;
    uint32_t *b = calloc(n, sizeof *b), *p = b;
    if (!b)
        loom_rt_die(1, "out of memory (write notices)");
    for (int i = 0; i < na; i++) {
        loom_dsm_alloc *a = loom_dsm_allocs[i];
        if (!a || !a->live || !a->sparse || !a->nwrote)
            continue;
        size_t w = block_words(a);
        atomic_fetch_add(&a->stats.bytes_sent,
                         (2 + w) * sizeof *p * (uint64_t)(loom_rt_icv.nranks - 1));
        *p++ = (uint32_t)a->id | (as_bitmap(a) ? BITMAP : 0);
        *p++ = (uint32_t)w;
        if (as_bitmap(a))
            for (size_t k = 0; k < a->nwrote; k++)
                p[a->wrote[k] / 32] |= 1u << (a->wrote[k] % 32);
        else
            memcpy(p, a->wrote, w * sizeof *p);
        p += w;
        a->nwrote = 0;
    }
    return b;
}

/* Contract: a body that does not parse as blocks is logged and dropped
 * whole.  A block naming no live sparse allocation, or a unit out of its
 * range, or a bitmap not of its size (an allocation freed and its id
 * reused while the notice was on its way), is skipped: it can only concern
 * copies that no longer exist.  Each other block is queued on its
 * allocation. */
void loom_dsm_notice_receive(int src, const void *data, size_t len, uint64_t clock)
{
    const uint32_t *p = data;
    size_t n = len / 4, at = 0;
    while (at < n && !(len % 4) && n - at >= 2 && p[at + 1] <= n - at - 2)
        at += 2 + p[at + 1];
    if (at != n || len % 4) {
        loom_rt_log("dsm: dropped malformed write notices from rank %d (%zu bytes)", src, len);
        return;
    }
    int na = atomic_load(&loom_dsm_nallocs);
    for (at = 0; at < n; at += 2 + p[at + 1]) {
        uint32_t id = p[at] & ~BITMAP, w = p[at + 1];
        const uint32_t *v = p + at + 2;
        loom_dsm_alloc *a = id < (uint32_t)na ? loom_dsm_allocs[id] : NULL;
        if (!a || !a->live || !a->sparse)
            continue;
        if (p[at] & BITMAP) {
            if (w != bitmap_words(a) || (a->nunits % 32 && v[w - 1] >> (a->nunits % 32)))
                continue;
            size_t k = 0;
            for (size_t x = 0; x < w; x++)
                k += (size_t)__builtin_popcount(v[x]);
            uint32_t *u = malloc((k ? k : 1) * sizeof *u);
            if (!u)
                loom_rt_die(1, "out of memory (write notices)");
            k = 0;
            for (size_t x = 0; x < w; x++)
                for (uint32_t bits = v[x]; bits; bits &= bits - 1)
                    u[k++] = (uint32_t)(x * 32 + (size_t)__builtin_ctz(bits));
            atomic_fetch_add(&a->stats.bytes_recv, (2 + w) * sizeof *p);
            queue(a, u, NULL, k, clock);
            free(u);
            continue;
        }
        size_t k = 0;
        while (k < w && v[k] < a->nunits)
            k++;
        if (k < w)
            continue;
        atomic_fetch_add(&a->stats.bytes_recv, (2 + w) * sizeof *p);
        queue(a, v, NULL, w, clock);
    }
}

void loom_dsm_notice_on_barrier(const void *data, size_t len, uint64_t seq, int src)
{
    loom_dsm_notice_receive(src, data, len, UINT64_MAX);
    atomic_fetch_add(&barrier_got[seq & 1], 1);
}

void loom_dsm_notice_barrier_send(void)
{
    size_t len;
    void *b = loom_dsm_notice_pack(&len);
    loom_dsm_sync_msg_send(1, barrier_seq, b, len);
    free(b);
}

/* Contract: the barrier's notices of every other rank are queued when it
 * returns.  A rank can be one barrier ahead (its next notice may come
 * first), never two: it needs ours of the next one. */
void loom_dsm_notice_barrier_wait(void)
{
    uint64_t want = (uint64_t)loom_rt_icv.nranks - 1;
    _Atomic uint64_t *got = &barrier_got[barrier_seq & 1];
    loom_rt_tp_wait_flag_until(got, want);
    atomic_fetch_sub(got, want);
    barrier_seq++;
}

static int by_unit(const void *x, const void *y)
{
    uint64_t p = ((const struct loom_notice *)x)->unit, q = ((const struct loom_notice *)y)->unit;
    return (p > q) - (p < q);
}

/* 1 if notice x makes unit x->unit's copy stale: a clean copy (at a sync
 * point every held copy is clean) stamped no later than the write. */
static int stale(loom_dsm_alloc *a, const struct loom_notice *x)
{
    return atomic_load(&a->state[x->unit]) == U_CLEAN && loom_dsm_stamp(a, x->unit) <= x->clock;
}

/* The distinct units of v[0..n) whose copies are stale, in increasing
 * order, into list; returns their count.  Many notices for a few units'
 * worth of bits (a sync point that touched much of a row allocation, as
 * word2vec's negatives do): marked in a bitmap and read back in order,
 * O(n + units / 64); otherwise sorted, O(n log n). */
static size_t stale_units(loom_dsm_alloc *a, struct loom_notice *v, size_t n, size_t *list)
{
    size_t m = 0;
    if (a->nunits / 64 <= n) {
        size_t words = a->nunits / 64 + 1;
        uint64_t *bit = calloc(words, sizeof *bit);
        if (!bit)
            loom_rt_die(1, "out of memory (write notices)");
        for (size_t i = 0; i < n; i++)
            if (stale(a, &v[i]))
                bit[v[i].unit / 64] |= (uint64_t)1 << (v[i].unit % 64);
        for (size_t w = 0; w < words; w++)
            for (uint64_t b = bit[w]; b; b &= b - 1)
                list[m++] = w * 64 + (size_t)__builtin_ctzll(b);
        free(bit);
        return m;
    }
    qsort(v, n, sizeof *v, by_unit);
    for (size_t i = 0; i < n; i++)
        if (stale(a, &v[i]) && (!m || list[m - 1] != v[i].unit))
            list[m++] = v[i].unit;
    return m;
}

/* 1 if the program prefetched a's rows (loom_row_prefetch) in this sync
 * interval and in the one before: then the stale copies are dropped, not
 * refetched.  A parameter server's client prefetches each clock's slice
 * of rows; refetching every copy it ever held that another rank changed
 * fetched about twice the rows it read next (tests/perf/ps_mf.c, 4 ranks:
 * 58 000 refreshed against ~25 000 fetched by its prefetches), 9-10% of
 * its training time at 100 Mbit/s (docs/dsm.md, "Sync points: write
 * notices").  One prefetch at the start (loom-w2v's) is not a habit: its
 * sync points keep refreshing. */
static int prefetching(loom_dsm_alloc *a)
{
    a->prefetching = atomic_exchange(&a->prefetched, 0) ? a->prefetching + 1 : 0;
    return a->kind == LOOM_UNIT_ROW && a->prefetching >= 2;
}

/* Adds the m rows of list (increasing) to a->dropped, the copies dropped
 * since the program last read a row it had not prefetched: its next such
 * read fetches them all in one batch (row.c), as the refresh would have
 * (ps_mf's evaluation after each epoch reads every row).  The two
 * increasing lists are merged, each row once. */
static void keep_dropped(loom_dsm_alloc *a, const size_t *list, size_t m)
{
    struct loom_rows *old = atomic_exchange(&a->dropped, NULL);
    size_t n = old ? old->n : 0, i = 0, j = 0;
    if (!n && !m)
        return;
    struct loom_rows *d = malloc(sizeof *d + (n + m) * sizeof *d->row);
    if (!d)
        loom_rt_die(1, "out of memory (write notices)");
    d->n = 0;
    while (i < n || j < m) {
        size_t r = j == m || (i < n && old->row[i] < list[j]) ? old->row[i++] : list[j++];
        if (!d->n || d->row[d->n - 1] != r)
            d->row[d->n++] = r;
    }
    free(old);
    atomic_store(&a->dropped, d);
}

void loom_dsm_notice_apply(loom_dsm_alloc *a, uint64_t g)
{
    lock(a);
    struct loom_notice *v = a->notice;
    size_t n = a->nnotice;
    a->notice = NULL;
    a->nnotice = a->capnotice = 0;
    unlock(a);
    size_t *list = malloc((n ? n : 1) * sizeof *list);
    if (!list)
        loom_rt_die(1, "out of memory (write notices)");
    size_t m = n ? stale_units(a, v, n, list) : 0;
    free(v);
    if (prefetching(a)) { /* its next prefetch fetches what it reads next */
        for (size_t i = 0; i < m; i++)
            if (!a->put[list[i]])
                atomic_store(&a->state[list[i]], U_INVALID);
        atomic_fetch_add(&a->dropped_gen, 1);
        keep_dropped(a, list, m);
    } else {
        loom_dsm_fetch_list(a, list, m);
        atomic_fetch_add(&a->stats.refreshed, m);
    }
    free(list);
    /* every copy still valid reflects all releases of clocks < g; so does
     * every row fetched from now on (a notice of such a release is queued
     * only once it is home), so rows take g as a floor: the sync point
     * costs what changed, not the allocation's size */
    if (a->kind == LOOM_UNIT_ROW) {
        if (g > a->stamp_floor)
            __atomic_store_n(&a->stamp_floor, g, __ATOMIC_RELAXED);
        return;
    }
    for (size_t i = 0; i < a->nvalid; i++)
        if (a->stamp[a->valid[i]] < g && atomic_load(&a->state[a->valid[i]]) != U_INVALID)
            a->stamp[a->valid[i]] = g;
}
