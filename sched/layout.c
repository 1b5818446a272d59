/* layout.c — a plan's iterations laid out in plan order: grouped by cell
 * (a worker's share of a sub-block, or a group), in index order inside a
 * cell, so that running a cell streams through one contiguous run of
 * iteration numbers and, for a block body (loom_for_records), of records.
 *
 * One parallel histogram-and-scatter pass: each thread counts the cells
 * of its contiguous slice of iterations, a prefix sum over (cell, thread)
 * gives every thread its own write position in every cell, and each
 * thread scatters its slice.  Because slices are in index order and a
 * cell's positions are handed out thread by thread, the order inside a
 * cell is index order, the same as a serial bucket sort. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

int loom_bucket(long n, const size_t *cell, size_t ncell, size_t *off, uint32_t *iters,
                const loom_body *b, char *recs)
{
    int T = omp_get_max_threads();
    size_t *pos = calloc((size_t)T * (ncell + 1), sizeof *pos); /* [thread][cell] */
    if (!pos)
        return LOOM_ERR_NOMEM;
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        long a = (long)((__int128)n * t / nt), z = (long)((__int128)n * (t + 1) / nt);
        size_t *mine = pos + (size_t)t * (ncell + 1);
        for (long k = a; k < z; k++)
            if (cell[k] != SIZE_MAX)
                mine[cell[k]]++;
#pragma omp barrier
#pragma omp single
        {
            size_t at = 0;
            for (size_t c = 0; c < ncell; c++) {
                off[c] = at;
                for (int u = 0; u < nt; u++) {
                    size_t cnt = pos[(size_t)u * (ncell + 1) + c];
                    pos[(size_t)u * (ncell + 1) + c] = at;
                    at += cnt;
                }
            }
            off[ncell] = at;
        } /* implicit barrier: every thread's positions are ready */
        size_t sz = b ? b->size : 0;
        for (long k = a; k < z; k++) {
            if (cell[k] == SIZE_MAX)
                continue;
            size_t x = mine[cell[k]]++;
            iters[x] = (uint32_t)k;
            if (recs)
                memcpy(recs + x * sz, b->data + (size_t)k * sz, sz);
        }
    }
    free(pos);
    return LOOM_OK;
}
