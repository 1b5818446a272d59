/* transport.c — UCX context, worker and endpoints; matched messages over AM.
 *
 * Ranks exchange UCX worker addresses at the rendezvous (join.c); after
 * that every byte between ranks goes through this file.  Endpoints are
 * created lazily on the first send to a peer, so start-up does not grow as
 * ranks², and each carries a peer-failure handler: a lost peer ends the job
 * through the launcher (loom_rt_join_peer_lost), it never hangs it.
 *
 * Messages are UCX active messages (id LOOM_AM_MSG) with a small header
 * {source rank, 64-bit tag}.  A receive names (source, tag, buffer):
 *   - if the message is already here (unexpected list) it is copied, or,
 *     for a rendezvous-protocol message, pulled straight into the buffer;
 *   - else the receive is posted and the AM handler delivers into it.
 * Large messages thus land in the user's buffer with no extra copy.
 * What one peer may leave unmatched here is bounded (UQ_MAX_MSGS messages,
 * UQ_MAX_BYTES copied bytes): beyond it the job stops with a message
 * naming the peer, instead of this rank's memory growing without end.
 *
 * Locking: all UCX calls happen under tp_lock (the worker is created in
 * SERIALIZED mode); handlers run inside ucp_worker_progress, under it, and
 * may send (the lock is recursive). */
#include "internal.h"

#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>

#define LOOM_AM_MSG 1

struct msg_hdr {
    uint32_t src;
    uint32_t reserved;
    uint64_t tag;
};

/* A message that arrived before its receive was posted. */
struct unexpected {
    struct unexpected *next;
    uint32_t src;
    uint64_t tag;
    size_t len;
    void *data;  /* eager: a malloc'd copy */
    void *desc;  /* rendezvous: UCX data descriptor, not yet pulled */
};

/* A receive waiting for its message. */
struct posted {
    uint32_t src;
    uint64_t tag;
    void *buf;
    size_t len;
    volatile int *done;
};

struct loom_sreq {
    struct msg_hdr hdr;  /* must live until the send completes (UCX 1.13) */
    void *req;
};

/* Recursive: message handlers run under it and may send replies. */
static pthread_mutex_t tp_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static __thread int in_tp; /* depth of tp_lock held by this thread */

static void lock_tp(void)
{
    pthread_mutex_lock(&tp_lock);
    in_tp++;
}

static void unlock_tp(void)
{
    in_tp--;
    pthread_mutex_unlock(&tp_lock);
}

int loom_rt_tp_busy(void) { return in_tp > 0; }
static ucp_context_h ctx;
static ucp_worker_h worker;
static int efd = -1; /* the worker's event file descriptor (UCP_FEATURE_WAKEUP) */
static ucp_address_t *my_addr;
static size_t my_addrlen;
static loom_peer *peers;
static int npeers;
static ucp_ep_h *eps;
static struct unexpected *uq_head, **uq_tail = &uq_head;
#define UQ_MAX_MSGS ((size_t)1 << 20)
#define UQ_MAX_BYTES ((size_t)1 << 30)
static struct { size_t msgs, bytes; } *uq_of; /* per peer: unmatched, copied */
#define MAX_POSTED 16
static struct posted posted[MAX_POSTED];
static int nposted;
static _Atomic int closing; /* finalize under way: peer errors are expected */

#define MAX_AM 16
static ucs_status_t am_generic(void *arg, const void *header, size_t hlen, void *data,
                               size_t len, const ucp_am_recv_param_t *param);

static void fail_peer(int rank, const char *why)
{
    if (closing)
        return;
    loom_rt_join_peer_lost(rank, why);
}

static void ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    fail_peer((int)(intptr_t)arg, ucs_status_string(status));
}

/* The endpoint to rank dst, created on first use.  Caller holds tp_lock.
 *
 * A peer on another host gets UCP_ERR_HANDLING_MODE_PEER, so a dead peer
 * raises ep_error instead of hanging a send.  A peer on this host does
 * not: UCX's shared-memory transports (posix, sysv, cma) cannot handle
 * peer failure, and asking for it would push same-host traffic onto TCP
 * over loopback (40x the latency).  A same-host peer's death is caught by
 * the launcher's waitpid and heartbeats instead, which end the job. */
