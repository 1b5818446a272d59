/* collect.c — learning what each iteration of a loop reads and writes:
 * by calling the loop's deps callback, or by reconnaissance (seed 000
 * §7.2.2): a dry run of the body in which loom_at records every access and
 * hands out scratch copies for writes, so the model is left untouched. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Appends iteration i's accesses to d: its deps callback, or a dry run
 * of the body in record mode (reconnaissance). */
static void accesses(long i, const loom_body *body, void (*deps)(long, loom_deps *, void *),
                     struct loom_deps *d)
{
    if (deps) {
        deps(i, d, body->ctx);
        return;
    }
    loom_ts.mode = TS_RECORD;
    loom_ts.rec = *d;
    loom_ts.scratch_used = 0;
    loom_body_one(body, i);
    *d = loom_ts.rec;
    loom_ts.rec = (struct loom_deps){0};
    loom_ts.mode = TS_PLAIN;
}

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
            /* a local copy: the threads' entries of part[] share cache lines */
            struct loom_deps d = {big + (size_t)a * GUESS, 0, (size_t)(b - a) * GUESS, 1};
            for (long k = a; k < b; k++) {
                out->off[k] = d.n; /* relative to this slice, fixed below */
                accesses(lo + k, body, deps, &d);
            }
            if (!d.borrowed || d.n != (size_t)(b - a) * GUESS)
                exact = 0; /* written once by each thread that sees it */
            part[t] = d;
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

/* Contract: the k-partite shape's own collection, for the planner only
 * (not collective).  Runs on this rank's threads over slices (taken
 * dynamically), with a four-entry access list per iteration instead of
 * the access sets: out->row[x][k] is the row of allocation out->id[x] that
 * iteration lo + k writes (LOOM_ACC_ROWS: none).  Returns LOOM_OK when
 * every iteration only writes, and at most one row of each of at most two
 * allocations in all; LOOM_PAIR_NO (nothing kept) at the first iteration
 * that does anything else; LOOM_ERR_NOMEM. */
int loom_collect_pair(long lo, long hi, const loom_body *body,
                      void (*deps)(long, loom_deps *, void *), loom_pair *out)
{
    long n = hi > lo ? hi - lo : 0;
    int ns = loom_slices(n, 0);
    *out = (loom_pair){{-1, -1}, {NULL, NULL}};
    int (*ids)[2] = malloc((size_t)ns * sizeof *ids); /* each slice's allocations, by slot */
    uint32_t *row0 = loom_sched_alloc((size_t)(n + 1) * sizeof *row0);
    uint32_t *row1 = loom_sched_alloc((size_t)(n + 1) * sizeof *row1);
    if (!ids || !row0 || !row1) {
        free(ids), free(row0), free(row1);
        return LOOM_ERR_NOMEM;
    }
    int no = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (int x = 0; x < ns; x++) {
        loom_acc buf[4];
        int id[2] = {-1, -1};
        for (long k = loom_slice(n, ns, x); k < loom_slice(n, ns, x + 1); k++) {
            if (k % 4096 == 0 && __atomic_load_n(&no, __ATOMIC_RELAXED))
                break;
            struct loom_deps d = {buf, 0, 4, 1};
            accesses(lo + k, body, deps, &d);
            uint32_t r[2] = {LOOM_ACC_ROWS, LOOM_ACC_ROWS};
            int bad = !d.borrowed;
            for (size_t e = 0; e < d.n && !bad; e++) {
                int y = d.acc[e].alloc == id[0] ? 0 : d.acc[e].alloc == id[1] ? 1
                        : id[0] < 0 ? 0 : id[1] < 0 ? 1 : -1;
                bad = y < 0 || !d.acc[e].write || (r[y] != LOOM_ACC_ROWS && r[y] != d.acc[e].row);
                if (!bad)
                    id[y] = d.acc[e].alloc, r[y] = d.acc[e].row;
            }
            row0[k] = r[0];
            row1[k] = r[1];
            if (!d.borrowed)
                free(d.acc);
            if (bad) {
                __atomic_store_n(&no, 1, __ATOMIC_RELAXED);
                break;
            }
        }
        ids[x][0] = id[0], ids[x][1] = id[1];
    }
    /* one slot per allocation over all slices: a slice that saw them the
     * other way round swaps its two columns */
    for (int x = 0; x < ns && !no; x++)
        for (int y = 0; y < 2; y++) {
            int a = ids[x][y];
            if (a < 0 || a == out->id[0] || a == out->id[1])
                continue;
            if (out->id[1] >= 0)
                no = 1; /* a third allocation */
            else
                out->id[out->id[0] < 0 ? 0 : 1] = a;
        }
#pragma omp parallel for schedule(dynamic, 1)
    for (int x = 0; x < ns * !no; x++) {
        if ((ids[x][0] < 0 || ids[x][0] == out->id[0]) && (ids[x][1] < 0 || ids[x][1] == out->id[1]))
            continue;
        for (long k = loom_slice(n, ns, x); k < loom_slice(n, ns, x + 1); k++) {
            uint32_t r = row0[k];
            row0[k] = row1[k];
            row1[k] = r;
        }
    }
    free(ids);
    if (no) {
        free(row0), free(row1);
        *out = (loom_pair){{-1, -1}, {NULL, NULL}};
        return LOOM_PAIR_NO;
    }
    out->row[0] = row0, out->row[1] = row1;
    return LOOM_OK;
}
