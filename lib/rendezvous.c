/* rendezvous.c — the rendezvous server where a job's ranks meet.
 *
 * loomrun runs it inside its event loop; under srun or mpirun rank 0 runs
 * it in a thread (init.c).  It never blocks: the owner polls the fds it
 * lists and calls loom_rt_rv_step, which reports at most one event a call.
 *
 * Protocol on each connection (frames of frame.c):
 *   server: HELLO  magic, version, nonce[16]
 *   rank:   JOIN   mac[16], rnonce[16], rank, nranks, pid, host, UCX address
 *           mac = SipHash128(job key, "JOIN" | nonce | rest of the JOIN)
 *   server: REFUSE reason          (bad key, bad rank, duplicate; logged)
 *        or TABLE  mac[16], every rank's host and UCX address, once all
 *                  have joined; mac = SipHash128(job key, "TABL" | rnonce
 *                  | nonce | table): the rank checks it (jobkey.c)
 *   A connection that has not joined within STRAY_S seconds is refused;
 *   when 2N + 16 connections are open, a new one takes the place of the
 *   oldest that has not joined, which is refused "busy" (a rank retries
 *   a busy refusal until LOOM_JOIN_TIMEOUT: join.c), so idle connections
 *   of another user cannot keep the ranks out.
 *   then both sides send PING every timeout/4; a silent side is dead after
 *   `timeout` seconds of silence while the server was running (a stall of
 *   the server itself, e.g. the machine frozen in an fsync, is not counted
 *   against the ranks).  A rank may send ABORT, PEERLOST or BYE; the server
 *   may send ABORT.  EOF from a rank that has not said BYE is a death. */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct conn {
    int fd;
    loom_fbuf in;
    int rank;            /* -1 until joined */
    int bye;
    double last_heard, opened;
    uint8_t nonce[16];   /* ours, in its HELLO */
    uint8_t rnonce[16];  /* the rank's, in its JOIN */
    char peer[64];       /* ip:port it came from */
    char host[64];       /* hostname it reported */
    uint8_t *addr;
    size_t addrlen;
};

/* Seconds an unjoined connection may stay: a rank sends its JOIN as soon
 * as the HELLO arrives. */
#define STRAY_S 5.0
/* The reason a rank retries (join.c checks the prefix). */
#define BUSY "busy: too many connections that have not joined; retry"
/* Refusals logged per job: strangers cannot flood the launcher's output. */
#define LOGGED_MAX 20

struct loom_rv {
    int lfd, port, nranks, nlogged;
    uint8_t key[16];
    double timeout, last_ping, last_tick;
    struct conn *conns;
    int nconns, maxconns;
    struct conn **by_rank;
    uint8_t *ever_joined;    /* per rank: joined at some point */
    int njoined, nbye, table_sent, done_reported;
    loom_rv_event queue[64];
    int qhead, qlen;
};