static ucp_ep_h get_ep(int dst)
{
    if (eps[dst])
        return eps[dst];
    int same_host = !strcmp(peers[dst].host, peers[loom_rt_icv.rank].host);
    ucp_ep_params_t p = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = (const ucp_address_t *)peers[dst].addr,
        .err_mode = same_host ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = ep_error, .arg = (void *)(intptr_t)dst},
    };
    ucs_status_t st = ucp_ep_create(worker, &p, &eps[dst]);
    if (st != UCS_OK)
        fail_peer(dst, ucs_status_string(st));
    return eps[dst];
}

static void rndv_done(void *request, ucs_status_t status, size_t length,
                      void *user_data)
{
    (void)length;
    if (status != UCS_OK)
        loom_rt_die(LOOM_EXIT_PEER, "receiving a message failed: %s",
                 ucs_status_string(status));
    loom_rt_flag_set(user_data);
    ucp_request_free(request);
}

/* Pull a rendezvous message described by desc into buf; *done becomes 1
 * when it has landed.  Caller holds tp_lock. */
static void pull(void *desc, void *buf, size_t len, volatile int *done)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv_am = rndv_done,
        .user_data = (void *)done,
    };
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(worker, desc, buf, len, &p);
    if (UCS_PTR_IS_ERR(r))
        loom_rt_die(LOOM_EXIT_PEER, "receiving a message failed: %s",
                 ucs_status_string(UCS_PTR_STATUS(r)));
    if (r == NULL)
        loom_rt_flag_set(done);
}

static void size_mismatch(uint32_t src, size_t got, size_t want)
{
    loom_rt_die(LOOM_EXIT_PEER,
             "rank %u sent %zu bytes where %zu were expected: the ranks called "
             "collectives in different orders or with different sizes",
             src, got, want);
}

/* Payload bytes this rank handed to UCX and got from it, of every kind:
 * messages (collectives), active messages (header and data: the DSM's
 * protocol), remote reads.  Counted where they are sent and where they
 * are taken: a message when a receive matches it (one that came early
 * counts in the receive's call, not in the call it arrived during), an
 * active message when its handler runs.  UCX's own wire-up and headers
 * are not in them. */
static _Atomic uint64_t wire_sent, wire_received;
static void count_sent(size_t n) { atomic_fetch_add_explicit(&wire_sent, n, memory_order_relaxed); }
static void count_received(size_t n)
{
    atomic_fetch_add_explicit(&wire_received, n, memory_order_relaxed);
}
void loom_rt_tp_bytes(uint64_t *sent, uint64_t *received)
{
    *sent = atomic_load_explicit(&wire_sent, memory_order_relaxed);
    *received = atomic_load_explicit(&wire_received, memory_order_relaxed);
}

static ucs_status_t am_msg(void *arg, const void *header, size_t hlen, void *data,
                           size_t len, const ucp_am_recv_param_t *param)
{
    (void)arg;
    struct msg_hdr h;
    if (hlen != sizeof h) {
        loom_rt_log("dropped a message with a %zu-byte header", hlen);
        return UCS_OK;
    }
    memcpy(&h, header, sizeof h);
    if (h.src >= (uint32_t)npeers) {
        loom_rt_log("dropped a message from unknown rank %u", h.src);
        return UCS_OK;
    }
    int rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    for (int i = 0; i < nposted; i++) {
        struct posted *p = &posted[i];
        if (p->src != h.src || p->tag != h.tag)
            continue;
        if (len != p->len)
            size_mismatch(h.src, len, p->len);
        count_received(len);
        if (rndv)
            pull(data, p->buf, len, p->done);
        else {
            if (len)
                memcpy(p->buf, data, len);
            loom_rt_flag_set(p->done);
        }
        posted[i] = posted[--nposted];
        return UCS_OK;
    }
    if (uq_of[h.src].msgs >= UQ_MAX_MSGS ||
        (!rndv && uq_of[h.src].bytes + len > UQ_MAX_BYTES))
        loom_abort(1, "rank %u has sent %zu messages (%zu MiB) that no receive here "
                 "has matched, the most one rank may leave waiting: a rank far ahead of this "
                 "one, or one not running this program", h.src, uq_of[h.src].msgs,
                 uq_of[h.src].bytes >> 20);
    struct unexpected *u = calloc(1, sizeof *u);
    if (!u)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory queueing a message");
    uq_of[h.src].msgs++;
    uq_of[h.src].bytes += rndv ? 0 : len;
    u->src = h.src;
    u->tag = h.tag;
    u->len = len;
    *uq_tail = u;
    uq_tail = &u->next;
    if (rndv) {
        u->desc = data;
        return UCS_INPROGRESS;
    }
    u->data = malloc(len ? len : 1);
    if (!u->data)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory queueing a message");
    if (len)
        memcpy(u->data, data, len);
    return UCS_OK;
}

