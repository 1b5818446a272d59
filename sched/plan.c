/* plan.c — from access sets to a plan for a serializable loop: which plan
 * fits, the plan cache of repeated loops (IterStore's virtual iteration,
 * seed 003), histogram-balanced blocks, and the per-phase row lists that
 * are prefetched before and released after each phase.
 *
 * A loop is k-partite (seed 001 §3, seed 000 ch. 4) when the arrays it
 * writes number at most two and each iteration touches at most one row of
 * each: it then runs as a block rotation (rotation.c).  Any other loop runs
 * as conflict-free groups (groups.c). */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

int loom_sched_break_next_plan, loom_sched_general;

#define CACHE 16
static loom_plan *cache[CACHE];
static int ncache;

void loom_sched_balance(const uint32_t *w, size_t lo, size_t hi, int k, size_t *bounds)
{
    bounds[0] = lo;
    bounds[k] = hi;
    if (!w) {
        for (int b = 1; b < k; b++)
            bounds[b] = lo + (hi - lo) * (size_t)b / (size_t)k;
        return;
    }
    double total = 0;
    for (size_t r = lo; r < hi; r++)
        total += w[r];
    double cum = 0;
    size_t r = lo;
    for (int b = 1; b < k; b++) {
        double target = total * b / k;
        while (r < hi && cum + w[r] / 2.0 < target)
            cum += w[r++];
        bounds[b] = r;
    }
}

/* The arrays a loop touches and writes, on any rank: flags per
 * allocation id, from the access sets or (pair, when s has none) the
 * k-partite shape's two written arrays.  Collective in local mode with
 * several ranks. */
static void arrays_of(const loom_accset *s, const loom_pair *pair, int global, int32_t *touched,
                      int32_t *written)
{
    memset(touched, 0, LOOM_MAX_ALLOCS * sizeof *touched);
    memset(written, 0, LOOM_MAX_ALLOCS * sizeof *written);
    for (size_t i = 0; i < s->nacc; i++) {
        touched[s->acc[i].alloc] = 1;
        written[s->acc[i].alloc] |= (int32_t)s->acc[i].write;
    }
    for (int x = 0; !s->acc && x < 2; x++)
        if (pair->id[x] >= 0)
            touched[pair->id[x]] = written[pair->id[x]] = 1;
    if (!global && loom_rt_icv.nranks > 1) {
        loom_allreduce(LOOM_IN_PLACE, touched, LOOM_MAX_ALLOCS, LOOM_INT32, LOOM_MAX);
        loom_allreduce(LOOM_IN_PLACE, written, LOOM_MAX_ALLOCS, LOOM_INT32, LOOM_MAX);
    }
}

/* 1 if every iteration touches at most one row of each written array. */
static int one_row_each(const loom_accset *s, const int32_t *written)
{
    int ok = 1;
#pragma omp parallel for schedule(static) reduction(&& : ok)
    for (long k = 0; k < s->n; k++)
        for (size_t x = s->off[k]; x < s->off[k + 1]; x++)
            for (size_t y = s->off[k]; y < x; y++)
                if (s->acc[x].alloc == s->acc[y].alloc && written[s->acc[x].alloc] &&
                    s->acc[x].row != s->acc[y].row)
                    ok = 0;
    return ok;
}

/* 1 if allocation id rotates ownership (ring): the loop rotates it. */
static int is_ring(int id) { return loom_dsm_policy_rotates(loom_dsm_allocs[id]->policy); }

/* Pick the plan and the rotation's roles (`pair`: the iterations are
 * known to have the k-partite shape).  Collective.  Returns LOOM_OK or an
 * error after a message. */
