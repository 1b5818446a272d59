/* join.c — a rank's side of the rendezvous, and its heartbeat thread.
 *
 * loom_rt_join connects to LOOM_RENDEZVOUS, answers the server's nonce with
 * the MAC of the job key over its JOIN (which carries a fresh nonce of the
 * rank's own), publishes this rank's UCX worker address and waits for the
 * table of every rank's, which it accepts only if the server signed it
 * with the job key over both nonces: a process squatting on the port
 * without the key, or replaying a recorded exchange, is refused before
 * this rank trusts a single address (jobkey.c has the MACs).  A server
 * that refuses it "busy" (full of connections that have not joined: a
 * crowd of strangers, rendezvous.c) or closes before greeting is dialled
 * again, with a growing pause, until LOOM_JOIN_TIMEOUT.  It then
 * keeps the socket as the job's control line: a thread sends a PING every timeout/4 and watches
 * for the server's.  If the server goes silent or away, the rank exits
 * (no orphans when the launcher or its host dies); if the server sends
 * ABORT, the rank exits at once and quietly, since the launcher prints the
 * reason.  Silence counts only while this thread was running: when it
 * wakes much later than it asked to (the whole machine stalled, e.g. in a
 * checkpoint's fsync, or the job was stopped and continued), the stall is
 * not held against the launcher.  Writes to the socket are serialized by
 * ctl_lock. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int ctl_fd = -1;
static loom_fbuf ctl_in;
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t hb_thread;
static int hb_running;
static int wake_pipe[2] = {-1, -1};
static _Atomic int leaving; /* read by the heartbeat thread */

static int ctl_send(int type, const void *p, size_t n)
{
    pthread_mutex_lock(&ctl_lock);
    int r = ctl_fd >= 0 ? loom_rt_frame_send(ctl_fd, type, p, n) : -1;
    pthread_mutex_unlock(&ctl_lock);
    return r;
}

/* connect(2) that gives up at the deadline: on a host whose packets are
 * dropped (a firewall) a blocking connect waits for the kernel's SYN
 * retries, about two minutes, far past LOOM_JOIN_TIMEOUT.  Returns 0 with
 * fd connected (and blocking again), else -1 with errno set (ETIMEDOUT at
 * the deadline). */
static int connect_by(int fd, const struct sockaddr *sa, socklen_t len, double deadline)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -1;
    int rc = connect(fd, sa, len);
    if (rc < 0 && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int n;
        do {
            double left = deadline - loom_wtime();
            n = poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
        } while (n < 0 && errno == EINTR);
        int err = 0;
        socklen_t el = sizeof err;
        if (n == 0)
            err = ETIMEDOUT;
        else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
            err = errno;
        if (err) {
            errno = err;
            return -1;
        }
        rc = 0;
    }
    return rc == 0 ? fcntl(fd, F_SETFL, fl) : -1;
}

/* Connect to host:port, retrying until the deadline (under srun the
 * server in rank 0 may start after us); no attempt outlasts it. */
static int dial(const char *host, int port, double deadline)
{
    char ports[16];
    snprintf(ports, sizeof ports, "%d", port);
    int last_err = 0;
    for (double wait = 0.01;; wait = wait < 0.5 ? wait * 2 : 0.5) {
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
        int gai = getaddrinfo(host, ports, &hints, &ai);
        if (gai) {
            loom_rt_log("cannot resolve the rendezvous host %s: %s", host, gai_strerror(gai));
            return -1;
        }
        for (struct addrinfo *a = ai; a; a = a->ai_next) {
            int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd >= 0 && connect_by(fd, a->ai_addr, a->ai_addrlen, deadline) == 0) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                freeaddrinfo(ai);
                return fd;
            }
            last_err = errno;
            if (fd >= 0)
                close(fd);
        }
        freeaddrinfo(ai);
        if (loom_wtime() + wait > deadline) {
            loom_rt_log("cannot reach the rendezvous at %s:%d: %s (LOOM_RENDEZVOUS)", host,
                     port, strerror(last_err));
            return -1;
        }
        struct timespec ts = {0, (long)(wait * 1e9)};
        nanosleep(&ts, NULL);
    }
}

