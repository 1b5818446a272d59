/* ssp_bench_mpi.c — the Open MPI twin of ssp_bench.c's allreduce mode: the
 * same loop (#included from ssp_bench.c) over MPI_Allreduce of 1 MiB of
 * floats.  Built by tests/perf/ssp.sh with mpicc. */
#include <mpi.h>

#define SSP_BENCH_MPI 1
static int b_init(int *c, char ***v) { return MPI_Init(c, v) != MPI_SUCCESS; }
static void b_fini(void) { MPI_Finalize(); }
static int b_rank(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int b_size(void) { int p; MPI_Comm_size(MPI_COMM_WORLD, &p); return p; }
static double b_wtime(void) { return MPI_Wtime(); }
static void b_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void b_sum_d(double *x, int n) { MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }
static void b_allreduce(float *res, const float *contrib, unsigned long n, int slack, int hc)
{
    (void)slack;
    (void)hc;
    MPI_Allreduce(contrib, res, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
#include "ssp_bench.c"
