/* ring_for_check.c — loom_for_ring's promises, on any ranks and threads:
 *   ring_for_check ROWS CALLS
 * runs CALLS rotations over a ring allocation of ROWS rows (row units of
 * 4 int64) and checks
 *   - exclusivity: no two threads of a rank hold a row at once (a flag in
 *     the row, taken with an atomic exchange; thread 0 holds its first
 *     block of each sub-epoch 20 ms longer; across ranks the ring's
 *     ownership keeps rows apart, and LOOM_CHECK=dsm would catch a
 *     foreign access);
 *   - coverage: every worker (rank, thread) meets every block exactly once
 *     per call, the blocks are the R x T floor cut of [0, ROWS), and the
 *     last flag is set on a worker's T-th block of each sub-epoch only;
 *   - nothing lost: after the calls every row counts CALLS x P visits
 *     (each visit adds 1 to the row, so the ring carried every update on).
 * Prints "ring_for_check: ok ROWS=.. P=.. calls=.." on rank 0, else a
 * reason, exit 1.  The variant `skip` leaves out one sub-step's body
 * (thread 0's second block): the coverage check must fail. */
#include <loom.h>

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctx {
    int64_t *rows;
    long n;
    int R, T, skip;
    int *seen;  /* [T][P blocks]: visits of each block by each thread */
    int *subs;  /* [T]: body calls of each thread in the current call */
    int bad;    /* an exclusivity or last-flag failure */
};

static void body(const loom_ring_block *b, void *p)
{
    struct ctx *c = p;
    const int P = c->R * c->T, i = b->thread;
    int s = c->subs[i]++;
    if (c->skip && i == 0 && s == 1)
        return;
    for (long r = b->lo; r < b->hi; r++)
        if (__atomic_exchange_n(&c->rows[4 * r + 1], 1, __ATOMIC_ACQ_REL) != 0)
            __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
    for (long r = b->lo; r < b->hi; r++)
        c->rows[4 * r] += 1;
    if (i == 0 && s % c->T == 0)
        usleep(20000); /* a slow worker: a neighbour that does not wait would meet its rows */
    for (long r = b->lo; r < b->hi; r++)
        __atomic_store_n(&c->rows[4 * r + 1], 0, __ATOMIC_RELEASE);
    if (b->last != ((s % c->T) == c->T - 1))
        __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
    /* which block is it? */
    int x = -1;
    for (int q = 0; q < P; q++)
        if ((long long)q * c->n / P == b->lo && (long long)(q + 1) * c->n / P == b->hi)
            x = q;
    if (x < 0)
        __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
    else
        c->seen[i * P + x]++;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 3) {
        fprintf(stderr, "usage: ring_for_check ROWS CALLS [skip]\n");
        return 2;
    }
    struct ctx c = {.n = atol(argv[1]), .R = loom_size(), .T = omp_get_max_threads(),
                    .skip = argc > 3 && !strcmp(argv[3], "skip")};
    const int calls = atoi(argv[2]), P = c.R * c.T;
    c.rows = loom_alloc((size_t)c.n * 4 * sizeof(int64_t),
                        &(loom_alloc_opts){.name = "rows", .coherence = "ring",
                                           .unit = LOOM_UNIT_ROW, .row_size = 4 * sizeof(int64_t)});
    c.seen = calloc((size_t)c.T * P, sizeof *c.seen);
    c.subs = calloc((size_t)c.T, sizeof *c.subs);
    if (!c.rows || !c.seen || !c.subs)
        return 1;
    void *start;
    size_t bytes;
    loom_ring_part(c.rows, &start, &bytes, NULL, NULL);
    memset(start, 0, bytes);
    const char *why = NULL;
    for (int k = 0; k < calls && !why; k++) {
        memset(c.seen, 0, sizeof *c.seen * (size_t)c.T * P);
        memset(c.subs, 0, sizeof *c.subs * (size_t)c.T);
        if (loom_for_ring(c.rows, c.n, body, &c) != LOOM_OK)
            why = "loom_for_ring failed";
        /* every (worker, block) pair once: sum the per-thread tables over ranks */
        int32_t *all = calloc((size_t)P * P, sizeof *all);
        for (int i = 0; i < c.T; i++)
            for (int x = 0; x < P; x++)
                all[(size_t)(loom_rank() * c.T + i) * P + x] = c.seen[i * P + x];
        loom_allreduce(LOOM_IN_PLACE, all, (size_t)P * P, LOOM_INT32, LOOM_SUM);
        for (size_t q = 0; q < (size_t)P * P && !why; q++)
            if (all[q] != 1)
                why = "a worker met a block other than once";
        free(all);
    }
    int32_t bad = c.bad;
    loom_allreduce(LOOM_IN_PLACE, &bad, 1, LOOM_INT32, LOOM_MAX);
    if (!why && bad)
        why = "two threads held a row at once, a block was not a floor-cut block, or last was wrong";
    loom_ring_collect(c.rows);
    for (long r = 0; r < c.n && !why; r++)
        if (c.rows[4 * r] != (int64_t)calls * P)
            why = "a row lost visits";
    int32_t fail = why != NULL;
    loom_allreduce(LOOM_IN_PLACE, &fail, 1, LOOM_INT32, LOOM_MAX);
    if (why)
        fprintf(stderr, "ring_for_check: rank %d: %s\n", loom_rank(), why);
    else if (!fail && loom_rank() == 0)
        printf("ring_for_check: ok ROWS=%ld P=%d calls=%d\n", c.n, P, calls);
    loom_free(c.rows);
    free(c.seen);
    free(c.subs);
    loom_finalize();
    return fail;
}
