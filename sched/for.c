/* for.c — loom_for: the entry point of the parallel loop.
 *
 * On one rank a data-parallel HYBRID loop is exactly an OpenMP loop with
 * the same schedule: the body runs straight from libgomp's worksharing,
 * with nothing in between.  The other cases:
 *   - data-parallel with staging (BSP, SSP, or several ranks): the rank's
 *     range is cut into rounds of .sync_every iterations (or of that much
 *     weight, .sync_weight); each round is
 *     an OpenMP loop whose bodies reach rows through staged copies, and
 *     ends in a sync point (flush the stages; BSP: barrier; SSP and
 *     HYBRID: clock);
 *   - serializable: a plan (plan.c), built once for a repeated loop;
 *   - priority: priority.c.
 * loom_for_records runs a block body over records; LOOM_FOR (loom.h) is
 * the inlined per-iteration form, with loom_for_span giving it its range. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Block r of [begin, end) cut into R contiguous blocks of about equal
 * length (a rank's of the job's range, a thread's of the rank's). */
static void block(long begin, long end, long r, long R, long *lo, long *hi)
{
    long n = end - begin;
    *lo = begin + (long)((__int128)n * r / R);
    *hi = begin + (long)((__int128)n * (r + 1) / R);
}

/* This rank's part of [begin, end): all of it with .local or one rank,
 * else its block. */
static void my_range(long begin, long end, int local, long *lo, long *hi)
{
    if (local || loom_rt_icv.nranks == 1) {
        *lo = begin;
        *hi = end;
        return;
    }
    block(begin, end, loom_rt_icv.rank, loom_rt_icv.nranks, lo, hi);
}

#define EACH(lo, hi, b)                                                  \
    for (long i = lo; i < hi; i++)                                       \
        b->one(i, b->ctx)

/* The OpenMP loop over [lo, hi) with the chosen schedule (inside a
 * parallel region: an orphaned worksharing loop).  A range body gets
 * whole chunks: each thread's block (static), or chunk after chunk. */
static void omp_loop(long lo, long hi, loom_schedule sch, long chunk, const loom_body *b)
{
    if (b->range) {
        long n = hi - lo;
        if (sch == LOOM_STATIC && chunk <= 0) {
            long a, z;
            block(lo, hi, omp_get_thread_num(), omp_get_num_threads(), &a, &z);
            if (z > a)
                b->range(a, z, b->ctx);
            return;
        }
        long c = chunk > 0 ? chunk : n / (64L * omp_get_num_threads()) + 1;
        long nc = (n + c - 1) / c;
        if (sch == LOOM_STATIC) {
#pragma omp for schedule(static, 1) nowait
            for (long x = 0; x < nc; x++)
                b->range(lo + x * c, lo + x * c + c < hi ? lo + x * c + c : hi, b->ctx);
        } else if (sch == LOOM_DYNAMIC) {
#pragma omp for schedule(dynamic, 1) nowait
            for (long x = 0; x < nc; x++)
                b->range(lo + x * c, lo + x * c + c < hi ? lo + x * c + c : hi, b->ctx);
        } else {
#pragma omp for schedule(guided, 1) nowait
            for (long x = 0; x < nc; x++)
                b->range(lo + x * c, lo + x * c + c < hi ? lo + x * c + c : hi, b->ctx);
        }
        return;
    }
    if (chunk <= 0) {
        if (sch == LOOM_DYNAMIC) {
#pragma omp for schedule(dynamic) nowait
            EACH(lo, hi, b);
        } else if (sch == LOOM_GUIDED) {
#pragma omp for schedule(guided) nowait
            EACH(lo, hi, b);
        } else {
#pragma omp for schedule(static) nowait
            EACH(lo, hi, b);
        }
    } else if (sch == LOOM_DYNAMIC) {
#pragma omp for schedule(dynamic, chunk) nowait
        EACH(lo, hi, b);
    } else if (sch == LOOM_GUIDED) {
#pragma omp for schedule(guided, chunk) nowait
        EACH(lo, hi, b);
    } else {
#pragma omp for schedule(static, chunk) nowait
        EACH(lo, hi, b);
    }
}

/* The running total of o->sync_weight over [lo, hi): cum[i - lo] is the
 * weight of [lo, i) (weights below 0 count as 0); stops the job without
 * memory (the other ranks wait in the loop's collective). */
