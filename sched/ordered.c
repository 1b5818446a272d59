/* ordered.c — Orion's dependence-preserving ordered 2D schedule (seed 001
 * §3.4.2): a serializable loom_for_records with .ordered = 1.
 *
 * Each record names one row of array A (.fields[0]) and one of B
 * (.fields[1]); two records conflict when they share a row.  The ordered
 * schedule keeps the serial (index) order of every conflicting pair, so
 * the result is bitwise the serial loop's, not just some serial order's
 * (the unordered rotation, rotation.c, promises only the latter).
 *
 * A's rows are cut into K blocks (K = threads) and B's into NB = COLS K
 * columns, balanced by a histogram of records; cell (I, J) holds the
 * records of A block I and B column J, in index order.  Worker t runs
 * cells (t, 0), (t, 1), ..., (t, NB-1); it starts (t, J) once worker t-1
 * has finished (t-1, J): the wavefront, with cell (I, J) in time step
 * I + J, so K + NB - 1 steps.  On Orion's K x K grid (COLS = 1) that is
 * 2K - 1 steps (7 on 4 x 4, against the unordered schedule's K = 4: seed
 * 001 Fig. 3.8); cutting B finer shortens the fill and drain to (K - 1) /
 * COLS of a grid step: K + NB - 1 steps of 1/COLS the size, 19 quarter
 * steps (4.75 grid steps) on 4 threads.  Each worker waits only on its
 * predecessor, never on a global barrier.
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
 *
 * Several ranks (Orion's wavefront across machines).  Each rank passes
 * its own records (.local); the serial order is rank 0's records, then
 * rank 1's, ..., so every rank's rows of A must come after the previous
 * rank's (as with a ratings file cut by user).  A is kept by its rank
 * (local policy, or plain memory), B is a ring allocation cut into P
 * partitions by a histogram of every rank's records.  The ring is
 * *mirrored* (dsm/policy_ring.c): in sub-epoch s rank p holds partition
 * s - p, so rank p works partitions 0, 1, ..., P - 1 in sub-epochs p ..
 * p + P - 1, each partition reaching rank p only after rank p - 1 ran it:
 * the same wavefront, with ranks for workers, 2P - 1 sub-epochs with work
 * (7 on 4 ranks: Orion's grid, since the ring has one partition a rank)
 * and one more to bring every partition back to where the next call
 * starts it (2P rotations: the ring's sub-epoch stays a multiple of P
 * between calls).  Inside a sub-epoch the rank's threads run the one-rank
 * wavefront over its A rows and the partition's B rows, cut into T blocks
 * and COLS T columns. */
#include "sched.h"

#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Columns of B per worker (see the top): 1 is Orion's K x K grid.  With 4,
 * loom-mf --ordered's epoch on 16 cores took 1.45x the unordered
 * schedule's on 1 x 4 (1.89x with the grid), 2.52x on 1 x 16 (2.85x) and
 * 1.46-1.72x on 2-16 ranks (1.51-1.83x): docs/bench-ordered.md. */
#define COLS 4

struct ordered {
    int K;           /* workers: blocks of A */
    int NB;          /* columns of B: COLS K on one rank, P COLS K on P ranks */
    long n;
    size_t *off;     /* K*NB + 1: cell c's records are [off[c], off[c+1]) of `order` */
    long *order;     /* record indices, cell by cell, index order inside */
    char *recs;      /* the records in that order (contiguous per cell) */
    long *prev[2];   /* check mode: the previous record of the same row (-1) */
};

/* Cut rows [lo, hi) into K blocks of about equal record counts: row r is
 * in block first + blk[r] (first + 0 .. first + K - 1). */
