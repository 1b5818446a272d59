/* time.c — loom_wtime, the wall clock every rank and the launcher use. */
#include "internal.h"

#include <time.h>

double loom_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