static void push(loom_rv *rv, loom_rv_event_kind k, int rank, int code,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void push(loom_rv *rv, loom_rv_event_kind k, int rank, int code,
                 const char *fmt, ...)
{
    if (rv->qlen == 64)
        return;
    loom_rv_event *e = &rv->queue[(rv->qhead + rv->qlen++) % 64];
    e->kind = k;
    e->rank = rank;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
}

loom_rv *loom_rt_rv_open(const char *host, int port, int nranks,
                      const uint8_t key[16], double timeout, char *err,
                      size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE}, *ai;
    char ports[16];
    snprintf(ports, sizeof ports, "%d", port);
    int gai = getaddrinfo(host && *host ? host : NULL, ports, &hints, &ai);
    if (gai) {
        snprintf(err, errlen, "cannot resolve rendezvous address %s: %s",
                 host ? host : "*", gai_strerror(gai));
        return NULL;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
        snprintf(err, errlen, "cannot listen on %s:%d: %s", host ? host : "*",
                 port, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return NULL;
    }
    freeaddrinfo(ai);
    loom_rv *rv = calloc(1, sizeof *rv);
    rv->maxconns = 2 * nranks + 16; /* room for strays, bounded */
    rv->conns = calloc((size_t)rv->maxconns, sizeof *rv->conns);
    rv->by_rank = calloc((size_t)nranks, sizeof *rv->by_rank);
    rv->ever_joined = calloc((size_t)nranks, 1);
    if (!rv->conns || !rv->by_rank || !rv->ever_joined) {
        snprintf(err, errlen, "out of memory");
        close(fd);
        free(rv->conns);
        free(rv->by_rank);
        free(rv->ever_joined);
        free(rv);
        return NULL;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    rv->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    rv->lfd = fd;
    rv->nranks = nranks;
    memcpy(rv->key, key, 16);
    rv->timeout = timeout;
    return rv;
}

int loom_rt_rv_port(const loom_rv *rv) { return rv->port; }
int loom_rt_rv_nfds(const loom_rv *rv) { return 1 + rv->nconns; }
int loom_rt_rv_joined(const loom_rv *rv, int rank) { return rv->ever_joined[rank]; }
int loom_rt_rv_njoined(const loom_rv *rv) { return rv->njoined; }

int loom_rt_rv_pollfds(const loom_rv *rv, struct pollfd *fds)
{
    fds[0] = (struct pollfd){.fd = rv->lfd, .events = POLLIN};
    for (int i = 0; i < rv->nconns; i++)
        fds[1 + i] = (struct pollfd){.fd = rv->conns[i].fd, .events = POLLIN};
    return 1 + rv->nconns;
}

static void drop(loom_rv *rv, struct conn *c)
{
    if (c->rank >= 0 && rv->by_rank[c->rank] == c) {
        rv->by_rank[c->rank] = NULL;
        if (!rv->table_sent)
            rv->njoined--; /* the table needs every rank connected */
    }
    close(c->fd);
    loom_rt_fbuf_free(&c->in);
    free(c->addr);
    int i = (int)(c - rv->conns);
    rv->conns[i] = rv->conns[--rv->nconns];
    if (i < rv->nconns && rv->conns[i].rank >= 0)
        rv->by_rank[rv->conns[i].rank] = &rv->conns[i];
}

static void refuse(loom_rv *rv, struct conn *c, const char *why);

/* The table is full: refuse the oldest connection that has not joined
 * ("busy"), making room for a new one.  0 if every connection has joined
 * (cannot happen while 2N + 16 > N, kept for safety). */
static int make_room(loom_rv *rv)
{
    struct conn *old = NULL;
    for (int i = 0; i < rv->nconns; i++)
        if (rv->conns[i].rank < 0 && (!old || rv->conns[i].opened < old->opened))
            old = &rv->conns[i];
    if (!old)
        return 0;
    refuse(rv, old, BUSY);
    return 1;
}

static void accept_one(loom_rv *rv)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd = accept4(rv->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss.ss_family == AF_INET) {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof ip);
        port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip, sizeof ip);
        port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    if (rv->nconns == rv->maxconns && !make_room(rv)) {
        loom_rt_frame_send(fd, LOOM_F_REFUSE, BUSY, strlen(BUSY));
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct conn *c = &rv->conns[rv->nconns++];
    *c = (struct conn){.fd = fd, .rank = -1, .opened = loom_wtime()};
    snprintf(c->peer, sizeof c->peer, "%s:%d", ip, port);
    uint8_t hello[24];
    loom_rt_put32(hello, LOOM_PROTO_MAGIC);
    loom_rt_put32(hello + 4, LOOM_PROTO_VERSION);
    if (loom_rt_key_generate(c->nonce) ||
        (memcpy(hello + 8, c->nonce, 16), loom_rt_frame_send(fd, LOOM_F_HELLO, hello, 24)))
        drop(rv, c);
}

/* Refuse a connection: tell the process why, log it (the first
 * LOGGED_MAX times), drop it. */
static void refuse(loom_rv *rv, struct conn *c, const char *why)
{
    if (rv->nlogged < LOGGED_MAX)
        loom_rt_log("rendezvous: refused a connection from %s: %s%s", c->peer, why,
                 ++rv->nlogged == LOGGED_MAX ? " (further refusals are not logged)" : "");
    loom_rt_frame_send(c->fd, LOOM_F_REFUSE, why, strlen(why));
    drop(rv, c);
}

static void send_table(loom_rv *rv)
{
    size_t len = 16 + 4; /* each rank's mac, then the table */
    for (int r = 0; r < rv->nranks; r++)
        len += 1 + strlen(rv->by_rank[r]->host) + 4 + rv->by_rank[r]->addrlen;
    uint8_t *t = malloc(len), *p = t + 16;
    if (!t)
        loom_rt_die(1, "out of memory building the rendezvous table");
    loom_rt_put32(p, (uint32_t)rv->nranks);
    p += 4;
    for (int r = 0; r < rv->nranks; r++) {
        struct conn *c = rv->by_rank[r];
        size_t hl = strlen(c->host);
        *p++ = (uint8_t)hl;
        memcpy(p, c->host, hl);
        p += hl;
        loom_rt_put32(p, (uint32_t)c->addrlen);
        memcpy(p + 4, c->addr, c->addrlen);
        p += 4 + c->addrlen;
    }
    double now = loom_wtime();
    for (int r = 0; r < rv->nranks; r++) {
        struct conn *c = rv->by_rank[r];
        if (loom_rt_handshake_mac(rv->key, "TABL", c->rnonce, c->nonce, t + 16, len - 16, t))
            loom_rt_die(1, "out of memory signing the rendezvous table");
        loom_rt_frame_send(c->fd, LOOM_F_TABLE, t, len);
        rv->by_rank[r]->last_heard = now;
    }
    free(t);
    rv->table_sent = 1;
    rv->last_ping = now;
    push(rv, LOOM_RV_ALL_JOINED, -1, 0, "all %d ranks joined", rv->nranks);
}

/* JOIN payload: mac[16] rnonce[16] rank nranks pid | u8 hostlen host |
 * u32 alen addr; the mac covers everything after it. */
#define J_RANK 32
#define J_HOST (J_RANK + 12)
static void on_join(loom_rv *rv, struct conn *c, const uint8_t *p, size_t n)
{
    if (c->rank >= 0)
        return refuse(rv, c, "joined twice");
    if (n < J_HOST + 1)
        return refuse(rv, c, "malformed join");
    uint8_t mac[16];
    if (loom_rt_handshake_mac(rv->key, "JOIN", c->nonce, NULL, p + 16, n - 16, mac))
        return refuse(rv, c, "out of memory");
    if (!loom_rt_ct_equal(mac, p, 16))
        return refuse(rv, c, "wrong job key");
    uint32_t rank = loom_rt_get32(p + J_RANK), nranks = loom_rt_get32(p + J_RANK + 4);
    size_t hl = p[J_HOST];
    if (J_HOST + 1 + hl + 4 > n || !loom_rt_wire_host_ok(p + J_HOST + 1, hl, sizeof c->host))
        return refuse(rv, c, "malformed join");
    size_t alen = loom_rt_get32(p + J_HOST + 1 + hl);
    if (alen == 0 || J_HOST + 1 + hl + 4 + alen != n)
        return refuse(rv, c, "malformed join");
    char why[128];
    if (nranks != (uint32_t)rv->nranks || rank >= nranks) {
        snprintf(why, sizeof why, "rank %u of %u does not fit a job of %d ranks",
                 rank, nranks, rv->nranks);
        return refuse(rv, c, why);
    }
    if (rv->ever_joined[rank] || rv->table_sent) {
        snprintf(why, sizeof why, "rank %u joined already", rank);
        return refuse(rv, c, why);
    }
    memcpy(c->rnonce, p + 16, 16);
    memcpy(c->host, p + J_HOST + 1, hl);
    c->host[hl] = 0;
    c->addr = malloc(alen);
    if (!c->addr)
        return refuse(rv, c, "out of memory");
    memcpy(c->addr, p + J_HOST + 5 + hl, alen);
    c->addrlen = alen;
    c->rank = (int)rank;
    c->last_heard = loom_wtime();
    rv->by_rank[rank] = c;
    rv->ever_joined[rank] = 1;
    if (++rv->njoined == rv->nranks)
        send_table(rv);
}

/* Handle one frame from c.  Returns 0, or -1 if c was dropped. */
static int on_frame(loom_rv *rv, struct conn *c, int type, const uint8_t *p, size_t n)
{
    char sh[LOOM_SHOWN_BUF];
    c->last_heard = loom_wtime();
    if (type == LOOM_F_JOIN) {
        int before = rv->nconns;
        on_join(rv, c, p, n);
        return rv->nconns < before ? -1 : 0;
    }
    if (c->rank < 0) { /* nothing but JOIN before joining */
        refuse(rv, c, "spoke before joining");
        return -1;
    }
    switch (type) {
    case LOOM_F_PING:
        break;
    case LOOM_F_BYE:
        if (!c->bye) {
            c->bye = 1;
            rv->nbye++;
        }
        break;
    case LOOM_F_ABORT:
        push(rv, LOOM_RV_ABORT, c->rank, loom_rt_exit_status(n >= 4 ? loom_rt_get32(p) : 1), "%s",
             loom_rt_shown(p + (n > 4 ? 4 : n), n > 4 ? n - 4 : 0, sh, sizeof sh));
        break;
    case LOOM_F_PEERLOST: {
        int peer = n >= 4 ? (int)loom_rt_get32(p) : -1;
        if (peer >= 0 && peer < rv->nranks)
            push(rv, LOOM_RV_LOST, peer, 0,
                 "rank %d (host %s) lost its connection to rank %d (%s)",
                 c->rank, c->host, peer,
                 loom_rt_shown(p + (n > 4 ? 4 : n), n > 4 ? n - 4 : 0, sh, sizeof sh));
        break;
    }
    default:
        loom_rt_log("rendezvous: dropped a frame of unknown type %d from rank %d", type,
                 c->rank);
    }
    return 0;
}

static void on_readable(loom_rv *rv, struct conn *c)
{
    int r = loom_rt_fbuf_fill(c->fd, &c->in);
    for (;;) {
        const uint8_t *p;
        size_t n;
        int t = loom_rt_fbuf_next(&c->in, &p, &n);
        if (t < 0) {
            if (c->rank >= 0)
                push(rv, LOOM_RV_LOST, c->rank, 0,
                     "rank %d (host %s) sent a malformed control frame", c->rank,
                     c->host);
            drop(rv, c);
            return;
        }
        if (t == 0)
            break;
        /* copy out: on_frame may drop c and free its buffer */
        uint8_t *copy = malloc(n ? n : 1);
        if (!copy)
            loom_rt_die(1, "out of memory");
        memcpy(copy, p, n);
        loom_rt_fbuf_pop(&c->in);
        int gone = on_frame(rv, c, t, copy, n);
        free(copy);
        if (gone)
            return;
    }
    if (r <= 0) {
        if (c->rank >= 0 && !c->bye)
            push(rv, LOOM_RV_LOST, c->rank, 0,
                 "rank %d (host %s) closed its connection without finalizing "
                 "(the process died?)", c->rank, c->host);
        drop(rv, c);
    }
}

static void tick(loom_rv *rv)
{
    double now = loom_wtime();
    double beat = rv->timeout / 4 < 1.0 ? rv->timeout / 4 : 1.0;
    double gap = rv->last_tick > 0 ? now - rv->last_tick : 0;
    rv->last_tick = now;
    if (gap > rv->timeout / 2) /* we were not running: nobody was heard, nobody is to blame */
        for (int i = 0; i < rv->nconns; i++)
            rv->conns[i].last_heard += gap;
    int ping = rv->table_sent && now - rv->last_ping >= beat;
    if (ping)
        rv->last_ping = now;
    for (int i = rv->nconns - 1; i >= 0; i--) {
        struct conn *c = &rv->conns[i];
        if (c->rank < 0) {
            if (now - c->opened > STRAY_S) /* a stray that never joins */
                refuse(rv, c, "did not join within 5 s");
            continue;
        }
        if (!rv->table_sent || c->bye)
            continue;
        if (now - c->last_heard > rv->timeout) {
            push(rv, LOOM_RV_LOST, c->rank, 0,
                 "rank %d (host %s) sent no heartbeat for %.0f s (LOOM_TIMEOUT): "
                 "host unreachable or process stopped", c->rank, c->host,
                 now - c->last_heard);
            c->last_heard = now; /* report once per timeout */
        } else if (ping)
            loom_rt_frame_send(c->fd, LOOM_F_PING, NULL, 0);
    }
    if (rv->nbye == rv->nranks && !rv->done_reported) {
        rv->done_reported = 1;
        push(rv, LOOM_RV_ALL_DONE, -1, 0, "all ranks finalized");
    }
}

loom_rv_event_kind loom_rt_rv_step(loom_rv *rv, const struct pollfd *fds, int nfds,
                                loom_rv_event *ev)
{
    if (!rv->qlen) {
        for (int i = 0; i < nfds; i++) {
            if (!fds[i].revents)
                continue;
            if (fds[i].fd == rv->lfd) {
                accept_one(rv);
                continue;
            }
            for (int j = 0; j < rv->nconns; j++)
                if (rv->conns[j].fd == fds[i].fd) {
                    on_readable(rv, &rv->conns[j]);
                    break;
                }
        }
        tick(rv);
    }
    if (!rv->qlen)
        return LOOM_RV_NONE;
    *ev = rv->queue[rv->qhead];
    rv->qhead = (rv->qhead + 1) % 64;
    rv->qlen--;
    return ev->kind;
}

void loom_rt_rv_abort_all(loom_rv *rv, int code, const char *why)
{
    uint8_t buf[4 + 256];
    size_t wl = strlen(why) < 256 ? strlen(why) : 256;
    loom_rt_put32(buf, (uint32_t)code);
    memcpy(buf + 4, why, wl);
    while (rv->nconns) {
        struct conn *c = &rv->conns[rv->nconns - 1];
        if (c->rank >= 0)
            loom_rt_frame_send(c->fd, LOOM_F_ABORT, buf, 4 + wl);
        drop(rv, c);
    }
}

void loom_rt_rv_close(loom_rv *rv)
{
    if (!rv)
        return;
    while (rv->nconns)
        drop(rv, &rv->conns[rv->nconns - 1]);
    close(rv->lfd);
    free(rv->conns);
    free(rv->by_rank);
    free(rv->ever_joined);
    free(rv);
}
