/* row.c — the row path: get / put / add / prefetch on row-unit allocations.
 *
 * Rows are never protected: validity is a per-row state byte, and a row's
 * pending writes are flags in a->put (1 put, 2 add, 4 listed as dirty) with
 * the pending additions summed in a->twin[row]; an addition after a put
 * of the row joins the put (the copy, sent whole).  Every call takes the
 * row's lock, so any number of threads may use any rows; additions from
 * all threads and ranks are summed at the home, none lost.  With the
 * local policy (one rank) rows are plain memory and only the lock
 * remains. */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>

enum { PUT = 1, ADD = 2, LISTED = 4 };

/* The allocation of `array` if row is valid in it; else a message and
 * NULL. */
static loom_dsm_alloc *checked(void *array, size_t row, const char *fn)
{
    loom_dsm_alloc *a = loom_dsm_lookup_base(array);
    if (!a)
        loom_rt_log("%s: %p is not an address loom_alloc returned", fn, array);
    else if (a->kind != LOOM_UNIT_ROW)
        loom_rt_log("%s: '%s' has page units, not rows", fn, a->name);
    else if (row >= a->nunits)
        loom_rt_log("%s: row %zu is out of range for '%s' (%zu rows)", fn, row, a->name,
                 a->nunits);
    else
        return a;
    return NULL;
}

/* Make row valid; caller holds its lock. */
static void ensure(loom_dsm_alloc *a, size_t row)
{
    if (a->state && atomic_load(&a->state[row]) == U_INVALID) {
        a->policy->row_miss(a, row);
        atomic_store(&a->state[row], U_CLEAN);
    }
}

static void listed(loom_dsm_alloc *a, size_t row)
{
    if (!(a->put[row] & LISTED)) {
        a->put[row] |= LISTED;
        loom_dsm_mark_dirty(a, row);
    }
}

/* Contract: fetches every row of rows[0..n) that is invalid and that no
 * other thread holds (that one is left to it) in batches
 * (loom_dsm_fetch_list: runs by get, small rows gathered in one message
 * per home), re-applies the rank's pending adds, and marks them valid;
 * counted as refreshed (rows a sync point dropped), or as prefetched
 * misses.  Any thread; locks each row while it fetches it. */
static int fetch_rows(loom_dsm_alloc *a, const size_t *rows, size_t n, int refresh)
{
    enum { BATCH = 4096 };
    size_t *got = malloc(BATCH * sizeof *got);
    if (!got)
        return LOOM_ERR_NOMEM;
    uint64_t stamp = loom_dsm_wait_fresh(a);
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        for (; i < n && k < BATCH; i++) {
            size_t r = rows[i];
            if (atomic_load(&a->state[r]) != U_INVALID ||
                atomic_flag_test_and_set_explicit(&a->ulock[r], memory_order_acquire))
                continue;
            if (atomic_load(&a->state[r]) != U_INVALID) {
                loom_dsm_unit_unlock(a, r);
                continue;
            }
            got[k++] = r;
        }
        loom_dsm_fetch_list(a, got, k);
        for (size_t j = 0; j < k; j++) {
            size_t r = got[j];
            if (a->put[r] & ADD)
                loom_rt_reduce_local(a->base + r * a->unit, a->twin[r], a->unit / a->esize,
                                  a->type, LOOM_SUM);
            a->stamp[r] = stamp;
            loom_dsm_cache_use(a, r);
            atomic_store(&a->state[r], U_CLEAN);
            loom_dsm_unit_unlock(a, r);
        }
        if (refresh) {
            atomic_fetch_add(&a->stats.refreshed, k);
        } else {
            atomic_fetch_add(&a->stats.misses, k);
            atomic_fetch_add(&a->stats.prefetched, k);
        }
    }
    free(got);
    return LOOM_OK;
}

/* A read outside the program's prefetches: the copies sync points dropped
 * since the last such read (notice.c) are fetched in one batch first, as
 * those sync points would otherwise have refreshed them. */
static void fetch_dropped(loom_dsm_alloc *a)
{
    struct loom_rows *d = atomic_exchange(&a->dropped, NULL);
    if (d && fetch_rows(a, d->row, d->n, 1))
        loom_rt_die(1, "out of memory (refreshing '%s')", a->name);
    free(d);
}

const void *loom_row_get(void *array, size_t row)
{
    loom_dsm_alloc *a = checked(array, row, "loom_row_get");
    if (!a)
        return NULL;
    if (a->state && atomic_load(&a->state[row]) == U_INVALID) {
        if (atomic_load_explicit(&a->dropped, memory_order_relaxed))
            fetch_dropped(a);
        loom_dsm_unit_lock(a, row);
        ensure(a, row);
        loom_dsm_unit_unlock(a, row);
    } else if (a->state) {
        atomic_fetch_add(&a->stats.hits, 1);
        loom_dsm_note_read(a, loom_dsm_stamp(a, row));
    }
    if (a->state)
        loom_dsm_cache_use(a, row);
    if (__builtin_expect(a->readmark != NULL, 0))
        loom_dsm_note_read_row(a, row);
    return a->base + row * a->unit;
}