static int64_t *weights(long lo, long hi, const loom_for_opts *o, const loom_body *body)
{
    size_t n = (size_t)(hi > lo ? hi - lo : 0);
    int64_t *c = malloc((n + 1) * sizeof *c), total = 0;
    if (!c)
        loom_rt_die(2, "loom_for: out of memory for the weights of %ld iterations", hi - lo);
    for (size_t i = 0; i < n; i++) {
        c[i] = total;
        long w = o->sync_weight(lo + (long)i, body->ctx);
        total += w > 0 ? w : 0;
    }
    c[n] = total;
    return c;
}

/* The rounds of [lo, hi) by weight (cum: weights()): end[r] is one past
 * the iteration at which the running total first reaches (r + 1) * every
 * (hi for the last round).  Returns the number of rounds (end[0..n)). */
static int64_t weighted_rounds(long lo, long hi, long every, const int64_t *cum, long **end)
{
    long *e = malloc(((size_t)(hi > lo ? hi - lo : 0) + 1) * sizeof *e);
    if (!e)
        loom_rt_die(2, "loom_for: out of memory for the rounds of %ld iterations", hi - lo);
    int64_t n = 0, next = every;
    for (long i = lo; i < hi; i++)
        if (cum[i + 1 - lo] >= next) {
            e[n++] = i + 1;
            next = (cum[i + 1 - lo] / every + 1) * every;
        }
    if (!n || e[n - 1] < hi)
        e[n++] = hi;
    *end = e;
    return n;
}

/* Contract: collective with several ranks.  Runs [lo, hi) in rounds of
 * `every` iterations (or that much weight, .sync_weight) with staged rows
 * and a sync point after each round; every rank runs the same number of
 * rounds (the most any rank needs: the others' last ones are empty).
 * shared: [lo, hi) is the job's range, and each round's parts go to the
 * ranks by speed (shares.c), up to two ranges each.  Under LOOM_STATS
 * each rank logs the rounds and where their time went. */
static int staged_loop(long lo, long hi, int shared, const loom_for_opts *o,
                       const loom_body *body)
{
    int T = omp_get_max_threads(), R = loom_rt_icv.nranks;
    long every = o->sync_every > 0 ? o->sync_every : (hi > lo ? hi - lo : 1), *end = NULL;
    int64_t *cum = o->sync_weight && o->sync_every > 0 ? weights(lo, hi, o, body) : NULL;
    int64_t mine = 0, rounds = 0;
    loom_shares *sh = shared ? loom_sched_shares_new(lo, hi, cum) : NULL;
    if (!sh) {
        mine = rounds = cum ? weighted_rounds(lo, hi, every, cum, &end) : (hi - lo + every - 1) / every;
        if (R > 1)
            loom_allreduce(LOOM_IN_PLACE, &rounds, 1, LOOM_INT64, LOOM_MAX);
    }
    int per_thread = o->sync != LOOM_HYBRID, ns = per_thread ? T : 1;
    loom_stage **ss = calloc((size_t)ns, sizeof *ss);
    if (!ss)
        return LOOM_ERR_NOMEM;
    for (int i = 0; i < ns; i++)
        if (!(ss[i] = loom_sched_stage_new(ns == 1)))
            return LOOM_ERR_NOMEM;
    /* a repeated site prefetches by round: not where rounds follow speed */
    loom_pf *pf = o->repeated && R > 1 && !sh ? loom_sched_pf_site(body, lo, hi, every, rounds) : NULL;
    loom_sched_pf_start(pf, ss, ns); /* arrays staged whole at the end of its last call */
    loom_part p = {{lo, lo}, {lo, lo}}; /* this rank's part of the round */
    double took[4] = {0}; /* seconds: the bodies, the merge, the clock, sharing */
    int64_t r = 0;
    for (; sh ? loom_sched_shares_next(sh, (double)every, &p) : r < rounds; r++) {
        long *a = p.a, *b = p.z;
        if (end) /* by weight */
            a[0] = r == 0 ? lo : r <= mine ? end[r - 1] : hi, b[0] = r < mine ? end[r] : hi;
        else if (!sh)
            a[0] = lo + r * every, b[0] = a[0] + every < hi ? a[0] + every : hi;
        loom_sched_pf_before(pf, r); /* a repeated site: what this round touched last call */
        loom_sched_stage_begin(ss, ns);
        double t0 = loom_wtime();
#pragma omp parallel num_threads(T)
        {
            loom_sched_ts.mode = TS_STAGE;
            loom_sched_ts.stage = ss[per_thread ? omp_get_thread_num() : 0];
            loom_sched_stage_whole(loom_sched_ts.stage, loom_sched_ts.whole);
            for (int i = 0; i < 2; i++)
                if (b[i] > a[i])
                    omp_loop(a[i], b[i], o->schedule, o->chunk, body);
            loom_sched_ts.mode = TS_PLAIN;
            loom_sched_ts.stage = NULL;
            loom_sched_ts.whole[0] = loom_sched_ts.whole[1] = NULL;
        }
        double t1 = loom_wtime(), secs = t1 - t0;
        loom_sched_pf_after(pf, r, ss, ns);
        loom_sched_stage_flush(ss, ns);
        double t2 = loom_wtime();
        if (o->sync == LOOM_BSP)
            loom_dsm_barrier();
        else if (R > 1)
            loom_dsm_clock_tick(); /* not the program's clock: no checkpoint here */
        double t3 = loom_wtime();
        if (sh)
            loom_sched_shares_learn(sh, &p, secs);
        took[0] += secs, took[1] += t2 - t1, took[2] += t3 - t2, took[3] += loom_wtime() - t3;
    }
    if (loom_rt_icv.stats) /* docs/loop.md, "Where a data-parallel loop's time goes" */
        loom_rt_log("loom_for: %lld rounds: bodies %.3f s; sync points %.3f s: merge %.3f s, "
                 "clock %.3f s, sharing %.3f s", (long long)r, took[0],
                 took[1] + took[2] + took[3], took[1], took[2], took[3]);
    loom_sched_pf_end(pf, ss, ns);
    loom_sched_pf_place(pf); /* after a repeated site's first call: rows to their users */
    if (R > 1 && !o->accessor_reads) /* plain loads after the loop read current rows */
        loom_sched_stage_settle(ss, ns, o->sync != LOOM_BSP);
    for (int i = 0; i < ns; i++)
        loom_sched_stage_free(ss[i]);
    free(ss);
    free(end);
    loom_sched_shares_free(sh);
    free(cum);
    return LOOM_OK;
}

