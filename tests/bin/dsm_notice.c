/* dsm_notice.c — write notices and the averaging merge, checked exactly.
 * Usage: dsm_notice sparse rows|pages|wide|prefetch  |  dsm_notice avg
 *
 * sparse: an add-merged int64 allocation (rows of 32 bytes, or 4096-byte
 * pages) of N = 64 units; `wide`: 16384 rows of which only every 256th is
 * ever written, so that a sync point's notices are few for the units (the
 * receiver sorts them; with many it marks a bitmap: notice.c); `prefetch`:
 * rows, of which each round first prefetches every other one (a program
 * that prefetches at every sync interval has its changed copies dropped,
 * not refetched, at a sync point: notice.c).  Every rank reads every unit (so it holds a copy of
 * each), then, round after round, a few ranks add known amounts to a few
 * units chosen by the round, and the round ends in a sync point: a
 * loom_barrier, or a loom_clock (bsp, and ssp with staleness 2 followed by
 * two more clocks).  After each, every rank reads every unit and compares
 * it with the exact total of all additions so far (those of the round
 * to come may show early): a unit another rank
 * changed and that stayed valid here would hold an old total.  A round in
 * which nobody writes (fenced by barriers, so that no rank's next writes
 * arrive meanwhile) must refetch nothing (no misses, no bytes).
 *
 * avg [K]: three ranks (at least) on float rows with .average = K
 * (default 1): from the same rows, rank k adds 3(k+1) to row 0, ranks 0
 * and 2 add 2 and 4 to row 1, rank 1 adds 5 to row 3, nobody touches row
 * 2; after the sync point every rank must read exactly the mean of the
 * writers' changes times min(K, writers): for K = 1 row 0 + 6 on 3 ranks
 * (mean of 3, 6, 9), row 1 + 3, row 2 unchanged, row 3 + 5; for K = 2
 * row 0 + 12, row 1 + 6 (the sum of two), row 3 + 5.  Twice: across a
 * barrier, then across a clock.  First, .average = -1 must be refused.
 *
 * avg K momentum: the same writes with block momentum, three times
 * (barrier, clock, barrier): a row written by n ranks moves by their sum
 * times m/n, m = min(K, n), plus (1 - m/n) times its move of the round
 * before, as the home computes it in float (row 3's one writer: +5 each
 * time, no momentum; row 2 unchanged).  First, .momentum with .average = 0
 * must be refused. */
#include <loom.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMAX 16384
#define ROUNDS 12

static int P, me, fails;
static int N = 64, spread = 1; /* units; only every spread-th is written */
static int prefetch;              /* rows: each round prefetches half of them first */

/* What rank k adds to unit u in round t (0: nothing). */
static int64_t amount(int t, int k, int u)
{
    if (u % spread || (u / spread * 7 + t * 3 + k) % 11 != 0 ||
        t % 4 == 3) /* every 4th round: nobody writes */
        return 0;
    return 1 + t * 100 + k * 10 + u % 7;
}

static int64_t expected(int rounds, int u)
{
    int64_t s = u;
    for (int t = 0; t < rounds; t++)
        for (int k = 0; k < P; k++)
            s += amount(t, k, u);
    return s;
}

static void sync_point(int t)
{
    if (t % 2 == 0)
        loom_barrier();
    else
        loom_clock();
}

static uint64_t received(void *a, uint64_t *misses)
{
    loom_stats s;
    loom_stats_get(a, &s);
    *misses = s.misses;
    return s.bytes_received;
}