int loom_row_put(void *array, size_t row, const void *data)
{
    loom_dsm_alloc *a = checked(array, row, "loom_row_put");
    if (!a || !data)
        return LOOM_ERR_ARG;
    loom_dsm_unit_lock(a, row);
    memcpy(a->base + row * a->unit, data, a->unit);
    if (a->state) {
        atomic_store(&a->state[row], U_CLEAN);
        if (a->put[row] & ADD) /* the put supersedes earlier additions */
            memset(a->twin[row], 0, a->unit);
        a->put[row] = (uint8_t)((a->put[row] & ~ADD) | PUT);
        listed(a, row);
    }
    loom_dsm_unit_unlock(a, row);
    return LOOM_OK;
}

/* The row's working copy was written in place by its only writer (a
 * serializable loop's pinned rows): release it as a put at the next
 * release point. */
void loom_dsm_row_mark_put(loom_dsm_alloc *a, size_t row)
{
    if (!a->state)
        return;
    loom_dsm_unit_lock(a, row);
    atomic_store(&a->state[row], U_CLEAN);
    if (a->put[row] & ADD)
        memset(a->twin[row], 0, a->unit);
    a->put[row] = (uint8_t)((a->put[row] & ~ADD) | PUT);
    listed(a, row);
    loom_dsm_unit_unlock(a, row);
}

/* Where an add to row goes; caller holds the row's lock.  *b: the rank's
 * copy, NULL while it is invalid (a fetch re-applies the twin).  *t: the
 * twin the release sends home, NULL when the add joins the copy only: one
 * rank, or a put of the row is pending (the release sends the whole copy
 * as that put; an add also kept apart would reach the home twice).  With
 * a twin the row is marked as added to and listed as dirty; without
 * memory for one, both are NULL and the error is returned. */
static int add_targets(loom_dsm_alloc *a, size_t row, char **t, char **b)
{
    *t = NULL;
    *b = a->base + row * a->unit;
    if (!a->state)
        return LOOM_OK;
    int valid = atomic_load(&a->state[row]) != U_INVALID;
    if ((a->put[row] & PUT) && valid)
        return LOOM_OK;
    if (!a->twin[row] && !(a->twin[row] = calloc(1, a->unit))) {
        *b = NULL; /* nothing is added anywhere */
        return LOOM_ERR_NOMEM;
    }
    *t = a->twin[row];
    if (!valid)
        *b = NULL;
    a->put[row] |= ADD;
    listed(a, row);
    return LOOM_OK;
}

int loom_row_add(void *array, size_t row, const void *delta)
{
    loom_dsm_alloc *a = checked(array, row, "loom_row_add");
    if (!a || !delta)
        return LOOM_ERR_ARG;
    size_t n = a->unit / a->esize;
    char *t, *b;
    loom_dsm_unit_lock(a, row);
    int rc = add_targets(a, row, &t, &b);
    if (t)
        loom_rt_reduce_local(t, delta, n, a->type, LOOM_SUM);
    if (b) /* own writes stay visible */
        loom_rt_reduce_local(b, delta, n, a->type, LOOM_SUM);
    loom_dsm_unit_unlock(a, row);
    return rc;
}

/* d = c - o element by element in type T (U: the type the arithmetic
 * wraps in), added to the twin t and the copy b where not NULL.  One
 * vectorized loop per case (omp simd; a NULL test inside the loop kept
 * GCC 12 scalar): each element is computed alone, the scalar bits. */
#define ADD_DIFF(T, U)                                                            \
    do {                                                                          \
        const T *c_ = copy, *o_ = orig;                                           \
        T *t_ = (T *)(void *)t, *b_ = (T *)(void *)b;                             \
        if (t_ && b_)                                                             \
            _Pragma("omp simd")                                                   \
            for (size_t i = 0; i < n; i++) {                                      \
                T d = (T)((U)c_[i] - (U)o_[i]);                                   \
                t_[i] = (T)((U)t_[i] + (U)d);                                     \
                b_[i] = (T)((U)b_[i] + (U)d);                                     \
            }                                                                     \
        else if (t_ || b_) {                                                      \
            T *x_ = t_ ? t_ : b_;                                                 \
            _Pragma("omp simd")                                                   \
            for (size_t i = 0; i < n; i++) {                                      \
                T d = (T)((U)c_[i] - (U)o_[i]);                                   \
                x_[i] = (T)((U)x_[i] + (U)d);                                     \
            }                                                                     \
        }                                                                         \
    } while (0)

/* Contract: as loom_row_add(a->base, row, copy - orig), the difference
 * taken element-wise in a's type, without the lookup or a buffer for the
 * difference: the same bits.  copy may be the rank's copy of the row
 * itself (written in place since orig was taken): the difference then
 * goes to the twin only.  Takes the row's lock; any thread. */
