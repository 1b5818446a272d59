/* startup.c — the smallest Loom job, for timing start-up (tests/perf/startup.sh).
 * Rank 0 prints one line as soon as loom_init returns, with the seconds
 * loom_init itself took on rank 0; every rank then meets one barrier. */
#include <loom.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    double t0 = now();
    if (loom_init(&argc, &argv))
        return 1;
    if (loom_rank() == 0) {
        printf("up init=%.4f\n", now() - t0);
        fflush(stdout);
    }
    loom_barrier();
    return loom_finalize() ? 1 : 0;
}
