/* coll_bench_mpi.c — the Open MPI twin of coll_bench.c: the same benchmark
 * body (#included from coll_bench.c, so loops and iteration counts are
 * identical) over MPI_Barrier, MPI_Allreduce (one double, MPI_SUM) and
 * MPI_Bcast (1 MiB, root 0) on MPI_COMM_WORLD.  Built by tests/perf/run.sh
 * with mpicc; prints the same lines as coll_bench. */
#include <mpi.h>
#include <stdio.h>

#define COLL_BENCH_MPI 1

static const char *bench_name = "coll_bench_mpi";

static void bench_check(int err, const char *what)
{
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(err, msg, &len);
        fprintf(stderr, "%s: %s: %s\n", bench_name, what, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static int bench_init(int *argc, char ***argv)
{
    return MPI_Init(argc, argv) != MPI_SUCCESS;
}

static void bench_finalize(void) { MPI_Finalize(); }

static int bench_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static int bench_size(void)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}

static double bench_wtime(void) { return MPI_Wtime(); }
static void bench_barrier(void) { bench_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

static void bench_sum1(const double *in, double *out)
{
    bench_check(MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
                "MPI_Allreduce");
}

static void bench_max1(const double *in, double *out)
{
    bench_check(MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                "MPI_Allreduce");
}

static void bench_bcast(void *buf, size_t bytes)
{
    bench_check(MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
}

#include "coll_bench.c"
