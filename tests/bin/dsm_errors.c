/* dsm_errors.c — misuse gives a clear error, never a crash or a hang:
 * an out-of-range row, a free of memory Loom did not allocate, and a
 * collective allocation on which ranks disagree.  Prints
 * "dsm_errors: ok" on rank 0 when every error was reported and the
 * program went on normally. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int r = loom_rank(), P = loom_size(), fails = 0;
    float *w = loom_alloc(100 * 40 * sizeof(float),
        &(loom_alloc_opts){.name = "W", .unit = LOOM_UNIT_ROW, .row_size = 40 * sizeof(float)});
    float row[40] = {0};
    if (loom_row_get(w, 100) != NULL || loom_row_put(w, 1000, row) != LOOM_ERR_ARG ||
        loom_row_add(w, (size_t)-1, row) != LOOM_ERR_ARG)
        fails++, fprintf(stderr, "rank %d: out-of-range rows were accepted\n", r);
    if (loom_row_get(w, 99) == NULL)
        fails++, fprintf(stderr, "rank %d: the last row was refused\n", r);
    void *mine = malloc(64);
    if (loom_free(mine) != LOOM_ERR_ARG)
        fails++, fprintf(stderr, "rank %d: loom_free of malloc'd memory was accepted\n", r);
    free(mine);
    /* rank 1 asks for a different size: every rank must get NULL */
    void *m = loom_alloc(r == 1 ? 8192 : 4096, &(loom_alloc_opts){.name = "mismatched"});
    if (P > 1 && m != NULL)
        fails++, fprintf(stderr, "rank %d: a mismatched loom_alloc succeeded\n", r);
    /* ...and the job goes on */
    long *ok = loom_alloc(sizeof(long), NULL);
    *ok = 0;
    loom_barrier();
    if (r == 0)
        *ok = 1;
    loom_barrier();
    if (*ok != 1)
        fails++, fprintf(stderr, "rank %d: the allocation after the errors does not work\n", r);
    int32_t all = !fails;
    loom_allreduce(LOOM_IN_PLACE, &all, 1, LOOM_INT32, LOOM_MIN);
    if (r == 0 && all)
        printf("dsm_errors: ok P=%d\n", P);
    loom_finalize();
    return all ? 0 : 1;
}
