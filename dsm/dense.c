/* dense.c — the dense merge of a row allocation (data-parallel SGD's
 * gradient allreduce).
 *
 * A staged loop's round ends by adding each rank's changes home: per row,
 * a diff into the twin, a record to the row's home, an acknowledgement, a
 * write notice to every other rank and a refetch of every row another
 * rank changed.  When every rank changed most rows of an allocation in the
 * round (word2vec's output vectors: the negatives reach nearly all of
 * them), that per-row machinery costs more than moving the whole array:
 * here the ranks instead add their changes up in one allreduce, and each
 * sets its copy to the round's start plus the sum, and adds the sum to
 * the rows it homes.  Every rank then holds what the per-row path would
 * leave after its refetch — every rank's writes of the round, nothing
 * pending — and nothing is left to release or to notice.
 *
 * Only where that is the whole guarantee: add merge by summing, a policy
 * whose copies stay valid across sync points (bsp, ssp) with staleness 0,
 * no bounded cache, no fp16 wire, no check mode, several ranks. */
#include "dsm.h"

#include <string.h>

int loom_dsm_dense_ok(const loom_dsm_alloc *a)
{
    return loom_rt_icv.nranks > 1 && a->kind == LOOM_UNIT_ROW && a->state &&
           a->merge == LOOM_MERGE_ADD && !a->average && a->policy->notices &&
           a->staleness == 0 && !a->used && !loom_dsm_half_wire(a) && !loom_dsm_check;
}

/* d = c - o element by element in type T (U: the type the arithmetic
 * wraps in, B: an unsigned of T's width), counting the rows whose
 * difference has a non-zero bit (changed += ...): an OR per row.  The
 * loops are vectorized (omp simd: at -O2 GCC 12 left both scalar, 6% of a
 * 2-rank loom-w2v run); each element is computed alone, so the bits are
 * those of the scalar loop. */
#define DIFF(T, U, B)                                                             \
    do {                                                                          \
        const T *c_ = c, *o_ = o;                                                 \
        T *d_ = d;                                                                \
        for (size_t r = 0; r < rows; r++) {                                       \
            B any = 0;                                                            \
            _Pragma("omp simd reduction(| : any)")                                \
            for (size_t i = r * per; i < (r + 1) * per; i++) {                    \
                T x = (T)((U)c_[i] - (U)o_[i]);                                   \
                B bits;                                                           \
                memcpy(&bits, &x, sizeof bits);                                   \
                d_[i] = x;                                                        \
                any |= bits;                                                      \
            }                                                                     \
            changed += any != 0;                                                  \
        }                                                                         \
    } while (0)
/* w = o + d element by element. */
#define SUM(T, U)                                                                 \
    do {                                                                          \
        T *c_ = w;                                                                \
        const T *o_ = o, *d_ = d;                                                 \
        _Pragma("omp simd")                                                       \
        for (size_t i = 0; i < n; i++)                                            \
            c_[i] = (T)((U)o_[i] + (U)d_[i]);                                     \
    } while (0)

/* Contract: collective over the ranks, each passing the same allocation
 * (loom_dsm_dense_ok), from a staged loop's sync point: no loop body
 * runs, and no other thread of the program uses a's rows.  Every row of
 * a's copy is valid here and was changed in place since orig (nunits *
 * unit bytes) was taken; delta is scratch of the same size.  Afterwards
 * every rank's copy is orig + (the sum over ranks of copy - orig), every
 * home's store has gained that sum, and no row is pending.  Returns the
 * rows this rank had changed. */
size_t loom_dsm_dense_merge(loom_dsm_alloc *a, const void *orig, void *delta)
{
    size_t rows = a->nunits, per = a->unit / a->esize, n = rows * per, changed = 0;
    const void *c = a->base, *o = orig;
    void *d = delta, *w = a->base;
    switch (a->type) {
    case LOOM_INT32: DIFF(int32_t, uint32_t, uint32_t); break;
    case LOOM_INT64: DIFF(int64_t, uint64_t, uint64_t); break;
    case LOOM_FLOAT: DIFF(float, float, uint32_t); break;
    case LOOM_DOUBLE: DIFF(double, double, uint64_t); break;
    }
    if (loom_allreduce(LOOM_IN_PLACE, delta, n, a->type, LOOM_SUM))
        loom_rt_die(1, "dense merge of '%s': the allreduce failed", a->name);
    switch (a->type) { /* the copy becomes orig + the sum */
    case LOOM_INT32: SUM(int32_t, uint32_t); break;
    case LOOM_INT64: SUM(int64_t, uint64_t); break;
    case LOOM_FLOAT: SUM(float, float); break;
    case LOOM_DOUBLE: SUM(double, double); break;
    }
    loom_dsm_home_add_rows(a, delta);
    /* what the allreduce moves each way, about: 2 (P - 1) / P of the array
     * (reduce-scatter and allgather, lib/coll.c) */
    uint64_t P = (uint64_t)loom_rt_icv.nranks, bytes = 2 * (P - 1) * rows * a->unit / P;
    atomic_fetch_add(&a->stats.bytes_sent, bytes);
    atomic_fetch_add(&a->stats.bytes_recv, bytes);
    atomic_fetch_add(&a->stats.dense_merges, 1);
    return changed;
}
#undef DIFF
#undef SUM