static int sparse(int pages, const char *policy, int staleness)
{
    size_t unit = pages ? 4096 : 32;
    loom_alloc_opts o = {.name = "totals", .merge = LOOM_MERGE_ADD, .type = LOOM_INT64,
                         .coherence = policy, .staleness = staleness, .staleness_set = 1};
    if (pages)
        o.page_unit = unit;
    else
        o.unit = LOOM_UNIT_ROW, o.row_size = unit;
    char *a = loom_alloc(N * unit, &o);
    if (!a)
        return 1;
    if (me == 0) /* first values: unit u holds u */
        for (int u = 0; u < N; u++) {
            int64_t v[4] = {u};
            if (pages)
                *(int64_t *)(a + u * unit) = u;
            else
                loom_row_add(a, (size_t)u, v);
        }
    loom_barrier();
    for (int t = 0; t <= ROUNDS; t++) {
        static int64_t got[NMAX];
        static size_t half[NMAX];
        size_t nh = 0;
        for (int u = (t + 1) % 2; prefetch && u < N; u += 2)
            half[nh++] = (size_t)u;
        if (nh && loom_row_prefetch(a, half, nh))
            return 1;
        for (int u = 0; u < N; u++)
            got[u] = pages ? *(int64_t *)(a + u * unit) : *(const int64_t *)loom_row_get(a, (size_t)u);
        for (int u = 0; u < N; u++) /* others' writes of this round may show early */
            if (got[u] < expected(t, u) || got[u] > expected(t + 1, u)) {
                if (fails++ < 5)
                    printf("rank %d %s %s/%d round %d: unit %d holds %lld, want %lld\n", me,
                           pages ? "pages" : "rows", policy, staleness, t, u, (long long)got[u],
                           (long long)expected(t, u));
            }
        if (t == ROUNDS)
            break;
        for (int u = 0; u < N; u++) {
            int64_t d[4] = {amount(t, me, u)};
            if (!d[0])
                continue;
            if (pages)
                *(int64_t *)(a + u * unit) += d[0];
            else
                loom_row_add(a, (size_t)u, d);
        }
        int quiet = t % 4 == 3; /* nobody writes: between two barriers, nothing may come */
        if (quiet)
            loom_barrier();
        uint64_t m0, b0 = received(a, &m0), m1;
        sync_point(t);
        for (int extra = 0; extra < staleness && t % 2; extra++)
            loom_clock(); /* ssp: the round's writes are due s clocks later */
        if (quiet) {
            for (int u = 0; u < N; u++)
                (void)(pages ? *(volatile int64_t *)(a + u * unit) : *(const int64_t *)loom_row_get(a, (size_t)u));
            uint64_t b1 = received(a, &m1);
            if (b1 != b0 || m1 != m0) {
                if (fails++ < 5)
                    printf("rank %d %s %s/%d round %d: nobody wrote, yet %llu bytes and %llu "
                           "misses came\n", me, pages ? "pages" : "rows", policy, staleness, t,
                           (unsigned long long)(b1 - b0), (unsigned long long)(m1 - m0));
            }
            loom_barrier();
        }
    }
    /* the rank's whole traffic holds the allocation's: its diffs, fetches
     * and notices travel as active messages and remote reads, which the
     * transport counts too (loom_stats' wire_*) */
    loom_stats all;
    loom_stats_get(NULL, &all);
    if (all.wire_sent < all.bytes_sent || all.wire_received < all.bytes_received ||
        !all.bytes_sent || !all.bytes_received) {
        if (fails++ < 5)
            printf("rank %d %s %s/%d: the rank's messages carried %llu B out and %llu B in, "
                   "its allocation's %llu and %llu\n", me, pages ? "pages" : "rows", policy,
                   staleness, (unsigned long long)all.wire_sent,
                   (unsigned long long)all.wire_received, (unsigned long long)all.bytes_sent,
                   (unsigned long long)all.bytes_received);
    }
    loom_free(a);
    return 0;
}

