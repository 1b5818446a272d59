/* prio_check.c — the priority policy's promises.
 * Usage: prio_check rate SECONDS | prio_check order
 * rate: every rank adds to random rows (homed elsewhere, never clocking)
 *   for SECONDS; the background sender must spend LOOM_BANDWIDTH: rank 0
 *   prints the bytes sent early per second against the budget.
 * order: rank 0 sets row i (100 rows, all homed at rank 0) to v_i =
 *   (i+1)^2/8 and rank 1 reads them all; rank 1 adds d_i = i+1+2^-11 to
 *   row i and waits without a clock; rank 0 watches the rows arrive.
 *   LOOM_PRIORITY=absolute sends the largest |d| first (row 99 first);
 *   relative, the largest |d| / |v + d| = 8 / (i + 9) (row 0 first): the
 *   two orders are opposite, so each run shows which ran.  Whenever a row
 *   has arrived, every row before it in that order must have too.  Rank 0
 *   keeps watching until every row is there, and fails unless at least one
 *   look saw some rows but not all (else the order was never observed).
 *   After rank 1's clock every delta must be there exactly once: v + d
 *   bit for bit, or with LOOM_WIRE=fp16 v + (i+1), d's half-precision
 *   rounding (2^-11 is below half an fp16 ulp of i+1): so that run shows
 *   the wire was fp16. */
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
    const char *pm = getenv("LOOM_PRIORITY"), *wire = getenv("LOOM_WIRE");
    int relative = pm && !strcmp(pm, "relative"), half = wire && !strcmp(wire, "fp16");
    float v[100], d[100];
    for (size_t i = 0; i < nrows; i++)
        v[i] = (float)((i + 1) * (i + 1)) / 8, d[i] = (float)(i + 1) + 0x1p-11f;
    float row[64];
    for (size_t i = 0; r == 0 && i < nrows; i++) {
        for (int k = 0; k < 64; k++)
            row[k] = v[i];
        loom_row_put(w, i, row);
    }
    loom_barrier();
    /* the expected order of arrival: row at[0] first */
    size_t at[100];
    for (size_t k = 0; k < nrows; k++)
        at[k] = relative ? k : nrows - 1 - k;
    if (r == 1) {
        for (size_t i = 0; i < nrows; i++)
            (void)loom_row_get(w, i); /* the copy holds v: relative priority divides by it */
        for (size_t i = 0; i < nrows; i++) {
            for (int k = 0; k < 64; k++)
                row[k] = d[i];
            loom_row_add(w, i, row);
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
            size_t arrived = 0, gap = nrows; /* gap: the first not arrived, in order */
            for (size_t k = 0; k < nrows; k++) {
                int here = ((const float *)loom_row_get(w, at[k]))[0] != v[at[k]];
                if (here && gap < k && fails++ < 5)
                    fprintf(stderr, "row %zu arrived before row %zu (%s priority)\n", at[k],
                            at[gap], relative ? "relative" : "absolute");
                if (!here && gap == nrows)
                    gap = k;
                arrived += here;
            }
            if (arrived && !seen)
                printf("prio_check: first look with arrivals: %zu of %zu rows, row %zu first\n",
                       arrived, nrows, at[0]);
            seen |= arrived > 0;
            all = arrived == nrows;
            partial += arrived > 0 && arrived < nrows;
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
            float want = v[i] + (half ? (float)(i + 1) : d[i]);
            if ((x[0] != want || x[63] != want) && fails++ < 5)
                fprintf(stderr, "after the clock row %zu holds %.9g, want %.9g (%s wire)\n", i,
                        (double)x[0], (double)want, half ? "fp16" : "fp32");
        }
    int32_t ok = !fails;
    loom_allreduce(LOOM_IN_PLACE, &ok, 1, LOOM_INT32, LOOM_MIN);
    if (r == 0 && ok)
        printf("prio_check: ok order P=%d\n", P);
    loom_free(w);
    loom_finalize();
    return ok ? 0 : 1;
}
