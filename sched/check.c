/* check.c — the serializability checker (LOOM_CHECK=serial).
 *
 * While a serializable loop runs, every access of every iteration (what
 * its deps declared, plus what its body really touched through loom_at)
 * is checked against the ordering the plan provides:
 *   - a row of the rotated array B may be touched only while the worker
 *     holds that row's sub-block, inside the partition its rank owns in
 *     this sub-epoch (holds and ring hand-offs order all such accesses);
 *   - any other row may be touched, within one phase (the interval between
 *     two job-wide synchronizations), by one worker only if anybody writes
 *     it.  Inside a rank, per-row tags (phase, thread, iteration) catch two
 *     threads at once; at the end of each phase the ranks sum who touched
 *     and who wrote each row, which catches two ranks.
 * A violation stops the job (exit 72) naming both iterations and the row.
 * The tags are exchanged with atomics (write: publish then look at the
 * readers; read: publish then look at the writer), so of two racing
 * accesses at least one sees the other. */
#include "sched.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MANY 0xffffu /* the reader tag's thread when several threads read */

static _Atomic uint64_t *wtag[LOOM_MAX_ALLOCS], *rtag[LOOM_MAX_ALLOCS];
static size_t trows[LOOM_MAX_ALLOCS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static loom_plan *cur;
static __thread int th_q = -1, th_j = -1, th_phase;
static __thread long th_k;

static uint64_t tag(int phase, unsigned worker, long k)
{
    return (uint64_t)(phase + 1) << 48 | (uint64_t)(worker & 0xffff) << 32 | (uint32_t)k;
}
static int tag_phase(uint64_t t) { return (int)(t >> 48) - 1; }
static unsigned tag_worker(uint64_t t) { return (unsigned)(t >> 32) & 0xffff; }
static long tag_iter(uint64_t t) { return (long)(uint32_t)t; }

/* The tables of allocation a, made on first use (any thread). */
static void tables(loom_dsm_alloc *a)
{
    pthread_mutex_lock(&table_lock);
    if (!wtag[a->id] || trows[a->id] != a->nunits) {
        free(wtag[a->id]);
        free(rtag[a->id]);
        wtag[a->id] = calloc(a->nunits, sizeof **wtag);
        rtag[a->id] = calloc(a->nunits, sizeof **rtag);
        if (!wtag[a->id] || !rtag[a->id])
            loom_rt_die(2, "check: out of memory for the tables of '%s'", a->name);
        trows[a->id] = a->nunits;
    }
    pthread_mutex_unlock(&table_lock);
}

void loom_sched_check_begin(loom_plan *p)
{
    cur = p;
    for (int id = 0; id < LOOM_MAX_ALLOCS; id++)
        if (wtag[id]) {
            if (!loom_dsm_allocs[id] || trows[id] != loom_dsm_allocs[id]->nunits) {
                free(wtag[id]);
                free(rtag[id]);
                wtag[id] = rtag[id] = NULL;
                continue;
            }
            memset((void *)wtag[id], 0, trows[id] * sizeof **wtag);
            memset((void *)rtag[id], 0, trows[id] * sizeof **rtag);
        }
}

void loom_sched_check_hold(int q, int j)
{
    th_q = q;
    th_j = j;
}

__attribute__((noreturn)) static void violation(long k, long other, const char *who, size_t row,
                                                loom_dsm_alloc *a, const char *why)
{
    char o[64];
    if (other >= 0)
        snprintf(o, sizeof o, "%ld", cur->first + other);
    else
        snprintf(o, sizeof o, "(none recorded)");
    loom_abort(72, "check: serializability violated: iterations %ld and %s%s both touch row %zu "
               "of '%s' %s", cur->first + k, o, who, row, a->name, why);
}

/* An iteration of cell (q, j, *) other than k whose accesses include row
 * of B: the one the sub-block's holder runs. */
static long holder_iteration(const loom_plan *p, int q, int j, size_t row, long k)
{
    for (int s = 0; s < p->T; s++) {
        size_t c = ((size_t)q * (size_t)p->S + (size_t)j) * (size_t)p->T + (size_t)s;
        for (size_t x = p->cell_off[c]; x < p->cell_off[c + 1]; x++) {
            long i = p->iters[x];
            for (size_t y = p->acc.off[i]; y < p->acc.off[i + 1] && i != k; y++)
                if ((int)p->acc.acc[y].alloc == p->b_id && p->acc.acc[y].row == row)
                    return i;
        }
    }
    return -1;
}

static void check_one(loom_dsm_alloc *a, size_t row, int write)
{
    loom_plan *p = cur;
    long k = th_k;
    if (p->kind == PLAN_ROTATION && a->id == p->b_id) {
        int j, q = loom_sched_rotation_part(p, row, &j);
        if (q == th_q && j == th_j)
            return;
        char why[160];
        snprintf(why, sizeof why, "at once: the row is in sub-block %d of partition %d, and "
                 "thread %d holds sub-block %d of partition %d", j, q, omp_get_thread_num(),
                 th_j, th_q);
        violation(k, holder_iteration(p, q, j, row, k), "", row, a, why);
    }
    if (!wtag[a->id] || trows[a->id] != a->nunits)
        tables(a);
    unsigned w = (unsigned)omp_get_thread_num();
    uint64_t me = tag(th_phase, w, k);
    _Atomic uint64_t *W = &wtag[a->id][row], *Rd = &rtag[a->id][row];
    uint64_t seen;
    if (write) {
        seen = atomic_exchange(W, me);
        if (tag_phase(seen) == th_phase && tag_worker(seen) != w)
            violation(k, tag_iter(seen), " (another thread)", row, a, "in one phase, both writing");
        seen = atomic_load(Rd);
        if (tag_phase(seen) == th_phase && tag_worker(seen) != w)
            violation(k, tag_iter(seen), " (another thread)", row, a,
                      "in one phase, one writing and one reading");
        return;
    }
    uint64_t old = atomic_load(Rd), want;
    do {
        if (tag_phase(old) == th_phase && (tag_worker(old) == w || tag_worker(old) == MANY))
            break;
        want = tag_phase(old) == th_phase ? tag(th_phase, MANY, tag_iter(old)) : me;
    } while (!atomic_compare_exchange_weak(Rd, &old, want));
    seen = atomic_load(W);
    if (tag_phase(seen) == th_phase && tag_worker(seen) != w)
        violation(k, tag_iter(seen), " (another thread)", row, a,
                  "in one phase, one writing and one reading");
}

void loom_sched_check_iter(loom_plan *p, long k, int phase)
{
    cur = p;
    th_k = k;
    th_phase = phase;
    for (size_t x = p->acc.off[k]; x < p->acc.off[k + 1]; x++)
        check_one(loom_dsm_allocs[p->acc.acc[x].alloc], p->acc.acc[x].row, (int)p->acc.acc[x].write);
}

void loom_sched_check_access(loom_dsm_alloc *a, size_t row, int write)
{
    if (cur)
        check_one(a, row, write);
}

/* Contract: collective at the end of each phase of a checked loop with
 * several ranks.  Sums, per row of every array with tables (but the
 * rotated one), the ranks that touched it and wrote it in this phase; a
 * row touched by two ranks and written by one stops the job. */
void loom_sched_check_phase_end(loom_plan *p, int phase)
{
    if (loom_rt_icv.nranks == 1)
        return;
    int32_t *has = calloc(LOOM_MAX_ALLOCS, sizeof *has);
    if (!has)
        loom_rt_die(2, "check: out of memory");
    for (int id = 0; id < LOOM_MAX_ALLOCS; id++)
        has[id] = wtag[id] && loom_dsm_allocs[id] && !(p->kind == PLAN_ROTATION && id == p->b_id);
    loom_allreduce(LOOM_IN_PLACE, has, LOOM_MAX_ALLOCS, LOOM_INT32, LOOM_MAX);
    for (int id = 0; id < LOOM_MAX_ALLOCS; id++) {
        if (!has[id])
            continue;
        loom_dsm_alloc *a = loom_dsm_allocs[id];
        if (!wtag[id])
            tables(a);
        size_t n = a->nunits;
        int32_t *c = calloc(2 * n, sizeof *c);
        if (!c)
            loom_rt_die(2, "check: out of memory");
        for (size_t r = 0; r < n; r++) {
            int wrote = tag_phase(wtag[id][r]) == phase;
            c[r] = wrote || tag_phase(rtag[id][r]) == phase;
            c[n + r] = wrote;
        }
        loom_allreduce(LOOM_IN_PLACE, c, 2 * n, LOOM_INT32, LOOM_SUM);
        size_t bad = n;
        for (size_t r = 0; r < n && bad == n; r++)
            if (c[r] >= 2 && c[n + r] >= 1)
                bad = r;
        free(c);
        if (bad == n)
            continue;
        uint64_t t = tag_phase(wtag[id][bad]) == phase ? wtag[id][bad]
                     : tag_phase(rtag[id][bad]) == phase ? rtag[id][bad] : 0;
        int64_t mine[2] = {t ? tag_iter(t) + p->first : -1, loom_rt_icv.rank};
        int64_t *all = calloc((size_t)loom_rt_icv.nranks * 2, sizeof *all);
        if (!all)
            loom_rt_die(2, "check: out of memory");
        loom_rt_allgather(mine, all, sizeof mine);
        int r1 = -1, r2 = -1;
        for (int r = 0; r < loom_rt_icv.nranks; r++)
            if (all[2 * r] >= 0) {
                if (r1 < 0)
                    r1 = r;
                else if (r2 < 0)
                    r2 = r;
            }
        loom_abort(72, "check: serializability violated: iterations %lld (rank %d) and %lld "
                   "(rank %d) both touch row %zu of '%s' in one phase, one of them writing",
                   (long long)all[2 * r1], r1, (long long)all[2 * r2], r2, bad, a->name);
    }
    free(has);
}
