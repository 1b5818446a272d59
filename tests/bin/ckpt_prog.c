/* ckpt_prog.c — a restartable program over every kind of allocation, for
 * tests/dsm/checkpoint.t.
 * Usage: ckpt_prog CLOCKS [--bigger] [--explicit K] [--allreduce]
 * Allocations, in this order:
 *   pages  bsp, 8 page units of 4 KiB (9 with --bigger), overwrite: each
 *          rank updates its block of int64 as x = 3x + c + 1
 *   rows   bsp rows of 4 int64, add: each rank reads a row, then adds a
 *          delta depending on the value read, the clock and its rank
 *   ssp    ssp (staleness 1) rows of 2 int64, add: blind additions
 *   prio   priority rows of 2 float, add (its background sender sends
 *          early between clocks): small integers, so sums are exact
 *   ring   ring rows of 3 int64 (37 rows: uneven partitions), and
 *   ringp  ring, 5 page units of 4 KiB: P + 1 sub-epochs per clock, so a
 *          clock ends mid-rotation; the owner sets y = 31y + (rank+1)(t+1)
 *          and forwards every other unit early (loom_ring_done)
 *   local  local, 1000 int64 per rank: z = 5z + rank + c
 *   sparse bsp, 16 page units of 4 KiB: clock c changes only unit c % 16
 *          (rank c % P writes it), so incremental checkpoints skip the rest
 * and, outside allocations: a per-rank generator state kept with
 * loom_checkpoint_keep (stepped every clock), and with --allreduce
 * loom_allreduce_ssp (slack 1) of a vector every clock, flushed with slack
 * 0 at the end (its running sums must survive a restart; an option, since
 * its progress agent spins: slow for 3 ranks on 2 cores).
 * Clock c (from loom_clock_now(): a restarted run resumes) does those
 * updates, then loom_barrier and loom_clock; after clock K, --explicit
 * calls loom_checkpoint(NULL).  At the end rank 0 prints the clock and a
 * checksum of everything every rank sees (all of every shared array after
 * a barrier and loom_ring_collect, and each rank's own local array): the
 * same for every run of the same CLOCKS and ranks, interrupted or not.
 *
 * ckpt_prog CLOCKS --layout [--no-rows]: a program whose result does not
 * depend on the number of ranks, for restarts on another number: bsp page
 * allocations distributed block, cyclic, hash and explicitly (unit u homed
 * at (7u + 3) mod P), bsp rows distributed by hash (adds), ring rows and
 * pages (each partition updated once per clock by its owner, P + 1
 * sub-epochs per clock) and a local array of which each rank updates and
 * declares current (loom_checkpoint_rows; not with --no-rows) its block of
 * rows.  Every unit is updated as a function of its index and the clock
 * only, by a rank chosen from this run's number of ranks; no private state
 * is kept.  Rank 0 prints the same checksum for every number of ranks,
 * interrupted and restarted on another number or not. */
#include <loom.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

#define NPAGE 4096 / 8
#define NROWS 100
#define NSSP 64
#define NPRIO 50
#define NRING 37
#define NRINGP 5
#define NLOCAL 1000
#define NSPARSE 16
#define NRED 10

static int home7(size_t u, int P, void *arg)
{
    (void)arg;
    return (int)((7 * u + 3) % (size_t)P);
}

#define LPAGES 11
#define LROWS 53

/* x = 3x + i + c + 1 on the units of the LPAGES-page array x that rank r
 * of P updates (u % P == r). */
static void step_pages(int64_t *x, uint64_t c, int r, int P)
{
    for (size_t u = (size_t)r; u < LPAGES; u += (size_t)P)
        for (size_t i = u * NPAGE; i < (u + 1) * NPAGE; i++)
            x[i] = 3 * x[i] + (int64_t)(i + c + 1);
}

/* Each ring owner's partition: y = 31y + u + c, once per clock. */
static void step_ring(uint64_t *y, size_t words, uint64_t c)
{
    size_t lo, n;
    loom_ring_part(y, NULL, NULL, &lo, &n);
    for (size_t u = lo; u < lo + n; u++)
        for (size_t e = 0; e < words; e++)
            y[u * words + e] = 31 * y[u * words + e] + u + c;
}

