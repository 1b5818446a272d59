/* pingpong.c — the one-way latency of a cache line bounced between two
 * CPUs (default 0 and 1), in ns, on stdout: how much the threads of one
 * rank pay for the rows they both write (Hogwild).  On the project's
 * 2-core VM it moves between about 50 ns (the two vCPUs on one L3) and
 * about 250 ns (on two) from one minute to the next, and 1 rank x 2
 * threads of loom-w2v with it (docs/loom-w2v.md, "Which two vCPUs");
 * tests/perf/ranks_dp.sh records it before every round.
 *
 *   pingpong [CPU_A CPU_B] */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { N = 200000 };
static _Atomic long flag __attribute__((aligned(64)));
static int cpu[2] = {0, 1};

static void pin(int c)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(c, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s)) {
        fprintf(stderr, "pingpong: cannot run on CPU %d\n", c);
        exit(1);
    }
}

/* The other side: answers each odd value with the next even one. */
static void *other(void *arg)
{
    (void)arg;
    pin(cpu[1]);
    for (long i = 0; i < N; i++) {
        while (atomic_load(&flag) != 2 * i + 1)
            ;
        atomic_store(&flag, 2 * i + 2);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 3)
        cpu[0] = atoi(argv[1]), cpu[1] = atoi(argv[2]);
    pin(cpu[0]);
    pthread_t t;
    if (pthread_create(&t, NULL, other, NULL))
        return 1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < N; i++) {
        atomic_store(&flag, 2 * i + 1);
        while (atomic_load(&flag) != 2 * i + 2)
            ;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    printf("%.0f\n", ns / N / 2); /* N round trips, two hops each */
    return 0;
}