int loom_rt_join_parse_table(const uint8_t *p, size_t n, int nranks, loom_peer **out)
{
    if (n < 4 || nranks < 1 || loom_rt_get32(p) != (uint32_t)nranks)
        return -1;
    int np = nranks;
    loom_peer *peers = calloc((size_t)np, sizeof *peers);
    if (!peers)
        return -1;
    size_t off = 4;
    for (int r = 0; r < np; r++) {
        if (off + 1 > n)
            goto bad;
        size_t hl = p[off++];
        if (off + hl + 4 > n || !loom_rt_wire_host_ok(p + off, hl, sizeof peers[r].host))
            goto bad;
        memcpy(peers[r].host, p + off, hl);
        off += hl;
        size_t al = loom_rt_get32(p + off);
        off += 4;
        if (al == 0 || al > n - off)
            goto bad;
        peers[r].addr = malloc(al);
        if (!peers[r].addr)
            goto bad;
        memcpy(peers[r].addr, p + off, al);
        peers[r].addrlen = al;
        off += al;
    }
    if (off != n)
        goto bad;
    *out = peers;
    return 0;
bad:
    loom_rt_join_free(peers, np);
    return -1;
}

void loom_rt_join_free(loom_peer *peers, int n)
{
    if (!peers)
        return;
    for (int i = 0; i < n; i++)
        free(peers[i].addr);
    free(peers);
}

static void *heartbeat(void *arg)
{
    (void)arg;
    double beat = loom_rt_icv.timeout / 4 < 1.0 ? loom_rt_icv.timeout / 4 : 1.0;
    double last_heard = loom_wtime(), last_sent = 0, last_woke = last_heard;
    for (;;) {
        struct pollfd pf[2] = {{.fd = ctl_fd, .events = POLLIN},
                               {.fd = wake_pipe[0], .events = POLLIN}};
        poll(pf, 2, (int)(beat * 1000 / 2) + 1);
        if (leaving)
            return NULL;
        double now = loom_wtime();
        if (now - last_woke > loom_rt_icv.timeout / 2) /* we stalled, not the launcher */
            last_heard += now - last_woke;
        last_woke = now;
        if (pf[0].revents) {
            int r = loom_rt_fbuf_fill(ctl_fd, &ctl_in);
            const uint8_t *p;
            size_t n;
            int t;
            while ((t = loom_rt_fbuf_next(&ctl_in, &p, &n)) > 0) {
                if (t == LOOM_F_ABORT)
                    _exit(n >= 4 && loom_rt_get32(p) ? loom_rt_exit_status(loom_rt_get32(p))
                                                  : LOOM_EXIT_ABORTED);
                loom_rt_fbuf_pop(&ctl_in);
                last_heard = now;
            }
            if (t < 0 || r <= 0) {
                if (leaving)
                    return NULL;
                loom_rt_die(LOOM_EXIT_PEER, "lost the connection to the launcher; exiting");
            }
        }
        if (now - last_heard > loom_rt_icv.timeout)
            loom_rt_die(LOOM_EXIT_PEER,
                     "no heartbeat from the launcher for %.0f s (LOOM_TIMEOUT); exiting",
                     now - last_heard);
        if (now - last_sent >= beat) {
            ctl_send(LOOM_F_PING, NULL, 0);
            last_sent = now;
        }
    }
}

/* 1 if frame t (payload p, n bytes) is the rendezvous' busy refusal. */
static int busy_refusal(int t, const uint8_t *p, size_t n)
{
    return t == LOOM_F_REFUSE && n >= 5 && !memcmp(p, "busy:", 5);
}

/* One attempt of loom_rt_join: dial, read the HELLO, send the JOIN, read the
 * TABLE.  *busy is set (1: refused busy or reset before the answer; 2:
 * closed before greeting) when the attempt may be retried, and then
 * nothing is printed; otherwise the outcome is loom_rt_join's. */
