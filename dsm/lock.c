/* lock.c — distributed locks with acquire/release semantics.
 *
 * Lock `id` is managed by rank id % P, which grants it to one requester at
 * a time in arrival order (a FIFO queue per lock).  loom_lock sends a
 * request, waits for the grant, then acquires (drops stale copies), so the
 * holder sees every write released by earlier holders.  loom_unlock
 * releases (pushes this rank's writes home and waits for them to land)
 * before handing the lock back.  Several threads of a rank may wait for
 * locks at once; releases of one rank are serialized.
 *
 * The manager's state is bounded whatever its peers send: a record exists
 * only while its lock is held or waited for (hashed by id, freed when the
 * lock falls idle), and each rank may hold or wait for at most
 * LOCK_MAX_PER_RANK locks of one manager at once; a request beyond that
 * stops the job with a message naming the rank.  Queues therefore hold at
 * most that many entries per rank. */
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

#define LOCK_BUCKETS 4096        /* hash chains of live records */
#define LOCK_MAX_PER_RANK 16384  /* locks one rank may hold or wait for, per manager */

/* Manager side: one record per lock held or waited for here. */
struct lockrec {
    struct lockrec *next;
    uint64_t id;
    int holder;          /* a rank; a record with no holder is freed */
    int *queue;          /* waiting ranks, FIFO */
    size_t qhead, qlen, qcap;
};
static struct lockrec *buckets[LOCK_BUCKETS];
static size_t nrecords;
static uint32_t *per_rank; /* locks each rank holds or waits for here */

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

static int manager_of(uint64_t id) { return (int)(id % (uint64_t)loom_rt_icv.nranks); }

static struct lockrec **chain(uint64_t id)
{
    id ^= id >> 33; /* a murmur finalizer: ids are often addresses */
    id *= 0xff51afd7ed558ccdULL;
    id ^= id >> 33;
    return &buckets[id % LOCK_BUCKETS];
}

/* The live record of id, or NULL.  Caller holds mu. */
static struct lockrec *find(uint64_t id)
{
    for (struct lockrec *l = *chain(id); l; l = l->next)
        if (l->id == id)
            return l;
    return NULL;
}

/* Drop id's record, which has no holder and no queue.  Caller holds mu. */
static void forget(struct lockrec *l)
{
    for (struct lockrec **p = chain(l->id); *p; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            break;
        }
    free(l->queue);
    free(l);
    nrecords--;
}

/* A grant for id reached this rank: wake the first thread waiting for it. */
static void granted_here(uint64_t id)
{
    for (struct waiter *w = waiters; w; w = w->next)
        if (w->id == id && !loom_rt_flag_get(&w->granted)) {
            loom_rt_flag_set(&w->granted);
            return;
        }
    loom_rt_log("lock: dropped a grant of lock %llu nobody here waits for",
             (unsigned long long)id);
}

/* Hand lock id to rank; call without holding mu. */
static void grant(int rank, uint64_t id)
{
    if (rank < 0)
        return;
    if (rank == loom_rt_icv.rank) {
        pthread_mutex_lock(&mu);
        granted_here(id);
        pthread_mutex_unlock(&mu);
        return;
    }
    uint64_t m = id;
    loom_rt_tp_am_send(rank, AM_LOCK_GRANT, &m, sizeof m, NULL, 0);
}

/* Manager: src wants id.  Returns the rank to grant it to now, or -1.
 * Stops the job if src already holds or waits for LOCK_MAX_PER_RANK locks
 * here.  Caller holds mu. */