/* 1 if some live allocation is one a thread's own stage keeps (small
 * model replicas, loom_sched_stage_owns): a one-rank HYBRID loop with a sync
 * interval then gives its threads their own copies of its rows. */
static int owned_arrays(void)
{
    int n = atomic_load(&loom_dsm_nallocs);
    for (int id = 0; id < n; id++)
        if (loom_dsm_allocs[id] && loom_dsm_allocs[id]->live && loom_sched_stage_owns(loom_dsm_allocs[id]))
            return 1;
    return 0;
}

/* A thread's block of an own-rounds loop: the rounds [next, end) not yet
 * handed out (next taken by atomic adds); a cache line each. */
struct own_block {
    _Atomic long next;
    long end;
    char pad[64 - sizeof(_Atomic long) - sizeof(long)];
};

/* The next round for thread t: the next of its own block, else the next
 * of another thread's (from t + 1 on), so that a thread whose core was
 * taken away gives its last rounds to the others.  Returns its index, or
 * -1 when every block is done. */
static long own_next(struct own_block *bl, int T, int t)
{
    for (int k = 0; k < T; k++) {
        struct own_block *b = &bl[(t + k) % T];
        if (atomic_load_explicit(&b->next, memory_order_relaxed) >= b->end)
            continue;
        long r = atomic_fetch_add(&b->next, 1);
        if (r < b->end)
            return r;
    }
    return -1;
}

/* Contract: one rank, HYBRID, a sync interval, several threads, an
 * OpenMP schedule (data_parallel decides; the rounds replace it).  [lo,
 * hi) is cut into rounds of sync_every / T iterations (the rank's
 * interval shared by its threads), or that much weight (.sync_weight);
 * each thread runs its block of the rounds on its own copies of the rows
 * of the small model replicas it reaches through loom_at
 * (loom_sched_stage_owns), and at the end of each round averages its
 * changes in (as the ranks' replicas merge: summed, the copies' common
 * moves add up T times over, and loom-lr's first epoch at its default
 * step ended at a loss of 1.1-3.2 against one thread's 0.68), without
 * waiting for the other threads: no barrier but the loop's end.  A thread
 * done with its block takes the rounds other threads have not begun
 * (own_next): on a busy host one late thread no longer holds the loop's
 * end back, and rounds of unequal work (dynamic, guided) even out.  Other
 * arrays are reached in place.  So the threads stop writing the same
 * cache lines on every update (a model every sample changes, as
 * loom-lr's; word2vec's output vectors of a small vocabulary).  Out of
 * memory for a thread's stage: LOOM_ERR_NOMEM, the rounds already run
 * averaged in. */