/* Message buffers of tens of KiB to tens of MiB come and go many times a
 * second here: a shard's push and update, a ring hand-off, a pulled
 * rendezvous message, a diff.  glibc serves a block over its mmap
 * threshold (128 KiB at first) with a fresh mapping and unmaps it at
 * free, and trims the heap's top back to the kernel past twice that, so
 * each use page-faults every page anew; on this VM a fault costs ~5 us
 * (docs/bench-ssp.md: 80% of a 4-rank SSP allreduce of 1 MiB went there).
 * With several ranks, keep blocks up to 64 MiB in the heap and its top
 * up to 256 MiB, as MPI libraries do, unless the user tuned malloc
 * himself (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ or a
 * glibc.malloc tunable), which then stands. */
static void keep_buffers_in_heap(void)
{
    const char *t = getenv("GLIBC_TUNABLES");
    if (getenv("MALLOC_MMAP_THRESHOLD_") || getenv("MALLOC_TRIM_THRESHOLD_") ||
        (t && strstr(t, "glibc.malloc.")))
        return;
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int loom_rt_tp_open(void **addr, size_t *addrlen)
{
    keep_buffers_in_heap();
    ucp_config_t *cfg;
    ucs_status_t st = ucp_config_read(NULL, NULL, &cfg); /* reads UCX_* */
    if (st != UCS_OK)
        goto fail;
    ucp_params_t pp = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP,
        .estimated_num_eps = (size_t)loom_rt_icv.nranks,
    };
    st = ucp_init(&pp, cfg, &ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK)
        goto fail;
    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };
    st = ucp_worker_create(ctx, &wp, &worker);
    if (st != UCS_OK)
        goto fail;
    ucp_am_handler_param_t hp = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG,
        .id = LOOM_AM_MSG,
        .cb = am_msg,
        .arg = NULL,
    };
    st = ucp_worker_set_am_recv_handler(worker, &hp);
    /* Every DSM id too, before any peer can reach this worker: UCX drops a
     * message whose id has no handler (docs/dsm.md, "Message handlers");
     * am_generic ends the job on one that came before its layer's. */
    for (unsigned id = 2; id < MAX_AM && st == UCS_OK; id++) {
        hp.id = id;
        hp.cb = am_generic;
        hp.arg = (void *)(uintptr_t)id;
        st = ucp_worker_set_am_recv_handler(worker, &hp);
    }
    if (st != UCS_OK)
        goto fail;
    if (ucp_worker_get_efd(worker, &efd) != UCS_OK)
        efd = -1; /* loom_rt_tp_wait falls back to a short nap */
    st = ucp_worker_get_address(worker, &my_addr, &my_addrlen);
    if (st != UCS_OK)
        goto fail;
    *addr = my_addr;
    *addrlen = my_addrlen;
    return LOOM_OK;
fail:
    loom_rt_log("UCX start-up failed: %s", ucs_status_string(st));
    return LOOM_ERR_NET;
}

void loom_rt_tp_set_peers(loom_peer *p, int n)
{
    peers = p;
    npeers = n;
    eps = calloc((size_t)n, sizeof *eps);
    uq_of = calloc((size_t)n, sizeof *uq_of);
    if (!eps || !uq_of)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory");
}

