/* groups.c — the general serializable plan (seed 000 §7.2.4, after
 * Cyclades): iterations that share a row of an array the loop writes are
 * joined (union-find) into groups; groups never conflict with each
 * other, so each runs serially on one worker while the others run in
 * parallel.  Groups are placed largest first on the least-loaded worker.
 *
 * Several ranks, each with its own iterations (.local): a group that
 * shares a written row with another rank's iterations cannot run at the
 * same time as them, so phase 0 runs the private groups of every rank at
 * once, and phase 1 + p runs rank p's shared groups while the others
 * wait; a barrier separates phases.  With a global range every rank sees
 * every iteration, so groups are placed on all ranks' workers and one
 * phase suffices. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

static uint32_t find(uint32_t *up, uint32_t x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

struct group { uint32_t root; uint32_t size; };
static int by_size(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    return x->size != y->size ? (x->size < y->size ? 1 : -1) : (x->root > y->root) - (x->root < y->root);
}

/* Mark groups that share a written row with another rank (collective). */
static int mark_shared(loom_plan *p, uint32_t *up, int64_t **own, uint8_t **wr, uint8_t *shared)
{
    for (int id = 0; id < LOOM_MAX_ALLOCS; id++) {
        if (!p->written[id])
            continue;
        loom_dsm_alloc *a = loom_dsm_allocs[id];
        int32_t *c = calloc(2 * a->nunits, sizeof *c);
        if (!c)
            return LOOM_ERR_NOMEM;
        for (size_t r = 0; own[id] && r < a->nunits; r++) {
            c[r] = own[id][r] >= 0;
            c[a->nunits + r] = wr[id][r];
        }
        loom_allreduce(LOOM_IN_PLACE, c, 2 * a->nunits, LOOM_INT32, LOOM_SUM);
        for (size_t r = 0; own[id] && r < a->nunits; r++)
            if (own[id][r] >= 0 && c[r] >= 2 && c[a->nunits + r] >= 1)
                shared[find(up, (uint32_t)own[id][r])] = 1;
        free(c);
    }
    return LOOM_OK;
}

