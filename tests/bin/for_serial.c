/* for_serial.c — serializable loops over random access patterns.
 *
 *   for_serial PLAN MODE DECL [BREAK]
 *     PLAN  rotation (each iteration writes one row of A and one of B) or
 *           groups (1-3 rows of C, in clusters: not k-partite)
 *     MODE  global (every rank sees the whole range) or local (each rank
 *           its own iterations; A's rows partitioned by rank)
 *     DECL  deps (a deps callback), recon (reconnaissance) or fields
 *           (records only: each record holds its iteration's number and
 *           the rows it touches, named by .fields; the groups plan then
 *           touches one or two rows of C, both fields naming C)
 *     then, in any order:
 *     break (the planner misplaces one iteration) or lie (the deps
 *           callback, or record 7's field, names the wrong row of A: the
 *           body still touches the right one)
 *     badrow (fields: record 5 names row 64 of A, which has 64)
 *     badfield (fields: .fields[1] is 3 bytes wide)
 *     records  run it as loom_for_records: a block body over records
 *           (each record is its iteration's number), laid out in plan
 *           order by the loop
 *     inplace (fields) with .in_place: the loop lays the records out in
 *           their own array; afterwards it must hold the same records
 *
 *   for_serial same [local]
 *     The k-partite fast path against the plan from the access sets (the
 *     hook loom_sched_general): the same loom_for_records loop, MF's
 *     shape with some iterations touching only one of the arrays, with its
 *     rows named by .fields, by a deps callback, and planned from the
 *     access sets, must hand the block body the same blocks (the same
 *     records in the same order in each cell) on every rank.  The sites
 *     are .repeated, so one worker (one rank, one thread) plans them too,
 *     and must hand the body several blocks, not the records in file
 *     order.
 *
 *   for_serial inline [local]
 *     LOOM_FOR, the inlined data-parallel loop: every iteration of the
 *     job's range (or, local, of every rank's own range) runs exactly once
 *     over all ranks and threads.
 *
 * Every iteration reads the rows it writes, mixes their hashes with its
 * id, writes the mix back and appends its id to each row's log.  Rank 0
 * then checks: every iteration appears exactly once in every row it
 * writes; the logs' orders have no cycle (a topological sort gives a
 * serial order); replaying the iterations serially in that order gives
 * bit-identical rows.  Prints "ok ..." lines for the .t file to count;
 * exits non-zero on failure. */
#include <loom.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rng.h"

#define CAP 160
typedef struct { uint64_t hash; int32_t n, pad; int32_t log[CAP]; } row_t;

enum { NA = 64, NB = 48, NC = 240, N = 1500, MAXR = 3 };
static int rotation, local, recon, fields, lie, R, me;
static row_t *A, *B, *C;

/* Iteration k of rank r: which rows of which arrays it writes. */
typedef struct { int n; row_t *arr[MAXR]; int row[MAXR]; } its;
static void iteration(int r, long k, its *t)
{
    uint64_t s = mix(((uint64_t)r << 32 | (uint64_t)k) * 7919 + (uint64_t)(rotation * 2 + local));
    if (rotation) {
        int a = (int)(next(&s) % NA);
        if (local) /* A partitioned by rank */
            a = r * (NA / R) + (int)(next(&s) % (uint64_t)(NA / R));
        t->n = 2;
        t->arr[0] = A, t->row[0] = a;
        t->arr[1] = B, t->row[1] = (int)(next(&s) % NB);
        return;
    }
    /* clusters of 8 rows; in local mode rank r mostly uses its own clusters */
    int clusters = NC / 8, c = (int)(next(&s) % (uint64_t)clusters);
    if (local && next(&s) % 10)
        c = r * (clusters / R) + (int)(next(&s) % (uint64_t)(clusters / R));
    t->n = 1 + (int)(next(&s) % (fields ? 2 : MAXR)); /* two fields at most */
    for (int x = 0; x < t->n; x++) {
        int row;
        do {
            row = c * 8 + (int)(next(&s) % 8);
            if (next(&s) % 50 == 0)
                row = (int)(next(&s) % NC); /* a rare bridge between clusters */
            for (int y = 0; y < x; y++)
                if (t->row[y] == row)
                    row = -1;
        } while (row < 0);
        t->arr[x] = C, t->row[x] = row;
    }
}

static int who(void) { return local ? me : 0; }
static long id_of(int r, long k) { return local ? (long)r << 20 | k : k; }

