/* ring_for.c — loom_for_ring: one rotation of a ring allocation's rows
 * among every worker (rank x OpenMP thread), for loops whose unit of work
 * is a range of rotated rows against data each worker keeps to itself
 * (LDA's word-range sampler over a thread's document shard; any ring app
 * of the same shape).  STRADS word rotation, seed 000 Alg. 5.
 *
 * The schedule.  With R ranks and T threads (P = R T workers), rows
 * [0, rows) are cut into P blocks, block b = [b rows / P, (b+1) rows / P)
 * (floor cuts, so the T blocks j T .. j T + T - 1 are exactly the ring
 * allocation's partition j of R).  For each of R sub-epochs:
 *
 *     rank r owns ring partition j (loom_ring_part)
 *     omp parallel, thread i:  for s in 0..T-1:  body(block j T + (i + s) mod T)
 *                              (a team barrier between the T sub-steps)
 *     loom_ring_rotate()
 *
 * At every sub-step the P workers hold P distinct blocks, so each row has
 * one writer; over the call each worker meets every block once.  Why not
 * loom_for(LOOM_SERIALIZABLE): its rotation plan wants an iteration that
 * touches one row of each of two Loom row allocations; here the pinned
 * side is plain memory private to a worker (a shard of documents, whose
 * counts are sparse lists, not rows) and the body is a whole block, so
 * that a sampler can build per-row state once and sweep all of the row's
 * work against it (docs/loop.md, "Ring rotation"). */
#include <loom.h>

#include <omp.h>

/* Block b of the P-way floor cut of [0, rows). */
static void block(long rows, int P, int b, long *lo, long *hi)
{
    *lo = (long)((long long)b * rows / P);
    *hi = (long)((long long)(b + 1) * rows / P);
}

/* The partition j (0..R-1) whose T blocks are this rank's owned ring
 * partition [first, first + n); -1 if none is (the allocation's rows are
 * not `rows`, or its partitions are not the floor cut). */
static int owned_partition(long rows, int R, int T, size_t first, size_t n)
{
    for (int j = 0; j < R; j++) {
        long lo, hi, lo2, hi2;
        block(rows, R * T, j * T, &lo, &hi);
        block(rows, R * T, j * T + T - 1, &lo2, &hi2);
        if ((size_t)lo == first && (size_t)(hi2 - lo) == n)
            return j;
    }
    return -1;
}

/* Contract (lib/loom.h): collective, every rank with the same array, rows
 * and the same number of OpenMP threads; the caller is outside any
 * parallel region.  Each body call runs on thread b->thread of a team of
 * omp_get_max_threads() threads and may touch rows [b->lo, b->hi) of the
 * array and whatever the thread keeps to itself.  Stops the job
 * (loom_abort) when the allocation is not a ring of `rows` rows cut as
 * described or OpenMP gives fewer threads: both are programming errors that
 * would otherwise break the one-writer guarantee. */
int loom_for_ring(void *array, long rows, void (*body)(const loom_ring_block *b, void *ctx),
                  void *ctx)
{
    const int R = loom_size(), T = omp_get_max_threads();
    if (!array || rows < 0 || !body)
        return LOOM_ERR_ARG;
    for (int t = 0; t < R; t++) {
        size_t first, n;
        int j = -1;
        if (!loom_ring_part(array, NULL, NULL, &first, &n))
            j = owned_partition(rows, R, T, first, n);
        if (j < 0)
            loom_abort(70, "loom_for_ring: the array is not a ring allocation of %ld rows "
                       "whose partitions are %d-way floor cuts (rank %d)", rows, R, loom_rank());
        int bad = 0;
#pragma omp parallel num_threads(T) reduction(| : bad)
        {
            const int i = omp_get_thread_num();
            if (omp_get_num_threads() != T)
                bad = 1;
            for (int s = 0; !bad && s < T; s++) {
                loom_ring_block b = {.thread = i, .last = s == T - 1};
                block(rows, R * T, j * T + (i + s) % T, &b.lo, &b.hi);
                body(&b, ctx);
                if (s + 1 < T) {
#pragma omp barrier
                }
            }
        }
        if (bad)
            loom_abort(70, "loom_for_ring: OpenMP gave fewer than %d threads", T);
        if (loom_ring_rotate())
            loom_abort(1, "loom_for_ring: the ring rotation failed");
    }
    return LOOM_OK;
}
