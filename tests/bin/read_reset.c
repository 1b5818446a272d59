/* read_reset.c — the read-then-reset race of issue 43 and its fixes, for
 * LOOM_CHECK=dsm (dsm/diff.c, REC_READ).  16 rows "sums" of 4 doubles, add
 * merge; every rank adds 1 to every row, a barrier; then each rank reads
 * every row (loom_row_get and loom_at_r) and rank 0 resets them with
 * loom_row_put:
 *   read_reset race      the reset follows the reads with no barrier
 *                        between: a read may see the row before or after
 *   read_reset ordered   a barrier between the reads and the reset
 *   read_reset locked    reads and reset each under lock 7
 * Prints "read_reset: MODE ok" on rank 0 when every read saw the ranks'
 * sum (racing reads may not, and are not counted in race mode). */
#include <loom.h>
#include <stdio.h>
#include <string.h>

#define ROWS 16

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    const char *mode = argc > 1 ? argv[1] : "race";
    int R = loom_size(), me = loom_rank();
    double *sums = loom_alloc(ROWS * 4 * sizeof(double),
                              &(loom_alloc_opts){.name = "sums", .unit = LOOM_UNIT_ROW,
                                                 .row_size = 4 * sizeof(double),
                                                 .merge = LOOM_MERGE_ADD, .type = LOOM_DOUBLE});
    if (!sums)
        return 1;
    const double one[4] = {1, 1, 1, 1}, zero[4] = {0};
    long wrong = 0;
    for (int round = 0; round < 3; round++) {
        for (size_t r = 0; r < ROWS; r++)
            loom_row_add(sums, r, one);
        loom_barrier();
        int locked = !strcmp(mode, "locked");
        if (locked)
            loom_lock(7);
        for (size_t r = 0; r < ROWS; r++) {
            const double *x = loom_row_get(sums, r), *y = loom_at_r(sums, r);
            wrong += x[0] != R || y[3] != R;
        }
        if (locked)
            loom_unlock(7);
        if (!strcmp(mode, "ordered"))
            loom_barrier();
        if (locked)
            loom_lock(7);
        if (me == 0)
            for (size_t r = 0; r < ROWS; r++)
                loom_row_put(sums, r, zero);
        if (locked)
            loom_unlock(7);
        loom_barrier();
    }
    if (!strcmp(mode, "race"))
        wrong = 0; /* a racing read may see either */
    loom_allreduce(LOOM_IN_PLACE, &wrong, 1, LOOM_INT64, LOOM_SUM);
    if (me == 0)
        printf(wrong ? "read_reset: %s: %ld wrong reads\n" : "read_reset: %s ok\n", mode, wrong);
    loom_finalize();
    return wrong != 0;
}
