/* ordered.c — Orion's dependence-preserving ordered 2D schedule (seed 001
 * §3.4.2): a serializable loom_for_records with .ordered = 1.
 *
 * Each record names one row of array A (.fields[0]) and one of B
 * (.fields[1]); two records conflict when they share a row.  The ordered
 * schedule keeps the serial (index) order of every conflicting pair, so
 * the result is bitwise the serial loop's, not just some serial order's
 * (the unordered rotation, rotation.c, promises only the latter).
 *
 * A's rows are cut into K blocks and B's into K blocks (K = threads),
 * balanced by a histogram of records; cell (I, J) holds the records of
 * A block I and B block J, in index order.  Worker t runs cells (t, 0),
 * (t, 1), ..., (t, K-1); it starts (t, J) once worker t-1 has finished
 * (t-1, J): the wavefront, with cell (I, J) in time step I + J, so 2K - 1
 * steps (7 on 4 x 4, against the unordered schedule's K = 4: seed 001
 * Fig. 3.8).  Each worker waits only on its predecessor, never on a
 * global barrier.
 *
 * Why that is the serial order: two records sharing A row a are in one
 * block row I; if their B blocks are J1 < J2 the earlier-run cell must
 * hold the earlier record, i.e. along every A row the B block never
 * decreases in index order, and along every B row the A block never
 * decreases.  Records sorted by (A row, B row) satisfy both (ratings by
 * user, then item); plan() checks it and refuses the loop with a message
 * when it does not hold.  Within a cell records run in index order.
 *
 * Under LOOM_CHECK=serial every record runs alone and first checks that
 * the previous record of its A row and of its B row (in index order) has
 * already run: a violated order stops the job with both indices.
 * One rank (with several the loop is refused: not built yet). */
#include "sched.h"

#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct ordered {
    int K;
    long n;
    size_t *off;     /* K*K + 1: cell c's records are [off[c], off[c+1]) of `order` */
    long *order;     /* record indices, cell by cell, index order inside */
    char *recs;      /* the records in that order (contiguous per cell) */
    long *prev[2];   /* check mode: the previous record of the same row (-1) */
};

/* Cut rows [0, nrows) into K blocks of about equal record counts: row r
 * is in block blk[r]. */
static void cut(const long *count, size_t nrows, long n, int K, int *blk)
{
    long seen = 0;
    for (size_t r = 0; r < nrows; r++) {
        long b = n ? (long)((__int128)seen * K / n) : 0;
        blk[r] = (int)(b < K ? b : K - 1);
        seen += count[r];
    }
}

static void ordered_free(struct ordered *o)
{
    free(o->off);
    free(o->order);
    free(o->recs);
    free(o->prev[0]);
    free(o->prev[1]);
}

/* Builds the cells of b's n records for K workers.  Returns LOOM_OK, or
 * LOOM_ERR_ARG after one message (a record without both rows, or an
 * order the wavefront cannot keep), LOOM_ERR_NOMEM. */
static int plan(const loom_body *b, long n, int K, struct ordered *o)
{
    size_t nrows[2] = {0, 0};
    *o = (struct ordered){.K = K, .n = n};
    for (long x = 0; x < n; x++)
        for (int f = 0; f < 2; f++) {
            uint64_t r = loom_field_row(&b->fields[f], b->data + (size_t)x * b->size);
            if (r == UINT64_MAX || r >= UINT32_MAX) {
                loom_log("loom_for: ordered: record %ld names no row (or one past 2^32) in "
                         ".fields[%d]", x, f);
                return LOOM_ERR_ARG;
            }
            if (r + 1 > nrows[f])
                nrows[f] = r + 1;
        }
    long *count[2] = {calloc(nrows[0] + 1, sizeof(long)), calloc(nrows[1] + 1, sizeof(long))};
    int *blk[2] = {malloc((nrows[0] + 1) * sizeof(int)), malloc((nrows[1] + 1) * sizeof(int))};
    long *last[2] = {malloc((nrows[0] + 1) * sizeof(long)), malloc((nrows[1] + 1) * sizeof(long))};
    int *cell = malloc((size_t)(n ? n : 1) * sizeof *cell);
    o->off = calloc((size_t)K * K + 1, sizeof *o->off);
    o->order = malloc((size_t)(n ? n : 1) * sizeof *o->order);
    o->recs = malloc((size_t)(n ? n : 1) * b->size);
    int rc = LOOM_ERR_NOMEM;
    if (!count[0] || !count[1] || !blk[0] || !blk[1] || !last[0] || !last[1] || !cell ||
        !o->off || !o->order || !o->recs)
        goto out;
    if (loom_icv.check_serial &&
        (!(o->prev[0] = malloc((size_t)(n ? n : 1) * sizeof(long))) ||
         !(o->prev[1] = malloc((size_t)(n ? n : 1) * sizeof(long)))))
        goto out;
#define ROW(x, f) ((size_t)loom_field_row(&b->fields[f], b->data + (size_t)(x) * b->size))
    for (long x = 0; x < n; x++)
        for (int f = 0; f < 2; f++)
            count[f][ROW(x, f)]++;
    for (int f = 0; f < 2; f++) {
        cut(count[f], nrows[f], n, K, blk[f]);
        memset(last[f], 0xff, (nrows[f] + 1) * sizeof(long)); /* -1: none yet */
    }
    rc = LOOM_ERR_ARG;
    for (long x = 0; x < n; x++) {
        size_t a = ROW(x, 0), c = ROW(x, 1);
        /* along a row of A the B block may not decrease, and vice versa */
        long pa = last[0][a], pc = last[1][c];
        if (pa >= 0 && blk[1][ROW(pa, 1)] > blk[1][c]) {
            loom_log("loom_for: ordered: records %ld and %ld share row %zu of .fields[0] but "
                     "the later one's .fields[1] row is in an earlier block: sort the records "
                     "by (.fields[0], .fields[1])", pa, x, a);
            goto out;
        }
        if (pc >= 0 && blk[0][ROW(pc, 0)] > blk[0][a]) {
            loom_log("loom_for: ordered: records %ld and %ld share row %zu of .fields[1] but "
                     "the later one's .fields[0] row is in an earlier block: sort the records "
                     "by (.fields[0], .fields[1])", pc, x, c);
            goto out;
        }
        if (o->prev[0]) {
            o->prev[0][x] = pa;
            o->prev[1][x] = pc;
        }
        last[0][a] = last[1][c] = x;
        cell[x] = blk[0][a] * K + blk[1][c];
        o->off[cell[x] + 1]++;
    }
#undef ROW
    for (int q = 0; q < K * K; q++)
        o->off[q + 1] += o->off[q];
    size_t *mine = malloc((size_t)K * K * sizeof *mine);
    if (!mine) {
        rc = LOOM_ERR_NOMEM;
        goto out;
    }
    memcpy(mine, o->off, (size_t)K * K * sizeof *mine);
    for (long x = 0; x < n; x++) { /* stable: index order inside a cell */
        size_t at = mine[cell[x]]++;
        o->order[at] = x;
        memcpy(o->recs + at * b->size, b->data + (size_t)x * b->size, b->size);
    }
    free(mine);
    rc = LOOM_OK;
out:
    for (int f = 0; f < 2; f++) {
        free(count[f]);
        free(blk[f]);
        free(last[f]);
    }
    free(cell);
    if (rc)
        ordered_free(o);
    return rc;
}