static void cut(const long *count, size_t lo, size_t hi, int K, int first, int *blk)
{
    long n = 0, seen = 0;
    for (size_t r = lo; r < hi; r++)
        n += count[r];
    for (size_t r = lo; r < hi; r++) {
        long b = n ? (long)((__int128)seen * K / n) : 0;
        blk[r] = first + (int)(b < K ? b : K - 1);
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

/* Builds the cells of b's n records for K workers: A's rows cut into K
 * blocks, B's into COLS K columns (bparts NULL) or, on P ranks, each of
 * the ring's P partitions bparts[0..P] cut into COLS K.  Returns LOOM_OK, or LOOM_ERR_ARG
 * after one message (a record without both rows, or an order the
 * wavefront cannot keep), LOOM_ERR_NOMEM.  Rank-local: no messages. */
static int plan(const loom_body *b, long n, int K, const size_t *bparts, int P,
                struct ordered *o)
{
    size_t nrows[2] = {0, 0};
    const int NB = (bparts ? P : 1) * COLS * K;
    *o = (struct ordered){.K = K, .NB = NB, .n = n};
    for (long x = 0; x < n; x++)
        for (int f = 0; f < 2; f++) {
            uint64_t r = loom_sched_field_row(&b->fields[f], b->data + (size_t)x * b->size);
            if (r == UINT64_MAX || r >= UINT32_MAX) {
                loom_rt_log("loom_for: ordered: record %ld names no row (or one past 2^32) in "
                         ".fields[%d]", x, f);
                return LOOM_ERR_ARG;
            }
            if (r + 1 > nrows[f])
                nrows[f] = r + 1;
        }
    if (bparts && nrows[1] > bparts[P]) {
        loom_rt_log("loom_for: ordered: a record names row %zu of .fields[1], past its %zu rows",
                 nrows[1] - 1, bparts[P]);
        return LOOM_ERR_ARG;
    }
    if (bparts)
        nrows[1] = bparts[P];
    long *count[2] = {calloc(nrows[0] + 1, sizeof(long)), calloc(nrows[1] + 1, sizeof(long))};
    int *blk[2] = {malloc((nrows[0] + 1) * sizeof(int)), malloc((nrows[1] + 1) * sizeof(int))};
    long *last[2] = {malloc((nrows[0] + 1) * sizeof(long)), malloc((nrows[1] + 1) * sizeof(long))};
    int *cell = malloc((size_t)(n ? n : 1) * sizeof *cell);
    o->off = calloc((size_t)K * NB + 1, sizeof *o->off);
    o->order = malloc((size_t)(n ? n : 1) * sizeof *o->order);
    o->recs = malloc((size_t)(n ? n : 1) * b->size);
    int rc = LOOM_ERR_NOMEM;
    if (!count[0] || !count[1] || !blk[0] || !blk[1] || !last[0] || !last[1] || !cell ||
        !o->off || !o->order || !o->recs)
        goto out;
    if (loom_rt_icv.check_serial &&
        (!(o->prev[0] = malloc((size_t)(n ? n : 1) * sizeof(long))) ||
         !(o->prev[1] = malloc((size_t)(n ? n : 1) * sizeof(long)))))
        goto out;
#define ROW(x, f) ((size_t)loom_sched_field_row(&b->fields[f], b->data + (size_t)(x) * b->size))
    for (long x = 0; x < n; x++)
        for (int f = 0; f < 2; f++)
            count[f][ROW(x, f)]++;
    cut(count[0], 0, nrows[0], K, 0, blk[0]);
    for (int q = 0; q < (bparts ? P : 1); q++)
        cut(count[1], bparts ? bparts[q] : 0, bparts ? bparts[q + 1] : nrows[1], COLS * K,
            q * COLS * K, blk[1]);
    for (int f = 0; f < 2; f++)
        memset(last[f], 0xff, (nrows[f] + 1) * sizeof(long)); /* -1: none yet */
    rc = LOOM_ERR_ARG;
    for (long x = 0; x < n; x++) {
        size_t a = ROW(x, 0), c = ROW(x, 1);
        /* along a row of A the B block may not decrease, and vice versa */
        long pa = last[0][a], pc = last[1][c];
        if (pa >= 0 && blk[1][ROW(pa, 1)] > blk[1][c]) {
            loom_rt_log("loom_for: ordered: records %ld and %ld share row %zu of .fields[0] but "
                     "the later one's .fields[1] row is in an earlier block: sort the records "
                     "by (.fields[0], .fields[1])", pa, x, a);
            goto out;
        }
        if (pc >= 0 && blk[0][ROW(pc, 0)] > blk[0][a]) {
            loom_rt_log("loom_for: ordered: records %ld and %ld share row %zu of .fields[1] but "
                     "the later one's .fields[0] row is in an earlier block: sort the records "
                     "by (.fields[0], .fields[1])", pc, x, c);
            goto out;
        }
        if (o->prev[0]) {
            o->prev[0][x] = pa;
            o->prev[1][x] = pc;
        }
        last[0][a] = last[1][c] = x;
        cell[x] = blk[0][a] * NB + blk[1][c];
        o->off[cell[x] + 1]++;
    }
#undef ROW
    for (int q = 0; q < K * NB; q++)
        o->off[q + 1] += o->off[q];
    size_t *mine = malloc((size_t)K * NB * sizeof *mine);
    if (!mine) {
        rc = LOOM_ERR_NOMEM;
        goto out;
    }
    memcpy(mine, o->off, (size_t)K * NB * sizeof *mine);
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

/* The wavefront over columns [c0, c0 + nc) of B blocks: worker t runs
 * cells (t, c0), (t, c0 + 1), ... in order, starting (t, c) once worker
 * t - 1 has finished it (done[t - 1] > c).  done[] counts columns for the
 * whole call.  Each worker spins (then yields) only on its predecessor. */
static void wavefront(const struct ordered *o, const loom_body *b, _Atomic int *done,
                      _Atomic char *ran, int c0, int nc)
{
    const int K = o->K;
#pragma omp parallel num_threads(K)
    {
        int t = omp_get_thread_num();
        for (int J = c0; J < c0 + nc; J++) {
            int spins = 0;
            while (t > 0 && atomic_load_explicit(&done[t - 1], memory_order_acquire) <= J)
                if (++spins > 64)
                    sched_yield();
            size_t c = (size_t)t * (size_t)o->NB + (size_t)J;
            if (ran)
                for (size_t y = o->off[c]; y < o->off[c + 1]; y++)
                    check_run(o, b, o->order[y], ran);
            else if (o->off[c + 1] > o->off[c])
                b->block(o->recs + o->off[c] * b->size, (long)(o->off[c + 1] - o->off[c]), b->ctx);
            atomic_store_explicit(&done[t], J + 1, memory_order_release);
        }
    }
}

/* Several ranks (see the top): checks the arrays and that the ranks' rows
 * of A come in rank order, cuts B's ring into P partitions by every
 * rank's records and mirrors it.  Collective; every rank returns the same
 * code (LOOM_ERR_ARG after a message naming what is wrong). */
static int ranks_prepare(const loom_body *b, long n, int local, size_t *bparts)
{
    const int P = loom_rt_icv.nranks, me = loom_rt_icv.rank;
    loom_dsm_alloc *A = loom_dsm_lookup_base(b->fields[0].array);
    loom_dsm_alloc *B = loom_dsm_lookup_base(b->fields[1].array);
#define SAY(...) (me == 0 ? loom_rt_log(__VA_ARGS__) : (void)0) /* the same on every rank: once */
    if (!local) {
        SAY("loom_for: ordered on several ranks takes each rank's own records (.local = 1)");
        return LOOM_ERR_ARG;
    }
    if (!B || !loom_dsm_policy_rotates(B->policy) || B->kind != LOOM_UNIT_ROW) {
        SAY("loom_for: ordered on several ranks rotates .fields[1]'s array: make it a row "
            "allocation with coherence \"ring\"");
        return LOOM_ERR_ARG;
    }
    if (A && !A->policy->plain) {
        SAY("loom_for: ordered on several ranks keeps .fields[0]'s array '%s' with each "
            "rank's records: make it coherence \"local\" (it is %s)", A->name, A->policy->name);
        return LOOM_ERR_ARG;
    }
    /* this rank's rows of A and of B: [lo, hi] of A, a histogram of B */
    int64_t *span = calloc(2 * (size_t)P, sizeof *span);
    uint32_t *w = calloc(B->nunits + 1, sizeof *w);
    int32_t bad = !span || !w;
    for (long x = 0; !bad && x < n; x++) {
        const char *rec = b->data + (size_t)x * b->size;
        uint64_t a = loom_sched_field_row(&b->fields[0], rec), r = loom_sched_field_row(&b->fields[1], rec);
        if (r >= B->nunits || a >= INT64_MAX) {
            bad = 2;
            break;
        }
        w[r]++;
        if (!span[2 * me + 1] || (int64_t)a + 1 < span[2 * me])
            span[2 * me] = (int64_t)a + 1; /* rows + 1: 0 is "no records" */
        if ((int64_t)a + 1 > span[2 * me + 1])
            span[2 * me + 1] = (int64_t)a + 1;
    }
    loom_allreduce(LOOM_IN_PLACE, &bad, 1, LOOM_INT32, LOOM_MAX);
    if (bad) {
        if (bad == 2)
            loom_rt_log("loom_for: ordered: a record names no row of .fields[1] ('%s', %zu rows) "
                     "(here or on another rank)", B->name, B->nunits);
        free(span);
        free(w);
        return bad == 2 ? LOOM_ERR_ARG : LOOM_ERR_NOMEM;
    }
    loom_allreduce(LOOM_IN_PLACE, span, 2 * (size_t)P, LOOM_INT64, LOOM_SUM);
    loom_allreduce(LOOM_IN_PLACE, w, B->nunits, LOOM_INT32, LOOM_SUM);
    int prev = -1, rc = LOOM_OK;
    for (int q = 0; q < P && !rc; q++) {
        if (!span[2 * q + 1])
            continue; /* no records */
        if (prev >= 0 && span[2 * q] <= span[2 * prev + 1]) {
            SAY("loom_for: ordered: rank %d's rows of .fields[0] (%lld..%lld) do not all "
                "come after rank %d's (%lld..%lld): the serial order is rank 0's records, "
                "then rank 1's, ...; give each rank the next range of rows", q,
                (long long)span[2 * q] - 1, (long long)span[2 * q + 1] - 1, prev,
                (long long)span[2 * prev] - 1, (long long)span[2 * prev + 1] - 1);
            rc = LOOM_ERR_ARG;
        }
        prev = q;
    }
    if (!rc) {
        loom_sched_balance(w, 0, B->nunits, P, bparts);
        if (B->policy->set_bounds(B, bparts, 1)) {
            SAY("loom_for: ring array '%s' is in the middle of a rotation; finish it "
                "(loom_ring_rotate) before an ordered loop", B->name);
            rc = LOOM_ERR_STATE;
        }
    }
    free(span);
    free(w);
    return rc;
#undef SAY
}

/* The plan of the last repeated loop site (IterStore's virtual iteration,
 * as plan.c caches the rotation's): the same body, ctx, records, fields,
 * workers and ranks find it again, so a repeated call neither re-plans nor
 * re-cuts the ring (docs/loop.md: a repeated loop's records and the rows
 * they name do not change between calls). */
static struct {
    int valid, K, P;
    long n;
    loom_body body;
    size_t *bparts;
    struct ordered o;
} cached;

static void cache_drop(void)
{
    if (cached.valid)
        ordered_free(&cached.o);
    free(cached.bparts);
    cached.valid = 0;
    cached.bparts = NULL;
}

void loom_sched_ordered_forget(const loom_dsm_alloc *a)
{
    if (cached.valid && (loom_dsm_lookup_base(cached.body.fields[0].array) == a ||
                         loom_dsm_lookup_base(cached.body.fields[1].array) == a))
        cache_drop();
}

/* Whether the cache holds this call's plan; on several ranks every rank
 * answers alike (one allreduce), so all re-plan together. */
static int cache_hit(const loom_body *b, long n, int K, int P)
{
    int32_t hit = cached.valid && cached.K == K && cached.P == P && cached.n == n &&
                  cached.body.block == b->block && cached.body.data == b->data &&
                  cached.body.size == b->size && cached.body.ctx == b->ctx &&
                  !memcmp(cached.body.fields, b->fields, sizeof b->fields);
    if (P > 1)
        loom_allreduce(LOOM_IN_PLACE, &hit, 1, LOOM_INT32, LOOM_MIN);
    return hit;
}

/* Contract: runs every record once, conflicting records in index order
 * (on several ranks: rank 0's records first, then rank 1's, ...; see the
 * top).  Collective on several ranks.  Threads: omp_get_max_threads()
 * workers per rank.  With repeated, the plan is kept for the next call
 * of the same site.  LOOM_STATS prints cells and time steps. */
int loom_sched_ordered_run(const loom_body *b, long n, int local, int repeated)
{
    if (!b->block || (!b->fields[0].array || !b->fields[1].array)) {
        loom_rt_log("loom_for: .ordered needs loom_for_records with both .fields");
        return LOOM_ERR_ARG;
    }
    const int P = loom_rt_icv.nranks;
    int K = omp_get_max_threads(), rc = LOOM_OK;
    if (K > n)
        K = n > 0 ? (int)n : 1;
    struct ordered o;
    size_t *bparts;
    int planned = 0;
    if (repeated && cache_hit(b, n, K, P)) {
        o = cached.o;
        bparts = cached.bparts;
        loom_dsm_alloc *B = loom_dsm_lookup_base(b->fields[1].array);
        if (P > 1 && B->policy->set_bounds(B, bparts, 1)) /* a no-op unless changed since */
            return LOOM_ERR_STATE;
    } else {
        bparts = P > 1 ? calloc((size_t)P + 1, sizeof *bparts) : NULL;
        if (P > 1 && !bparts)
            return LOOM_ERR_NOMEM;
        if (P > 1 && (rc = ranks_prepare(b, n, local, bparts))) {
            free(bparts);
            return rc;
        }
        planned = !(rc = plan(b, n, K, bparts, P, &o)); /* plan frees o when it fails */
        if (P > 1) /* every rank refuses together */
            loom_allreduce(LOOM_IN_PLACE, &rc, 1, LOOM_INT32, LOOM_MAX);
        if (!rc && repeated) {
            cache_drop();
            cached.valid = 1;
            cached.K = K;
            cached.P = P;
            cached.n = n;
            cached.body = *b;
            cached.bparts = bparts;
            cached.o = o;
            planned = 0; /* the cache owns o and bparts now */
            bparts = NULL;
        }
    }
    _Atomic int *done = calloc((size_t)K, sizeof *done); /* columns worker t finished */
    _Atomic char *ran = loom_rt_icv.check_serial ? calloc((size_t)(n ? n : 1), 1) : NULL;
    if (!rc && (!done || (loom_rt_icv.check_serial && !ran)))
        rc = LOOM_ERR_NOMEM;
    if (P == 1 && !rc) {
        wavefront(&o, b, done, ran, 0, o.NB);
    } else if (!rc) {
        loom_dsm_alloc *B = loom_dsm_lookup_base(b->fields[1].array);
        for (int s = 0; s < 2 * P; s++) {
            int J = s - loom_rt_icv.rank, q; /* the partition this rank holds: s - rank */
            B->policy->bounds(B, &q);
            if (J >= 0 && J < P) {
                if (q != J)
                    loom_abort(70, "loom_for: ordered: rank %d holds partition %d of '%s' in "
                               "sub-epoch %d, not %d (internal error)", loom_rt_icv.rank, q,
                               B->name, s, J);
                wavefront(&o, b, done, ran, J * COLS * K, COLS * K);
            }
            B->policy->rotate();
        }
    }
    if (loom_rt_icv.stats && !rc && P == 1)
        loom_rt_log("loom_for: ordered: %d x %d cells, %d time steps (%.2f of a %d x %d grid's), "
                 "%ld records", K, COLS * K, K + COLS * K - 1, (double)(K + COLS * K - 1) / COLS,
                 K, K, n);
    else if (loom_rt_icv.stats && !rc)
        loom_rt_log("loom_for: ordered: %d ranks x %d threads: %d x %d partitions, %d time steps "
                 "(sub-epochs with work), each a %d x %d wavefront of %d steps; %ld records here",
                 P, K, P, P, 2 * P - 1, K, COLS * K, K + COLS * K - 1, n);
    free(done);
    free((void *)ran);
    if (planned) { /* not cached: this call's own */
        ordered_free(&o);
        free(bparts);
    } else if (bparts != cached.bparts) {
        free(bparts);
    }
    if (rc)
        return rc;
    return P > 1 ? loom_dsm_barrier() : LOOM_OK;
}