static int join_once(const char *host, int port, double deadline, const void *addr,
                     size_t addrlen, loom_peer **peers, int *busy)
{
    int fd = dial(host, port, deadline);
    if (fd < 0)
        return LOOM_ERR_NET;
    uint8_t *p = NULL;
    size_t n;
    int t = loom_rt_frame_recv(fd, &ctl_in, deadline, &p, &n);
    if (t != LOOM_F_HELLO || n != 24 || loom_rt_get32(p) != LOOM_PROTO_MAGIC ||
        loom_rt_get32(p + 4) != LOOM_PROTO_VERSION) {
        *busy = busy_refusal(t, p, n) ? 1 : t == 0 ? 2 : 0;
        if (!*busy)
            loom_rt_log("the rendezvous at %s did not greet as a Loom rendezvous of "
                     "protocol %u", loom_rt_icv.rendezvous, LOOM_PROTO_VERSION);
        free(p);
        close(fd);
        return LOOM_ERR_NET;
    }
    /* JOIN: mac[16] rnonce[16] rank nranks pid | u8 hostlen host | u32 alen addr */
    char hn[64] = "";
    gethostname(hn, sizeof hn - 1);
    size_t hl = strlen(hn);
    size_t jl = 16 + 16 + 12 + 1 + hl + 4 + addrlen;
    uint8_t *j = malloc(jl), snonce[16], rnonce[16];
    memcpy(snonce, p + 8, 16);
    free(p);
    p = NULL; /* the branches below free what the next receive gives, or nothing */
    if (!j || loom_rt_key_generate(rnonce)) {
        free(j);
        close(fd);
        return LOOM_ERR_NOMEM;
    }
    memcpy(j + 16, rnonce, 16);
    loom_rt_put32(j + 32, (uint32_t)loom_rt_icv.rank);
    loom_rt_put32(j + 36, (uint32_t)loom_rt_icv.nranks);
    loom_rt_put32(j + 40, (uint32_t)getpid());
    j[44] = (uint8_t)hl;
    memcpy(j + 45, hn, hl);
    loom_rt_put32(j + 45 + hl, (uint32_t)addrlen);
    memcpy(j + 49 + hl, addr, addrlen);
    int sent = loom_rt_handshake_mac(loom_rt_icv.job_key, "JOIN", snonce, NULL, j + 16, jl - 16, j) ||
               loom_rt_frame_send(fd, LOOM_F_JOIN, j, jl);
    free(j);
    t = sent ? -1 : loom_rt_frame_recv(fd, &ctl_in, deadline, &p, &n);
    if (busy_refusal(t, p, n) || (t < 0 && errno == ECONNRESET && loom_wtime() < deadline)) {
        *busy = 1; /* made room for another connection: try again */
        free(p);
        close(fd);
        return LOOM_ERR_NET;
    }
    if (t == LOOM_F_REFUSE) {
        char sh[LOOM_SHOWN_BUF];
        loom_rt_log("the rendezvous refused this rank: %s", loom_rt_shown(p, n, sh, sizeof sh));
        free(p);
        close(fd);
        return LOOM_ERR_KEY;
    }
    if (t == LOOM_F_ABORT) /* another rank failed before the job started */
        _exit(n >= 4 && loom_rt_get32(p) ? loom_rt_exit_status(loom_rt_get32(p)) : LOOM_EXIT_ABORTED);
    uint8_t mac[16];
    if (t == LOOM_F_TABLE &&
        (n < 16 || loom_rt_handshake_mac(loom_rt_icv.job_key, "TABL", rnonce, snonce, p + 16, n - 16,
                                      mac) || !loom_rt_ct_equal(mac, p, 16))) {
        loom_rt_log("the rendezvous at %s did not prove it holds the job key; its table is "
                 "refused (is another process bound to that port?)", loom_rt_icv.rendezvous);
        free(p);
        close(fd);
        return LOOM_ERR_KEY;
    }
    if (t != LOOM_F_TABLE || loom_rt_join_parse_table(p + 16, n - 16, loom_rt_icv.nranks, peers)) {
        if (t <= 0 && loom_wtime() >= deadline)
            loom_rt_log("not every rank joined within %.0f s (LOOM_JOIN_TIMEOUT)",
                     loom_rt_icv.join_timeout);
        else
            loom_rt_log("the rendezvous closed or sent a bad table");
        free(p);
        close(fd);
        return t <= 0 ? LOOM_ERR_TIMEOUT : LOOM_ERR_NET;
    }
    free(p);
    ctl_fd = fd;
    if (pipe2(wake_pipe, O_CLOEXEC) || pthread_create(&hb_thread, NULL, heartbeat, NULL)) {
        loom_rt_log("cannot start the heartbeat thread");
        return LOOM_ERR_NOMEM;
    }
    hb_running = 1;
    return LOOM_OK;
}

