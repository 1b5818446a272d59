/* after_loop.c — code between loops reads current rows (docs/openmp.md,
 * "Code between loops"): 64 rows of one float, add merge.  For each sync
 * mode (bsp, ssp, hybrid), schedule (static, dynamic, guided) and round
 * length (one round, or 8 iterations a round), a data-parallel loop adds 1
 * to every row, iteration i to row i, so a rank writes only the rows of
 * its own block; after each loop, on every rank and thread, every row read
 * through a plain load, loom_at, loom_at_r and loom_at_base holds the
 * number of loops run so far (a rank that never touched another rank's
 * rows must not read them as they were); likewise after a serializable
 * loop whose iteration i writes row i.  Then between loops: rank 0
 * puts every row of an allocation no rank has read, a barrier, and every
 * rank reads it through loom_at, loom_at_r or loom_at_base (one each, on
 * allocations of their own, so that none refreshes rows for another).
 * Prints "after_loop: ok" on rank 0, or one line per wrong read (the
 * first 8 of each rank). */
#include <loom.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 64
static float *S;
static long bad;

static void body(long i, void *ctx)
{
    (void)ctx;
    *(float *)loom_at(S, (size_t)i) += 1;
}

/* the serializable loop's: iteration i writes row i, and only that */
static void deps(long i, loom_deps *d, void *ctx)
{
    (void)ctx;
    loom_writes(d, S, (size_t)i);
}

static void expect(const char *what, int k, float got, float want, int row)
{
    static const char *how[4] = {"a plain load", "loom_at", "loom_at_r", "loom_at_base"};
    if (got != want && bad++ < 8)
        printf("rank %d thread %d: %s: row %d read through %s is %g, not %g\n", loom_rank(),
               omp_get_thread_num(), what, row, how[k], got, want);
}

/* Every row of a, on every thread, through each form of the mask (bit k:
 * how[k]), holds want. */
static void check(float *a, float want, int forms, const char *what)
{
    long b = 0;
#pragma omp parallel reduction(+ : b)
    {
        long before = bad;
        float seen[ROWS]; /* plain loads first: before any accessor refreshes */
        for (int r = 0; r < ROWS; r++)
            seen[r] = a[r];
        const float *base = forms & 8 ? loom_at_base(a) : NULL;
        if (forms & 8 && !base)
            printf("rank %d: %s: loom_at_base gave NULL\n", loom_rank(), what), bad++;
        for (int r = 0; r < ROWS; r++) {
            if (forms & 1)
                expect(what, 0, seen[r], want, r);
            if (forms & 2)
                expect(what, 1, *(float *)loom_at(a, (size_t)r), want, r);
            if (forms & 4)
                expect(what, 2, *(const float *)loom_at_r(a, (size_t)r), want, r);
            if (base)
                expect(what, 3, base[r], want, r);
        }
        b = bad - before;
    }
    (void)b;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    loom_alloc_opts ao = {.name = "S", .unit = LOOM_UNIT_ROW, .row_size = sizeof(float),
                          .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT};
    if (!(S = loom_alloc(ROWS * sizeof(float), &ao)))
        return 1;
    static const char *mname[] = {"hybrid", "bsp", "ssp"}, *sname[] = {"static", "dynamic", "guided"};
    int loops = 0;
    char what[64];
    for (int m = LOOM_HYBRID; m <= LOOM_SSP; m++)
        for (int s = LOOM_STATIC; s <= LOOM_GUIDED; s++)
            for (long every = 0; every <= 8; every += 8) {
                loom_for_opts o = {.schedule = (loom_schedule)s, .sync = (loom_sync)m,
                                   .sync_every = every};
                if (loom_for(0, ROWS, body, NULL, &o))
                    return 1;
                snprintf(what, sizeof what, "after %s %s loop, %ld a round", mname[m], sname[s],
                         every);
                check(S, (float)++loops, 15, what);
                loom_barrier(); /* every rank read before the next loop writes */
            }
    /* A serializable loop (.deps: iteration i writes row i) on an
     * allocation of its own, whose rows the ranks have never read. */
    ao.name = "U";
    ao.coherence = "bsp"; /* serializable loops take bsp or ring arrays */
    float *U = loom_alloc(ROWS * sizeof(float), &ao);
    if (!U)
        return 1;
    float *keep = S;
    S = U;
    for (int k = 1; k <= 2; k++) {
        if (loom_for(0, ROWS, body, NULL, &(loom_for_opts){.schedule = LOOM_SERIALIZABLE,
                                                           .deps = deps}))
            return 1;
        snprintf(what, sizeof what, "after serializable loop %d", k);
        check(U, (float)k, 15, what);
        loom_barrier();
    }
    S = keep;
    ao.coherence = NULL;
    /* Rows no rank has read: rank 0 puts them, a barrier, and each
     * accessor, alone on its own allocation, reads what was put. */
    for (int k = 1; k <= 3; k++) {
        char name[2] = {(char)('T' + k), 0};
        ao.name = name;
        float *t = loom_alloc(ROWS * sizeof(float), &ao);
        if (!t)
            return 1;
        if (loom_rank() == 0)
            for (int r = 0; r < ROWS; r++)
                loom_row_put(t, (size_t)r, &(float){7});
        loom_barrier();
        check(t, 7, 1 << k, "after rank 0's puts and a barrier");
    }
    if (bad)
        printf("rank %d: %ld stale reads\n", loom_rank(), bad);
    long total = bad;
    loom_allreduce(LOOM_IN_PLACE, &total, 1, LOOM_INT64, LOOM_SUM);
    if (loom_rank() == 0 && !total)
        printf("after_loop: ok\n");
    loom_finalize();
    return total != 0;
}