const char *loom_rt_tp_host(int r)
{
    return r < npeers ? peers[r].host : "";
}

int loom_host_size(void)
{
    int n = 0;
    for (int r = 0; r < npeers; r++)
        n += !strcmp(peers[r].host, peers[loom_rt_icv.rank].host);
    return n ? n : 1;
}

/* Threads of this process inside one of the waits below, each driving the
 * transport itself (progress()): the progress agent (dsm/agent.c) then
 * stays out of their way.  When it polled beside them, on a host with as
 * many busy threads as cores, its wake-ups took the core from the thread
 * it was competing with, ~9% of a 2-rank loom-w2v (docs/bench-apps.md). */
static _Atomic int fg_waiting;
int loom_rt_tp_foreground(void) { return atomic_load_explicit(&fg_waiting, memory_order_relaxed) > 0; }
static void fg_begin(void) { atomic_fetch_add_explicit(&fg_waiting, 1, memory_order_relaxed); }
static void fg_end(void) { atomic_fetch_sub_explicit(&fg_waiting, 1, memory_order_relaxed); }

/* One round of progress for a waiting caller: spin while UCX makes
 * progress, yield the core after a while without any (two cores shared by
 * several ranks must not starve the rank we wait for). */
static void progress(int *idle)
{
    lock_tp();
    unsigned n = ucp_worker_progress(worker);
    unlock_tp();
    if (n)
        *idle = 0;
    else if (++*idle > 64)
        sched_yield();
}

void loom_rt_tp_wait_until(int (*done)(void *), void *arg)
{
    int idle = 0;
    fg_begin();
    while (!done(arg))
        progress(&idle);
    fg_end();
}

unsigned loom_rt_tp_drain(void)
{
    unsigned total = 0;
    for (;;) {
        lock_tp();
        unsigned n = ucp_worker_progress(worker);
        unlock_tp();
        if (!n)
            return total;
        total += n;
    }
}

/* Contract (loom_rt_tp_wait): for a caller that has just drained the worker
 * (loom_rt_tp_drain) and has nothing else to do (the progress agent): sleep
 * until a message or completion arrives (the worker's event fd, armed
 * under tp_lock) or timeout_ms passes.  If events arrived since the drain,
 * arming fails busy and this returns at once, for the caller to drain
 * again.  Another thread may consume the event first; then this returns
 * early (harmless). */
void loom_rt_tp_wait(int timeout_ms)
{
    lock_tp();
    ucs_status_t st = efd >= 0 ? ucp_worker_arm(worker) : UCS_ERR_UNSUPPORTED;
    unlock_tp();
    if (st == UCS_ERR_BUSY) /* events arrived meanwhile: let the caller come back */
        return;
    if (st != UCS_OK) {
        struct timespec gap = {0, 50 * 1000};
        nanosleep(&gap, NULL);
        return;
    }
    struct pollfd pf = {.fd = efd, .events = POLLIN};
    (void)poll(&pf, 1, timeout_ms);
}

loom_sreq *loom_rt_tp_isend(int dst, uint64_t tag, const void *buf, size_t len)
{
    loom_sreq *s = malloc(sizeof *s);
    if (!s)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory");
    s->hdr = (struct msg_hdr){.src = (uint32_t)loom_rt_icv.rank, .tag = tag};
    count_sent(len);
    ucp_request_param_t p = {.op_attr_mask = 0};
    lock_tp();
    ucs_status_ptr_t r = ucp_am_send_nbx(get_ep(dst), LOOM_AM_MSG, &s->hdr,
                                         sizeof s->hdr, buf, len, &p);
    unlock_tp();
    if (UCS_PTR_IS_ERR(r))
        fail_peer(dst, ucs_status_string(UCS_PTR_STATUS(r)));
    if (r == NULL || UCS_PTR_IS_ERR(r)) {
        free(s);
        return NULL;
    }
    s->req = r;
    return s;
}

