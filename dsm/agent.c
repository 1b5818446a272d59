/* agent.c — the background progress agent.
 *
 * A rank is often computing — inside no Loom call — when others need it:
 * as a home it must apply diffs and acknowledge them (a release or clock
 * elsewhere waits for that), as a ring owner serve a hand-off, as an SSP
 * shard apply contributions.  Without help those messages wait for the
 * rank's next Loom call.  The agent is a thread that drives the transport
 * while anything holds it: every multi-rank allocation with a policy other
 * than local, and the SSP allreduce.  Between rounds it sleeps on the UCX
 * worker's event file descriptor (loom_tp_wait), so it wakes when a
 * message arrives, not on a timer: it used to poll every 50 us, 20 000
 * wake-ups a second per rank taken from the computing threads.
 * Measured (docs/bench-ssp.md): with four ranks computing 5 ms per clock,
 * clocks per second rose from ~44 to ~125 under bsp and ssp alike,
 * because releases no longer wait for busy homes. */
#include "dsm.h"

#include <pthread.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t thread;
static int running;
static _Atomic int holders;
static _Atomic int stop;

/* While held: progress, then sleep until a message comes (at most 5 ms,
 * so that stop and the holders count are seen); nap 5 ms while not. */
static void *agent_main(void *arg)
{
    (void)arg;
    struct timespec nap = {0, 5 * 1000 * 1000};
    while (!stop) {
        if (atomic_load(&holders) > 0)
            loom_tp_wait(5);
        else
            nanosleep(&nap, NULL);
    }
    return NULL;
}

/* The thread starts at the first hold and stays until finalize, so that
 * allocations coming and going do not create and join threads. */
void loom_agent_hold(void)
{
    if (loom_icv.nranks == 1)
        return;
    pthread_mutex_lock(&mu);
    atomic_fetch_add(&holders, 1);
    if (!running)
        running = !pthread_create(&thread, NULL, agent_main, NULL);
    pthread_mutex_unlock(&mu);
}

void loom_agent_release(void)
{
    if (loom_icv.nranks > 1)
        atomic_fetch_sub(&holders, 1);
}

void loom_agent_fini(void)
{
    pthread_mutex_lock(&mu);
    if (running) {
        stop = 1;
        pthread_join(thread, NULL);
        running = 0;
    }
    pthread_mutex_unlock(&mu);
}
