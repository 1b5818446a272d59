/* threads_check.c — prints the OpenMP threads this rank runs after
 * loom_init (cores.c: its share of its host's CPUs unless OMP_NUM_THREADS
 * is set) and the threads a parallel region really starts:
 *     threads_check: rank R of P threads T team N */
#include <loom.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int team = 0;
#pragma omp parallel
#pragma omp single
    team = omp_get_num_threads();
    printf("threads_check: rank %d of %d threads %d team %d\n", loom_rank(), loom_size(),
           omp_get_max_threads(), team);
    return loom_finalize();
}
