/* test_cores.c — unit tests for a rank's default thread count (cores.c):
 * loom_rt_cores_share over made-up CPU masks of a 16-CPU host.  Ranks with
 * one mask split it evenly (rounded down, never below 1); ranks bound to
 * disjoint CPUs keep theirs whole; partial overlaps count each shared CPU
 * by the ranks that have it. */
#include "internal.h"
#include "../tap.h"

/* A mask of CPUs lo..hi-1. */
static cpu_set_t cpus(int lo, int hi)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int c = lo; c < hi; c++)
        CPU_SET(c, &s);
    return s;
}

int main(void)
{
    plan(13);
    cpu_set_t all = cpus(0, 16), same[15];
    for (int i = 0; i < 15; i++)
        same[i] = all;
    is_int(loom_rt_cores_share(&all, NULL, 0), 16, "alone: every CPU");
    is_int(loom_rt_cores_share(&all, same, 1), 8, "2 ranks, one mask of 16: 8 each");
    is_int(loom_rt_cores_share(&all, same, 2), 5, "3 ranks, one mask of 16: 5 each (rounded down)");
    cpu_set_t six = cpus(0, 6), sixes[2] = {six, six};
    is_int(loom_rt_cores_share(&six, sixes, 2), 2, "3 ranks, one mask of 6: exactly 2 each");
    is_int(loom_rt_cores_share(&all, same, 15), 1, "16 ranks, one mask of 16: 1 each");
    cpu_set_t two = cpus(0, 2), twos[3] = {two, two, two};
    is_int(loom_rt_cores_share(&two, twos, 3), 1, "4 ranks on 2 CPUs: still 1 each");
    cpu_set_t lo = cpus(0, 8), hi = cpus(8, 16);
    is_int(loom_rt_cores_share(&lo, &hi, 1), 8, "bound to disjoint halves: each keeps its 8");
    /* ranks on 0-11 and 4-15: CPUs 4-11 are shared by 2 */
    cpu_set_t a = cpus(0, 12), b = cpus(4, 16);
    is_int(loom_rt_cores_share(&a, &b, 1), 8, "overlapping masks: 4 own CPUs + 8 halves = 8");
    cpu_set_t half[2] = {lo, hi};
    is_int(loom_rt_cores_share(&all, half, 2), 8, "whole host beside two bound halves: 16 halves = 8");
    /* the warning of a host whose ranks fill every CPU (lib/cores.c) */
    ok(loom_rt_cores_full(16, 16, 16), "16 ranks x 1 thread on 16 CPUs: full, warn");
    ok(!loom_rt_cores_full(2, 16, 16), "2 ranks x 8 threads (the default share) on 16 CPUs: no warning");
    ok(!loom_rt_cores_full(12, 12, 16), "12 ranks on 16 CPUs: cores left free, no warning");
    ok(!loom_rt_cores_full(2, 2, 2) && !loom_rt_cores_full(1, 16, 16),
       "2 ranks on 2 CPUs, or one rank (no agent): no warning");
    return done_testing();
}
