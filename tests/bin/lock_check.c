/* lock_check.c — distributed locks under load, and their bounds.
 *   lock_check count K   every rank adds 1 to a shared counter K times,
 *                        each under lock 1000: the total is exact
 *   lock_check churn N   every rank locks and unlocks N distinct ids, then
 *                        holds 200 at once and releases them: afterwards
 *                        no manager keeps a record (records freed when idle)
 *   lock_check hog       rank 1 takes locks managed by rank 0 without
 *                        releasing any: the manager stops the job, naming it
 * Prints "lock_check: ok ..." on rank 0 when every check holds. */
#include <loom.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t loom_dsm_lock_records(void); /* dsm/lock.c (internal): live records here */

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv) || argc < 2)
        return 2;
    int r = loom_rank(), P = loom_size(), fails = 0;
    long n = argc > 2 ? atol(argv[2]) : 0;
    if (!strcmp(argv[1], "count")) {
        long *ctr = loom_alloc(sizeof(long), &(loom_alloc_opts){.name = "ctr", .page_unit = 4096});
        if (r == 0)
            ctr[0] = 0;
        loom_barrier();
        for (long k = 0; k < n; k++) {
            loom_lock(1000);
            ctr[0] = ctr[0] + 1;
            loom_unlock(1000);
        }
        loom_barrier();
        if (ctr[0] != (long)P * n) {
            fprintf(stderr, "rank %d: counter %ld, expected %ld\n", r, ctr[0], (long)P * n);
            fails++;
        }
        loom_free(ctr);
    } else if (!strcmp(argv[1], "churn")) {
        for (long i = 0; i < n; i++) {
            uint64_t id = 5000000 + (uint64_t)i * (uint64_t)P + (uint64_t)r;
            loom_lock(id);
            loom_unlock(id);
        }
        for (int i = 0; i < 200; i++)
            loom_lock(9000000 + (uint64_t)i * (uint64_t)P + (uint64_t)r);
        for (int i = 0; i < 200; i++)
            loom_unlock(9000000 + (uint64_t)i * (uint64_t)P + (uint64_t)r);
        loom_barrier();
        long live = (long)loom_dsm_lock_records();
        loom_allreduce(LOOM_IN_PLACE, &live, 1, LOOM_INT64, LOOM_SUM);
        if (live != 0) {
            fprintf(stderr, "rank %d: %ld lock records still live\n", r, live);
            fails++;
        }
    } else if (!strcmp(argv[1], "hog")) {
        if (r == 1)
            for (uint64_t i = 0;; i++) /* ids i*P are managed by rank 0 */
                loom_lock(i * (uint64_t)P);
        loom_barrier();
    } else {
        return 2;
    }
    if (r == 0 && !fails)
        printf("lock_check: ok %s %ld P=%d\n", argv[1], n, P);
    loom_finalize();
    return fails ? 1 : 0;
}
