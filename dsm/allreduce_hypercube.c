/* allreduce_hypercube.c — loom_allreduce_ssp_hypercube: seed 004's
 * Hypercube-SSP, the other design of the stale synchronous allreduce, for
 * comparison with Sharded-SSP (allreduce_ssp.c; docs/bench-ssp.md).
 *
 * Same promise as loom_allreduce_ssp (lib/loom.h): cumulative sums, own
 * contributions always in, age >= clock - slack.  Cumulative over a
 * hypercube: every rank keeps `total`, the sum of its own contributions
 * so far, and a call reduces the ranks' totals.  In a call at clock c,
 * with d = log2 P steps:
 *   partial = total (tag c)
 *   step k: send partial (tag = the smallest age folded in, seed 004
 *           erratum; and the clock c) to partner rank ^ 2^k; take the
 *           newest partial that partner sent for step k, waiting only if
 *           its tag is < c - slack; partial += it, tag = min of both.
 *   result = partial.
 * A partner's step-k partial sums the totals of the 2^k ranks of its
 * half of the subcube, mine those of the other half, so every rank's total
 * is in the result exactly once, at a clock >= its tag >= c - slack:
 * nothing is counted twice, however stale.  A newer message replaces an
 * older one in the slot (the newest total is the best one).
 * Slack 0 is lockstep, where a partner may already have sent the next
 * clock's partial; a slack-0 call therefore is loom_allreduce of the
 * totals (every rank passes slack 0 at the same call), exact.
 * P must be a power of two (the seed's hypercube); otherwise LOOM_ERR_ARG.
 *
 * Messages for a reduction this rank has not made yet (a partner called
 * first) create it from the header (count, type): reductions are numbered
 * in creation order on every rank.  Locking: hc_mu guards the table and
 * every slot; the handler copies in under it; nobody sends holding it. */
#include "dsm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define AM_HC_PARTIAL 13
#define MAX_HRED 16
#define MAX_DIM 6 /* 64 ranks */

struct hred {
    size_t count, es;
    loom_type type;
    uint64_t clock;                   /* calls made */
    char *total;                      /* own contributions so far */
    char *slot[MAX_DIM];              /* per step: the partner's newest partial */
    uint64_t slot_clock[MAX_DIM];     /* its sender's clock (0: none yet) */
    _Atomic uint64_t slot_tag[MAX_DIM]; /* its age */
    uint64_t waits, wait_ns;          /* LOOM_STATS */
};

struct hc_hdr {
    uint32_t id, step;
    uint64_t tag, clock;
    uint64_t count;
    uint32_t type, pad;
};

static struct hred *hreds[MAX_HRED];
static int nmade;  /* reductions this rank's calls made (the next id) */
static int closed; /* after fini: late messages are dropped */
static int agent_held;
static pthread_mutex_t hc_mu = PTHREAD_MUTEX_INITIALIZER;

static int dims(void)
{
    int d = 0;
    while ((1 << d) < loom_rt_icv.nranks)
        d++;
    return d;
}

/* Reduction `id` for (count, type), made if absent.  Caller holds hc_mu.
 * NULL if out of memory or if it exists with another shape. */
static struct hred *made(int id, size_t count, loom_type type)
{
    struct hred *h = hreds[id];
    if (h)
        return h->count == count && h->type == type ? h : NULL;
    size_t es = loom_rt_type_size(type), v = (count ? count : 1) * es;
    if (!(h = calloc(1, sizeof *h)) || !(h->total = calloc(1, v)))
        goto oom;
    h->count = count;
    h->es = es;
    h->type = type;
    for (int k = 0; k < dims(); k++)
        if (!(h->slot[k] = calloc(1, v)))
            goto oom;
    return hreds[id] = h;
oom:
    if (h)
        for (int k = 0; k < MAX_DIM; k++)
            free(h->slot[k]);
    free(h ? h->total : NULL);
    free(h);
    return NULL;
}

static void on_partial(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct hc_hdr m;
    if (hlen != sizeof m) {
        loom_rt_log("allreduce_hypercube: dropped a message with a %zu-byte header", hlen);
        return;
    }
    memcpy(&m, hdr, sizeof m);
    pthread_mutex_lock(&hc_mu);
    struct hred *h = NULL;
    if (!closed && m.id < MAX_HRED && m.step < (uint32_t)dims() && m.type <= LOOM_DOUBLE &&
        m.count < (uint64_t)1 << 40 /* no size overflow */ && (h = made((int)m.id, (size_t)m.count, (loom_type)m.type)) && len == h->count * h->es) {
        if (m.clock > h->slot_clock[m.step]) { /* newest wins */
            memcpy(h->slot[m.step], data, len);
            h->slot_clock[m.step] = m.clock;
            atomic_store(&h->slot_tag[m.step], m.tag);
        }
    } else if (!closed)
        loom_rt_log("allreduce_hypercube: dropped a partial for reduction %u step %u (%zu bytes)",
                 m.id, m.step, len);
    pthread_mutex_unlock(&hc_mu);
}