static int mgr_request(int src, uint64_t id)
{
    if (!per_rank && !(per_rank = calloc((size_t)loom_rt_icv.nranks, sizeof *per_rank)))
        loom_rt_die(1, "out of memory");
    if (per_rank[src] >= LOCK_MAX_PER_RANK)
        loom_abort(1, "lock: rank %d holds or waits for %d locks managed by rank %d, the "
                 "most one rank may; release locks it no longer needs", src,
                 LOCK_MAX_PER_RANK, loom_rt_icv.rank);
    per_rank[src]++;
    struct lockrec *l = find(id);
    if (!l) {
        l = calloc(1, sizeof *l);
        if (!l)
            loom_rt_die(1, "out of memory");
        struct lockrec **c = chain(id);
        *l = (struct lockrec){.next = *c, .id = id, .holder = src};
        *c = l;
        nrecords++;
        return src;
    }
    if (l->qlen == l->qcap) {
        size_t nc = l->qcap ? 2 * l->qcap : 8;
        int *nq = malloc(nc * sizeof *nq);
        if (!nq)
            loom_rt_die(1, "out of memory");
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
    if (!l || l->holder != src) {
        loom_rt_log("lock: rank %d released lock %llu, which it does not hold (ignored)", src,
                 (unsigned long long)id);
        return -1;
    }
    per_rank[src]--;
    if (!l->qlen) {
        forget(l);
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
    return m->src < (uint32_t)loom_rt_icv.nranks &&
                   manager_of(m->id) == loom_rt_icv.rank ? 0 : -1;
}

/* A request (unlock = 0) or a release (unlock = 1) reached the manager. */
static void on_manager_msg(const void *hdr, size_t hlen, int unlock)
{
    struct lock_msg m;
    if (decode(hdr, hlen, &m)) {
        loom_rt_log("lock: dropped a malformed %s", unlock ? "unlock" : "lock request");
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

void loom_dsm_lock_init(void)
{
    loom_rt_tp_am_register(AM_LOCK_REQ, on_req);
    loom_rt_tp_am_register(AM_LOCK_GRANT, on_grant);
    loom_rt_tp_am_register(AM_UNLOCK, on_unlock);
}

/* Forget every lock record this rank manages.  Finalize (no message can
 * arrive, no thread waits any more) and the fuzz harness call it. */
void loom_dsm_lock_fini(void)
{
    pthread_mutex_lock(&mu);
    for (int b = 0; b < LOCK_BUCKETS; b++)
        while (buckets[b]) {
            struct lockrec *l = buckets[b];
            buckets[b] = l->next;
            free(l->queue);
            free(l);
        }
    nrecords = 0;
    free(per_rank);
    per_rank = NULL;
    pthread_mutex_unlock(&mu);
}

size_t loom_dsm_lock_records(void)
{
    pthread_mutex_lock(&mu);
    size_t n = nrecords;
    pthread_mutex_unlock(&mu);
    return n;
}

static _Atomic int held; /* locks this rank holds */

int loom_dsm_locks_held(void) { return atomic_load(&held); }

int loom_lock(uint64_t id)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    struct waiter w = {.id = id};
    int mgr = manager_of(id);
    int g = -1;
    pthread_mutex_lock(&mu);
    w.next = waiters;
    waiters = &w;
    if (mgr == loom_rt_icv.rank)
        g = mgr_request(loom_rt_icv.rank, id);
    pthread_mutex_unlock(&mu);
    grant(g, id);
    if (mgr != loom_rt_icv.rank) {
        struct lock_msg m = {.src = (uint32_t)loom_rt_icv.rank, .id = id};
        loom_rt_tp_am_send(mgr, AM_LOCK_REQ, &m, sizeof m, NULL, 0);
    }
    if (loom_rt_icv.nranks > 1)
        loom_rt_tp_wait_flag(&w.granted);
    else
        while (!loom_rt_flag_get(&w.granted))
            sched_yield(); /* another thread of this one rank holds it */
    pthread_mutex_lock(&mu);
    for (struct waiter **p = &waiters; *p; p = &(*p)->next)
        if (*p == &w) {
            *p = w.next;
            break;
        }
    pthread_mutex_unlock(&mu);
    atomic_fetch_add(&held, 1);
    return loom_acquire();
}

int loom_unlock(uint64_t id)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    int rc = loom_release();
    atomic_fetch_sub(&held, 1);
    int mgr = manager_of(id);
    if (mgr == loom_rt_icv.rank) {
        pthread_mutex_lock(&mu);
        int g = mgr_unlock(loom_rt_icv.rank, id);
        pthread_mutex_unlock(&mu);
        grant(g, id);
    } else {
        struct lock_msg m = {.src = (uint32_t)loom_rt_icv.rank, .id = id};
        loom_rt_tp_am_send(mgr, AM_UNLOCK, &m, sizeof m, NULL, 0);
    }
    return rc;
}