static int layout_main(long clocks, int rows_declared)
{
    int r = loom_rank(), P = loom_size();
    const char *pname[4] = {"block", "cyclic", "hash", "explicit"};
    int64_t *pg[4];
    for (int d = 0; d < 4; d++)
        pg[d] = loom_alloc(LPAGES * 4096, &(loom_alloc_opts){.name = pname[d], .page_unit = 4096,
                           .coherence = "bsp", .dist = (loom_dist)d, .home_of = home7});
    int64_t *rows = loom_alloc(LROWS * 32, &(loom_alloc_opts){.name = "rows",
        .unit = LOOM_UNIT_ROW, .row_size = 32, .merge = LOOM_MERGE_ADD, .type = LOOM_INT64,
        .coherence = "bsp", .dist = LOOM_DIST_HASH});
    uint64_t *ring = loom_alloc(NRING * 24, &(loom_alloc_opts){.name = "ring",
        .unit = LOOM_UNIT_ROW, .row_size = 24, .coherence = "ring"});
    uint64_t *ringp = loom_alloc(NRINGP * 4096, &(loom_alloc_opts){.name = "ringp",
        .page_unit = 4096, .coherence = "ring"});
    int64_t *z = loom_alloc(NLOCAL * 8, &(loom_alloc_opts){.name = "local",
        .unit = LOOM_UNIT_ROW, .row_size = 8, .coherence = "local"});
    if (!pg[0] || !pg[1] || !pg[2] || !pg[3] || !rows || !ring || !ringp || !z)
        loom_abort(1, "ckpt_prog: an allocation failed");
    size_t zlo = NLOCAL * (size_t)r / (size_t)P, zhi = NLOCAL * (size_t)(r + 1) / (size_t)P;
    if (rows_declared && loom_checkpoint_rows(z, zlo, zhi - zlo))
        loom_abort(1, "ckpt_prog: loom_checkpoint_rows failed");
    if (loom_restarted() && r == 0)
        printf("ckpt_prog: resumed at clock %llu\n", (unsigned long long)loom_clock_now());
    if (!loom_restarted()) {
        for (int d = 0; d < 4; d++)
            for (size_t u = (size_t)r; u < LPAGES; u += (size_t)P)
                for (size_t i = u * NPAGE; i < (u + 1) * NPAGE; i++)
                    pg[d][i] = (int64_t)i * (d + 1);
        step_ring(ring, 3, 1000);
        step_ring(ringp, 512, 1000);
        for (size_t i = zlo; i < zhi; i++)
            z[i] = (int64_t)i;
        loom_barrier();
    }
    for (uint64_t c = loom_clock_now(); c < (uint64_t)clocks; c++) {
        for (int d = 0; d < 4; d++)
            step_pages(pg[d], c, r, P);
        for (size_t k = (size_t)r; k < LROWS; k += (size_t)P) {
            int64_t d[4];
            const int64_t *v = loom_row_get(rows, k);
            for (int e = 0; e < 4; e++)
                d[e] = (int64_t)((c + 1) * (k + 1)) + e + v[e] % 7;
            loom_row_add(rows, k, d);
        }
        for (int s = 0; s <= P; s++) { /* P + 1 sub-epochs: each partition once */
            if (s == 0) {
                step_ring(ring, 3, c);
                step_ring(ringp, 512, c);
            }
            loom_ring_rotate();
        }
        for (size_t i = zlo; i < zhi; i++)
            z[i] = 5 * z[i] + (int64_t)(i + c);
        loom_barrier();
        loom_clock();
    }
    loom_barrier();
    loom_ring_collect(ring);
    loom_ring_collect(ringp);
    int64_t *all = calloc(NLOCAL, sizeof *all); /* the local rows, each from its rank */
    if (!all)
        loom_abort(1, "ckpt_prog: out of memory");
    memcpy(all + zlo, z + zlo, (zhi - zlo) * sizeof *all);
    loom_allreduce(LOOM_IN_PLACE, all, NLOCAL, LOOM_INT64, LOOM_SUM);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int d = 0; d < 4; d++)
        h = fnv(h, pg[d], LPAGES * 4096);
    for (size_t k = 0; k < LROWS; k++)
        h = fnv(h, loom_row_get(rows, k), 32);
    h = fnv(h, ring, NRING * 24);
    h = fnv(h, ringp, NRINGP * 4096);
    h = fnv(h, all, NLOCAL * 8);
    if (r == 0)
        printf("ckpt_prog: clock %llu checksum %016llx\n", (unsigned long long)loom_clock_now(),
               (unsigned long long)h);
    free(all);
    return loom_finalize();
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 2;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--layout"))
            return layout_main(argc > 1 ? atol(argv[1]) : 10,
                               !(i + 1 < argc && !strcmp(argv[i + 1], "--no-rows")));
    long clocks = argc > 1 ? atol(argv[1]) : 10, explicit_at = -1;
    int bigger = 0, allreduce = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--bigger"))
            bigger = 1;
        else if (!strcmp(argv[i], "--allreduce"))
            allreduce = 1;
        else if (!strcmp(argv[i], "--explicit") && i + 1 < argc)
            explicit_at = atol(argv[++i]);
    }
    int r = loom_rank(), P = loom_size();
    size_t npages = bigger ? 9 : 8, nx = npages * NPAGE;
    int64_t *x = loom_alloc(nx * 8, &(loom_alloc_opts){.name = "pages", .page_unit = 4096,
                                                        .coherence = "bsp"});
    int64_t *rows = loom_alloc(NROWS * 32, &(loom_alloc_opts){.name = "rows",
        .unit = LOOM_UNIT_ROW, .row_size = 32, .merge = LOOM_MERGE_ADD, .type = LOOM_INT64,
        .coherence = "bsp"});
    int64_t *ssp = loom_alloc(NSSP * 16, &(loom_alloc_opts){.name = "ssp",
        .unit = LOOM_UNIT_ROW, .row_size = 16, .merge = LOOM_MERGE_ADD, .type = LOOM_INT64,
        .coherence = "ssp", .staleness = 1, .staleness_set = 1});
    float *prio = loom_alloc(NPRIO * 8, &(loom_alloc_opts){.name = "prio",
        .unit = LOOM_UNIT_ROW, .row_size = 8, .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT,
        .coherence = "priority"});
    uint64_t *ring = loom_alloc(NRING * 24, &(loom_alloc_opts){.name = "ring",
        .unit = LOOM_UNIT_ROW, .row_size = 24, .coherence = "ring"});
    uint64_t *ringp = loom_alloc(NRINGP * 4096, &(loom_alloc_opts){.name = "ringp",
        .page_unit = 4096, .coherence = "ring"});
    int64_t *z = loom_alloc(NLOCAL * 8, &(loom_alloc_opts){.name = "local",
        .coherence = "local"});
    int64_t *sp = loom_alloc(NSPARSE * 4096, &(loom_alloc_opts){.name = "sparse",
        .page_unit = 4096, .coherence = "bsp"});
    if (!x || !rows || !ssp || !prio || !ring || !ringp || !z || !sp)
        loom_abort(1, "ckpt_prog: an allocation failed");
    uint64_t gen = 0x1234 + (uint64_t)r; /* private state, in every checkpoint */
    int kept = 0;
    if (loom_checkpoint_keep("ckpt_prog generator", &gen, sizeof gen, &kept))
        loom_abort(1, "ckpt_prog: loom_checkpoint_keep failed");
    if (kept != loom_restarted())
        loom_abort(1, "ckpt_prog: the generator was%s restored", kept ? "" : " not");
    int64_t red[NRED], contrib[NRED];
    size_t xlo = nx * (size_t)r / (size_t)P, xhi = nx * (size_t)(r + 1) / (size_t)P;
    if (loom_restarted() && r == 0)
        printf("ckpt_prog: resumed at clock %llu\n", (unsigned long long)loom_clock_now());
    if (!loom_restarted()) {
        for (size_t i = xlo; i < xhi; i++)
            x[i] = (int64_t)i;
        size_t lo, n;
        loom_ring_part(ring, NULL, NULL, &lo, &n);
        for (size_t u = lo; u < lo + n; u++)
            for (int e = 0; e < 3; e++)
                ring[u * 3 + e] = u * 10 + (uint64_t)e;
        loom_ring_part(ringp, NULL, NULL, &lo, &n);
        for (size_t u = lo; u < lo + n; u++)
            for (size_t e = 0; e < 512; e++)
                ringp[u * 512 + e] = u * 1000 + e;
        for (int i = 0; i < NLOCAL; i++)
            z[i] = i + r;
        loom_barrier();
    }
    for (uint64_t c = loom_clock_now(); c < (uint64_t)clocks; c++) {
        for (size_t i = xlo; i < xhi; i++)
            x[i] = 3 * x[i] + (int64_t)c + 1;
        for (size_t k = 0; k < NROWS; k++) {
            int64_t d[4];
            const int64_t *v = loom_row_get(rows, k);
            for (int e = 0; e < 4; e++)
                d[e] = (int64_t)((c + 1) * (uint64_t)(r + 1)) + (int64_t)k + e + v[e] % 7;
            loom_row_add(rows, k, d);
        }
        for (size_t k = 0; k < NSSP; k++) {
            int64_t d[2] = {(int64_t)(c * (uint64_t)r + k), (int64_t)c + 1};
            loom_row_add(ssp, k, d);
        }
        for (size_t k = 0; k < NPRIO; k++) {
            float d[2] = {(float)((c + k) % 5) + (float)r, 1};
            loom_row_add(prio, k, d);
        }
        for (int s = 0; s <= P; s++) { /* P + 1 sub-epochs: clocks end mid-rotation */
            uint64_t t = c * (uint64_t)(P + 1) + (uint64_t)s + 1;
            size_t lo, n;
            loom_ring_part(ring, NULL, NULL, &lo, &n);
            for (size_t u = lo; u < lo + n; u++) {
                for (int e = 0; e < 3; e++)
                    ring[u * 3 + e] = 31 * ring[u * 3 + e] + (uint64_t)(r + 1) * t;
                if (u % 2)
                    loom_ring_done(ring, u, 1);
            }
            loom_ring_part(ringp, NULL, NULL, &lo, &n);
            for (size_t u = lo; u < lo + n; u++) {
                for (size_t e = 0; e < 512; e++)
                    ringp[u * 512 + e] = 31 * ringp[u * 512 + e] + (uint64_t)(r + 1) * t;
                if (u % 2)
                    loom_ring_done(ringp, u, 1);
            }
            loom_ring_rotate();
        }
        for (int i = 0; i < NLOCAL; i++)
            z[i] = 5 * z[i] + r + (int64_t)c;
        if ((int)(c % (uint64_t)P) == r)
            for (int e = 0; e < 512; e++)
                sp[(c % NSPARSE) * 512 + e] += (int64_t)(c + 1) * (e + 1);
        gen = gen * 6364136223846793005ULL + 1442695040888963407ULL;
        for (int i = 0; i < NRED; i++)
            contrib[i] = (int64_t)(gen >> 40) + i;
        if (allreduce)
            loom_allreduce_ssp(red, contrib, NRED, LOOM_INT64, LOOM_SUM, 1);
        loom_barrier();
        loom_clock();
        if ((long)loom_clock_now() == explicit_at) {
            int rc = loom_checkpoint(NULL);
            if (r == 0)
                printf("ckpt_prog: loom_checkpoint at clock %ld: %s\n", explicit_at,
                       loom_strerror(rc));
        }
    }
    for (int i = 0; i < NRED; i++)
        contrib[i] = red[i] = 0;
    if (allreduce) /* every clock's sums */
        loom_allreduce_ssp(red, contrib, NRED, LOOM_INT64, LOOM_SUM, 0);
    loom_barrier();
    loom_ring_collect(ring);
    loom_ring_collect(ringp);
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv(h, x, nx * 8);
    for (size_t k = 0; k < NROWS; k++)
        h = fnv(h, loom_row_get(rows, k), 32);
    for (size_t k = 0; k < NSSP; k++)
        h = fnv(h, loom_row_get(ssp, k), 16);
    for (size_t k = 0; k < NPRIO; k++)
        h = fnv(h, loom_row_get(prio, k), 8);
    h = fnv(h, ring, NRING * 24);
    h = fnv(h, ringp, NRINGP * 4096);
    h = fnv(h, z, NLOCAL * 8);
    h = fnv(h, sp, NSPARSE * 4096);
    h = fnv(h, &gen, sizeof gen);
    h = fnv(h, red, sizeof red);
    uint64_t *all = calloc((size_t)P, sizeof *all);
    for (int q = 0; q < P; q++) /* every rank's view, in rank order */
        all[q] = q == r ? h : 0;
    loom_allreduce(LOOM_IN_PLACE, all, (size_t)P, LOOM_INT64, LOOM_SUM);
    if (r == 0)
        printf("ckpt_prog: clock %llu checksum %016llx\n", (unsigned long long)loom_clock_now(),
               (unsigned long long)fnv(0xcbf29ce484222325ULL, all, (size_t)P * 8));
    free(all);
    return loom_finalize();
}