void loom_rt_tp_wait_send(loom_sreq *s)
{
    if (!s)
        return;
    int idle = 0;
    fg_begin();
    for (;;) {
        lock_tp();
        ucs_status_t st = ucp_request_check_status(s->req);
        unlock_tp();
        if (st != UCS_INPROGRESS) {
            if (st != UCS_OK && !closing)
                loom_rt_die(LOOM_EXIT_PEER, "sending a message failed: %s",
                         ucs_status_string(st));
            break;
        }
        progress(&idle);
    }
    fg_end();
    lock_tp();
    ucp_request_free(s->req);
    unlock_tp();
    free(s);
}

void loom_rt_tp_recv(int src, uint64_t tag, void *buf, size_t len)
{
    volatile int done = 0;
    lock_tp();
    struct unexpected **pp = &uq_head, *u = NULL;
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->src == (uint32_t)src && (*pp)->tag == tag) {
            u = *pp;
            *pp = u->next;
            if (uq_tail == &u->next)
                uq_tail = pp;
            break;
        }
    if (u) {
        count_received(u->len);
        uq_of[u->src].msgs--;
        uq_of[u->src].bytes -= u->desc ? 0 : u->len;
        if (u->len != len)
            size_mismatch(u->src, u->len, len);
        if (u->desc)
            pull(u->desc, buf, len, &done);
        else {
            if (len)
                memcpy(buf, u->data, len);
            done = 1;
        }
        free(u->data);
        free(u);
    } else {
        if (nposted == MAX_POSTED)
            loom_rt_die(LOOM_EXIT_PEER, "too many receives posted at once");
        posted[nposted++] = (struct posted){(uint32_t)src, tag, buf, len, &done};
    }
    unlock_tp();
    loom_rt_tp_wait_flag(&done);
}


/* ---- generic active messages (the DSM's protocol) -------------------- */

static loom_am_fn am_fns[MAX_AM];

struct am_pending { /* a rendezvous-size message being pulled */
    unsigned id;
    void *hdr;
    size_t hlen;
    void *data;
    size_t len;
    volatile int done;
};

static void am_pulled(void *request, ucs_status_t status, size_t length, void *user)
{
    (void)length;
    struct am_pending *p = user;
    if (status != UCS_OK)
        loom_rt_die(LOOM_EXIT_PEER, "receiving a message failed: %s", ucs_status_string(status));
    ucp_request_free(request);
    am_fns[p->id](p->hdr, p->hlen, p->data, p->len);
    free(p->hdr);
    free(p->data);
    free(p);
}

static ucs_status_t am_generic(void *arg, const void *header, size_t hlen, void *data,
                               size_t len, const ucp_am_recv_param_t *param)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    if (!am_fns[id]) /* registered at open: the layer's handler is not there yet */
        loom_abort(LOOM_EXIT_PEER, "internal: a message (id %u) came before its handler was "
                   "registered here (docs/dsm.md, \"Message handlers\")", id);
    count_received(hlen + len);
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        if ((uintptr_t)data % 8 == 0) {
            am_fns[id](header, hlen, data, len);
            return UCS_OK;
        }
        /* eager payloads may sit at any offset: handlers get them aligned */
        void *copy = malloc(len ? len : 1);
        if (!copy)
            loom_rt_die(LOOM_EXIT_PEER, "out of memory receiving a message");
        memcpy(copy, data, len);
        am_fns[id](header, hlen, copy, len);
        free(copy);
        return UCS_OK;
    }
    struct am_pending *p = calloc(1, sizeof *p);
    if (!p || !(p->hdr = malloc(hlen ? hlen : 1)) || !(p->data = malloc(len ? len : 1)))
        loom_rt_die(LOOM_EXIT_PEER, "out of memory receiving a %zu-byte message", len);
    memcpy(p->hdr, header, hlen);
    p->id = id;
    p->hlen = hlen;
    p->len = len;
    ucp_request_param_t rp = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv_am = am_pulled,
        .user_data = p,
    };
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(worker, data, p->data, len, &rp);
    if (UCS_PTR_IS_ERR(r))
        loom_rt_die(LOOM_EXIT_PEER, "receiving a message failed: %s",
                 ucs_status_string(UCS_PTR_STATUS(r)));
    if (r == NULL) { /* landed at once */
        am_fns[id](p->hdr, hlen, p->data, len);
        free(p->hdr);
        free(p->data);
        free(p);
    }
    return UCS_OK;
}

