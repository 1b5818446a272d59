/* for.c — loom_for: the entry point of the parallel loop.
 *
 * On one rank a data-parallel HYBRID loop is exactly an OpenMP loop with
 * the same schedule: the body runs straight from libgomp's worksharing,
 * with nothing in between.  The other cases:
 *   - data-parallel with staging (BSP, SSP, or several ranks): the rank's
 *     range is cut into rounds of .sync_every iterations; each round is
 *     an OpenMP loop whose bodies reach rows through staged copies, and
 *     ends in a sync point (flush the stages; BSP: barrier; SSP and
 *     HYBRID: clock);
 *   - serializable: a plan (plan.c), built once for a repeated loop;
 *   - priority: priority.c. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>

/* This rank's part of [begin, end): all of it with .local or one rank,
 * else its block. */
static void my_range(long begin, long end, int local, long *lo, long *hi)
{
    long n = end - begin, R = loom_icv.nranks, r = loom_icv.rank;
    if (local || R == 1) {
        *lo = begin;
        *hi = end;
        return;
    }
    *lo = begin + (long)((__int128)n * r / R);
    *hi = begin + (long)((__int128)n * (r + 1) / R);
}

/* The OpenMP loop over [lo, hi) with the chosen schedule (inside a
 * parallel region: an orphaned worksharing loop). */
static void omp_loop(long lo, long hi, loom_schedule sch, long chunk,
                     void (*body)(long, void *), void *ctx)
{
    if (chunk <= 0) {
        if (sch == LOOM_DYNAMIC) {
#pragma omp for schedule(dynamic) nowait
            for (long i = lo; i < hi; i++)
                body(i, ctx);
        } else if (sch == LOOM_GUIDED) {
#pragma omp for schedule(guided) nowait
            for (long i = lo; i < hi; i++)
                body(i, ctx);
        } else {
#pragma omp for schedule(static) nowait
            for (long i = lo; i < hi; i++)
                body(i, ctx);
        }
    } else if (sch == LOOM_DYNAMIC) {
#pragma omp for schedule(dynamic, chunk) nowait
        for (long i = lo; i < hi; i++)
            body(i, ctx);
    } else if (sch == LOOM_GUIDED) {
#pragma omp for schedule(guided, chunk) nowait
        for (long i = lo; i < hi; i++)
            body(i, ctx);
    } else {
#pragma omp for schedule(static, chunk) nowait
        for (long i = lo; i < hi; i++)
            body(i, ctx);
    }
}

/* Contract: collective with several ranks.  Runs [lo, hi) in rounds of
 * `every` iterations with staged rows and a sync point after each round;
 * every rank runs the same number of rounds (the most any rank needs). */
static int staged_loop(long lo, long hi, const loom_for_opts *o, void (*body)(long, void *),
                       void *ctx)
{
    int T = omp_get_max_threads(), R = loom_icv.nranks;
    long every = o->sync_every > 0 ? o->sync_every : (hi > lo ? hi - lo : 1);
    int64_t rounds = (hi - lo + every - 1) / every;
    if (R > 1)
        loom_allreduce(LOOM_IN_PLACE, &rounds, 1, LOOM_INT64, LOOM_MAX);
    int per_thread = o->sync != LOOM_HYBRID, ns = per_thread ? T : 1;
    loom_stage **ss = calloc((size_t)ns, sizeof *ss);
    if (!ss)
        return LOOM_ERR_NOMEM;
    for (int i = 0; i < ns; i++)
        if (!(ss[i] = loom_stage_new()))
            return LOOM_ERR_NOMEM;
    for (int64_t r = 0; r < rounds; r++) {
        long a = lo + r * every, b = a + every < hi ? a + every : hi;
#pragma omp parallel num_threads(T)
        {
            loom_ts.mode = TS_STAGE;
            loom_ts.stage = ss[per_thread ? omp_get_thread_num() : 0];
            omp_loop(a, b > a ? b : a, o->schedule, o->chunk, body, ctx);
            loom_ts.mode = TS_PLAIN;
            loom_ts.stage = NULL;
        }
        loom_stage_flush(ss, ns);
        if (o->sync == LOOM_BSP)
            loom_barrier();
        else if (R > 1)
            loom_clock();
    }
    for (int i = 0; i < ns; i++)
        loom_stage_free(ss[i]);
    free(ss);
    return LOOM_OK;
}

static int bad(const char *why)
{
    loom_log("loom_for: %s", why);
    return LOOM_ERR_ARG;
}

int loom_for(long begin, long end, void (*body)(long i, void *ctx), void *ctx,
             const loom_for_opts *opts)
{
    loom_for_opts o = opts ? *opts : (loom_for_opts){0};
    if (o.schedule < LOOM_STATIC || o.schedule > LOOM_PRIORITY)
        return bad("unknown schedule");
    if (o.sync < LOOM_HYBRID || o.sync > LOOM_SSP)
        return bad("unknown sync mode");
    if (o.schedule == LOOM_PRIORITY) {
        if (!o.priority || !o.priority->push || !o.priority->pull)
            return bad("the priority schedule needs .priority with push and pull");
        return loom_priority_run(begin, end, ctx, o.priority);
    }
    if (!body)
        return bad("no loop body");
    if (end < begin)
        end = begin;
    if (o.schedule == LOOM_SERIALIZABLE) {
        if (end - begin > UINT32_MAX)
            return bad("a serializable loop has at most 2^32 iterations");
        if (loom_icv.nranks == 1 && omp_get_max_threads() == 1 && !loom_icv.check_serial) {
            for (long i = begin; i < end; i++) /* one worker: the serial order itself */
                body(i, ctx);
            return LOOM_OK;
        }
        loom_plan *p = loom_plan_get(begin, end, body, ctx, &o);
        if (!p)
            return LOOM_ERR_ARG;
        int rc = loom_plan_run(p);
        if (!loom_plan_cached(p))
            loom_plan_free(p);
        return rc;
    }
    long lo, hi;
    my_range(begin, end, o.local, &lo, &hi);
    if (loom_icv.nranks == 1 && o.sync == LOOM_HYBRID) {
#pragma omp parallel
        omp_loop(lo, hi, o.schedule, o.chunk, body, ctx);
        return LOOM_OK;
    }
    return staged_loop(lo, hi, &o, body, ctx);
}