static int choose(loom_plan *p, int pair, const int32_t *touched, const int32_t *written)
{
    int w[LOOM_MAX_ALLOCS], nw = 0, R = loom_rt_icv.nranks;
    for (int id = 0; id < LOOM_MAX_ALLOCS; id++) {
        if (!touched[id])
            continue;
        loom_dsm_alloc *a = loom_dsm_allocs[id];
        if (R > 1 && !is_ring(id) && a->staleness > 0) {
            loom_rt_log("loom_for: serializable loops need bsp or ring arrays; '%s' is %s with "
                     "staleness %d", a->name, a->policy->name, a->staleness);
            return LOOM_ERR_ARG;
        }
        if (written[id])
            w[nw++] = id;
        else if (R > 1 && is_ring(id)) {
            loom_rt_log("loom_for: the loop reads ring array '%s' but never writes it; a "
                     "serializable loop rotates only the arrays it writes", a->name);
            return LOOM_ERR_ARG;
        }
    }
    int32_t ok = nw <= 2 && (pair || one_row_each(&p->acc, written));
    if (!p->local || R == 1)
        ; /* every rank saw the same iterations */
    else
        loom_allreduce(LOOM_IN_PLACE, &ok, 1, LOOM_INT32, LOOM_MIN);
    int nring = 0;
    for (int i = 0; i < nw; i++)
        nring += R > 1 && is_ring(w[i]);
    if (nring > 1) {
        loom_rt_log("loom_for: '%s' and '%s' are both ring arrays; a serializable loop rotates one "
                 "array and keeps the other with the data", loom_dsm_allocs[w[0]]->name,
                 loom_dsm_allocs[w[1]]->name);
        return LOOM_ERR_ARG;
    }
    if (!ok || (R > 1 && nw == 2 && nring == 0)) {
        if (nring) {
            loom_rt_log("loom_for: this loop writes ring array '%s' but is not k-partite (at most "
                     "two written arrays, one row of each per iteration)", loom_dsm_allocs[w[0]]->name);
            return LOOM_ERR_ARG;
        }
        p->kind = PLAN_GROUPS;
        return LOOM_OK;
    }
    p->kind = PLAN_ROTATION;
    p->a_id = p->b_id = -1;
    if (nw == 2) { /* B rotates: the ring one, else the second */
        int b = is_ring(w[0]) && R > 1 ? 0 : 1;
        p->b_id = w[b];
        p->a_id = w[1 - b];
    } else if (nw == 1) {
        if (R > 1 && is_ring(w[0]))
            p->b_id = w[0];
        else
            p->a_id = w[0];
    }
    return LOOM_OK;
}

int loom_sched_plan_rowlist(loom_plan *p, int phase, int id, uint8_t *mark)
{
    loom_dsm_alloc *a = loom_dsm_allocs[id];
    size_t n = 0;
    for (size_t r = 0; r < a->nunits; r++)
        n += mark[r] != 0;
    if (!n)
        return LOOM_OK;
    struct loom_rowlist *rl = realloc(p->rl, (size_t)(p->nrl + 1) * sizeof *rl);
    if (!rl)
        return LOOM_ERR_NOMEM;
    p->rl = rl;
    rl = &p->rl[p->nrl++];
    *rl = (struct loom_rowlist){phase, id, 0, malloc(n * sizeof(size_t)), malloc(n)};
    if (!rl->rows || !rl->written)
        return LOOM_ERR_NOMEM;
    for (size_t r = 0; r < a->nunits; r++)
        if (mark[r]) {
            rl->rows[rl->n] = r;
            rl->written[rl->n++] = mark[r] >> 1;
            mark[r] = 0;
        }
    return LOOM_OK;
}

/* Rows of non-ring, coherent arrays that this rank's iterations in each
 * phase touch, from the access sets (without them, a rotation made its
 * own list).  Several ranks only. */
static int rowlists(loom_plan *p, const int32_t *touched)
{
    if (loom_rt_icv.nranks == 1 || !p->acc.acc)
        return LOOM_OK;
    int nph = p->kind == PLAN_ROTATION ? 1 : p->nphases;
    for (int id = 0; id < LOOM_MAX_ALLOCS; id++) {
        if (!touched[id] || is_ring(id) || !loom_dsm_allocs[id]->state)
            continue;
        uint8_t *mark = calloc(loom_dsm_allocs[id]->nunits, 1);
        if (!mark)
            return LOOM_ERR_NOMEM;
        int rc = LOOM_OK;
        for (int ph = 0; ph < nph && !rc; ph++) {
            const uint32_t *off = p->kind == PLAN_ROTATION ? p->cell_off : p->gcell_off;
            const uint32_t *it = p->kind == PLAN_ROTATION ? p->iters : p->giters;
            size_t c0 = p->kind == PLAN_ROTATION ? 0 : (size_t)ph * (size_t)p->T;
            size_t c1 = p->kind == PLAN_ROTATION ? (size_t)p->R * p->S * p->T : c0 + (size_t)p->T;
            for (size_t x = off[c0]; x < off[c1]; x++) {
                long k = it[x];
                for (size_t y = p->acc.off[k]; y < p->acc.off[k + 1]; y++)
                    if ((int)p->acc.acc[y].alloc == id)
                        mark[p->acc.acc[y].row] |= (uint8_t)(1 | (p->acc.acc[y].write ? 2 : 0));
            }
            rc = loom_sched_plan_rowlist(p, ph, id, mark);
        }
        free(mark);
        if (rc)
            return rc;
    }
    return LOOM_OK;
}

