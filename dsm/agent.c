/* agent.c — the background progress agent.
 *
 * A rank is often computing — inside no Loom call — when others need it:
 * as a home it must apply diffs and acknowledge them (a release or clock
 * elsewhere waits for that), as a ring owner serve a hand-off, as an SSP
 * shard apply contributions.  Without help those messages wait for the
 * rank's next Loom call.  The agent is a thread that drives the transport
 * while anything holds it: every multi-rank allocation with a policy other
 * than local, and the SSP allreduce.  While messages flow it polls every
 * 50 us; after QUIET_S without any it sleeps on the UCX worker's event
 * file descriptor (loom_rt_tp_wait) until a message arrives.  Polling alone
 * woke it 20 000 times a second through every compute phase, taking the
 * core from the computing thread; sleeping on the descriptor alone made
 * every message of a sync-heavy loop wake a thread (docs/bench-apps.md).
 * Measured (docs/bench-ssp.md): with four ranks computing 5 ms per clock,
 * clocks per second rose from ~44 to ~125 under bsp and ssp alike,
 * because releases no longer wait for busy homes.
 *
 * While a thread of the rank waits in the transport (a collective, a
 * release's acknowledgements: loom_rt_tp_foreground), that thread drives it,
 * and the agent naps 1 ms at a time instead of polling beside it: on a
 * host with as many busy threads as cores its 50 us wake-ups after each
 * message took the core from the computing ranks.  A 2-rank loom-w2v
 * (two sync points' worth of collectives every 5 000 words) ran 8-9%
 * faster (docs/bench-apps.md). */
#include "dsm.h"

#include <pthread.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t thread;
static int running;
static _Atomic int holders;
static _Atomic int stop;

/* Seconds without a message before the agent stops polling and sleeps. */
#define QUIET_S 0.002

/* While held: nap while a thread of the rank waits in the transport; else
 * poll every 50 us while messages flow, sleep on the event descriptor (at
 * most 5 ms, so that stop and holders are seen) once quiet; nap 5 ms while
 * not held. */
static void *agent_main(void *arg)
{
    (void)arg;
    struct timespec poll_gap = {0, 50 * 1000}, nap = {0, 5 * 1000 * 1000},
                    fg_nap = {0, 1000 * 1000};
    double busy_at = loom_wtime();
    while (!stop) {
        if (atomic_load(&holders) == 0) {
            nanosleep(&nap, NULL);
            continue;
        }
        if (loom_rt_tp_foreground()) { /* a waiting thread drives the transport */
            nanosleep(&fg_nap, NULL);
            continue;
        }
        if (loom_rt_tp_drain())
            busy_at = loom_wtime();
        if (loom_wtime() - busy_at < QUIET_S)
            nanosleep(&poll_gap, NULL);
        else
            loom_rt_tp_wait(5);
    }
    return NULL;
}

/* The thread starts at the first hold and stays until finalize, so that
 * allocations coming and going do not create and join threads. */
void loom_dsm_agent_hold(void)
{
    if (loom_rt_icv.nranks == 1)
        return;
    pthread_mutex_lock(&mu);
    atomic_fetch_add(&holders, 1);
    if (!running)
        running = !pthread_create(&thread, NULL, agent_main, NULL);
    pthread_mutex_unlock(&mu);
}

void loom_dsm_agent_release(void)
{
    if (loom_rt_icv.nranks > 1)
        atomic_fetch_sub(&holders, 1);
}

void loom_dsm_agent_fini(void)
{
    pthread_mutex_lock(&mu);
    if (running) {
        stop = 1;
        pthread_join(thread, NULL);
        running = 0;
    }
    pthread_mutex_unlock(&mu);
}
