/* prio_check.c — the priority policy's promises.
 * Usage: prio_check rate SECONDS | prio_check order
 * rate: every rank adds to random rows (homed elsewhere, never clocking)
 *   for SECONDS; the background sender must spend LOOM_BANDWIDTH: rank 0
 *   prints the bytes sent early per second against the budget.
 * order: rank 1 adds i+1 to row i (100 rows, all homed at rank 0) and
 *   waits without a clock; rank 0 watches the rows arrive: whenever a row
 *   with delta d has arrived, every row with a larger delta must have too
 *   (the largest go first).  It keeps watching until every row is there,
 *   and fails unless at least one look saw some rows but not all (else
 *   the order was never observed).  After rank 1's clock every delta must
 *   be there exactly once (also with LOOM_WIRE=fp16). */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../rng.h"

static int home0(size_t unit, int nranks, void *arg) { (void)unit; (void)nranks; (void)arg; return 0; }
/* A meeting point that, unlike loom_barrier, releases nothing. */
static void meet(void)
{
    int32_t x = 0;
    loom_allreduce(LOOM_IN_PLACE, &x, 1, LOOM_INT32, LOOM_SUM);
}
static void sleep_ms(long ms) { struct timespec ts = {ms / 1000, (ms % 1000) * 1000000}; nanosleep(&ts, NULL); }

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int r = loom_rank(), P = loom_size(), fails = 0;
    if (argc > 1 && !strcmp(argv[1], "rate")) {
        double secs = argc > 2 ? atof(argv[2]) : 10;
        size_t nrows = 20000;
        float *w = loom_alloc(nrows * 256, &(loom_alloc_opts){.name = "w", .unit = LOOM_UNIT_ROW,
            .row_size = 256, .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT, .coherence = "priority",
            .dist = LOOM_DIST_CYCLIC});
        float d[64];
        uint64_t seed = (uint64_t)r + 1;
        loom_barrier();
        double t0 = loom_wtime();
        while (loom_wtime() - t0 < secs) {
            sleep_ms(1); /* leave the sender some of the two cores */
            for (int k = 0; k < 256; k++) {
                size_t row = next(&seed) % nrows;
                if ((int)(row % (size_t)P) == r)
                    continue; /* only rows homed elsewhere travel */
                for (int i = 0; i < 64; i++)
                    d[i] = (float)(next(&seed) % 1000) * 0.001f;
                loom_row_add(w, row, d);
            }
        }
        loom_stats s;
        loom_stats_get(w, &s);
        double el = loom_wtime() - t0, rate = (double)s.bytes_sent / el;
        double all[2] = {rate, rate};
        loom_allreduce(LOOM_IN_PLACE, all, 1, LOOM_DOUBLE, LOOM_MIN);
        loom_allreduce(LOOM_IN_PLACE, all + 1, 1, LOOM_DOUBLE, LOOM_MAX);
        if (r == 0) {
            double budget = atof(getenv("LOOM_BANDWIDTH") ? getenv("LOOM_BANDWIDTH") : "100") * 1e6 / 8;
            printf("prio_check: rate budget=%.0f B/s per rank, sent min=%.0f max=%.0f B/s "
                   "(ratio %.3f..%.3f) over %.1f s\n", budget, all[0], all[1], all[0] / budget,
                   all[1] / budget, el);
        }
        loom_clock();
        loom_barrier();
        loom_free(w);
        return loom_finalize();
    }
    /* order */
    size_t nrows = 100;
    float *w = loom_alloc(nrows * 256, &(loom_alloc_opts){.name = "w", .unit = LOOM_UNIT_ROW,
        .row_size = 256, .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT, .coherence = "priority",
        .dist = LOOM_DIST_EXPLICIT, .home_of = home0});
    loom_barrier();
    if (r == 1) {
        float d[64];
        for (size_t i = 0; i < nrows; i++) {
            for (int k = 0; k < 64; k++)
                d[k] = (float)(i + 1);
            loom_row_add(w, i, d);
        }
        meet();       /* deltas are buffered: let rank 0 watch */
        meet();       /* rank 0 has seen them arrive */
        loom_clock(); /* the end-of-clock flush sends the rest */
        loom_barrier();
    } else {
        meet();
        int seen = 0, all = 0, partial = 0; /* partial: looks that saw some rows, not all */
        for (double t0 = loom_wtime(); r == 0 && !all && loom_wtime() - t0 < 10;) {
            sleep_ms(20);
            loom_acquire();
            size_t smallest = nrows;
            for (size_t i = 0; i < nrows; i++)
                if (((const float *)loom_row_get(w, i))[0] != 0 && smallest == nrows)
                    smallest = i;
            for (size_t i = smallest; i < nrows; i++)
                if (((const float *)loom_row_get(w, i))[0] == 0 && fails++ < 5)
                    fprintf(stderr, "row %zu (delta %zu) arrived before row %zu (delta %zu)\n",
                            smallest, smallest + 1, i, i + 1);
            if (smallest < nrows && !seen)
                printf("prio_check: first look with arrivals: rows %zu..%zu of %zu arrived\n",
                       smallest, nrows - 1, nrows);
            seen |= smallest < nrows;
            all = smallest == 0;
            partial += smallest > 0 && smallest < nrows;
        }
        if (r == 0)
            printf("prio_check: %d look(s) saw some rows but not all\n", partial);
        if (r == 0 && !seen && fails++ < 5)
            fprintf(stderr, "no row arrived early\n");
        if (r == 0 && !partial && fails++ < 5)
            fprintf(stderr, "the order was never observed: no look saw some rows but not all\n");
        meet();
        loom_barrier();
    }
    loom_acquire();
    if (r == 0)
        for (size_t i = 0; i < nrows; i++) {
            const float *x = loom_row_get(w, i);
            if ((x[0] != (float)(i + 1) || x[63] != (float)(i + 1)) && fails++ < 5)
                fprintf(stderr, "after the clock row %zu holds %g, want %zu\n", i, x[0], i + 1);
        }
    int32_t ok = !fails;
    loom_allreduce(LOOM_IN_PLACE, &ok, 1, LOOM_INT32, LOOM_MIN);
    if (r == 0 && ok)
        printf("prio_check: ok order P=%d\n", P);
    loom_free(w);
    loom_finalize();
    return ok ? 0 : 1;
}
