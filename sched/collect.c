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
 * block, so concatenating the threads' buffers keeps the order.  Called by
 * the planner only (not collective). */
int loom_collect(long lo, long hi, void (*body)(long, void *),
                 void (*deps)(long, loom_deps *, void *), void *ctx, loom_accset *out)
{
    long n = hi > lo ? hi - lo : 0;
    memset(out, 0, sizeof *out);
    out->n = n;
    if (!(out->off = malloc((size_t)(n + 1) * sizeof *out->off)))
        return LOOM_ERR_NOMEM;
    int nt = omp_get_max_threads();
    struct loom_deps *part = calloc((size_t)nt, sizeof *part);
    if (!part)
        return LOOM_ERR_NOMEM;
#pragma omp parallel num_threads(nt)
    {
        int T = omp_get_num_threads(); /* may be fewer than asked for */
        for (int t = omp_get_thread_num(); t < nt; t += T) {
            long a = n * t / nt, b = n * (t + 1) / nt;
            struct loom_deps *d = &part[t];
            for (long k = a; k < b; k++) {
                out->off[k] = d->n; /* relative to this block, fixed below */
                if (deps) {
                    deps(lo + k, d, ctx);
                } else {
                    loom_ts.mode = TS_RECORD;
                    loom_ts.rec = *d;
                    loom_ts.scratch_used = 0;
                    body(lo + k, ctx);
                    *d = loom_ts.rec;
                    loom_ts.rec = (struct loom_deps){0};
                    loom_ts.mode = TS_PLAIN;
                }
            }
        }
    }
    size_t total = 0;
    for (int t = 0; t < nt; t++)
        total += part[t].n;
    out->nacc = total;
    out->acc = malloc((total ? total : 1) * sizeof *out->acc);
    size_t base = 0;
    for (int t = 0; t < nt; t++) {
        long a = n * t / nt, b = n * (t + 1) / nt;
        for (long k = a; k < b; k++)
            out->off[k] += base;
        if (part[t].n && out->acc)
            memcpy(out->acc + base, part[t].acc, part[t].n * sizeof *out->acc);
        base += part[t].n;
        free(part[t].acc);
    }
    out->off[n] = total;
    free(part);
    return out->acc ? LOOM_OK : LOOM_ERR_NOMEM;
}
