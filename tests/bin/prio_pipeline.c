/* prio_pipeline.c — the priority schedule's pipelining (docs/loop.md).
 *   prio_pipeline DEPTH
 * 64 coordinates, coordinates closer than 3 conflict (10 at depth 1),
 * rounds of 4 of 8 candidates, DEPTH rounds in flight.  Each push records how many pulls
 * this rank had done when it ran; its pull then knows how many results
 * the push did not see (its staleness).  Checks, on every rank:
 *   - staleness < DEPTH x 4 (never more than the window's own pulls),
 *     and 0 for every update on one rank with one thread (one coordinate
 *     at a time: nothing stale);
 *   - some update is staler than one round's worth (>= 4) when DEPTH > 1
 *     on a parallel run: rounds really are in flight together;
 *   - no two conflicting coordinates in flight together (same window);
 *   - at depth 1, a round that keeps fewer than 4 has looked at all 8
 *     candidates (the filter stops drawing only once the round is full);
 *   - partial results summed over ranks exactly.
 * Prints "ok - ..." and exits 0, or "not ok - ..." lines and exits 1. */
#include <loom.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { NCOORD = 64, SELECT = 4, ROUNDS = 400 };
static int R, fails;
static long pulls, depth, max_stale, window_start = -1, window[64], nwindow;
static long asked_last = -1, asked, short_rounds; /* the round being filtered */
static int pulled; /* a pull since the last conflict(): a new round is filtered */

/* Coordinates closer than 3 conflict; at depth 1, closer than 10, so
 * that many rounds run short of SELECT and the filter's draws are seen
 * (with 3, a seed gives such a round rarely or never). */
static int near(long a, long b)
{
    return labs(a - b) < (depth == 1 ? 10 : 3);
}

/* Closes the round just pulled, at depth 1: candidates after the first
 * are asked about (the first is kept unasked), so `asked` + 1 were looked
 * at; a round short of SELECT must have looked at all 2 x SELECT. */
static void round_done(void)
{
    if (depth == 1 && nwindow < SELECT && asked + 1 < 2 * SELECT && fails++ < 5)
        printf("not ok - a round kept %ld of %d after looking at %ld of %d candidates\n",
               nwindow, SELECT, asked + 1, 2 * SELECT);
    short_rounds += nwindow < SELECT;
}

/* The schedule's conflict test (the pull checks windows with near()). */
static int conflict(long a, long b, void *ctx)
{
    (void)ctx;
    if (pulled) {
        round_done();
        pulled = 0, asked = 0, asked_last = -1;
    }
    asked += a != asked_last;
    asked_last = a;
    return near(a, b);
}

static void push(long j, double *partial, void *ctx)
{
    (void)ctx;
    (void)j;
    partial[0] = (double)pulls; /* read only: pulls change between windows */
    partial[1] = 1;
}

static double pull(long j, const double *sum, void *ctx)
{
    (void)ctx;
    long seen = (long)(sum[0] / R), stale = pulls - seen;
    if (sum[0] != (double)seen * R || sum[1] != R) {
        if (fails++ < 5)
            printf("not ok - coordinate %ld: partials summed to %g, %g over %d ranks\n", j,
                   sum[0], sum[1], R);
    }
    if (seen != window_start) { /* a new window begins */
        window_start = seen;
        nwindow = 0;
    }
    for (long k = 0; k < nwindow; k++)
        if (near(window[k], j) && fails++ < 5)
            printf("not ok - coordinates %ld and %ld conflict, yet were in flight together\n",
                   window[k], j);
    if (nwindow < 64)
        window[nwindow++] = j;
    if (stale > max_stale)
        max_stale = stale;
    pulls++;
    pulled = 1;
    return 1.0; /* keep every coordinate in play */
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    R = loom_size();
    depth = argc > 1 ? atol(argv[1]) : 2;
    loom_priority p = {.rounds = ROUNDS, .select = SELECT, .candidates = 2 * SELECT,
                       .width = 2, .seed = 7, .pipeline = (int)depth, .conflict = conflict,
                       .push = push, .pull = pull};
    loom_for_opts o = {.schedule = LOOM_PRIORITY, .priority = &p};
    if (loom_for(0, NCOORD, NULL, NULL, &o))
        return 1;
    int serial = R == 1 && omp_get_max_threads() == 1;
    if (!serial && pulled)
        round_done();
    if (!serial && depth == 1 && !short_rounds && fails++ < 5)
        printf("not ok - no round kept fewer than %d: the filter was never tested\n", SELECT);
    if (serial && max_stale != 0 && fails++ < 5)
        printf("not ok - one rank, one thread: an update missed %ld earlier results\n", max_stale);
    if (max_stale >= depth * SELECT && fails++ < 5)
        printf("not ok - an update missed %ld results, more than its window's %ld\n", max_stale,
               depth * SELECT - 1);
    if (!serial && depth > 1 && max_stale < SELECT && fails++ < 5)
        printf("not ok - depth %ld: no update missed a whole round (at most %ld)\n", depth,
               max_stale);
    if (pulls < ROUNDS && fails++ < 5)
        printf("not ok - only %ld updates in %d rounds\n", pulls, ROUNDS);
    if (!fails && loom_rank() == 0)
        printf("ok - depth %ld on %d rank(s) x %d thread(s): %ld updates, at most %ld "
               "results unseen, no conflicting pair in flight\n",
               depth, R, omp_get_max_threads(), pulls, max_stale);
    int32_t bad = fails;
    loom_allreduce(LOOM_IN_PLACE, &bad, 1, LOOM_INT32, LOOM_MAX);
    loom_finalize();
    return bad ? 1 : 0;
}
