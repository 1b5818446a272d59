/* cores.c — how many OpenMP threads a rank of a job runs when the user
 * did not say (OMP_NUM_THREADS unset), and a warning when a host's ranks
 * run more threads than it has CPUs.
 *
 * Alone, libgomp starts one thread per CPU the process may run on.  Two
 * ranks on one host would each take every CPU, and their threads spin
 * against each other: on 2 cores, 2 ranks of 2 threads ran loom-lasso
 * 2 000 times slower than 2 ranks of 1 (docs/launcher.md, "Threads per
 * rank").  mpirun avoids that by binding each rank to its own cores; loomrun
 * leaves ranks unbound, so a rank instead takes its share: each CPU it may
 * run on counts 1/k, k the ranks of its host that may run on that CPU.
 * Ranks on one host with one mask split it evenly; ranks a launcher bound
 * to disjoint cores keep theirs whole.  (More ranks than CPUs, one thread
 * each, is left alone: the tests run 3 and 4 ranks on 2 cores.) */
#include "internal.h"

#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Contract: the threads a rank with CPU mask mine should run, when others
 * (n masks) are the masks of the other ranks on its host: Σ over mine's
 * CPUs of 1 / (1 + the others that have it), rounded down, at least 1.
 * Pure; tests/unit/test_cores.c checks it. */
int loom_rt_cores_share(const cpu_set_t *mine, const cpu_set_t *others, int n)
{
    double share = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, mine))
            continue;
        int k = 1;
        for (int i = 0; i < n; i++)
            k += !!CPU_ISSET(c, &others[i]);
        share += 1.0 / k;
    }
    int t = (int)(share + 1e-9); /* 6 CPUs over 3 ranks: 1.999.. is 2 */
    return t > 1 ? t : 1;
}

/* Contract: see internal.h.  A rank per CPU (or more), from 8 CPUs on: on
 * 2 or 4 a free core is half or a quarter of the machine; ranks of several
 * threads (the default share) compute in OpenMP teams that leave the
 * agents the moments between loops. */
int loom_rt_cores_full(int ranks, long long threads, int cpus)
{
    return ranks > 1 && cpus >= 8 && ranks >= cpus && threads >= cpus;
}

/* What each rank tells the others: its mask, then the threads it will
 * run (no padding: every byte sent is set). */
struct mine {
    cpu_set_t mask;
    int64_t threads;
};

/* Contract: see internal.h.  Collective (two allgathers) on every rank of
 * a job of several; no locks.  Only the calling (initial) thread's OpenMP
 * team size changes. */
void loom_rt_share_cores(void)
{
    int P = loom_rt_icv.nranks, me = loom_rt_icv.rank;
    int chosen = getenv("OMP_NUM_THREADS") && *getenv("OMP_NUM_THREADS");
    struct mine m;
    memset(&m, 0, sizeof m);
    if (sched_getaffinity(0, sizeof m.mask, &m.mask))
        CPU_ZERO(&m.mask); /* over CPU_SETSIZE CPUs: libgomp's default stands */
    struct mine *all = malloc((size_t)P * sizeof *all);
    cpu_set_t *others = malloc((size_t)P * sizeof *others);
    if (!all || !others)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory");
    int n = 0;
    /* Two rounds: the masks, then the threads each rank settled on. */
    if (loom_rt_allgather(&m, all, sizeof m))
        loom_rt_die(LOOM_EXIT_PEER, "cannot exchange CPU masks");
    for (int r = 0; r < P; r++)
        if (r != me && !strcmp(loom_rt_tp_host(r), loom_rt_tp_host(me)))
            others[n++] = all[r].mask;
    if (!chosen && CPU_COUNT(&m.mask) > 0)
        omp_set_num_threads(loom_rt_cores_share(&m.mask, others, n));
    m.threads = omp_get_max_threads();
    if (loom_rt_allgather(&m, all, sizeof m))
        loom_rt_die(LOOM_EXIT_PEER, "cannot exchange thread counts");
    /* The lowest rank of a host whose threads outnumber its CPUs says so. */
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    int64_t threads = 0;
    int ranks = 0, first = -1;
    for (int r = 0; r < P; r++) {
        if (strcmp(loom_rt_tp_host(r), loom_rt_tp_host(me)))
            continue;
        first = first < 0 ? r : first;
        CPU_OR(&cpus, &cpus, &all[r].mask);
        threads += all[r].threads;
        ranks++;
    }
    if (first == me && CPU_COUNT(&cpus) > 0 && threads > CPU_COUNT(&cpus) && threads > ranks)
        loom_rt_log("warning: %d ranks on host %s run %lld OpenMP threads on %d CPUs: spinning "
                 "threads will wait for each other's CPU, many times slower; lower "
                 "OMP_NUM_THREADS or leave it unset (each rank then takes its share), or "
                 "set OMP_WAIT_POLICY=passive (docs/launcher.md, \"Threads per rank\")",
                 ranks, loom_rt_tp_host(me), (long long)threads, CPU_COUNT(&cpus));
    else if (first == me && loom_rt_cores_full(ranks, threads, CPU_COUNT(&cpus)))
        loom_rt_log("warning: %d ranks on host %s run %lld OpenMP threads on its %d CPUs, leaving "
                 "none to their progress agents and UCX threads; on a 16-core host 12 ranks "
                 "ran as fast as 16 for every app measured: leave a core or more free "
                 "(docs/launcher.md, \"Ranks or threads\")",
                 ranks, loom_rt_tp_host(me), (long long)threads, CPU_COUNT(&cpus));
    if (loom_rt_icv.stats)
        loom_rt_log("%lld OpenMP thread%s (%s), %d CPUs in its mask", (long long)m.threads,
                 m.threads == 1 ? "" : "s", chosen ? "OMP_NUM_THREADS" : "its share",
                 CPU_COUNT(&m.mask));
    free(all);
    free(others);
}
