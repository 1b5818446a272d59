/* ring_check.c — the ring policy's promises.
 * Usage: ring_check rows|pages ROTATIONS [violate]
 * A ring allocation of 1000 rows of 4 int64 (or 37 pages of 4 KiB, so
 * partitions are uneven) is updated for ROTATIONS x P sub-epochs; in each,
 * every rank applies x = x * 1000003 + (rank + 1) * (t + 1) to every
 * element of its partition (forwarding three units of every four early,
 * as one range, with loom_ring_done), then rotates.  Checks: at every sub-epoch the owned
 * partitions form a permutation (each unit exactly one owner); each
 * rotation visits every (rank, partition) pair exactly once; and after
 * loom_ring_collect every element equals the serial replay of the order
 * the rotation implies; a loom_clock in every sub-epoch leaves the owned
 * rows readable through loom_row_get.  A second ring allocation (k = 2: 53 rows of 8
 * bytes) rotates with the first: in every sub-epoch each rank owns the
 * same partition index of both, and its replay holds too.  "violate": rank 0 reads a unit it does not own
 * (LOOM_CHECK=dsm must stop the job). */
#include "internal.h" /* loom_rt_allgather */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t part_lo(size_t n, int P, int j) { return n * (size_t)j / (size_t)P; }

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int pages = argc > 1 && !strcmp(argv[1], "pages"), R = argc > 2 ? atoi(argv[2]) : 2;
    int r = loom_rank(), P = loom_size(), fails = 0;
    size_t unit = pages ? 4096 : 32, nunits = pages ? 37 : 1000, per = unit / 8;
    uint64_t *x = loom_alloc(nunits * unit, &(loom_alloc_opts){.name = "model", .coherence = "ring",
        .unit = pages ? LOOM_UNIT_PAGE : LOOM_UNIT_ROW, .row_size = unit, .page_unit = unit});
    if (!x)
        return 1;
    size_t n2 = 53;
    uint64_t *y = loom_alloc(n2 * 8, &(loom_alloc_opts){.name = "second", .coherence = "ring",
        .unit = LOOM_UNIT_ROW, .row_size = 8});
    size_t lo, n, lo2, m2;
    loom_ring_part(y, NULL, NULL, &lo2, &m2);
    for (size_t u = lo2; u < lo2 + m2; u++)
        y[u] = u;
    loom_ring_part(x, NULL, NULL, &lo, &n);
    for (size_t u = lo; u < lo + n; u++)
        for (size_t e = 0; e < per; e++)
            x[u * per + e] = u * 10 + e;
    if (argc > 3 && !strcmp(argv[3], "violate") && r == 0 && P > 1)
        printf("read %llu\n", (unsigned long long)x[(lo + n) % nunits * per]);
    int64_t *visits = calloc((size_t)(P * P), sizeof *visits);
    int *owner = malloc(sizeof(int) * (size_t)P);
    for (int t = 0; t < R * P; t++) {
        loom_ring_part(x, NULL, NULL, &lo, &n);
        int j = 0;
        while (j < P && part_lo(nunits, P, j) != lo)
            j++;
        int32_t mine[2] = {j, r}, all[2 * 64];
        loom_rt_allgather(mine, all, sizeof mine);
        for (int q = 0; q < P; q++)
            owner[q] = -1;
        for (int q = 0; q < P; q++)
            if (all[2 * q] < P && all[2 * q] >= 0 && owner[all[2 * q]] == -1)
                owner[all[2 * q]] = all[2 * q + 1];
        for (int q = 0; q < P; q++)
            if (owner[q] < 0 && fails++ < 5)
                fprintf(stderr, "rank %d sub-epoch %d: partition %d has no single owner\n", r, t, q);
        visits[r * P + j]++;
        loom_ring_part(y, NULL, NULL, &lo2, &m2);
        if (lo2 != part_lo(n2, P, j) && fails++ < 5)
            fprintf(stderr, "rank %d sub-epoch %d: the two ring allocations are out of step\n", r, t);
        for (size_t u = lo2; u < lo2 + m2; u++)
            y[u] = y[u] * 31 + (uint64_t)(r + 1);
        if (t == 0 && loom_ring_done(x, lo, n + 1) != LOOM_ERR_ARG && fails++ < 5)
            fprintf(stderr, "rank %d: loom_ring_done took a range past its partition\n", r);
        for (size_t u = lo; u < lo + n; u++) {
            for (size_t e = 0; e < per; e++)
                x[u * per + e] = x[u * per + e] * 1000003 + (uint64_t)(r + 1) * (uint64_t)(t + 1);
            if (u % 4 == 3 && u >= lo + 2 && loom_ring_done(x, u - 2, 3) && fails++ < 5)
                fprintf(stderr, "rank %d: loom_ring_done refused units %zu to %zu of its own\n",
                        r, u - 2, u + 1); /* units 1, 2, 3 of every 4 early, in one message */
        }
        loom_ring_rotate();
        loom_clock(); /* a clock must not take the owned partition away */
        loom_ring_part(x, NULL, NULL, &lo, &n);
        if (!pages && n && !loom_row_get(x, lo) && fails++ < 5)
            fprintf(stderr, "rank %d: its own row %zu is unreadable after a clock\n", r, lo);
        if ((t + 1) % P == 0) { /* a rotation ended: every pair once */
            loom_allreduce(LOOM_IN_PLACE, visits, (size_t)(P * P), LOOM_INT64, LOOM_SUM);
            for (int q = 0; q < P * P; q++)
                if (visits[q] != 1 && fails++ < 5)
                    fprintf(stderr, "rotation %d: rank %d visited partition %d %lld times\n",
                            t / P, q / P, q % P, (long long)visits[q]);
            memset(visits, 0, sizeof *visits * (size_t)(P * P));
        }
    }
    loom_ring_collect(x);
    loom_ring_collect(y);
    for (int j = 0; j < P; j++)
        for (size_t u = part_lo(n2, P, j); u < part_lo(n2, P, j + 1); u++) {
            uint64_t v = u;
            for (int t = 0; t < R * P; t++)
                v = v * 31 + (uint64_t)((j + t) % P + 1);
            if (y[u] != v && fails++ < 5)
                fprintf(stderr, "rank %d: row %zu of the second allocation differs\n", r, u);
        }
    for (int j = 0; j < P; j++)
        for (size_t u = part_lo(nunits, P, j); u < part_lo(nunits, P, j + 1); u++)
            for (size_t e = 0; e < per; e++) {
                uint64_t v = u * 10 + e;
                for (int t = 0; t < R * P; t++)
                    v = v * 1000003 + (uint64_t)((j + t) % P + 1) * (uint64_t)(t + 1);
                if (x[u * per + e] != v && fails++ < 5)
                    fprintf(stderr, "rank %d: unit %zu element %zu differs from the serial order\n",
                            r, u, e);
            }
    free(visits);
    free(owner);
    int32_t ok = !fails;
    loom_allreduce(LOOM_IN_PLACE, &ok, 1, LOOM_INT32, LOOM_MIN);
    if (r == 0 && ok)
        printf("ring_check: ok %s P=%d rotations=%d\n", pages ? "pages" : "rows", P, R);
    loom_finalize();
    return ok ? 0 : 1;
}