int loom_dsm_row_add_diff(loom_dsm_alloc *a, size_t row, const void *copy, const void *orig)
{
    size_t n = a->unit / a->esize;
    char *t, *b;
    loom_dsm_unit_lock(a, row);
    int rc = add_targets(a, row, &t, &b);
    if (b == copy) /* in place: the copy holds the change already */
        b = NULL;
    switch (a->type) {
    case LOOM_INT32: ADD_DIFF(int32_t, uint32_t); break;
    case LOOM_INT64: ADD_DIFF(int64_t, uint64_t); break;
    case LOOM_FLOAT: ADD_DIFF(float, float); break;
    case LOOM_DOUBLE: ADD_DIFF(double, double); break;
    }
    loom_dsm_unit_unlock(a, row);
    return rc;
}
#undef ADD_DIFF

/* w (c - o) added to b, and c, o and b all left at the sum: one pass. */
#define TAKE_DIFF(T)                                                              \
    do {                                                                          \
        T *c_ = copy, *o_ = orig, *b_ = (T *)(void *)b, w_ = (T)w;                \
        _Pragma("omp simd")                                                       \
        for (size_t i = 0; i < n; i++) {                                          \
            T v = b_[i] + (c_[i] - o_[i]) * w_;                                   \
            b_[i] = c_[i] = o_[i] = v;                                            \
        }                                                                         \
    } while (0)

/* Contract: adds w (copy - orig) to the row, element by element in a's
 * type (float or double; w = 1 gives loom_dsm_row_add_diff's bits), after
 * which copy and orig both hold the row as the add left it: a thread's own
 * copy of the row made current in the same pass (sched/stage.c's own
 * stages, which average their threads' changes).  copy is not the rank's
 * copy of the row.  Where the add goes to a twin too, or the rank's copy
 * is invalid (several ranks), or the rows are not float or double,
 * returns LOOM_ERR_ARG and changes nothing.  Takes the row's lock; any
 * thread. */
int loom_dsm_row_add_diff_take(loom_dsm_alloc *a, size_t row, void *copy, void *orig, double w)
{
    size_t n = a->unit / a->esize;
    char *t, *b;
    loom_dsm_unit_lock(a, row);
    int rc = add_targets(a, row, &t, &b);
    if (!rc && (t || !b || (a->type != LOOM_FLOAT && a->type != LOOM_DOUBLE)))
        rc = LOOM_ERR_ARG;
    else if (!rc && a->type == LOOM_FLOAT)
        TAKE_DIFF(float);
    else if (!rc)
        TAKE_DIFF(double);
    loom_dsm_unit_unlock(a, row);
    return rc;
}
#undef TAKE_DIFF

int loom_row_prefetch(void *array, const size_t *rows, size_t n)
{
    loom_dsm_alloc *a = loom_dsm_lookup_base(array);
    if (!a || a->kind != LOOM_UNIT_ROW || (n && !rows)) {
        loom_rt_log("loom_row_prefetch: %p is not a row-unit allocation", array);
        return LOOM_ERR_ARG;
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i] >= a->nunits) {
            loom_rt_log("loom_row_prefetch: row %zu is out of range for '%s' (%zu rows)",
                     rows[i], a->name, a->nunits);
            return LOOM_ERR_ARG;
        }
    if (!a->state)
        return LOOM_OK;
    atomic_store_explicit(&a->prefetched, 1, memory_order_relaxed);
    return fetch_rows(a, rows, n, 0);
}

int loom_dsm_row_refresh(loom_dsm_alloc *a)
{
    if (!a->state || a->kind != LOOM_UNIT_ROW || loom_dsm_policy_rotates(a->policy))
        return LOOM_OK;
    if (a->used)
        return LOOM_ERR_ARG;
    uint64_t gen = atomic_load(&a->dropped_gen);
    if (atomic_load(&a->fresh_gen) == gen)
        return LOOM_OK;
    size_t *rows = malloc(a->nunits * sizeof *rows), n = 0;
    if (!rows)
        return LOOM_ERR_NOMEM;
    for (size_t r = 0; r < a->nunits; r++)
        if (atomic_load_explicit(&a->state[r], memory_order_relaxed) == U_INVALID)
            rows[n++] = r;
    int rc = fetch_rows(a, rows, n, 1);
    free(rows);
    /* a row another thread held is its to fetch: wait for it, as its
     * loom_row_get caller would */
    for (size_t r = 0; !rc && r < a->nunits; r++)
        while (atomic_load(&a->state[r]) == U_INVALID) {
            loom_dsm_unit_lock(a, r);
            ensure(a, r);
            loom_dsm_unit_unlock(a, r);
        }
    if (!rc)
        atomic_store(&a->fresh_gen, gen);
    return rc;
}