void loom_sched_plan_prefetch(loom_plan *p, int phase)
{
    for (int i = 0; i < p->nrl; i++)
        if (p->rl[i].phase == phase)
            loom_row_prefetch(loom_dsm_allocs[p->rl[i].alloc]->base, p->rl[i].rows, p->rl[i].n);
}

void loom_sched_plan_writeback(loom_plan *p, int phase)
{
    for (int i = 0; i < p->nrl; i++)
        if (p->rl[i].phase == phase)
            for (size_t r = 0; r < p->rl[i].n; r++)
                if (p->rl[i].written[r])
                    loom_dsm_row_mark_put(loom_dsm_allocs[p->rl[i].alloc], p->rl[i].rows[r]);
}

void loom_sched_plan_iter(loom_plan *p, long k, int phase)
{
    if (__builtin_expect(loom_rt_icv.check_serial, 0)) {
        loom_sched_check_iter(p, k, phase);
        loom_sched_ts.mode = TS_CHECK;
        loom_sched_body_one(&p->body, p->first + k);
        loom_sched_ts.mode = TS_PLAIN;
    } else {
        loom_sched_body_one(&p->body, p->first + k);
    }
}

void loom_sched_plan_free(loom_plan *p)
{
    if (!p)
        return;
    loom_sched_accset_free(&p->acc);
    for (int i = 0; i < p->nrl; i++) {
        free(p->rl[i].rows);
        free(p->rl[i].written);
    }
    free(p->rl);
    free(p->bbounds);
    free(p->sub);
    free(p->abounds);
    free(p->cell_off);
    free(p->iters);
    free(p->recs);
    free(p->gcell_off);
    free(p->giters);
    free(p);
}

static int same_body(const loom_body *a, const loom_body *b)
{
    return a->one == b->one && a->block == b->block && a->data == b->data &&
           a->size == b->size && a->ctx == b->ctx;
}

/* The rows of A and B each iteration touches, from its access set: new
 * arrays in *arow and *brow (LOOM_ACC_ROWS for none). */
static int roles_from_acc(const loom_plan *p, uint32_t **arow, uint32_t **brow)
{
    long n = p->acc.n;
    uint32_t *a = *arow = loom_sched_alloc((size_t)(n + 1) * sizeof *a);
    uint32_t *b = *brow = loom_sched_alloc((size_t)(n + 1) * sizeof *b);
    if (!a || !b)
        return LOOM_ERR_NOMEM;
#pragma omp parallel for schedule(dynamic, 1 << 16)
    for (long k = 0; k < n; k++) {
        a[k] = b[k] = LOOM_ACC_ROWS;
        for (size_t x = p->acc.off[k]; x < p->acc.off[k + 1]; x++) {
            if ((int)p->acc.acc[x].alloc == p->a_id)
                a[k] = p->acc.acc[x].row;
            if ((int)p->acc.acc[x].alloc == p->b_id)
                b[k] = p->acc.acc[x].row;
        }
    }
    return LOOM_OK;
}

/* Contract: collective.  Builds fresh plan p for its loop site.  The
 * k-partite shape (loom_sched_collect_pair: every iteration writes at most one
 * row of each of two arrays) goes from rows straight to the rotation's
 * layout; any other loop, or one the checker runs, has its access sets
 * collected (loom_sched_collect).  Outside LOOM_CHECK=serial the access sets
 * are dropped once the plan is built.  With LOOM_STATS, prints how long
 * planning took. */
