/* lock.c — distributed locks with acquire/release semantics.
 *
 * Lock `id` is managed by rank id % P, which grants it to one requester at
 * a time in arrival order (a FIFO queue per lock).  loom_lock sends a
 * request, waits for the grant, then acquires (drops stale copies), so the
 * holder sees every write released by earlier holders.  loom_unlock
 * releases (pushes this rank's writes home and waits for them to land)
 * before handing the lock back.  Several threads of a rank may wait for
 * locks at once; releases of one rank are serialized. */
#include "dsm.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define AM_LOCK_REQ 5
#define AM_LOCK_GRANT 6
#define AM_UNLOCK 7

struct lock_msg {
    uint32_t src, pad;
    uint64_t id;
};

/* Manager side: one record per lock ever used here. */
struct lockrec {
    struct lockrec *next;
    uint64_t id;
    int holder;          /* -1 when free */
    int *queue;          /* waiting ranks, FIFO */
    size_t qhead, qlen, qcap;
};
static struct lockrec *locks;

/* Requester side: threads of this rank waiting for a grant. */
struct waiter {
    struct waiter *next;
    uint64_t id;
    volatile int granted;
};
static struct waiter *waiters;

/* One mutex for both tables: message handlers and local calls meet here.
 * Lock order: nobody sends (takes the transport lock) while holding mu;
 * handlers, which run under the transport lock, take mu briefly. */
static pthread_mutex_t mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static int manager_of(uint64_t id) { return (int)(id % (uint64_t)loom_icv.nranks); }

static struct lockrec *find(uint64_t id)
{
    for (struct lockrec *l = locks; l; l = l->next)
        if (l->id == id)
            return l;
    struct lockrec *l = calloc(1, sizeof *l);
    if (!l)
        loom_die(1, "out of memory");
    l->id = id;
    l->holder = -1;
    l->next = locks;
    locks = l;
    return l;
}

/* A grant for id reached this rank: wake the first thread waiting for it. */
static void granted_here(uint64_t id)
{
    for (struct waiter *w = waiters; w; w = w->next)
        if (w->id == id && !loom_flag_get(&w->granted)) {
            loom_flag_set(&w->granted);
            return;
        }
    loom_log("lock: dropped a grant of lock %llu nobody here waits for",
             (unsigned long long)id);
}

/* Hand lock id to rank; call without holding mu. */
static void grant(int rank, uint64_t id)
{
    if (rank < 0)
        return;
    if (rank == loom_icv.rank) {
        pthread_mutex_lock(&mu);
        granted_here(id);
        pthread_mutex_unlock(&mu);
        return;
    }
    uint64_t m = id;
    loom_tp_am_send(rank, AM_LOCK_GRANT, &m, sizeof m, NULL, 0);
}

/* Manager: src wants id.  Returns the rank to grant it to now, or -1.
 * Caller holds mu. */
static int mgr_request(int src, uint64_t id)
{
    struct lockrec *l = find(id);
    if (l->holder < 0) {
        l->holder = src;
        return src;
    }
    if (l->qlen == l->qcap) {
        size_t nc = l->qcap ? 2 * l->qcap : 8;
        int *nq = malloc(nc * sizeof *nq);
        if (!nq)
            loom_die(1, "out of memory");
        for (size_t i = 0; i < l->qlen; i++)
            nq[i] = l->queue[(l->qhead + i) % l->qcap];
        free(l->queue);
        l->queue = nq;
        l->qhead = 0;
        l->qcap = nc;
    }
    l->queue[(l->qhead + l->qlen++) % l->qcap] = src;
    return -1;
}

/* Manager: src gives id back.  Returns the next holder to grant, or -1.
 * Caller holds mu. */
static int mgr_unlock(int src, uint64_t id)
{
    struct lockrec *l = find(id);
    if (l->holder != src) {
        loom_log("lock: rank %d released lock %llu, which it does not hold (ignored)", src,
                 (unsigned long long)id);
        return -1;
    }
    if (!l->qlen) {
        l->holder = -1;
        return -1;
    }
    l->holder = l->queue[l->qhead];
    l->qhead = (l->qhead + 1) % l->qcap;
    l->qlen--;
    return l->holder;
}