int loom_sched_groups_build(loom_plan *p)
{
    int nr = loom_rt_icv.nranks, me = loom_rt_icv.rank, T = p->T, global = !p->local;
    long n = p->acc.n;
    int W = global ? nr * T : T;
    p->nphases = !global && nr > 1 ? 1 + nr : 1;
    uint32_t *up = malloc((size_t)(n + 1) * sizeof *up);
    uint8_t *shared = calloc((size_t)n + 1, 1);
    int64_t **own = calloc(LOOM_MAX_ALLOCS, sizeof *own);
    uint8_t **wr = calloc(LOOM_MAX_ALLOCS, sizeof *wr);
    struct group *g = malloc((size_t)(n + 1) * sizeof *g);
    uint32_t *gid = malloc((size_t)(n + 1) * sizeof *gid); /* root -> worker cell */
    double *load = calloc((size_t)W * (size_t)p->nphases, sizeof *load);
    size_t ncell = (size_t)p->nphases * (size_t)T;
    p->gcell_off = calloc(ncell + 1, sizeof *p->gcell_off);
    p->giters = malloc((size_t)(n + 1) * sizeof *p->giters);
    uint32_t *cellof = NULL;
    int rc = LOOM_ERR_NOMEM;
    if (!up || !shared || !own || !wr || !g || !gid || !load || !p->gcell_off || !p->giters)
        goto out;
    for (long k = 0; k < n; k++)
        up[k] = (uint32_t)k;
    for (long k = 0; k < n; k++)
        for (size_t x = p->acc.off[k]; x < p->acc.off[k + 1]; x++) {
            const loom_acc *e = &p->acc.acc[x];
            if (!p->written[e->alloc])
                continue; /* rows nobody writes never conflict */
            if (!own[e->alloc]) {
                size_t rows = loom_dsm_allocs[e->alloc]->nunits;
                if (!(own[e->alloc] = malloc(rows * sizeof **own)) ||
                    !(wr[e->alloc] = calloc(rows, 1)))
                    goto out;
                memset(own[e->alloc], 0xff, rows * sizeof **own);
            }
            int64_t *o = &own[e->alloc][e->row];
            wr[e->alloc][e->row] |= (uint8_t)e->write;
            if (*o < 0)
                *o = k;
            else
                up[find(up, (uint32_t)k)] = find(up, (uint32_t)*o);
        }
    if (p->nphases > 1 && (rc = mark_shared(p, up, own, wr, shared)))
        goto out;
    /* groups, largest first, each to the least-loaded worker of its phase */
    size_t ng = 0;
    for (long k = 0; k < n; k++)
        gid[k] = 0;
    for (long k = 0; k < n; k++)
        gid[find(up, (uint32_t)k)]++;
    for (long k = 0; k < n; k++)
        if (gid[k])
            g[ng++] = (struct group){(uint32_t)k, gid[k]};
    qsort(g, ng, sizeof *g, by_size);
    for (size_t i = 0; i < ng; i++) {
        int ph = shared[g[i].root] ? 1 + me : 0;
        double *l = load + (size_t)ph * (size_t)W;
        int best = 0;
        for (int w = 1; w < W; w++)
            if (l[w] < l[best])
                best = w;
        l[best] += g[i].size;
        gid[g[i].root] = (uint32_t)(global && best / T != me ? UINT32_MAX
                                                             : (uint32_t)ph * (uint32_t)T + (uint32_t)(best % T));
    }
    /* iteration -> cell (SIZE_MAX: another rank runs it), by its group */
    cellof = malloc((size_t)(n + 1) * sizeof *cellof);
    if (!cellof)
        goto out;
    for (long k = 0; k < n; k++) {
        uint32_t c = gid[find(up, (uint32_t)k)];
        cellof[k] = c;
    }
    /* The injected fault (tests): an iteration that shares a written row
     * with an earlier one of its group goes to another thread. */
    for (long k = 0; loom_sched_break_next_plan && T > 1 && k < n && !p->broken; k++)
        for (size_t x = p->acc.off[k]; x < p->acc.off[k + 1] && !p->broken; x++) {
            const loom_acc *e = &p->acc.acc[x];
            uint32_t c = cellof[k];
            if (p->written[e->alloc] && own[e->alloc][e->row] != k && c != UINT32_MAX) {
                cellof[k] = c / (size_t)T * (size_t)T + (c % (size_t)T + 1) % (size_t)T;
                p->broken = 1;
            }
        }
    if (p->broken)
        loom_sched_break_next_plan = 0;
    rc = loom_sched_bucket(n, cellof, ncell, p->gcell_off, p->giters, NULL, NULL);
out:
    free(cellof);
    for (int id = 0; own && id < LOOM_MAX_ALLOCS; id++) {
        free(own[id]);
        free(wr[id]);
    }
    free(own);
    free(wr);
    free(up);
    free(shared);
    free(g);
    free(gid);
    free(load);
    return rc;
}

/* Contract: collective; phase by phase, this rank's threads run their
 * cells (a group's iterations in index order), then the written rows are
 * released and (several ranks) a barrier ends the phase. */
int loom_sched_groups_run(loom_plan *p)
{
    int nr = loom_rt_icv.nranks, T = p->T;
    if (loom_rt_icv.check_serial)
        loom_sched_check_begin(p);
    for (int ph = 0; ph < p->nphases; ph++) {
        loom_sched_plan_prefetch(p, ph);
        size_t c0 = (size_t)ph * (size_t)T;
        if (p->gcell_off[c0 + (size_t)T] > p->gcell_off[c0]) {
#pragma omp parallel num_threads(T)
            {
                int nt = omp_get_num_threads();
                for (int s = omp_get_thread_num(); s < T; s += nt)
                    for (size_t x = p->gcell_off[c0 + (size_t)s]; x < p->gcell_off[c0 + (size_t)s + 1]; x++)
                        loom_sched_plan_iter(p, p->giters[x], ph);
            }
        }
        if (loom_rt_icv.check_serial)
            loom_sched_check_phase_end(p, ph);
        loom_sched_plan_writeback(p, ph);
        if (nr > 1)
            loom_dsm_barrier();
    }
    return LOOM_OK;
}
