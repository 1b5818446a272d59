/* omp_forms.c — OpenMP's forms on Loom (docs/openmp.md): LOOM_FOR with
 * clauses passed through (private, firstprivate, schedule), LOOM_FOR_REDUCE
 * across threads and ranks (SUM of long and double with a starting value,
 * MIN and MAX of int), loom_block, and LOOM_SINGLE whose writes (rows
 * through loom_at, pages by plain stores) every rank then reads by plain
 * loads.  Every check compares with the serial loop's exact answer.
 * Prints "omp_forms: ok" on rank 0, or one line per failed check. */
#include <loom.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int fails;
#define CHECK(c, ...) do { if (!(c)) { printf("rank %d: ", loom_rank()); printf(__VA_ARGS__); \
    putchar('\n'); fails++; } } while (0)

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    const long n = 10007;
    int R = loom_size();

    /* reductions: a starting value counted once, every iteration once */
    long total = 5;
    LOOM_FOR_REDUCE(i, 0, n, NULL, SUM, total)
        total += i;
    CHECK(total == 5 + n * (n - 1) / 2, "SUM long: %ld, not %ld", total, 5 + n * (n - 1) / 2);
    double half = 0.25;
    LOOM_FOR_REDUCE(i, 0, n, NULL, SUM, half, schedule(dynamic, 7))
        half += 0.5 * (double)i;
    CHECK(half == 0.25 + 0.25 * (double)(n * (n - 1)), "SUM double: %.17g", half);
    int lo = 1 << 30, hi = -1;
    LOOM_FOR_REDUCE(i, 0, n, NULL, MIN, lo)
        if ((int)((i * 7919) % n) + 3 < lo)
            lo = (int)((i * 7919) % n) + 3;
    LOOM_FOR_REDUCE(i, 0, n, NULL, MAX, hi)
        if ((int)((i * 7919) % n) > hi)
            hi = (int)((i * 7919) % n);
    CHECK(lo == 3 && hi == n - 1, "MIN/MAX int: %d %d, not 3 %ld", lo, hi, n - 1);

    /* clauses passed through: a private inner index, a firstprivate offset */
    long *out = loom_alloc((size_t)n * sizeof *out, &(loom_alloc_opts){.name = "out"});
    CHECK(out != NULL, "loom_alloc failed");
    long j, k = 1000;
    LOOM_FOR(i, 0, n, NULL, private(j) firstprivate(k) schedule(dynamic, 3)) {
        long s = 0;
        for (j = 0; j < i % 5; j++)
            s += j;
        k += 1; /* firstprivate: each thread's own copy, starting at 1000 */
        out[i] = s + (k > 1000 ? 1000 : 0);
    }
    loom_barrier();
    long bad = 0;
    for (long i = 0; i < n; i++) {
        long s = 0;
        for (long q = 0; q < i % 5; q++)
            s += q;
        bad += out[i] != s + 1000;
    }
    CHECK(bad == 0 && k == 1000, "clauses: %ld wrong elements, k %ld", bad, k);

    /* loom_block: the ranks' blocks cover [0, n) once */
    loom_span b = loom_block(0, n);
    long cover[2] = {b.hi - b.lo, 0};
    for (long i = b.lo; i < b.hi; i++)
        cover[1] += i;
    loom_allreduce(LOOM_IN_PLACE, cover, 2, LOOM_INT64, LOOM_SUM);
    CHECK(cover[0] == n && cover[1] == n * (n - 1) / 2, "loom_block: %ld iterations, sum %ld",
          cover[0], cover[1]);

    /* LOOM_SINGLE: rank 0's writes, every rank's plain loads */
    double *rows = loom_alloc(64 * 2 * sizeof(double),
                              &(loom_alloc_opts){.name = "rows", .unit = LOOM_UNIT_ROW,
                                                 .row_size = 2 * sizeof(double),
                                                 .merge = LOOM_MERGE_ADD, .type = LOOM_DOUBLE});
    CHECK(rows != NULL, "loom_alloc failed");
    int ran = 0;
    for (int round = 1; round <= 2; round++) {
        LOOM_SINGLE {
            ran++;
            for (size_t r = 0; r < 64; r++) {
                double *x = loom_at(rows, r);
                x[0] = round * 100.0 + (double)r;
                x[1] = -x[0];
            }
            for (long i = 0; i < n; i++)
                out[i] = round * i;
        }
        long wrong = 0;
#pragma omp parallel for reduction(+ : wrong)
        for (int r = 0; r < 64; r++)
            wrong += rows[2 * r] != round * 100.0 + r || rows[2 * r + 1] != -(round * 100.0 + r);
        for (long i = 0; i < n; i++)
            wrong += out[i] != round * i;
        CHECK(wrong == 0, "LOOM_SINGLE round %d: %ld wrong reads", round, wrong);
        loom_barrier(); /* every rank read before rank 0 writes again */
    }
    CHECK(ran == (loom_rank() == 0 ? 2 : 0), "LOOM_SINGLE ran its block %d times here", ran);
    int runs = ran;
    loom_allreduce(LOOM_IN_PLACE, &runs, 1, LOOM_INT32, LOOM_SUM);
    CHECK(runs == 2, "LOOM_SINGLE ran %d times in the job", runs);

    int total_fails = fails;
    loom_allreduce(LOOM_IN_PLACE, &total_fails, 1, LOOM_INT32, LOOM_SUM);
    if (loom_rank() == 0 && !total_fails)
        printf("omp_forms: ok on %d rank(s)\n", R);
    loom_finalize();
    return total_fails != 0;
}