int loom_rt_join(const void *addr, size_t addrlen, loom_peer **peers)
{
    char host[256];
    int port;
    if (!loom_rt_icv.rendezvous[0]) {
        loom_rt_log("LOOM_RENDEZVOUS is not set: start the job with loomrun, or set "
                 "LOOM_RENDEZVOUS=host:port (see docs/launcher.md)");
        return LOOM_ERR_ENV;
    }
    if (!loom_rt_icv.have_key) {
        loom_rt_log("LOOM_JOB_KEY is not set: start the job with loomrun, or export the "
                 "same 32-hex-digit LOOM_JOB_KEY to every rank");
        return LOOM_ERR_ENV;
    }
    loom_rt_parse_hostport(loom_rt_icv.rendezvous, host, sizeof host, &port);
    double deadline = loom_wtime() + loom_rt_icv.join_timeout;
    for (double wait = 0.02;; wait = wait < 0.5 ? wait * 2 : 1.0) {
        int busy = 0, rc = join_once(host, port, deadline, addr, addrlen, peers, &busy);
        if (!busy)
            return rc;
        loom_rt_fbuf_free(&ctl_in);
        if (loom_wtime() + wait >= deadline) {
            if (busy == 1)
                loom_rt_log("the rendezvous at %s stayed busy (too many connections that have "
                         "not joined) for %.0f s (LOOM_JOIN_TIMEOUT)", loom_rt_icv.rendezvous,
                         loom_rt_icv.join_timeout);
            else
                loom_rt_log("the rendezvous at %s closed every connection before greeting for "
                         "%.0f s (LOOM_JOIN_TIMEOUT): it is not a Loom rendezvous of protocol "
                         "%u, or it is overloaded", loom_rt_icv.rendezvous,
                         loom_rt_icv.join_timeout, LOOM_PROTO_VERSION);
            return LOOM_ERR_TIMEOUT;
        }
        struct timespec ts = {0, (long)(wait * 1e9)};
        nanosleep(&ts, NULL);
    }
}

void loom_rt_join_peer_lost(int rank, const char *why)
{
    uint8_t buf[4 + 200];
    size_t wl = strlen(why) < 200 ? strlen(why) : 200;
    loom_rt_put32(buf, (uint32_t)rank);
    memcpy(buf + 4, why, wl);
    if (ctl_send(LOOM_F_PEERLOST, buf, 4 + wl) == 0) {
        /* Give the launcher time to name the real culprit and stop us. */
        struct timespec ts = {(time_t)loom_rt_icv.timeout + 2, 0};
        nanosleep(&ts, NULL);
    }
    loom_rt_die(LOOM_EXIT_PEER, "lost the connection to rank %d (%s)", rank, why);
}

void loom_rt_join_abort(int code, const char *why)
{
    uint8_t buf[4 + 256];
    size_t wl = strlen(why) < 256 ? strlen(why) : 256;
    loom_rt_put32(buf, (uint32_t)code);
    memcpy(buf + 4, why, wl);
    ctl_send(LOOM_F_ABORT, buf, 4 + wl);
}

void loom_rt_join_leave(void)
{
    if (ctl_fd < 0)
        return;
    leaving = 1;
    ctl_send(LOOM_F_BYE, NULL, 0);
    if (hb_running) {
        ssize_t w = write(wake_pipe[1], "x", 1);
        (void)w;
        pthread_join(hb_thread, NULL);
        hb_running = 0;
    }
    pthread_mutex_lock(&ctl_lock);
    close(ctl_fd);
    ctl_fd = -1;
    pthread_mutex_unlock(&ctl_lock);
    close(wake_pipe[0]);
    close(wake_pipe[1]);
    loom_rt_fbuf_free(&ctl_in);
}