static int own_rounds(long lo, long hi, const loom_for_opts *o, const loom_body *b)
{
    int T = omp_get_max_threads();
    long every = (o->sync_every + T - 1) / T, rounds = 0, *cut = NULL;
    double t0 = loom_wtime(), merging = 0; /* the threads' seconds in their flushes */
    int64_t *cum = o->sync_weight ? weights(lo, hi, o, b) : NULL;
    /* by weight, round r is [cut[r - 1] (lo for r = 0), cut[r]) */
    long nr = cum ? (long)weighted_rounds(lo, hi, every, cum, &cut) : (hi - lo + every - 1) / every;
    free(cum);
    loom_stage **ss = calloc((size_t)T, sizeof *ss);
    struct own_block *bl = aligned_alloc(64, (size_t)T * sizeof *bl);
    _Atomic int bad = !ss || !bl;
    for (int t = 0; !bad && t < T; t++) {
        long a, z;
        block(0, nr, t, T, &a, &z);
        atomic_init(&bl[t].next, a);
        bl[t].end = z;
    }
#pragma omp parallel num_threads(T) if (!bad) reduction(+ : rounds, merging)
    if (!atomic_load(&bad)) {
        /* the team may be smaller than T (nested, OMP_DYNAMIC): each stage
         * averages over the threads there are, which take the missing
         * ones' blocks (own_next) */
        int t = omp_get_thread_num();
        if (!(ss[t] = loom_sched_stage_new_own(omp_get_num_threads())))
            atomic_store(&bad, 1);
        loom_sched_ts.mode = TS_STAGE;
        loom_sched_ts.stage = ss[t];
        for (long r; !atomic_load(&bad) && (r = own_next(bl, T, t)) >= 0;) {
            long x = cut ? (r ? cut[r - 1] : lo) : lo + r * every;
            long y = cut ? cut[r] : x + every < hi ? x + every : hi;
            if (b->range)
                b->range(x, y, b->ctx);
            else
                EACH(x, y, b);
            double m0 = loom_wtime();
            loom_sched_stage_flush(&ss[t], 1);
            merging += loom_wtime() - m0;
            rounds++;
        }
        loom_sched_ts.mode = TS_PLAIN;
        loom_sched_ts.stage = NULL;
        loom_sched_own_forget();
    }
    for (int t = 0; ss && t < T; t++)
        loom_sched_stage_free(ss[t]);
    free(ss);
    free(bl);
    free(cut);
    double took = loom_wtime() - t0;
    if (loom_rt_icv.stats && !bad) /* the merges' share of the threads' time */
        loom_rt_log("loom_for: %d threads' own rounds of %ld %s: %ld rounds in %.3f s, "
                    "%.1f%% of the threads' time merging", T, every, cut ? "weight" : "iterations",
                    rounds, took, 100 * merging / (T * took > 0 ? T * took : 1));
    return bad ? LOOM_ERR_NOMEM : LOOM_OK;
}

static int bad(const char *why)
{
    loom_rt_log("loom_for: %s", why);
    return LOOM_ERR_ARG;
}

/* The data-parallel schedules: plain OpenMP on one rank (HYBRID; with a
 * sync interval and small model replicas, the threads' own rounds), else
 * rounds with staging and sync points; dynamic and guided on the job's
 * range share each round among the ranks by speed (shares.c). */
static int data_parallel(long begin, long end, const loom_for_opts *o, const loom_body *b)
{
    long lo, hi;
    my_range(begin, end, o->local, &lo, &hi);
    if (loom_rt_icv.nranks == 1 && o->sync == LOOM_HYBRID && o->sync_every > 0 &&
        omp_get_max_threads() > 1 && owned_arrays())
        return own_rounds(lo, hi, o, b); /* the threads' own copies of small replicas */
    if (loom_rt_icv.nranks == 1 && o->sync == LOOM_HYBRID) {
#pragma omp parallel
        omp_loop(lo, hi, o->schedule, o->chunk, b);
        return LOOM_OK;
    }
    if (loom_rt_icv.nranks > 1 && !o->local && o->schedule != LOOM_STATIC)
        return staged_loop(begin, end, 1, o, b); /* the job's range, by speed */
    return staged_loop(lo, hi, 0, o, b);
}