static int decode(const void *hdr, size_t hlen, struct lock_msg *m)
{
    if (hlen != sizeof *m)
        return -1;
    memcpy(m, hdr, sizeof *m);
    return m->src < (uint32_t)loom_icv.nranks &&
                   manager_of(m->id) == loom_icv.rank ? 0 : -1;
}

/* A request (unlock = 0) or a release (unlock = 1) reached the manager. */
static void on_manager_msg(const void *hdr, size_t hlen, int unlock)
{
    struct lock_msg m;
    if (decode(hdr, hlen, &m)) {
        loom_log("lock: dropped a malformed %s", unlock ? "unlock" : "lock request");
        return;
    }
    pthread_mutex_lock(&mu);
    int g = unlock ? mgr_unlock((int)m.src, m.id) : mgr_request((int)m.src, m.id);
    pthread_mutex_unlock(&mu);
    grant(g, m.id);
}

static void on_req(const void *hdr, size_t hlen, void *data, size_t len)
{
    (void)data;
    (void)len;
    on_manager_msg(hdr, hlen, 0);
}

static void on_unlock(const void *hdr, size_t hlen, void *data, size_t len)
{
    (void)data;
    (void)len;
    on_manager_msg(hdr, hlen, 1);
}

static void on_grant(const void *hdr, size_t hlen, void *data, size_t len)
{
    (void)data;
    (void)len;
    uint64_t id;
    if (hlen != sizeof id)
        return;
    memcpy(&id, hdr, sizeof id);
    pthread_mutex_lock(&mu);
    granted_here(id);
    pthread_mutex_unlock(&mu);
}

void loom_lock_init(void)
{
    loom_tp_am_register(AM_LOCK_REQ, on_req);
    loom_tp_am_register(AM_LOCK_GRANT, on_grant);
    loom_tp_am_register(AM_UNLOCK, on_unlock);
}

/* Forget every lock record this rank manages.  Finalize (no message can
 * arrive, no thread waits any more) and the fuzz harness call it. */
void loom_lock_fini(void)
{
    pthread_mutex_lock(&mu);
    while (locks) {
        struct lockrec *l = locks;
        locks = l->next;
        free(l->queue);
        free(l);
    }
    pthread_mutex_unlock(&mu);
}

int loom_lock(uint64_t id)
{
    if (loom_state != 1)
        return LOOM_ERR_STATE;
    struct waiter w = {.id = id};
    int mgr = manager_of(id);
    int g = -1;
    pthread_mutex_lock(&mu);
    w.next = waiters;
    waiters = &w;
    if (mgr == loom_icv.rank)
        g = mgr_request(loom_icv.rank, id);
    pthread_mutex_unlock(&mu);
    grant(g, id);
    if (mgr != loom_icv.rank) {
        struct lock_msg m = {.src = (uint32_t)loom_icv.rank, .id = id};
        loom_tp_am_send(mgr, AM_LOCK_REQ, &m, sizeof m, NULL, 0);
    }
    if (loom_icv.nranks > 1)
        loom_tp_wait_flag(&w.granted);
    else
        while (!loom_flag_get(&w.granted))
            sched_yield(); /* another thread of this one rank holds it */
    pthread_mutex_lock(&mu);
    for (struct waiter **p = &waiters; *p; p = &(*p)->next)
        if (*p == &w) {
            *p = w.next;
            break;
        }
    pthread_mutex_unlock(&mu);
    return loom_acquire();
}

int loom_unlock(uint64_t id)
{
    if (loom_state != 1)
        return LOOM_ERR_STATE;
    int rc = loom_release();
    int mgr = manager_of(id);
    if (mgr == loom_icv.rank) {
        pthread_mutex_lock(&mu);
        int g = mgr_unlock(loom_icv.rank, id);
        pthread_mutex_unlock(&mu);
        grant(g, id);
    } else {
        struct lock_msg m = {.src = (uint32_t)loom_icv.rank, .id = id};
        loom_tp_am_send(mgr, AM_UNLOCK, &m, sizeof m, NULL, 0);
    }
    return rc;
}