/* Check mode: record x runs now; the previous record of each of its rows
 * must have run already.  ran[] is per record (written by the worker that
 * runs it, read by later ones of the same rows). */
static void check_run(const struct ordered *o, const loom_body *b, long x, _Atomic char *ran)
{
    for (int f = 0; f < 2; f++) {
        long p = o->prev[f][x];
        if (p >= 0 && !atomic_load_explicit(&ran[p], memory_order_acquire))
            loom_abort(1, "check: ordered schedule violated: record %ld runs before record %ld, "
                          "which comes first and shares its row of .fields[%d]", x, p, f);
    }
    b->block(b->data + (size_t)x * b->size, 1, b->ctx);
    atomic_store_explicit(&ran[x], 1, memory_order_release);
}

/* Contract: one rank (refused with a message on several); runs every
 * record once, conflicting records in index order (see the top).  Threads:
 * omp_get_max_threads() workers; each spins (then yields) only on its
 * predecessor's cell counter.  LOOM_STATS prints cells and time steps. */
int loom_ordered_run(const loom_body *b, long n)
{
    if (loom_icv.nranks > 1) {
        loom_log("loom_for: the ordered schedule runs on one rank (threads) only");
        return LOOM_ERR_ARG;
    }
    if (!b->block || (!b->fields[0].array || !b->fields[1].array)) {
        loom_log("loom_for: .ordered needs loom_for_records with both .fields");
        return LOOM_ERR_ARG;
    }
    int K = omp_get_max_threads();
    if (K > n)
        K = n > 0 ? (int)n : 1;
    struct ordered o;
    int rc = plan(b, n, K, &o);
    if (rc)
        return rc;
    _Atomic int *done = calloc((size_t)K, sizeof *done); /* cells worker t finished */
    _Atomic char *ran = loom_icv.check_serial ? calloc((size_t)(n ? n : 1), 1) : NULL;
    if (!done || (loom_icv.check_serial && !ran)) {
        free(done);
        ordered_free(&o);
        return LOOM_ERR_NOMEM;
    }
#pragma omp parallel num_threads(K)
    {
        int t = omp_get_thread_num();
        for (int J = 0; J < K; J++) {
            int spins = 0;
            while (t > 0 && atomic_load_explicit(&done[t - 1], memory_order_acquire) <= J)
                if (++spins > 64)
                    sched_yield();
            size_t c = (size_t)t * K + J;
            if (ran)
                for (size_t y = o.off[c]; y < o.off[c + 1]; y++)
                    check_run(&o, b, o.order[y], ran);
            else if (o.off[c + 1] > o.off[c])
                b->block(o.recs + o.off[c] * b->size, (long)(o.off[c + 1] - o.off[c]), b->ctx);
            atomic_store_explicit(&done[t], J + 1, memory_order_release);
        }
    }
    if (loom_icv.stats)
        loom_log("loom_for: ordered: %d x %d cells, %d time steps, %ld records", K, K,
                 2 * K - 1, n);
    free(done);
    free((void *)ran);
    ordered_free(&o);
    return LOOM_OK;
}