static int check_opts(const loom_for_opts *o, int records)
{
    if (o->schedule < LOOM_STATIC || o->schedule > LOOM_PRIORITY)
        return bad("unknown schedule");
    if (o->sync < LOOM_HYBRID || o->sync > LOOM_SSP)
        return bad("unknown sync mode");
    if (o->in_place && !records)
        return bad(".in_place lays out loom_for_records' records; this loop has none");
    return LOOM_OK;
}

/* The serializable schedule: the (cached) plan; or, when this rank is the
 * only worker and the loop is run once or names no rows (neither .deps nor
 * .fields: learning them would take a reconnaissance run), the body in
 * index order.  A lone worker's plan of a repeated site is the same
 * plan-order layout the workers of a larger job stream through (the
 * records copied once, contiguous per sub-block), built once and reused:
 * one serial order, as the index order is another. */
static int serializable(long begin, long end, const loom_body *b, const loom_for_opts *o)
{
    if (end - begin > UINT32_MAX)
        return bad("a serializable loop has at most 2^32 iterations");
    int names_rows = o->deps || b->fields[0].array || b->fields[1].array;
    if (loom_rt_icv.nranks == 1 && omp_get_max_threads() == 1 && !loom_rt_icv.check_serial &&
        !(o->repeated && names_rows)) {
        if (b->block) /* one worker: the serial order itself */
            b->block(b->data, end - begin, b->ctx);
        else
            for (long i = begin; i < end; i++)
                b->one(i, b->ctx);
        return LOOM_OK;
    }
    loom_plan *p = loom_sched_plan_get(begin, end, b, o);
    if (!p)
        return LOOM_ERR_ARG;
    int rc = loom_sched_plan_run(p);
    /* the plan ended in a barrier: make every rank's copies of what any
     * rank wrote current, for plain loads after the loop (ring arrays are
     * their owners', left as they are) */
    for (int id = 0; !rc && loom_rt_icv.nranks > 1 && !o->accessor_reads && id < LOOM_MAX_ALLOCS; id++)
        if (p->written[id])
            loom_sched_refresh(id);
    if (!loom_sched_plan_cached(p))
        loom_sched_plan_free(p);
    return rc;
}

static int for_run(long begin, long end, void (*body)(long i, void *ctx), void *ctx,
                const loom_for_opts *opts)
{
    loom_for_opts o = opts ? *opts : (loom_for_opts){0};
    if (check_opts(&o, 0))
        return LOOM_ERR_ARG;
    if (o.schedule == LOOM_PRIORITY) {
        if (!o.priority || !o.priority->push || !o.priority->pull)
            return bad("the priority schedule needs .priority with push and pull");
        return loom_sched_priority_run(begin, end, ctx, o.priority);
    }
    if (!body)
        return bad("no loop body");
    if (end < begin)
        end = begin;
    loom_body b = {.one = body, .ctx = ctx};
    if (o.schedule == LOOM_SERIALIZABLE)
        return serializable(begin, end, &b, &o);
    return data_parallel(begin, end, &o, &b);
}

int loom_for(long begin, long end, void (*body)(long i, void *ctx), void *ctx,
             const loom_for_opts *opts)
{
    loom_dsm_looping++;
    int rc = for_run(begin, end, body, ctx, opts);
    loom_dsm_looping--;
    return rc;
}

static int for_range_run(long begin, long end, void (*body)(long lo, long hi, void *ctx), void *ctx,
                            const loom_for_opts *opts)
{
    loom_for_opts o = opts ? *opts : (loom_for_opts){0};
    if (check_opts(&o, 0))
        return LOOM_ERR_ARG;
    if (o.schedule > LOOM_GUIDED)
        return bad("loom_for_range takes the data-parallel schedules (static, dynamic, guided)");
    if (!body)
        return bad("no loop body");
    return data_parallel(begin, end > begin ? end : begin, &o, &(loom_body){.range = body, .ctx = ctx});
}

int loom_for_range(long begin, long end, void (*body)(long lo, long hi, void *ctx), void *ctx,
                   const loom_for_opts *opts)
{
    loom_dsm_looping++;
    int rc = for_range_run(begin, end, body, ctx, opts);
    loom_dsm_looping--;
    return rc;
}

/* A data-parallel record loop: each range of iterations is one block of
 * records. */
static void records_range(long lo, long hi, void *v)
{
    const loom_body *b = v;
    b->block(b->data + (size_t)lo * b->size, hi - lo, b->ctx);
}

/* Checks .fields (a serializable record loop's, instead of .deps: each
 * names a row allocation and an integer of 4 or 8 bytes inside the
 * record) and copies them to f.  LOOM_ERR_ARG after a message. */