void loom_rt_tp_am_register(unsigned id, loom_am_fn fn)
{
    if (id < 2 || id >= MAX_AM)
        loom_rt_die(1, "internal: AM id %u out of range", id);
    lock_tp(); /* UCX has called am_generic for id since loom_rt_tp_open */
    am_fns[id] = fn;
    unlock_tp();
}

struct am_send { /* lives until the send completes */
    void *hdr;
    void *data; /* freed at completion */
};

static void am_sent(void *request, ucs_status_t status, void *user)
{
    struct am_send *a = user;
    if (status != UCS_OK && !closing)
        loom_rt_die(LOOM_EXIT_PEER, "sending a message failed: %s", ucs_status_string(status));
    free(a->hdr);
    free(a->data);
    free(a);
    if (request)
        ucp_request_free(request);
}

void loom_rt_tp_am_send(int dst, unsigned id, const void *hdr, size_t hlen, void *data,
                     size_t len)
{
    loom_rt_tp_am_send_eager(dst, id, hdr, hlen, data, len, 0);
}

void loom_rt_tp_am_send_eager(int dst, unsigned id, const void *hdr, size_t hlen, void *data,
                           size_t len, int eager)
{
    struct am_send *a = malloc(sizeof *a);
    if (!a || !(a->hdr = malloc(hlen ? hlen : 1)))
        loom_rt_die(LOOM_EXIT_PEER, "out of memory");
    memcpy(a->hdr, hdr, hlen);
    a->data = data;
    count_sent(hlen + len);
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        (eager ? UCP_OP_ATTR_FIELD_FLAGS : 0),
        .cb.send = am_sent,
        .user_data = a,
        .flags = eager ? UCP_AM_SEND_FLAG_EAGER : 0,
    };
    lock_tp();
    ucs_status_ptr_t r = ucp_am_send_nbx(get_ep(dst), id, a->hdr, hlen, data, len, &p);
    unlock_tp();
    if (UCS_PTR_IS_ERR(r))
        fail_peer(dst, ucs_status_string(UCS_PTR_STATUS(r)));
    if (r == NULL || UCS_PTR_IS_ERR(r))
        am_sent(NULL, UCS_OK, a);
}

/* ---- RMA ------------------------------------------------------------- */

static _Atomic long live_regs; /* registrations not yet unmapped */

long loom_rt_tp_live_registrations(void) { return live_regs; }

/* Register (or, with flags UCP_MEM_MAP_ALLOCATE | UCP_MEM_MAP_FIXED, have
 * UCX allocate at addr) len bytes and pack their remote key. */
static int mem_map(void *addr, size_t len, unsigned flags, void **memh, void **rkey,
                   size_t *rkey_len)
{
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .address = addr,
        .length = len,
        .flags = flags,
    };
    lock_tp();
    ucs_status_t st = ucp_mem_map(ctx, &mp, (ucp_mem_h *)memh);
    if (st == UCS_OK && (st = ucp_rkey_pack(ctx, *memh, rkey, rkey_len)) != UCS_OK)
        ucp_mem_unmap(ctx, *memh);
    unlock_tp();
    if (st != UCS_OK) {
        if (!flags)
            loom_rt_log("cannot register %zu bytes for remote access: %s", len,
                     ucs_status_string(st));
        return LOOM_ERR_NET;
    }
    live_regs++;
    return LOOM_OK;
}

int loom_rt_tp_mem_map(void *addr, size_t len, void **memh, void **rkey, size_t *rkey_len)
{
    return mem_map(addr, len, 0, memh, rkey, rkey_len);
}

int loom_rt_tp_mem_alloc_at(void *addr, size_t len, void **memh, void **rkey, size_t *rkey_len)
{
    return mem_map(addr, len, UCP_MEM_MAP_ALLOCATE | UCP_MEM_MAP_FIXED, memh, rkey, rkey_len);
}

