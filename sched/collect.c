/* collect.c — learning what each iteration of a loop reads and writes:
 * by calling the loop's deps callback, or by reconnaissance (seed 000
 * §7.2.2): a dry run of the body in which loom_at records every access and
 * hands out scratch copies for writes, so the model is left untouched. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* The rows record i names in its fields (UINT64_MAX: none), or stops
 * the job naming the record and the field. */
static void field_rows(const loom_body *b, long i, uint64_t r[2])
{
    for (int x = 0; x < 2; x++) {
        const loom_field *f = &b->fields[x];
        r[x] = f->array ? loom_sched_field_row(f, b->data + (size_t)i * b->size) : UINT64_MAX;
        if (r[x] == UINT64_MAX)
            continue;
        loom_dsm_alloc *a = loom_sched_rows(f->array, "loom_for_records");
        if (r[x] >= a->nunits || r[x] >= LOOM_ACC_ROWS)
            loom_rt_die(2, "loom_for_records: record %ld: .fields[%d] names row %llu of '%s', which "
                     "has %zu rows", i, x, (unsigned long long)r[x], a->name, a->nunits);
    }
}

/* Appends iteration i's accesses to d: the rows its record's fields name
 * (as writes), its deps callback, or a dry run of the body in record
 * mode (reconnaissance). */
static void accesses(long i, const loom_body *body, void (*deps)(long, loom_deps *, void *),
                     struct loom_deps *d)
{
    if (body->fields[0].array || body->fields[1].array) {
        uint64_t r[2];
        field_rows(body, i, r);
        for (int x = 0; x < 2; x++)
            if (r[x] != UINT64_MAX)
                loom_writes(d, body->fields[x].array, (size_t)r[x]);
        return;
    }
    if (deps) {
        deps(i, d, body->ctx);
        return;
    }
    loom_sched_ts.mode = TS_RECORD;
    loom_sched_ts.rec = *d;
    loom_sched_ts.scratch_used = 0;
    loom_sched_body_one(body, i);
    *d = loom_sched_ts.rec;
    loom_sched_ts.rec = (struct loom_deps){0};
    loom_sched_ts.mode = TS_PLAIN;
}

/* Contract: fills *out with the access sets of indices lo..hi-1 in index
 * order.  Runs on this rank's OpenMP threads, each over one contiguous
 * slice of iterations.  out->acc is allocated up front for two accesses
 * per iteration (the common case) and each thread appends straight into
 * its part of it; only when some thread's slice needs another count does
 * the thread continue in a buffer of its own, and the parts are then
 * concatenated in order.  Called by the planner only (not collective). */
int loom_sched_collect(long lo, long hi, const loom_body *body,
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

/* Contract: loom_sched_collect_pair for a record loop with .fields (for.c has
 * checked them): one parallel pass over slices of the records, no call
 * per record.  Slot x is field x, its allocation id kept only if some
 * record names a row of it (as the deps path sees it).  A row out of
 * range stops the job, naming the first such record. */
static int pair_from_fields(long lo, long hi, const loom_body *body, loom_pair *out)
{
    long n = hi > lo ? hi - lo : 0;
    const loom_field *f = body->fields;
    loom_dsm_alloc *a[2] = {NULL, NULL};
    uint64_t lim[2] = {0, 0};
    for (int x = 0; x < 2; x++)
        if (f[x].array) {
            a[x] = loom_sched_rows(f[x].array, "loom_for_records");
            lim[x] = a[x]->nunits < LOOM_ACC_ROWS ? a[x]->nunits : LOOM_ACC_ROWS;
        }
    if (a[0] && a[0] == a[1])
        return LOOM_PAIR_NO; /* two rows of one array: not the pair shape */
    uint32_t *row[2];
    row[0] = loom_sched_alloc((size_t)(n + 1) * sizeof **row);
    row[1] = loom_sched_alloc((size_t)(n + 1) * sizeof **row);
    if (!row[0] || !row[1]) {
        free(row[0]), free(row[1]);
        return LOOM_ERR_NOMEM;
    }
    int ns = loom_sched_slices(n, 0), seen0 = 0, seen1 = 0;
    long bad = n;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : seen0, seen1) reduction(min : bad)
    for (int x = 0; x < ns; x++) {
        long k0 = loom_sched_slice(n, ns, x), k1 = loom_sched_slice(n, ns, x + 1);
        const char *rec = body->data + (size_t)(lo + k0) * body->size;
        for (long k = k0; k < k1; k++, rec += body->size) {
            uint64_t r0 = a[0] ? loom_sched_field_row(&f[0], rec) : UINT64_MAX;
            uint64_t r1 = a[1] ? loom_sched_field_row(&f[1], rec) : UINT64_MAX;
            if ((r0 != UINT64_MAX && r0 >= lim[0]) || (r1 != UINT64_MAX && r1 >= lim[1])) {
                bad = k < bad ? k : bad;
                break;
            }
            seen0 |= r0 != UINT64_MAX;
            seen1 |= r1 != UINT64_MAX;
            row[0][k] = (uint32_t)r0; /* none: UINT32_MAX, LOOM_ACC_ROWS */
            row[1][k] = (uint32_t)r1;
        }
    }
    if (bad < n) {
        uint64_t r[2];
        field_rows(body, lo + bad, r); /* stops the job */
    }
    *out = (loom_pair){{seen0 ? a[0]->id : -1, seen1 ? a[1]->id : -1}, {row[0], row[1]}};
    return LOOM_OK;
}

/* Contract: the k-partite shape's own collection, for the planner only
 * (not collective).  Runs on this rank's threads over slices (taken
 * dynamically), with a four-entry access list per iteration instead of
 * the access sets: out->row[x][k] is the row of allocation out->id[x] that
 * iteration lo + k writes (LOOM_ACC_ROWS: none).  Returns LOOM_OK when
 * every iteration only writes, and at most one row of each of at most two
 * allocations in all; LOOM_PAIR_NO (nothing kept) at the first iteration
 * that does anything else; LOOM_ERR_NOMEM. */
int loom_sched_collect_pair(long lo, long hi, const loom_body *body,
                      void (*deps)(long, loom_deps *, void *), loom_pair *out)
{
    if (body->fields[0].array || body->fields[1].array)
        return pair_from_fields(lo, hi, body, out);
    long n = hi > lo ? hi - lo : 0;
    int ns = loom_sched_slices(n, 0);
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
        for (long k = loom_sched_slice(n, ns, x); k < loom_sched_slice(n, ns, x + 1); k++) {
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
        for (long k = loom_sched_slice(n, ns, x); k < loom_sched_slice(n, ns, x + 1); k++) {
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