/* Called from loom_dsm_allreduce_ssp_init (several ranks). */
void loom_dsm_allreduce_hypercube_init(void)
{
    closed = 0;
    loom_rt_tp_am_register(AM_HC_PARTIAL, on_partial);
}

/* Send a copy of partial (tag, clock) to the step-k partner. */
static void send_partial(const struct hred *h, int id, int k, const void *partial, uint64_t tag)
{
    size_t len = h->count * h->es;
    void *d = malloc(len ? len : 1);
    if (!d)
        loom_rt_die(1, "out of memory");
    memcpy(d, partial, len);
    struct hc_hdr m = {(uint32_t)id, (uint32_t)k, tag, h->clock, h->count, (uint32_t)h->type, 0};
    /* eager: the partner may be computing, not progressing */
    loom_rt_tp_am_send_eager(loom_rt_icv.rank ^ (1 << k), AM_HC_PARTIAL, &m, sizeof m, d, len, 1);
}

int loom_allreduce_ssp_hypercube(void *result, const void *contribution, size_t count,
                                 loom_type type, loom_op op, int slack)
{
    int P = loom_rt_icv.nranks;
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    if ((unsigned)type > LOOM_DOUBLE || op != LOOM_SUM || slack < 0 || (P & (P - 1)) ||
        P > 1 << MAX_DIM || (count && (!result || !contribution)))
        return LOOM_ERR_ARG;
    pthread_mutex_lock(&hc_mu);
    int id = -1;
    for (int i = 0; i < nmade; i++)
        if (hreds[i]->count == count && hreds[i]->type == type)
            id = i;
    struct hred *h = NULL;
    if (id < 0 && nmade < MAX_HRED && (h = made(nmade, count, type)))
        id = nmade++;
    h = id < 0 ? NULL : hreds[id];
    pthread_mutex_unlock(&hc_mu);
    if (!h)
        return LOOM_ERR_NOMEM;
    size_t bytes = count * h->es;
    uint64_t c = ++h->clock;
    loom_rt_reduce_local(h->total, contribution, count, type, op); /* only this thread writes it */
    if (P == 1) {
        memcpy(result, h->total, bytes);
        return LOOM_OK;
    }
    if (!agent_held) { /* partners' partials land while this rank computes */
        agent_held = 1;
        loom_dsm_agent_hold();
    }
    double t0 = loom_wtime();
    if (slack == 0) { /* lockstep: the plain allreduce of the totals */
        int rc = loom_allreduce(h->total, result, count, type, op);
        h->waits++;
        h->wait_ns += (uint64_t)((loom_wtime() - t0) * 1e9);
        return rc;
    }
    uint64_t need = c > (uint64_t)slack ? c - (uint64_t)slack : 0, tag = c;
    int waited = 0;
    memcpy(result, h->total, bytes); /* the partial */
    for (int k = 0; k < dims(); k++) {
        send_partial(h, id, k, result, tag);
        if (atomic_load(&h->slot_tag[k]) < need) {
            loom_rt_tp_wait_flag_until(&h->slot_tag[k], need);
            waited = 1;
        }
        pthread_mutex_lock(&hc_mu);
        uint64_t t = atomic_load(&h->slot_tag[k]);
        loom_rt_reduce_local(result, h->slot[k], count, type, op);
        pthread_mutex_unlock(&hc_mu);
        if (t < tag)
            tag = t;
    }
    if (waited) {
        h->waits++;
        h->wait_ns += (uint64_t)((loom_wtime() - t0) * 1e9);
    }
    return LOOM_OK;
}

/* After the last barrier (from loom_dsm_allreduce_ssp_fini): late partials
 * are dropped from now on; frees every reduction, printing its
 * statistics first under LOOM_STATS=1. */
void loom_dsm_allreduce_hypercube_fini(void)
{
    if (agent_held) {
        agent_held = 0;
        loom_dsm_agent_release();
    }
    pthread_mutex_lock(&hc_mu);
    closed = 1;
    for (int i = 0; i < MAX_HRED; i++) {
        struct hred *h = hreds[i];
        if (!h)
            continue;
        if (loom_rt_icv.stats && i < nmade)
            loom_rt_log("stats allreduce_hypercube #%d (%zu elements): %llu calls, %llu waited "
                     "(%.3f s)", i, h->count, (unsigned long long)h->clock,
                     (unsigned long long)h->waits, (double)h->wait_ns * 1e-9);
        for (int k = 0; k < MAX_DIM; k++)
            free(h->slot[k]);
        free(h->total);
        free(h);
        hreds[i] = NULL;
    }
    nmade = 0;
    pthread_mutex_unlock(&hc_mu);
}
