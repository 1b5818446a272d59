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
/* Sub-blocks per thread in a partition: room for a free thread to move
 * on; and a worker streams its cell with one sub-block's rows of B in
 * cache, so a rank's lone thread (2 ranks x 1 thread) works its partition
 * a half at a time too (docs/bench-apps.md: on 10^7 MF ratings, K = 32,
 * updates against all 10 000 rows of a partition of H cost 1.2x those
 * against half of it). */
#define SUBS 2
/* Sub-blocks of B in all (over its partitions), at least: one worker (1
 * rank x 1 thread) works B a quarter at a time, as each thread of 1 rank
 * x 2 threads does. */
#define MINSUBS 4
/* Bytes of B's rows in a sub-block, at most (more sub-blocks when a
 * partition is larger): a cell's updates then find their rows of B in a
 * core's L2 (2 MiB here) instead of its L3 or memory.  On 10^8 MF ratings
 * (100 000 items, K = 32: 16 MB of H) 16 sub-blocks of 1 MiB instead of 4
 * of 4 MiB ran 1.4x the updates/s (docs/loom-mf.md, "Measured"). */
#define SUB_BYTES ((size_t)1 << 20)

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

int loom_sched_rotation_part(const loom_plan *p, size_t row, int *j)
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
    loom_rt_log("loom_for: row %zu of '%s' is touched by iterations on several ranks; with .local, "
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
#pragma omp for schedule(dynamic, 1 << 16)
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

/* Each row's block: tab[r] = b for bounds[b] <= r < bounds[b+1] (k
 * blocks over rows [bounds[0], bounds[k])), plus `add`. */
static void block_table(const size_t *bounds, int k, uint32_t add, uint32_t *tab)
{
    for (int b = 0; b < k; b++)
        for (size_t r = bounds[b]; r < bounds[b + 1]; r++)
            tab[r] = (uint32_t)b + add;
}

static size_t chunks(size_t rows, int ch) { return (rows + ((size_t)1 << ch) - 1) >> ch; }

/* The layout's key of every iteration: its cell c = (q, j, s), then its
 * chunk of 2^ch rows of A inside worker s's block (one more chunk for
 * none), as base[c] + chunk; NONE for another rank's iteration.
 * Iterations without a row of A are dealt to workers round-robin,
 * without a row of B to sub-block s (mod S) of this rank's partition.
 * With ch < 0 the key is the cell alone.  Overwrites brow with the keys.
 * `broken` (tests): that iteration goes to the next sub-block (or
 * partition). */
static void keys(const loom_plan *p, long n, const uint32_t *arow, uint32_t *brow,
                 const uint32_t *wof, const uint32_t *qjof, const uint32_t *base, int ch,
                 long broken)
{
    int T = p->T, S = p->S, R = p->R, me = loom_rt_icv.rank, global = !p->local;
    int W = global ? loom_rt_icv.nranks * T : T, w0 = global ? me * T : 0;
#pragma omp parallel for schedule(dynamic, 1 << 16)
    for (long k = 0; k < n; k++) {
        uint32_t w = arow[k] != NONE ? wof[arow[k]] : (uint32_t)(k % W);
        if (global && (int)w / T != me) {
            brow[k] = NONE; /* another rank's iteration */
            continue;
        }
        uint32_t s = w % (uint32_t)T, qj = (uint32_t)((R > 1 ? me : 0) * S) + s % (uint32_t)S;
        if (brow[k] != NONE)
            qj = qjof[brow[k]];
        if (k == broken)
            qj = S > 1 ? qj / S * S + (qj % S + 1) % S : (qj / S + 1) % R * S + qj % S;
        uint32_t c = qj * (uint32_t)T + s;
        size_t a0 = p->abounds[w0 + s], rows = p->abounds[w0 + s + 1] - a0;
        brow[k] = ch < 0 ? c : base[c] + (uint32_t)(arow[k] != NONE ? (arow[k] - a0) >> ch : chunks(rows, ch));
    }
}

/* Contract: the plan from the rows of A and B each iteration touches:
 * blocks of A per worker and sub-blocks of B per partition, balanced by
 * histograms; then one histogram-and-scatter (loom_sched_bucket) over the key
 * (cell, row of A), so p->cell_off, p->recs (block body) and p->iters
 * (other bodies, or with access sets for the checker) hold the
 * iterations by cell, each cell in order of row of A (a cell walks its
 * rows of A once each), index order within a row.  With several ranks
 * and no access sets, the rows of A this rank touches become its row
 * list.  Collective. */
int loom_sched_rotation_build(loom_plan *p, uint32_t *arow, uint32_t *brow)
{
    int nr = loom_rt_icv.nranks, me = loom_rt_icv.rank, T = p->T, global = !p->local;
    long n = p->acc.n;
    loom_dsm_alloc *A = p->a_id >= 0 ? loom_dsm_allocs[p->a_id] : NULL;
    loom_dsm_alloc *B = p->b_id >= 0 ? loom_dsm_allocs[p->b_id] : NULL;
    int R = p->R = B && nr > 1 ? nr : 1, W = global ? nr * T : T;
    int S = p->S = SUBS * T > (MINSUBS + R - 1) / R ? SUBS * T : (MINSUBS + R - 1) / R;
    if (B && B->nunits * B->unit / (size_t)R / SUB_BYTES >= (size_t)S) /* cache-sized */
        S = p->S = (int)((B->nunits * B->unit / (size_t)R + SUB_BYTES - 1) / SUB_BYTES);
    size_t nA = A ? A->nunits : 0, nB = B ? B->nunits : 0, ncell = (size_t)R * (size_t)S * (size_t)T;
    p->abounds = malloc((size_t)(W + 1) * sizeof *p->abounds);
    p->bbounds = calloc((size_t)R + 1, sizeof *p->bbounds);
    p->sub = calloc((size_t)R * (size_t)(S + 1), sizeof *p->sub);
    p->cell_off = calloc(ncell + 1, sizeof *p->cell_off);
    uint32_t *wa = calloc(nA + 1, sizeof *wa), *wb = calloc(nB + 1, sizeof *wb);
    uint32_t *base = malloc((ncell + 1) * sizeof *base), *koff = NULL;
    uint8_t *mark = NULL;
    int rc = LOOM_ERR_NOMEM;
    if (!p->abounds || !p->bbounds || !p->sub || !p->cell_off || !wa || !wb || !base)
        goto out;
    /* A: one block per worker, by histogram */
    if (A) {
        if (histogram(arow, n, NULL, wa, nA))
            goto out;
        loom_sched_balance(wa, 0, nA, W, p->abounds);
        if (!global && nr > 1 && (rc = pinned_disjoint(A, wa)))
            goto out;
        block_table(p->abounds, W, 0, wa); /* wa: row -> worker from now on */
    } else {
        loom_sched_balance(NULL, 0, 0, W, p->abounds);
    }
    /* B: R partitions (shared by all ranks), S sub-blocks each (this rank's) */
    if (B) {
        if (histogram(brow, n, NULL, wb, nB))
            goto out;
        if (R > 1) {
            if (!global)
                loom_allreduce(LOOM_IN_PLACE, wb, nB, LOOM_INT32, LOOM_SUM);
            loom_sched_balance(wb, 0, nB, R, p->bbounds);
            if (B->policy->set_bounds(B, p->bbounds, 0)) {
                loom_rt_log("loom_for: ring array '%s' is in the middle of a rotation; finish it "
                         "(loom_ring_rotate) before a serializable loop", B->name);
                rc = LOOM_ERR_STATE;
                goto out;
            }
            memset(wb, 0, nB * sizeof *wb); /* sub-blocks: this rank's work only */
            uint32_t *mine = global ? loom_sched_alloc((size_t)(n + 1) * sizeof *mine) : NULL;
            if (global && !mine)
                goto out;
#pragma omp parallel for schedule(dynamic, 1 << 16)
            for (long k = 0; k < n * global; k++)
                mine[k] = (int)(arow[k] != NONE ? wa[arow[k]] : (uint32_t)(k % W)) / T == me ? 0 : NONE;
            rc = histogram(brow, n, mine, wb, nB);
            free(mine);
            if (rc)
                goto out;
            rc = LOOM_ERR_NOMEM;
        } else {
            p->bbounds[1] = nB;
        }
        for (int q = 0; q < R; q++)
            loom_sched_balance(wb, p->bbounds[q], p->bbounds[q + 1], S,
                         p->sub + (size_t)q * (size_t)(S + 1));
        for (int q = 0; q < R; q++) /* wb: row -> q * S + j from now on */
            block_table(p->sub + (size_t)q * (size_t)(S + 1), S, (uint32_t)(q * S), wb);
    }
    /* keys: each cell's run of keys holds its worker's rows of A in chunks
     * of about 32 KiB (a cell works through its rows of A a chunk at a
     * time), then one for iterations without a row of A */
    int ch = 0;
    while (A && (A->unit << (ch + 1)) <= 32768)
        ch++;
    base[0] = 0;
    for (size_t c = 0; c < ncell; c++) {
        size_t s = c % (size_t)T, w = (size_t)(global ? me * T : 0) + s;
        size_t next = base[c] + chunks(p->abounds[w + 1] - p->abounds[w], ch) + 1;
        base[c + 1] = next < UINT32_MAX ? (uint32_t)next : UINT32_MAX;
    }
    /* Ordering cells by chunk pays while keys are fewer than iterations
     * (rows recur in a cell); beyond, the cells alone. */
    if (base[ncell] == UINT32_MAX || base[ncell] > (size_t)n + (1u << 16))
        ch = -1;
    size_t nkey = ch >= 0 ? base[ncell] : ncell;
    long broken = -1; /* the injected fault (tests): the first iteration of
                         this rank with a row of B goes to a wrong cell */
    for (long k = 0; loom_sched_break_next_plan && (S > 1 || R > 1) && k < n; k++)
        if (brow[k] != NONE &&
            (!global || (int)(arow[k] != NONE ? wa[arow[k]] : (uint32_t)(k % W)) / T == me)) {
            broken = k;
            p->broken = 1;
            loom_sched_break_next_plan = 0;
            break;
        }
    keys(p, n, arow, brow, wa, wb, base, ch, broken);
    int iters = !p->body.block || p->acc.acc;
    if (!(koff = loom_sched_alloc((nkey + 1) * sizeof *koff)) ||
        (iters && !(p->iters = loom_sched_alloc((size_t)(n + 1) * sizeof *p->iters))) ||
        (p->body.block && !(p->recs = loom_sched_alloc((size_t)(n + 1) * p->body.size))) ||
        loom_sched_bucket(n, brow, nkey, koff, p->iters, &p->body, p->recs))
        goto out;
    for (size_t c = 0; c <= ncell; c++)
        p->cell_off[c] = koff[ch >= 0 ? base[c] : c];
    rc = LOOM_OK;
    /* with no access sets, the rows of a coherent A this rank writes */
    if (A && nr > 1 && !p->acc.acc && !loom_dsm_policy_rotates(A->policy) && A->state) {
        if (!(mark = calloc(nA, 1)))
            rc = LOOM_ERR_NOMEM;
        for (long k = 0; mark && k < n; k++)
            if (brow[k] != NONE && arow[k] != NONE)
                mark[arow[k]] = 3;
        if (mark)
            rc = loom_sched_plan_rowlist(p, 0, p->a_id, mark);
    }
out:
    free(wa);
    free(wb);
    free(base);
    free(koff);
    free(mark);
    return rc;
}

/* Worker s visits every non-empty cell (q, j, s), taking the heaviest
 * sub-block j no other worker holds.  Holds are acquire/release, so the
 * next holder sees this one's writes to B's rows. */
static void run_worker(loom_plan *p, int q, int s, _Atomic int *hold)
{
    int S = p->S, T = p->T, left = 0;
    char visited[S];
    const uint32_t *off = p->cell_off;
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
        if (loom_rt_icv.check_serial) { /* one iteration at a time, each checked */
            loom_sched_check_hold(q, best);
            for (size_t x = off[c]; x < off[c + 1]; x++)
                loom_sched_plan_iter(p, p->iters[x], 0);
            loom_sched_check_hold(-1, -1);
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
int loom_sched_rotation_run(loom_plan *p)
{
    int nr = loom_rt_icv.nranks;
    loom_dsm_alloc *B = p->b_id >= 0 ? loom_dsm_allocs[p->b_id] : NULL;
    _Atomic int *hold = calloc((size_t)p->S, sizeof *hold);
    if (!hold)
        return LOOM_ERR_NOMEM;
    loom_sched_plan_prefetch(p, 0);
    if (loom_rt_icv.check_serial)
        loom_sched_check_begin(p);
    for (int t = 0; t < p->R; t++) {
        int q = 0;
        if (p->R > 1)
            B->policy->bounds(B, &q);
#pragma omp parallel num_threads(p->T)
        {
            int nt = omp_get_num_threads();
            for (int s = omp_get_thread_num(); s < p->T; s += nt)
                run_worker(p, q, s, hold);
        }
        if (p->R > 1)
            B->policy->rotate();
    }
    free(hold);
    if (loom_rt_icv.check_serial)
        loom_sched_check_phase_end(p, 0);
    loom_sched_plan_writeback(p, 0);
    return nr > 1 ? loom_dsm_barrier() : LOOM_OK;
}
