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
 * cell is the order of the slices' input (index order, or a given
 * permutation), the same as a serial, stable bucket sort.  Two passes
 * make a two-key sort: the rotation plan orders each cell by its pinned
 * row, so a cell walks its rows of A in order, each once. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE (2u << 20)

void *loom_sched_alloc(size_t bytes)
{
    if (bytes < HUGE)
        return malloc(bytes ? bytes : 1);
    void *p;
    size_t n = (bytes + HUGE - 1) / HUGE * HUGE;
    if (posix_memalign(&p, HUGE, n))
        return NULL;
    madvise(p, n, MADV_HUGEPAGE); /* advice only: fine if refused */
    return p;
}

int loom_bucket(long n, const uint32_t *cell, size_t ncell, const uint32_t *order, size_t *off,
                uint32_t *iters, const loom_body *b, char *recs)
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
        for (long x = a; x < z; x++) {
            long k = order ? order[x] : x;
            if (cell[k] != UINT32_MAX)
                mine[cell[k]]++;
        }
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
        for (long y = a; y < z; y++) {
            long k = order ? order[y] : y;
            if (cell[k] == UINT32_MAX)
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