static int avg(int k, int momentum)
{
    if (P < 3) {
        printf("dsm_notice: avg needs 3 ranks or more\n");
        return 1;
    }
    loom_alloc_opts o = {.name = "mean", .unit = LOOM_UNIT_ROW, .row_size = 4 * sizeof(float),
                         .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT, .average = -1};
    if (loom_alloc(4 * 4 * sizeof(float), &o) && fails++ < 5) /* refused, on every rank */
        printf("rank %d: an allocation with .average = -1 was made\n", me);
    o.average = k;
    if (momentum) {
        o.average = 0, o.momentum = 1;
        if (loom_alloc(4 * 4 * sizeof(float), &o) && fails++ < 5) /* refused, on every rank */
            printf("rank %d: an allocation with .momentum and .average = 0 was made\n", me);
        o.average = k;
    }
    float *a = loom_alloc(4 * 4 * sizeof(float), &o);
    if (!a)
        return 1;
    if (me == 0)
        for (int r = 0; r < 4; r++)
            loom_row_put(a, (size_t)r, (float[4]){r, r, r, r});
    loom_barrier();
    float base[4] = {0, 1, 2, 3}, want[4], move[4] = {0}, writers[4] = {(float)P, 2, 0, 1};
    for (int pass = 0; pass < 2 + momentum; pass++) {
        for (int r = 0; r < 4; r++)
            (void)loom_row_get(a, (size_t)r); /* every rank holds every row */
        float d0 = 3 * (me + 1), d1 = me == 0 ? 2 : me == 2 ? 4 : 0, d3 = me == 1 ? 5 : 0;
        loom_row_add(a, 0, (float[4]){d0, d0, d0, d0});
        if (d1)
            loom_row_add(a, 1, (float[4]){d1, d1, d1, d1});
        if (d3)
            loom_row_add(a, 3, (float[4]){d3, d3, d3, d3});
        if (pass != 1)
            loom_barrier();
        else
            loom_clock();
        /* the mean over the writers (3(q+1) over the P ranks q for row 0),
         * times min(k, writers) */
        want[0] = base[0] + 3.0f * (float)(P + 1) / 2 * (float)(k < P ? k : P);
        want[1] = base[1] + 3.0f * (float)(k < 2 ? k : 2);
        want[2] = base[2], want[3] = base[3] + 5;
        for (int r = 0; momentum && r < 4; r++) /* the home's float arithmetic */
            if (writers[r] > 0) {
                float sum = r == 0 ? 3.0f * (float)(P * (P + 1)) / 2 : r == 1 ? 6.0f : 5.0f,
                      m = writers[r] < (float)k ? writers[r] : (float)k;
                want[r] = base[r] + (1 - m / writers[r]) * move[r] + sum * m / writers[r];
                move[r] = want[r] - base[r];
            }
        for (int r = 0; r < 4; r++) {
            const float *x = loom_row_get(a, (size_t)r);
            for (int f = 0; f < 4; f++) /* exact, or (momentum) to float rounding */
                if ((momentum ? fabsf(x[f] - want[r]) > 1e-5f * fabsf(want[r]) : x[f] != want[r]) &&
                    fails++ < 5)
                    printf("rank %d avg pass %d: row %d element %d is %.9g, want %.9g\n", me,
                           pass, r, f, (double)x[f], (double)want[r]);
        }
        memcpy(base, want, sizeof base);
        loom_barrier();
    }
    loom_free(a);
    return 0;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    P = loom_size(), me = loom_rank();
    int rc;
    if (argc > 2 && !strcmp(argv[1], "sparse")) {
        int pages = !strcmp(argv[2], "pages");
        prefetch = !strcmp(argv[2], "prefetch");
        if (!strcmp(argv[2], "wide"))
            N = NMAX, spread = 256;
        rc = sparse(pages, "bsp", 0) || sparse(pages, "ssp", 0) || sparse(pages, "ssp", 2);
    } else if (argc > 1 && !strcmp(argv[1], "avg"))
        rc = avg(argc > 2 ? atoi(argv[2]) : 1, argc > 3 && !strcmp(argv[3], "momentum"));
    else {
        fprintf(stderr, "usage: dsm_notice sparse rows|pages|wide|prefetch | dsm_notice avg\n");
        rc = 2;
    }
    int bad = fails > 0;
    loom_allreduce(LOOM_IN_PLACE, &bad, 1, LOOM_INT32, LOOM_MAX);
    if (!rc && !bad && me == 0)
        printf("dsm_notice: ok P=%d %s\n", P, argv[1]);
    loom_finalize();
    return rc ? rc : bad;
}