static int build(loom_plan *p, void (*deps)(long, loom_deps *, void *))
{
    double t0 = loom_wtime();
    loom_pair pair = {{-1, -1}, {NULL, NULL}};
    int32_t *touched = malloc(2 * LOOM_MAX_ALLOCS * sizeof *touched);
    int rc = !touched ? LOOM_ERR_NOMEM
             : loom_sched_general ? LOOM_PAIR_NO
             : loom_sched_collect_pair(p->begin, p->end, &p->body, deps, &pair);
    int fast = rc == LOOM_OK;
    if (rc == LOOM_PAIR_NO || (fast && loom_rt_icv.check_serial)) /* the checker's real sets */
        rc = loom_sched_collect(p->begin, p->end, &p->body, deps, &p->acc);
    p->acc.n = p->end - p->begin;
    double t1 = loom_wtime();
    if (!rc) {
        int32_t *written = touched + LOOM_MAX_ALLOCS;
        arrays_of(&p->acc, &pair, !p->local, touched, written);
        for (int id = 0; id < LOOM_MAX_ALLOCS; id++) {
            p->written[id] = written[id] != 0;
            p->uses[id] = touched[id] != 0;
        }
        rc = choose(p, fast, touched, written);
        if (!rc && p->kind == PLAN_GROUPS && !p->acc.acc)
            rc = loom_sched_collect(p->begin, p->end, &p->body, deps, &p->acc);
        if (!rc && p->kind == PLAN_GROUPS) {
            rc = loom_sched_groups_build(p);
        } else if (!rc && fast) { /* the slot of A's rows, then B's */
            int xa = (p->a_id >= 0 && pair.id[1] == p->a_id) || (p->a_id < 0 && pair.id[0] == p->b_id);
            rc = loom_sched_rotation_build(p, pair.row[xa], pair.row[1 - xa]);
        } else if (!rc) {
            uint32_t *arow = NULL, *brow = NULL;
            rc = roles_from_acc(p, &arow, &brow);
            if (!rc)
                rc = loom_sched_rotation_build(p, arow, brow);
            free(arow);
            free(brow);
        }
        if (!rc)
            rc = rowlists(p, touched);
    }
    free(touched);
    free(pair.row[0]);
    free(pair.row[1]);
    if (!rc && !loom_rt_icv.check_serial) { /* the plan has all it needs */
        free(p->acc.off);
        free(p->acc.acc);
        p->acc.off = NULL;
        p->acc.acc = NULL;
        p->acc.nacc = 0;
    }
    if (!rc && loom_rt_icv.stats)
        loom_rt_log("loom_for: planned %ld iterations in %.3f s (%s %.3f s, %s plan %.3f s; %d "
                 "sub-blocks a partition)",
                 p->acc.n, loom_wtime() - t0, fast ? "rows of two arrays" : "access sets",
                 t1 - t0, p->kind == PLAN_ROTATION ? "rotation" : "groups", loom_wtime() - t1,
                 p->kind == PLAN_ROTATION ? p->S : 0);
    return rc;
}

/* Contract: collective (every rank, same loop call).  Returns the cached
 * plan of a repeated loop site (same body, ctx, records, range, mode and
 * thread count), else a new plan, cached when o->repeated.  Loop sites are
 * keyed by body, ctx and records: a repeated loop whose data changed must
 * get a new ctx (or records) or drop .repeated.  Outside LOOM_CHECK=serial
 * the access sets are dropped once the plan is built. */
loom_plan *loom_sched_plan_get(long begin, long end, const loom_body *body, const loom_for_opts *o)
{
    int T = omp_get_max_threads(), local = !!o->local || loom_rt_icv.nranks == 1;
    for (int i = 0; o->repeated && i < ncache; i++) {
        loom_plan *c = cache[i];
        if (same_body(&c->body, body) && c->begin == begin && c->end == end &&
            c->local == local && c->nthreads == T)
            return c;
    }
    loom_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    *p = (loom_plan){.body = *body, .begin = begin, .end = end,
                     .local = local, .nthreads = T, .first = begin,
                     .T = T, .a_id = -1, .b_id = -1};
    int rc = build(p, o->deps);
    if (rc) {
        if (rc == LOOM_ERR_NOMEM)
            loom_rt_log("loom_for: out of memory planning a loop of %ld iterations", end - begin);
        loom_sched_plan_free(p);
        return NULL;
    }
    if (o->repeated) {
        if (ncache == CACHE)
            loom_sched_plan_free(cache[--ncache]);
        memmove(cache + 1, cache, (size_t)ncache * sizeof *cache);
        cache[0] = p;
        ncache++;
    }
    return p;
}

/* Drop the cached plans that use allocation a (loom_free's hook), the
 * ordered schedule's too. */
static void forget(const loom_dsm_alloc *a)
{
    loom_sched_ordered_forget(a);
    for (int i = 0; i < ncache;) {
        loom_plan *c = cache[i];
        if (c->uses[a->id]) {
            loom_sched_plan_free(c);
            memmove(cache + i, cache + i + 1, (size_t)(--ncache - i) * sizeof *cache);
        } else {
            i++;
        }
    }
}

void loom_sched_init(void)
{
    loom_dsm_on_free(forget);
}

int loom_sched_plan_cached(const loom_plan *p)
{
    for (int i = 0; i < ncache; i++)
        if (cache[i] == p)
            return 1;
    return 0;
}

int loom_sched_plan_run(loom_plan *p)
{
    return p->kind == PLAN_ROTATION ? loom_sched_rotation_run(p) : loom_sched_groups_run(p);
}
