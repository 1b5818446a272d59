/* ring_sparse.c — a ring hand-off carries every change, and only changes.
 * Usage: ring_sparse ROTATIONS
 * Three ring allocations of mostly zero 32-bit words: 600 rows of 16
 * words, 300 rows of 18 bytes (a unit that is not whole words) and 6
 * pages of 256 KiB (zero runs longer than one run header holds).  In
 * sub-epoch t the owner of unit u applies edit(u, t): nothing (most
 * units), an increment that reads a neighbouring word, a zeroing, or a
 * change written and undone; some units go early through loom_ring_done.
 * Every rank replays every edit on a private copy, and at the start of
 * every sub-epoch the partition it now owns must equal that replay word
 * for word: a changed unit a hand-off left out (by this rank's
 * predecessor or any rank before it) shows as a difference.  After the
 * last rotation loom_ring_collect gives every rank the whole table, which
 * must equal the replay too.  And the hand-offs must be sparse: with
 * P > 1, fewer units are sent than the rotations moved, and fewer than a
 * quarter of their dense bytes.
 * A fourth table, "turns", is dense first: for the first 2P + 1
 * sub-epochs its owner rewrites every word of every unit with a new
 * non-zero value (what SGD does to factor rows), so the ring stops looking
 * and sends it raw (policy_ring.c, "Dense partitions"); then a quarter of
 * its units are edited as the others'.  It must arrive equal to the replay
 * throughout, and, with ROTATIONS * P > 20 sub-epochs, some of its
 * sub-epochs must have gone raw (loom_stats' raw_handoffs; the other
 * tables' none) and its last P hand-offs must be sparse again: fewer than
 * half the units they moved (dense, all of them). */
#include <loom.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct table {
    const char *name;
    size_t unit, nunits; /* bytes per unit, units */
    int pages;
    unsigned char *x;    /* the ring allocation */
    unsigned char *want; /* the replay */
};

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t z = a * 0x9e3779b97f4a7c15ull + b + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Edit unit u (its bytes at p) as sub-epoch t prescribes. */
static void edit(unsigned char *p, size_t unit, size_t u, int t)
{
    uint64_t h = mix(u, (uint64_t)t);
    size_t words = unit / 4, e = (size_t)(h >> 8) % words, f = (e + 1) % words;
    uint32_t v, w;
    memcpy(&v, p + 4 * e, 4);
    memcpy(&w, p + 4 * f, 4);
    switch (h % 8) {
    case 0:
    case 1: v += 1 + (w & 7); break;  /* depends on what arrived */
    case 2: v = 0; break;
    case 3: {                         /* changed, then undone: no net change */
        uint32_t old = v;
        v = ~v;
        memcpy(p + 4 * e, &v, 4);
        v = old;
        break;
    }
    default: return;
    }
    memcpy(p + 4 * e, &v, 4);
    if (unit % 4 && h % 16 == 1)      /* the bytes past the last whole word */
        p[unit - 1] = (unsigned char)(p[unit - 1] + 1);
}