static int fields_of(const loom_for_opts *o, size_t size, loom_field *f)
{
    if (!o->fields[0].array && !o->fields[1].array)
        return LOOM_OK;
    if (o->schedule != LOOM_SERIALIZABLE || o->deps)
        return bad(".fields name a serializable loom_for_records' rows, instead of .deps");
    for (int x = 0; x < 2; x++) {
        const loom_field *g = &o->fields[x];
        if (!g->array)
            continue;
        loom_dsm_alloc *a = loom_dsm_lookup_base(g->array);
        if (!a || !a->live || a->kind != LOOM_UNIT_ROW) {
            loom_rt_log("loom_for_records: .fields[%d].array is not a Loom row allocation", x);
            return LOOM_ERR_ARG;
        }
        if ((g->size != 4 && g->size != 8) || g->offset > size || size - g->offset < g->size) {
            loom_rt_log("loom_for_records: .fields[%d] (offset %zu, size %zu) is not an integer of "
                     "4 or 8 bytes inside the %zu-byte record", x, g->offset, g->size, size);
            return LOOM_ERR_ARG;
        }
        f[x] = *g;
    }
    return LOOM_OK;
}

static int for_records_run(const void *data, size_t size, long n,
                              void (*body)(const void *recs, long n, void *ctx), void *ctx,
                              const loom_for_opts *opts)
{
    loom_for_opts o = opts ? *opts : (loom_for_opts){0};
    if (check_opts(&o, 1))
        return LOOM_ERR_ARG;
    if (o.schedule == LOOM_PRIORITY)
        return bad("loom_for_records takes the data-parallel and serializable schedules");
    if (!body || (n > 0 && (!data || !size)))
        return bad("loom_for_records needs a body, and records with their size");
    if (n < 0)
        n = 0;
    loom_body b = {.block = body, .data = data, .size = size, .ctx = ctx, .in_place = o.in_place};
    if (fields_of(&o, size, b.fields))
        return LOOM_ERR_ARG;
    if (o.schedule == LOOM_SERIALIZABLE && o.ordered)
        return loom_sched_ordered_run(&b, n, o.local, o.repeated); /* ordered.c */
    if (o.schedule == LOOM_SERIALIZABLE)
        return serializable(0, n, &b, &o);
    return data_parallel(0, n, &o, &(loom_body){.range = records_range, .ctx = &b});
}

int loom_for_records(const void *data, size_t size, long n,
                     void (*body)(const void *recs, long n, void *ctx), void *ctx,
                     const loom_for_opts *opts)
{
    loom_dsm_looping++;
    int rc = for_records_run(data, size, n, body, ctx, opts);
    loom_dsm_looping--;
    return rc;
}

loom_span loom_block(long begin, long end)
{
    loom_span s = {0, 0, 1};
    my_range(begin, end > begin ? end : begin, 0, &s.lo, &s.hi);
    return s;
}

loom_span loom_for_span_reduce(long begin, long end, const loom_for_opts *opts, void *var,
                               loom_type type, loom_op op)
{
    loom_span s = loom_for_span(begin, end, opts);
    /* each rank's loop folds its iterations into var; counting the value
     * var had before the loop once means the others start from 0 (min and
     * max may count it any number of times) */
    if (op == LOOM_SUM && loom_rt_icv.rank != 0)
        memset(var, 0, loom_rt_type_size(type));
    return s;
}

int loom_for_span_reduce_end(loom_span *s, void *var, loom_type type, loom_op op)
{
    if (loom_rt_icv.nranks > 1 && loom_allreduce(LOOM_IN_PLACE, var, 1, type, op))
        loom_abort(2, "LOOM_FOR_REDUCE: the reduction across ranks failed");
    return loom_for_span_end(s);
}

loom_span loom_for_span(long begin, long end, const loom_for_opts *opts)
{
    loom_for_opts o = opts ? *opts : (loom_for_opts){0};
    if (o.schedule != LOOM_STATIC || o.sync != LOOM_HYBRID || o.chunk)
        loom_abort(2, "LOOM_FOR: the inlined loop is schedule static, sync hybrid, no chunk; "
                      "use loom_for for the others");
    loom_span s = {0, 0, 1};
    my_range(begin, end > begin ? end : begin, o.local, &s.lo, &s.hi);
    return s;
}

int loom_for_span_end(loom_span *s)
{
    (void)s;
    if (loom_rt_icv.nranks > 1)
        loom_dsm_barrier();
    return 0;
}
