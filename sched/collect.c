/* collect.c — learning what each iteration of a loop reads and writes:
 * by calling the loop's deps callback, or by reconnaissance (seed 000
 * §7.2.2): a dry run of the body in which loom_at records every access and
 * hands out scratch copies for writes, so the model is left untouched. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Contract: fills *out with the access sets of indices lo..hi-1 in index
 * order.  Runs on this rank's OpenMP threads, each over one contiguous
 * slice of iterations.  out->acc is allocated up front for two accesses
 * per iteration (the common case) and each thread appends straight into
 * its part of it; only when some thread's slice needs another count does
 * the thread continue in a buffer of its own, and the parts are then
 * concatenated in order.  Called by the planner only (not collective). */
int loom_collect(long lo, long hi, const loom_body *body,
                 void (*deps)(long, loom_deps *, void *), loom_accset *out)
{
    enum { GUESS = 2 };
    long n = hi > lo ? hi - lo : 0;
    memset(out, 0, sizeof *out);
    out->n = n;
    int nt = omp_get_max_threads();
    out->off = loom_sched_alloc((size_t)(n + 1) * sizeof *out->off);
    loom_acc *big = loom_sched_alloc(((size_t)n * GUESS + 1) * sizeof *big);
    struct loom_deps *part = calloc((size_t)nt, sizeof *part);
    size_t *base = calloc((size_t)nt + 1, sizeof *base);
    if (!out->off || !big || !part || !base) {
        free(big);
        free(part);
        free(base);
        return LOOM_ERR_NOMEM;
    }
    int exact = 1;
#pragma omp parallel num_threads(nt)
    {
        int T = omp_get_num_threads(); /* may be fewer than asked for */
        for (int t = omp_get_thread_num(); t < nt; t += T) {
            long a = n * t / nt, b = n * (t + 1) / nt;
            struct loom_deps *d = &part[t];
            *d = (struct loom_deps){big + (size_t)a * GUESS, 0, (size_t)(b - a) * GUESS, 1};
            for (long k = a; k < b; k++) {
                out->off[k] = d->n; /* relative to this slice, fixed below */
                if (deps) {
                    deps(lo + k, d, body->ctx);
                } else {
                    loom_ts.mode = TS_RECORD;
                    loom_ts.rec = *d;
                    loom_ts.scratch_used = 0;
                    loom_body_one(body, lo + k);
                    *d = loom_ts.rec;
                    loom_ts.rec = (struct loom_deps){0};
                    loom_ts.mode = TS_PLAIN;
                }
            }
            if (!d->borrowed || d->n != (size_t)(b - a) * GUESS)
                exact = 0; /* written once by each thread that sees it */
        }
#pragma omp barrier
#pragma omp single
        {
            for (int t = 0; t < nt; t++)
                base[t + 1] = base[t] + part[t].n;
            out->nacc = base[nt];
            out->acc = exact ? big : loom_sched_alloc((base[nt] ? base[nt] : 1) * sizeof *big);
        }
        for (int t = omp_get_thread_num(); t < nt && out->acc; t += T) {
            long a = n * t / nt, b = n * (t + 1) / nt;
            for (long k = a; k < b; k++)
                out->off[k] += base[t];
            if (!exact && part[t].n)
                memcpy(out->acc + base[t], part[t].acc, part[t].n * sizeof *out->acc);
        }
    }
    out->off[n] = base[nt];
    for (int t = 0; t < nt; t++)
        if (!part[t].borrowed)
            free(part[t].acc);
    if (!exact)
        free(big);
    free(part);
    free(base);
    return out->acc ? LOOM_OK : LOOM_ERR_NOMEM;
}