static void apply(its *t, long id, row_t **rows)
{
    uint64_t h = mix((uint64_t)id);
    for (int x = 0; x < t->n; x++)
        h = mix(h ^ rows[x]->hash);
    for (int x = 0; x < t->n; x++) {
        rows[x]->hash = mix(rows[x]->hash ^ h ^ (uint64_t)x);
        if (rows[x]->n == CAP) {
            fprintf(stderr, "for_serial: a row's log overflowed\n");
            exit(3);
        }
        rows[x]->log[rows[x]->n++] = (int32_t)id;
    }
}

static void body(long k, void *ctx)
{
    (void)ctx;
    its t;
    row_t *rows[MAXR];
    iteration(who(), k, &t);
    for (int x = 0; x < t.n; x++)
        rows[x] = loom_at(t.arr[x], (size_t)t.row[x]);
    apply(&t, id_of(who(), k), rows);
}

/* loom_for_records: the same body over a block of records (iteration
 * numbers). */
static void block(const void *recs, long n, void *ctx)
{
    const long *r = recs;
    for (long x = 0; x < n; x++)
        body(r[x], ctx);
}

/* With .fields: the record also names the iteration's rows (-1: none). */
typedef struct { long k; int32_t row[2]; } fieldrec;
static void field_block(const void *recs, long n, void *ctx)
{
    const fieldrec *r = recs;
    for (long x = 0; x < n; x++)
        body(r[x].k, ctx);
}

static void deps(long k, loom_deps *d, void *ctx)
{
    (void)ctx;
    its t;
    iteration(who(), k, &t);
    for (int x = 0; x < t.n; x++) {
        int row = t.row[x];
        if (lie && t.arr[x] == A && k == 7)
            row = (row + NA / 2) % NA; /* names the wrong row (another block) */
        loom_writes(d, t.arr[x], (size_t)row);
    }
}

