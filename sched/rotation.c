/* rotation.c — the k-partite block-rotation plan (STRADS-Static, seed 000
 * ch. 4; Orion's unordered 2D schedule, seed 001 §3).
 *
 * Each iteration touches at most one row of array A (pinned: it stays with
 * the worker that runs the iteration) and one row of array B (rotated).
 * A's rows are cut into one block per worker (threads of this rank, or of
 * every rank when the range is global), balanced by a histogram of
 * iterations per row.  B's rows are cut into R partitions (R = ranks when
 * B is a ring array, else 1), also by histogram, and each partition into S
 * sub-blocks.  Cell (q, j, s) holds the iterations with B in sub-block j
 * of partition q and A in worker s's block.
 *
 * Running: in sub-epoch t the rank owns ring partition q (ring policy,
 * across ranks).  Inside the rank, every thread must visit each sub-block
 * of q once; sub-blocks are held exclusively (an atomic flag, acquire/
 * release), and a free thread takes the heaviest free sub-block it still
 * needs (heavy jobs first).  No two threads touch the same A block or the
 * same B sub-block at once, so the loop equals a serial execution. */
#include "sched.h"

#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define SUBS 2 /* sub-blocks per thread in a partition: room for a free thread to move on */



/* The block b with bounds[b] <= row < bounds[b+1] (k blocks). */
static int block_of(const size_t *bounds, int k, size_t row)
{
    int lo = 0, hi = k;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (bounds[mid] <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int loom_rotation_part(const loom_plan *p, size_t row, int *j)
{
    int q = block_of(p->bbounds, p->R, row);
    *j = block_of(p->sub + (size_t)q * (size_t)(p->S + 1), p->S, row);
    return q;
}

/* Contract: with several ranks and a rotation over A, no row of A may be
 * touched by two ranks' iterations (each rank keeps its A rows).
 * Collective.  Returns LOOM_OK or LOOM_ERR_ARG after a message. */
static int pinned_disjoint(loom_dsm_alloc *A, const uint32_t *wa)
{
    int32_t *c = malloc(A->nunits * sizeof *c);
    if (!c)
        return LOOM_ERR_NOMEM;
    for (size_t r = 0; r < A->nunits; r++)
        c[r] = wa[r] != 0;
    loom_allreduce(LOOM_IN_PLACE, c, A->nunits, LOOM_INT32, LOOM_SUM);
    size_t bad = A->nunits;
    for (size_t r = 0; r < A->nunits && bad == A->nunits; r++)
        if (c[r] > 1)
            bad = r;
    free(c);
    if (bad == A->nunits)
        return LOOM_OK;
    loom_log("loom_for: row %zu of '%s' is touched by iterations on several ranks; with .local, "
             "partition the data so each rank's iterations keep to their own rows of '%s' "
             "(or pass the whole range without .local)", bad, A->name, A->name);
    return LOOM_ERR_ARG;
}

/* Adds 1 to w[row[k]] for each k < n with a row (and, with mine, with
 * mine[k] != SIZE_MAX: this rank's iterations).  Parallel: a histogram per
 * thread, then summed.  Returns LOOM_OK or LOOM_ERR_NOMEM. */
static int histogram(const uint32_t *row, long n, const uint32_t *mine, uint32_t *w, size_t rows)
{
    int nt = omp_get_max_threads();
    uint32_t *h = calloc((size_t)nt * rows, sizeof *h);
    if (!h)
        return LOOM_ERR_NOMEM;
#pragma omp parallel num_threads(nt)
    {
        uint32_t *my = h + (size_t)omp_get_thread_num() * rows;
#pragma omp for schedule(static)
        for (long k = 0; k < n; k++)
            if (row[k] != NONE && (!mine || mine[k] != NONE))
                my[row[k]]++;
#pragma omp for schedule(static)
        for (size_t r = 0; r < rows; r++)
            for (int t = 0; t < nt; t++)
                w[r] += h[(size_t)t * rows + r];
    }
    free(h);
    return LOOM_OK;
}

/* worker[k]: the worker block (of W) that runs iteration k, by its row of
 * A (iterations without one are dealt round-robin). */
static inline int worker_of(const loom_plan *p, const uint32_t *arow, int W, long k)
{
    return arow[k] != NONE ? block_of(p->abounds, W, arow[k]) : (int)(k % W);
}

/* Contract: fills p->cell_off, p->iters (and p->recs) with the
 * iterations by cell (q, j, s), ordered inside a cell by row of A, so a
 * cell walks its rows of A in order.  When every iteration of this rank
 * has a row of A and the keys fit, that is one histogram-and-scatter over
 * the key (q, j, row of A): worker s's rows of A are the contiguous range
 * abounds[base + s ...], so each cell is a run of keys.  Otherwise two
 * stable passes, by row of A (into *byrow) and then by cell.  cell[] may
 * be rewritten.  Returns LOOM_OK or LOOM_ERR_NOMEM. */
static int layout(loom_plan *p, long n, const uint32_t *arow, uint32_t *cell, size_t ncell,
                  int base, uint32_t **byrow)
{
    int T = p->T;
    size_t nA = p->a_id >= 0 ? loom_allocs[p->a_id]->nunits : 0, nqj = ncell / (size_t)T;
    if (!nA)
        return loom_bucket(n, cell, ncell, NULL, p->cell_off, p->iters, &p->body, p->recs);
    long unplaced = 0;
#pragma omp parallel for schedule(static) reduction(+ : unplaced)
    for (long k = 0; k < n; k++)
        unplaced += cell[k] != NONE && arow[k] == NONE;
    if (!unplaced && (uint64_t)nqj * nA < NONE) {
        size_t *koff = malloc((nqj * nA + 1) * sizeof *koff);
        if (!koff)
            return LOOM_ERR_NOMEM;
#pragma omp parallel for schedule(static)
        for (long k = 0; k < n; k++)
            if (cell[k] != NONE)
                cell[k] = cell[k] / (uint32_t)T * (uint32_t)nA + arow[k];
        int rc = loom_bucket(n, cell, nqj * nA, NULL, koff, p->iters, &p->body, p->recs);
        for (size_t qj = 0; qj < nqj; qj++)
            for (int s = 0; s < T; s++)
                p->cell_off[qj * (size_t)T + (size_t)s] = koff[qj * nA + p->abounds[base + s]];
        p->cell_off[ncell] = koff[nqj * nA];
        free(koff);
        return rc;
    }
    size_t *aoff = malloc((nA + 1) * sizeof *aoff);
    int rc = aoff ? loom_bucket(n, arow, nA, NULL, aoff, p->iters, NULL, NULL) : LOOM_ERR_NOMEM;
    free(aoff);
    if (!rc && !(*byrow = loom_sched_alloc((size_t)(n + 1) * sizeof **byrow)))
        rc = LOOM_ERR_NOMEM;
    if (rc)
        return rc;
    memcpy(*byrow, p->iters, (size_t)n * sizeof **byrow);
    return loom_bucket(n, cell, ncell, *byrow, p->cell_off, p->iters, &p->body, p->recs);
}

int loom_rotation_build(loom_plan *p)
{
    int nr = loom_icv.nranks, me = loom_icv.rank, T = p->T, global = !p->local;
    long n = p->acc.n;
    loom_dsm_alloc *A = p->a_id >= 0 ? loom_allocs[p->a_id] : NULL;
    loom_dsm_alloc *B = p->b_id >= 0 ? loom_allocs[p->b_id] : NULL;
    int R = p->R = B && nr > 1 ? nr : 1, S = p->S = T == 1 ? 1 : SUBS * T, W = global ? nr * T : T;
    uint32_t *arow = loom_sched_alloc((size_t)(n + 1) * sizeof *arow);
    uint32_t *brow = loom_sched_alloc((size_t)(n + 1) * sizeof *brow);
    uint32_t *cell = loom_sched_alloc((size_t)(n + 1) * sizeof *cell);
    p->abounds = malloc((size_t)(W + 1) * sizeof *p->abounds);
    p->bbounds = calloc((size_t)R + 1, sizeof *p->bbounds);
    p->sub = calloc((size_t)R * (size_t)(S + 1), sizeof *p->sub);
    size_t ncell = (size_t)R * (size_t)S * (size_t)T;
    p->cell_off = calloc(ncell + 1, sizeof *p->cell_off);
    p->iters = loom_sched_alloc((size_t)(n + 1) * sizeof *p->iters);
    int rc = LOOM_ERR_NOMEM;
    uint32_t *wa = NULL, *wb = NULL, *byrow = NULL;
    if (!arow || !brow || !cell || !p->abounds || !p->bbounds || !p->sub || !p->cell_off ||
        !p->iters)
        goto out;
#pragma omp parallel for schedule(static)
    for (long k = 0; k < n; k++) {
        arow[k] = brow[k] = NONE;
        for (size_t x = p->acc.off[k]; x < p->acc.off[k + 1]; x++) {
            if ((int)p->acc.acc[x].alloc == p->a_id)
                arow[k] = p->acc.acc[x].row;
            if ((int)p->acc.acc[x].alloc == p->b_id)
                brow[k] = p->acc.acc[x].row;
        }
    }
    /* A: one block per worker, by histogram */
    if (A) {
        if (!(wa = calloc(A->nunits, sizeof *wa)) || histogram(arow, n, NULL, wa, A->nunits))
            goto out;
        loom_balance(wa, 0, A->nunits, W, p->abounds);
        if (!global && nr > 1 && (rc = pinned_disjoint(A, wa)))
            goto out;
    } else {
        loom_balance(NULL, 0, 0, W, p->abounds);
    }
    /* B: R partitions (shared by all ranks), S sub-blocks each (this rank's) */
    if (B) {
        if (!(wb = calloc(B->nunits, sizeof *wb)) || histogram(brow, n, NULL, wb, B->nunits))
            goto out;
        if (R > 1) {
            if (!global)
                loom_allreduce(LOOM_IN_PLACE, wb, B->nunits, LOOM_INT32, LOOM_SUM);
            loom_balance(wb, 0, B->nunits, R, p->bbounds);
            if (loom_ring_set_bounds(B, p->bbounds)) {
                loom_log("loom_for: ring array '%s' is in the middle of a rotation; finish it "
                         "(loom_ring_rotate) before a serializable loop", B->name);
                rc = LOOM_ERR_STATE;
                goto out;
            }
            memset(wb, 0, B->nunits * sizeof *wb); /* sub-blocks: this rank's work only */
#pragma omp parallel for schedule(static)
            for (long k = 0; k < n; k++)
                cell[k] = !global || worker_of(p, arow, W, k) / T == me ? 0 : NONE;
            if (histogram(brow, n, cell, wb, B->nunits)) {
                rc = LOOM_ERR_NOMEM;
                goto out;
            }
        } else {
            p->bbounds[1] = B->nunits;
        }
        for (int q = 0; q < R; q++)
            loom_balance(wb, p->bbounds[q], p->bbounds[q + 1], S,
                         p->sub + (size_t)q * (size_t)(S + 1));
    }
    /* cells */
#pragma omp parallel for schedule(static)
    for (long k = 0; k < n; k++) {
        int w = worker_of(p, arow, W, k);
        cell[k] = NONE;
        if (global && w / T != me)
            continue; /* another rank's iteration */
        int s = w % T, q = R > 1 ? me : 0, j = s % S;
        if (brow[k] != NONE)
            q = loom_rotation_part(p, brow[k], &j);
        cell[k] = ((size_t)q * (size_t)S + (size_t)j) * (size_t)T + (size_t)s;
    }
    /* the injected fault (tests): the first iteration with a row of B goes
     * to a wrong cell */
    for (long k = 0; loom_sched_break_next_plan && (S > 1 || R > 1) && k < n; k++) {
        if (brow[k] == NONE || cell[k] == NONE)
            continue;
        uint32_t c = cell[k], s = c % (uint32_t)T, j = c / (uint32_t)T % (uint32_t)S,
                 q = c / (uint32_t)T / (uint32_t)S;
        if (S > 1)
            j = (j + 1) % (uint32_t)S;
        else
            q = (q + 1) % (uint32_t)R;
        cell[k] = (q * (uint32_t)S + j) * (uint32_t)T + s;
        p->broken = 1;
        loom_sched_break_next_plan = 0;
    }
    if (p->body.block && !(p->recs = loom_sched_alloc((size_t)(n + 1) * p->body.size)))
        goto out;
    rc = layout(p, n, arow, cell, ncell, global ? me * T : 0, &byrow);
out:
    free(byrow);
    free(arow);
    free(brow);
    free(cell);
    free(wa);
    free(wb);
    return rc;
}

/* Worker s visits every non-empty cell (q, j, s), taking the heaviest
 * sub-block j no other worker holds.  Holds are acquire/release, so the
 * next holder sees this one's writes to B's rows. */
static void run_worker(loom_plan *p, int q, int s, _Atomic int *hold)
{
    int S = p->S, T = p->T, left = 0;
    char visited[S];
    const size_t *off = p->cell_off;
    for (int j = 0; j < S; j++) {
        size_t c = ((size_t)q * (size_t)S + (size_t)j) * (size_t)T + (size_t)s;
        visited[j] = off[c] == off[c + 1];
        left += !visited[j];
    }
    for (int spins = 0; left;) {
        int best = -1;
        size_t bw = 0;
        for (int j = 0; j < S; j++) {
            size_t c = ((size_t)q * (size_t)S + (size_t)j) * (size_t)T + (size_t)s;
            if (!visited[j] && off[c + 1] - off[c] > bw &&
                !atomic_load_explicit(&hold[j], memory_order_relaxed)) {
                best = j;
                bw = off[c + 1] - off[c];
            }
        }
        int zero = 0;
        if (best < 0 || !atomic_compare_exchange_strong_explicit(
                            &hold[best], &zero, 1, memory_order_acquire, memory_order_relaxed)) {
            if (++spins > 64)
                sched_yield();
            continue;
        }
        spins = 0;
        size_t c = ((size_t)q * (size_t)S + (size_t)best) * (size_t)T + (size_t)s;
        if (loom_icv.check_serial) { /* one iteration at a time, each checked */
            loom_check_hold(q, best);
            for (size_t x = off[c]; x < off[c + 1]; x++)
                loom_plan_iter(p, p->iters[x], 0);
            loom_check_hold(-1, -1);
        } else if (p->recs) { /* the cell's records, contiguous: one call */
            p->body.block(p->recs + off[c] * p->body.size, (long)(off[c + 1] - off[c]),
                          p->body.ctx);
        } else {
            for (size_t x = off[c]; x < off[c + 1]; x++)
                p->body.one(p->first + p->iters[x], p->body.ctx);
        }
        atomic_store_explicit(&hold[best], 0, memory_order_release);
        visited[best] = 1;
        left--;
    }
}

/* Contract: collective; runs every iteration of the plan on this rank
 * once: R sub-epochs, each a parallel region over the owned partition,
 * with a ring rotation after each (several ranks), then the pinned rows'
 * write-back and a barrier. */
int loom_rotation_run(loom_plan *p)
{
    int nr = loom_icv.nranks;
    loom_dsm_alloc *B = p->b_id >= 0 ? loom_allocs[p->b_id] : NULL;
    _Atomic int *hold = calloc((size_t)p->S, sizeof *hold);
    if (!hold)
        return LOOM_ERR_NOMEM;
    loom_plan_prefetch(p, 0);
    if (loom_icv.check_serial)
        loom_check_begin(p);
    for (int t = 0; t < p->R; t++) {
        int q = 0;
        if (p->R > 1)
            loom_ring_bounds(B, &q);
#pragma omp parallel num_threads(p->T)
        {
            int nt = omp_get_num_threads();
            for (int s = omp_get_thread_num(); s < p->T; s += nt)
                run_worker(p, q, s, hold);
        }
        if (p->R > 1)
            loom_ring_rotate();
    }
    free(hold);
    if (loom_icv.check_serial)
        loom_check_phase_end(p, 0);
    loom_plan_writeback(p, 0);
    return nr > 1 ? loom_barrier() : LOOM_OK;
}