void loom_rt_tp_rkey_buffer_free(void *rkey_buf)
{
    ucp_rkey_buffer_release(rkey_buf);
}

void loom_rt_tp_mem_unmap(void *memh)
{
    lock_tp();
    ucp_mem_unmap(ctx, memh);
    unlock_tp();
    live_regs--;
}

void *loom_rt_tp_rkey_unpack(int peer, const void *buf)
{
    ucp_rkey_h rk;
    lock_tp();
    ucs_status_t st = ucp_ep_rkey_unpack(get_ep(peer), buf, &rk);
    unlock_tp();
    if (st != UCS_OK)
        loom_rt_die(LOOM_EXIT_PEER, "cannot unpack rank %d's memory key: %s", peer,
                 ucs_status_string(st));
    return rk;
}

void loom_rt_tp_rkey_destroy(void *rkey)
{
    lock_tp();
    ucp_rkey_destroy(rkey);
    unlock_tp();
}

static void get_done(void *request, ucs_status_t status, void *user)
{
    if (status != UCS_OK)
        loom_rt_die(LOOM_EXIT_PEER, "a remote read failed: %s", ucs_status_string(status));
    loom_rt_flag_set(user);
    ucp_request_free(request);
}

void loom_rt_tp_get(int peer, void *buf, size_t len, uint64_t raddr, void *rkey,
                 volatile int *done)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.send = get_done,
        .user_data = (void *)done,
    };
    count_received(len);
    lock_tp();
    ucs_status_ptr_t r = ucp_get_nbx(get_ep(peer), buf, len, raddr, rkey, &p);
    unlock_tp();
    if (UCS_PTR_IS_ERR(r))
        fail_peer(peer, ucs_status_string(UCS_PTR_STATUS(r)));
    if (r == NULL)
        loom_rt_flag_set(done);
}

void loom_rt_tp_wait_flag(volatile int *flag)
{
    int idle = 0;
    fg_begin();
    while (!loom_rt_flag_get(flag))
        progress(&idle);
    fg_end();
}

void loom_rt_tp_wait_flag_until(_Atomic uint64_t *v, uint64_t target)
{
    int idle = 0;
    fg_begin();
    while (atomic_load(v) < target)
        progress(&idle);
    fg_end();
}

void loom_rt_tp_closing(void)
{
    closing = 1;
}

static void flush_worker(void)
{
    ucp_request_param_t p = {.op_attr_mask = 0};
    ucs_status_ptr_t r = ucp_worker_flush_nbx(worker, &p);
    if (UCS_PTR_IS_PTR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS)
            ucp_worker_progress(worker);
        ucp_request_free(r);
    }
}

/* Flush what is in flight (so every message we sent has landed), then
 * close every endpoint and the worker.  loom_finalize calls it after
 * loom_rt_tp_closing() and a barrier, so no peer treats our disconnect as a
 * failure and no peer still waits for a message from us. */
void loom_rt_tp_close(void)
{
    if (!worker)
        return;
    closing = 1;
    lock_tp();
    flush_worker();
    for (int i = 0; i < npeers; i++) {
        if (!eps || !eps[i])
            continue;
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                 .flags = UCP_EP_CLOSE_FLAG_FORCE};
        ucs_status_ptr_t r = ucp_ep_close_nbx(eps[i], &p);
        if (UCS_PTR_IS_PTR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS)
                ucp_worker_progress(worker);
            ucp_request_free(r);
        }
    }
    free(eps);
    eps = NULL;
    while (uq_head) {
        struct unexpected *u = uq_head;
        uq_head = u->next;
        if (u->desc)
            ucp_am_data_release(worker, u->desc);
        free(u->data);
        free(u);
    }
    uq_tail = &uq_head;
    free(uq_of);
    uq_of = NULL;
    ucp_worker_release_address(worker, my_addr);
    ucp_worker_destroy(worker);
    ucp_cleanup(ctx);
    worker = NULL;
    unlock_tp();
}