/* Rewrite every word of unit u as sub-epoch t's new non-zero value. */
static void rewrite(unsigned char *p, size_t unit, size_t u, int t)
{
    for (size_t w = 0; w < unit / 4; w++) {
        uint32_t v = (uint32_t)mix(u * 64 + w, (uint64_t)t) | 1;
        memcpy(p + 4 * w, &v, 4);
    }
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int R = argc > 1 ? atoi(argv[1]) : 2, r = loom_rank(), P = loom_size(), fails = 0;
    struct table tab[4] = {{"counts", 64, 600, 0, NULL, NULL},
                           {"odd", 18, 300, 0, NULL, NULL},
                           {"pages", 256 << 10, 6, 1, NULL, NULL},
                           {"turns", 64, 400, 0, NULL, NULL}};
    const int dense_until = 2 * P + 1, late = R * P - P; /* "turns": dense, then sparse */
    uint64_t late_units = 0;
    for (int k = 0; k < 4; k++) {
        struct table *b = &tab[k];
        b->x = loom_alloc(b->unit * b->nunits, &(loom_alloc_opts){.name = b->name,
            .coherence = "ring", .unit = b->pages ? LOOM_UNIT_PAGE : LOOM_UNIT_ROW,
            .row_size = b->unit, .page_unit = b->unit});
        b->want = calloc(b->nunits, b->unit);
        if (!b->x || !b->want)
            return 1;
        void *start;
        size_t bytes;
        loom_ring_part(b->x, &start, &bytes, NULL, NULL);
        memset(start, 0, bytes);
    }
    for (int t = 0; t < R * P; t++) {
        if (t == late) {
            loom_stats s;
            loom_stats_get(tab[3].x, &s);
            late_units = s.forwarded;
        }
        for (int k = 0; k < 4; k++) {
            struct table *b = &tab[k];
            size_t lo, n;
            loom_ring_part(b->x, NULL, NULL, &lo, &n);
            for (size_t u = lo; u < lo + n; u++)
                if (memcmp(b->x + u * b->unit, b->want + u * b->unit, b->unit) && fails++ < 5)
                    fprintf(stderr, "rank %d sub-epoch %d: unit %zu of '%s' arrived without "
                            "a change made upstream\n", r, t, u, b->name);
            int whole = k == 3 && t < dense_until;
            for (size_t u = lo; u < lo + n; u++) {
                if (whole)
                    rewrite(b->x + u * b->unit, b->unit, u, t);
                else if (k != 3 || mix(u, (uint64_t)t + 7) % 4 == 0)
                    edit(b->x + u * b->unit, b->unit, u, t);
                if (mix(u, (uint64_t)t + 99) % 3 == 0)
                    loom_ring_done(b->x, u, 1);
            }
            for (size_t u = 0; u < b->nunits; u++)
                if (whole)
                    rewrite(b->want + u * b->unit, b->unit, u, t);
                else if (k != 3 || mix(u, (uint64_t)t + 7) % 4 == 0)
                    edit(b->want + u * b->unit, b->unit, u, t);
        }
        loom_ring_rotate();
    }
    uint64_t sent = 0, dense = 0, units = 0, moved = 0, raw_sparse = 0, raw_turns = 0;
    for (int k = 0; k < 4; k++) {
        struct table *b = &tab[k];
        loom_stats s;
        loom_stats_get(b->x, &s);
        *(k == 3 ? &raw_turns : &raw_sparse) += s.raw_handoffs;
        if (k == 3) { /* the dense table: only its last P hand-offs count, below */
            late_units = s.forwarded - late_units;
            loom_ring_collect(b->x);
            for (size_t u = 0; u < b->nunits; u++)
                if (memcmp(b->x + u * b->unit, b->want + u * b->unit, b->unit) && fails++ < 5)
                    fprintf(stderr, "rank %d: unit %zu of '%s' differs from the replay after "
                            "the collect\n", r, u, b->name);
            continue;
        }
        sent += s.bytes_sent;
        units += s.forwarded;
        moved += (uint64_t)R * b->nunits; /* each rank: R rotations of 1/P x P hand-offs */
        dense += (uint64_t)R * b->nunits * b->unit;
        loom_ring_collect(b->x);
        for (size_t u = 0; u < b->nunits; u++)
            if (memcmp(b->x + u * b->unit, b->want + u * b->unit, b->unit) && fails++ < 5)
                fprintf(stderr, "rank %d: unit %zu of '%s' differs from the replay after the "
                        "collect\n", r, u, b->name);
    }
    int64_t tot[5] = {(int64_t)sent, (int64_t)units, (int64_t)late_units, (int64_t)raw_sparse,
                      (int64_t)raw_turns};
    loom_allreduce(LOOM_IN_PLACE, tot, 5, LOOM_INT64, LOOM_SUM);
    if (r == 0 && (tot[3] || (P > 1 && R * P > 20 && !tot[4])) && fails++ < 5)
        fprintf(stderr, "raw hand-offs: %lld of the sparse tables', %lld of 'turns' (want 0, "
                "and some)\n", (long long)tot[3], (long long)tot[4]);
    /* in the last P sub-epochs each rank hands one partition of "turns"
     * over each time: P x its units moved in all */
    if (P > 1 && R * P > 20 && r == 0 && (uint64_t)tot[2] * 2 >= (uint64_t)P * tab[3].nunits &&
        fails++ < 5)
        fprintf(stderr, "'turns' did not turn sparse again: its last %d hand-offs carried %lld "
                "of the %zu units they moved\n", P, (long long)tot[2],
                (size_t)P * tab[3].nunits);
    moved *= (uint64_t)P;
    dense *= (uint64_t)P;
    if (P > 1 && r == 0 && ((uint64_t)tot[1] >= moved || (uint64_t)tot[0] * 4 >= dense) && fails++ < 5)
        fprintf(stderr, "hand-offs not sparse: %llu of %llu units, %llu of %llu dense bytes\n",
                (unsigned long long)tot[1], (unsigned long long)moved,
                (unsigned long long)tot[0], (unsigned long long)dense);
    int32_t ok = !fails;
    loom_allreduce(LOOM_IN_PLACE, &ok, 1, LOOM_INT32, LOOM_MIN);
    if (r == 0 && ok)
        printf("ring_sparse: ok P=%d rotations=%d units %llu of %llu, bytes %llu of %llu; "
               "'turns' raw sub-epochs %lld, last hand-offs %lld of %zu units\n", P, R,
               (unsigned long long)tot[1], (unsigned long long)moved, (unsigned long long)tot[0],
               (unsigned long long)dense, (long long)tot[4], (long long)tot[2],
               (size_t)P * tab[3].nunits);
    for (int k = 0; k < 4; k++) {
        loom_free(tab[k].x);
        free(tab[k].want);
    }
    loom_finalize();
    return ok ? 0 : 1;
}
