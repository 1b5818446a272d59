/* jacobi — the heated plate: Jacobi iterations of Laplace's equation on an
 * N x N grid; omp.c is the plain OpenMP program, loom.c its port to Loom
 * (`diff omp.c loom.c` shows the port).
 *
 *   jacobi [N [EPS]]     grid size (default 512), stop when no point moves
 *                        by EPS or more (default 0.01), or after 2000 sweeps
 *
 * The plate's edges are held at 100 degrees (left, right, bottom) and 0
 * (top); the inside starts at their mean.  Each sweep computes every
 * inside point of the new grid from its four neighbours in the old one,
 * rows split among the threads (and ranks); a rank reads the one row above
 * and below its block from its neighbours.  The largest change of a sweep
 * is a max-reduction, exact in any order, and the mean is summed in one
 * order, so the answer is the same on any layout.  Prints the sweeps, the
 * last change, the mean temperature and the centre's. */
#include <loom.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Row i of the plate at the start: its edges fixed, its inside at mean. */
static void init_row(double *u, long n, long i, double mean)
{
    for (long j = 0; j < n; j++)
        u[i * n + j] = i == 0 ? 0.0 : (i == n - 1 || j == 0 || j == n - 1) ? 100.0 : mean;
}

/* The result, from the final grid u: its mean summed in one order. */
static void report(const double *u, long n, int sweeps, double diff)
{
    double sum = 0;
    for (long k = 0; k < n * n; k++)
        sum += u[k];
    printf("jacobi: %ld x %ld, %d sweeps, last change %.6e, mean %.9f, centre %.9f\n", n, n,
           sweeps, diff, sum / (double)(n * n), u[(n / 2) * n + n / 2]);
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    long n = argc > 1 ? atol(argv[1]) : 512;
    double eps = argc > 2 ? atof(argv[2]) : 0.01, mean = (3 * 100.0 + 0.0) / 4;
    size_t bytes = (size_t)n * n * sizeof(double);
    double *u = loom_alloc(bytes, &(loom_alloc_opts){.page_unit = 4096}); /* a row or two */
    double *w = loom_alloc(bytes, &(loom_alloc_opts){.page_unit = 4096});
    if (!u || !w)
        return 1;
    LOOM_FOR(i, 0, n, NULL) {
        init_row(u, n, i, mean);
        init_row(w, n, i, mean);
    }
    double diff = eps;
    int sweeps = 0;
    while (diff >= eps && sweeps < 2000) {
        diff = 0;
        LOOM_FOR_REDUCE(i, 1, n - 1, NULL, MAX, diff)
            for (long j = 1; j < n - 1; j++) {
                w[i * n + j] = (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                u[i * n + j + 1]) / 4;
                diff = fmax(diff, fabs(w[i * n + j] - u[i * n + j]));
            }
        double *t = u;
        u = w;
        w = t;
        sweeps++;
    }
    if (loom_rank() == 0)
        report(u, n, sweeps, diff);
    loom_free(u), loom_free(w);
    loom_finalize();
    return 0;
}