/* ---- rank 0's verification ---------------------------------------------- */
static long nit;                 /* all iterations of all ranks */
static long *ids;                /* index -> id */
static its *all;
static long index_of(long id)
{
    long lo = 0, hi = nit - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (ids[mid] == id)
            return mid;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int verify(row_t *fa, row_t *fb, row_t *fc)
{
    /* exactly once: each (iteration, row) write appears once */
    long writes = 0, logged = 0;
    row_t *fin[3] = {fa, fb, fc};
    int nrows[3] = {NA, NB, NC};
    for (long i = 0; i < nit; i++)
        writes += all[i].n;
    for (int a = 0; a < 3; a++)
        for (int r = 0; r < nrows[a]; r++)
            logged += fin[a][r].n;
    if (writes != logged) {
        printf("not ok - %ld writes logged, %ld expected\n", logged, writes);
        return 1;
    }
    for (long i = 0; i < nit; i++)
        for (int x = 0; x < all[i].n; x++) {
            int a = all[i].arr[x] == A ? 0 : all[i].arr[x] == B ? 1 : 2, hits = 0;
            row_t *f = &fin[a][all[i].row[x]];
            for (int y = 0; y < f->n; y++)
                hits += f->log[y] == ids[i];
            if (hits != 1) {
                printf("not ok - iteration %ld appears %d times in its row\n", ids[i], hits);
                return 1;
            }
        }
    printf("ok - every iteration ran exactly once (%ld iterations, %ld row writes)\n", nit, writes);
    /* the serial order: Kahn's algorithm over consecutive log entries */
    long *indeg = calloc((size_t)nit, sizeof *indeg), *order = malloc((size_t)nit * sizeof *order);
    for (int a = 0; a < 3; a++)
        for (int r = 0; r < nrows[a]; r++)
            for (int y = 1; y < fin[a][r].n; y++)
                indeg[index_of(fin[a][r].log[y])]++;
    long head = 0, tail = 0;
    for (long i = 0; i < nit; i++)
        if (!indeg[i])
            order[tail++] = i;
    while (head < tail) {
        long i = order[head++];
        for (int x = 0; x < all[i].n; x++) {
            int a = all[i].arr[x] == A ? 0 : all[i].arr[x] == B ? 1 : 2;
            row_t *f = &fin[a][all[i].row[x]];
            for (int y = 0; y + 1 < f->n; y++)
                if (f->log[y] == ids[i] && --indeg[index_of(f->log[y + 1])] == 0)
                    order[tail++] = index_of(f->log[y + 1]);
        }
    }
    free(indeg);
    if (tail != nit) {
        printf("not ok - the logs' orders have a cycle: no serial order\n");
        free(order);
        return 1;
    }
    /* replay serially in that order */
    row_t *re[3];
    for (int a = 0; a < 3; a++)
        re[a] = calloc((size_t)nrows[a], sizeof(row_t));
    for (long h = 0; h < nit; h++) {
        its *t = &all[order[h]];
        row_t *rows[MAXR];
        for (int x = 0; x < t->n; x++)
            rows[x] = &re[t->arr[x] == A ? 0 : t->arr[x] == B ? 1 : 2][t->row[x]];
        apply(t, ids[order[h]], rows);
    }
    free(order);
    int bad = 0;
    for (int a = 0; a < 3; a++) {
        for (int r = 0; r < nrows[a] && !bad; r++)
            if (re[a][r].hash != fin[a][r].hash || re[a][r].n != fin[a][r].n) {
                printf("not ok - serial replay differs at row %d of %c\n", r, "ABC"[a]);
                bad = 1;
            }
        free(re[a]);
    }
    if (bad)
        return 1;
    printf("ok - the result equals the serial order found (%ld iterations)\n", nit);
    return 0;
}

/* ---- same: the fast path's layout against the general one ---------------- */
typedef struct { int32_t a, b, k; } pairrec;
typedef struct { uint64_t hash; long n; } blk;
static blk *blocks;
static long nblocks;
static int32_t *order; /* when set: the records' ids in the order the body got them */
static long norder;
static void record_block(const void *recs, long n, void *ctx)
{
    (void)ctx;
    const pairrec *v = recs;
    uint64_t h = 0;
    for (long x = 0; x < n; x++)
        h = mix(h ^ (uint64_t)v[x].k);
#pragma omp critical
    {
        blocks[nblocks++] = (blk){h, n};
        for (long x = 0; order && x < n; x++)
            order[norder++] = v[x].k;
    }
}
static void pair_deps(long k, loom_deps *d, void *ctx)
{
    const pairrec *v = ctx;
    if (v[k].a >= 0)
        loom_writes(d, A, (size_t)v[k].a);
    if (v[k].b >= 0)
        loom_writes(d, B, (size_t)v[k].b);
}
static int by_block(const void *x, const void *y)
{
    const blk *a = x, *b = y;
    return a->hash != b->hash ? (a->hash < b->hash ? -1 : 1) : (a->n > b->n) - (a->n < b->n);
}

static int same_layout(int loc)
{
    extern int loom_sched_general;
    enum { NRA = 3000, NRB = 700, NREC = 40000 };
    R = loom_size(), me = loom_rank();
    loom_alloc_opts ro = {.unit = LOOM_UNIT_ROW, .row_size = 64, .name = "A"};
    A = loom_alloc((size_t)NRA * 64, &ro);
    ro.name = "B";
    ro.coherence = R > 1 ? "ring" : NULL;
    B = loom_alloc((size_t)NRB * 64, &ro);
    long n = NREC + (loc ? 97 * me : 0);
    pairrec *v = malloc((size_t)n * sizeof *v);
    uint64_t s = 99 + (uint64_t)(loc ? me : 0);
    for (long k = 0; k < n; k++) { /* skewed rows; 1 in 50 without A, 1 in 40 without B */
        uint64_t u = next(&s) % 1000, w = next(&s) % (NRA / (loc ? R : 1));
        int32_t a = (int32_t)(u < 500 ? w % 300 : w) + (loc ? me * (NRA / R) : 0);
        v[k] = (pairrec){next(&s) % 50 ? a : -1, next(&s) % 40 ? (int32_t)(next(&s) % NRB) : -1,
                         (int32_t)k};
    }
    /* the rows by .fields, by deps (both the fast path), from the access
     * sets; repeated sites (one worker plans those too), told apart by
     * their ctx (a copy of the records for the third) */
    pairrec *v2 = malloc((size_t)n * sizeof *v2);
    memcpy(v2, v, (size_t)n * sizeof *v2);
    void *ctx[3] = {NULL, v, v2};
    blk *got[3];
    long ngot[3];
    int inorder = 1; /* .fields: the block body got the records in file order */
    for (int g = 0; g < 3; g++) {
        loom_sched_general = g == 2;
        blocks = malloc((size_t)n * sizeof *blocks);
        nblocks = 0;
        order = g == 0 ? malloc((size_t)n * sizeof *order) : NULL;
        norder = 0;
        loom_for_opts o = {.schedule = LOOM_SERIALIZABLE, .local = loc, .deps = pair_deps,
                           .repeated = 1};
        if (g == 0) {
            o.deps = NULL;
            o.fields[0] = LOOM_FIELD(A, pairrec, a);
            o.fields[1] = LOOM_FIELD(B, pairrec, b);
        }
        if (loom_for_records(v, sizeof *v, n, record_block, ctx[g], &o))
            return 4;
        for (long x = 0; order && x < norder; x++)
            inorder &= order[x] == x;
        free(order);
        order = NULL;
        qsort(blocks, (size_t)nblocks, sizeof *blocks, by_block);
        got[g] = blocks, ngot[g] = nblocks;
    }
    /* one worker runs the plan-order layout too: several blocks, not the
     * records in file order */
    if (R == 1 && omp_get_max_threads() == 1)
        printf("%s - one worker runs the plan-order layout (%ld blocks, records %sin file "
               "order)\n", ngot[0] > 1 && !inorder ? "ok" : "not ok", ngot[0],
               inorder ? "" : "not ");
    loom_sched_general = 0;
    int bad = 0;
    for (int g = 1; g < 3; g++)
        bad |= ngot[0] != ngot[g] || memcmp(got[0], got[g], (size_t)ngot[0] * sizeof *got[0]);
    long cells = ngot[0], recs = 0;
    for (long x = 0; x < ngot[0]; x++)
        recs += got[0][x].n;
    int64_t all[2] = {bad || (loc && recs != n), recs}; /* every record once */
    loom_allreduce(LOOM_IN_PLACE, all, 2, LOOM_INT64, LOOM_SUM);
    all[0] |= !loc && all[1] != n;
    if (me == 0)
        printf("%s - the blocks planned from .fields equal those from deps and from the access "
               "sets on every rank (%ld blocks, %ld records on rank 0, %lld in all)\n",
               all[0] ? "not ok" : "ok", cells, recs, (long long)all[1]);
    free(got[0]), free(got[1]), free(got[2]), free(v), free(v2);
    loom_free(A);
    loom_free(B);
    loom_finalize();
    return all[0] != 0;
}

/* LOOM_FOR: counts per iteration summed over ranks must all be 1. */
static int inline_loop(int loc)
{
    int R = loom_size(), me = loom_rank();
    long n = loc ? 1000 + me : 10007, total = loc ? 1000L * R + (long)R * (R - 1) / 2 : n;
    int32_t *cnt = calloc((size_t)total, sizeof *cnt);
    long first = loc ? 1000L * me + (long)me * (me - 1) / 2 : 0; /* this rank's ids */
    LOOM_FOR(i, 0, n, &(loom_for_opts){.local = loc})
        __atomic_add_fetch(&cnt[first + i], 1, __ATOMIC_RELAXED);
    loom_allreduce(LOOM_IN_PLACE, cnt, (size_t)total, LOOM_INT32, LOOM_SUM);
    long bad = 0;
    for (long i = 0; i < total; i++)
        bad += cnt[i] != 1;
    if (me == 0)
        printf("%s - LOOM_FOR ran each of %ld iterations exactly once (%ld wrong)\n",
               bad ? "not ok" : "ok", total, bad);
    free(cnt);
    loom_finalize();
    return bad != 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "same")) {
        if (loom_init(&argc, &argv))
            return 2;
        return same_layout(argc > 2 && !strcmp(argv[2], "local"));
    }
    if (argc >= 2 && !strcmp(argv[1], "inline")) {
        if (loom_init(&argc, &argv))
            return 2;
        return inline_loop(argc > 2 && !strcmp(argv[2], "local"));
    }
    if (argc < 4 || loom_init(&argc, &argv))
        return 2;
    rotation = !strcmp(argv[1], "rotation");
    local = !strcmp(argv[2], "local");
    recon = !strcmp(argv[3], "recon");
    fields = !strcmp(argv[3], "fields");
    int brk = 0, records = 0, badrow = 0, badfield = 0, inplace = 0;
    for (int a = 4; a < argc; a++) {
        brk |= !strcmp(argv[a], "break");
        lie |= !strcmp(argv[a], "lie");
        badrow |= !strcmp(argv[a], "badrow");
        badfield |= !strcmp(argv[a], "badfield");
        records |= !strcmp(argv[a], "records");
        inplace |= !strcmp(argv[a], "inplace");
    }
    R = loom_size(), me = loom_rank();
    loom_alloc_opts ro = {.unit = LOOM_UNIT_ROW, .row_size = sizeof(row_t)};
    ro.name = "A";
    A = loom_alloc(NA * sizeof(row_t), &ro);
    ro.name = "B";
    ro.coherence = R > 1 ? "ring" : NULL;
    B = loom_alloc(NB * sizeof(row_t), &ro);
    ro.name = "C";
    ro.coherence = NULL;
    C = loom_alloc(NC * sizeof(row_t), &ro);
    if (!A || !B || !C)
        return 2;
    if (brk) {
        extern int loom_sched_break_next_plan;
        loom_sched_break_next_plan = 1;
    }
    long n = local ? N / R + me : N; /* local: ranks differ in size */
    loom_for_opts o = {.schedule = LOOM_SERIALIZABLE, .local = local,
                       .deps = recon ? NULL : deps, .repeated = 1};
    if (fields) {
        fieldrec *rec = malloc((size_t)(n + 1) * sizeof *rec);
        for (long k = 0; k < n; k++) {
            its t;
            iteration(who(), k, &t);
            rec[k] = (fieldrec){k, {t.row[0], t.n > 1 ? t.row[1] : -1}};
            if (lie && k == 7)
                rec[k].row[0] = (rec[k].row[0] + NA / 2) % NA; /* another block of A */
            if (badrow && k == 5)
                rec[k].row[0] = NA;
        }
        o.deps = NULL;
        o.fields[0] = LOOM_FIELD(rotation ? A : C, fieldrec, row[0]);
        o.fields[1] = LOOM_FIELD(rotation ? B : C, fieldrec, row[1]);
        o.fields[1].size = badfield ? 3 : o.fields[1].size;
        o.in_place = inplace;
        fieldrec *was = malloc((size_t)(n + 1) * sizeof *was);
        memcpy(was, rec, (size_t)n * sizeof *rec);
        int rc = loom_for_records(rec, sizeof *rec, n, field_block, NULL, &o);
        /* the same records afterwards, wherever they are now (each record
         * names its own iteration k) */
        long moved = 0, same = 1;
        for (long k = 0; k < n && !rc; k++) {
            moved += rec[k].k != k;
            same &= rec[k].k >= 0 && rec[k].k < n && !memcmp(&rec[k], &was[rec[k].k], sizeof *rec);
        }
        if (inplace && !rc)
            printf("%s - rank %d: the records laid out in place are the same records (%ld "
                   "moved)\n", same && (moved > 0 || n < 2) ? "ok" : "not ok", me, moved);
        free(was);
        free(rec);
        if (rc)
            return 4;
    } else if (records) {
        long *rec = malloc((size_t)(n + 1) * sizeof *rec);
        for (long k = 0; k < n; k++)
            rec[k] = k;
        if (loom_for_records(rec, sizeof *rec, n, block, NULL, &o))
            return 4;
        free(rec);
    } else if (loom_for(0, n, body, NULL, &o)) {
        return 4;
    }
    /* everyone's view of the final rows */
    loom_ring_collect(B);
    row_t *fa = malloc(sizeof(row_t) * NA), *fb = malloc(sizeof(row_t) * NB),
          *fc = malloc(sizeof(row_t) * NC);
    for (int r = 0; r < NA; r++)
        memcpy(&fa[r], loom_row_get(A, (size_t)r), sizeof(row_t));
    memcpy(fb, B, sizeof(row_t) * NB);
    for (int r = 0; r < NC; r++)
        memcpy(&fc[r], loom_row_get(C, (size_t)r), sizeof(row_t));
    int bad = 0;
    if (me == 0) {
        nit = 0;
        for (int r = 0; r < (local ? R : 1); r++)
            nit += local ? N / R + r : N;
        ids = malloc((size_t)nit * sizeof *ids);
        all = malloc((size_t)nit * sizeof *all);
        long i = 0;
        for (int r = 0; r < (local ? R : 1); r++)
            for (long k = 0; k < (local ? N / R + r : N); k++, i++) {
                ids[i] = id_of(r, k);
                iteration(r, k, &all[i]);
            }
        bad = verify(fa, fb, fc);
        free(ids);
        free(all);
    }
    free(fa), free(fb), free(fc);
    loom_bcast(&bad, sizeof bad, 0);
    loom_finalize();
    return bad;
}
