/* fuzz_rendezvous.c — the rendezvous server (lib/rendezvous.c), as
 * loomrun runs it, against clients sending anything, over real loopback
 * TCP: frame decoding, the JOIN decoder and key check, and the control
 * frames of joined ranks (PING, ABORT, PEERLOST, BYE).
 * Input: byte 0 gives the job size (1 + b % 3), the number of
 * connections (1 + (b >> 3) % 4) and, in bit 2, whether to sign JOINs:
 * then the harness writes the correct MAC (SipHash of the job key, the
 * nonce its HELLO carried and the rest of the frame) into every JOIN frame
 * of the stream, so inputs
 * get past the key check and explore what joined ranks can do.  Then, per
 * connection, a u16 length and the bytes it sends.  Invariants: the
 * server neither crashes nor reads outside a frame; what it sends back is
 * well framed, and a TABLE it sends decodes (loom_rt_join_parse_table, after
 * its MAC) into the job's ranks.  Clients close with a reset, so no connection lingers
 * in TIME_WAIT however many inputs run. */
#include "fuzz.h"
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAXC 4
static const uint8_t key[16] = "fuzz-the-server";

/* Run the server until it has nothing more to do. */
static void serve(loom_rv *rv, int wait_ms)
{
    struct pollfd fds[2 * 3 + 16 + 1];
    for (int round = 0; round < 64; round++) {
        int nf = loom_rt_rv_pollfds(rv, fds);
        int ready = poll(fds, (nfds_t)nf, round ? 0 : wait_ms);
        loom_rv_event ev;
        int events = 0;
        for (int k = loom_rt_rv_step(rv, fds, nf, &ev); k != LOOM_RV_NONE;
             k = loom_rt_rv_step(rv, fds, 0, &ev))
            events++;
        if (ready <= 0 && !events)
            return;
    }
}

/* Read what the server sent on fd: check its framing, decode any TABLE. */
static void answers(int fd, int nranks)
{
    static uint8_t buf[1 << 16];
    size_t len = 0;
    ssize_t r;
    while (len < sizeof buf && (r = recv(fd, buf + len, sizeof buf - len, MSG_DONTWAIT)) > 0)
        len += (size_t)r;
    for (size_t pos = 0; pos + 5 <= len;) {
        uint32_t flen = loom_rt_get32(buf + pos);
        FUZZ_CHECK(flen >= 1 && flen < LOOM_FRAME_MAX, "server frame length %u", flen);
        if (pos + 4 + flen > len)
            break; /* cut by our buffer */
        int type = buf[pos + 4];
        const uint8_t *p = buf + pos + 5;
        size_t n = flen - 1;
        FUZZ_CHECK(type >= LOOM_F_HELLO && type <= LOOM_F_BYE, "server frame type %d", type);
        if (type == LOOM_F_TABLE) {
            loom_peer *peers = NULL;
            FUZZ_CHECK(n >= 16 && !loom_rt_join_parse_table(p + 16, n - 16, nranks, &peers),
                       "the server's TABLE (%zu bytes) does not decode for %d ranks", n, nranks);
            loom_rt_join_free(peers, nranks);
        }
        pos += 4 + flen;
    }
}

/* Sign every JOIN frame in s[0..n) with the MAC for nonce. */
static void sign_joins(uint8_t *s, size_t n, const uint8_t nonce[16])
{
    for (size_t pos = 0; pos + 5 <= n;) {
        uint32_t flen = loom_rt_get32(s + pos);
        if (!flen)
            break;
        if (s[pos + 4] == LOOM_F_JOIN && flen - 1 >= 16 && flen <= n - pos - 4)
            loom_rt_handshake_mac(key, "JOIN", nonce, NULL, s + pos + 5 + 16, flen - 1 - 16,
                               s + pos + 5);
        if (flen > n - pos - 4)
            break;
        pos += 4 + flen;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (!n)
        return 0;
    int nranks = 1 + d[0] % 3, nconn = 1 + (d[0] >> 3) % MAXC, sign = d[0] & 4;
    char err[256];
    loom_rv *rv = loom_rt_rv_open("127.0.0.1", 0, nranks, key, 6.0, err, sizeof err);
    FUZZ_CHECK(rv != NULL, "%s", err);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)loom_rt_rv_port(rv)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd[MAXC];
    uint8_t nonce[MAXC][16];
    for (int c = 0; c < nconn; c++) {
        int err = 0;
        for (int tries = 0; tries < 10; tries++) { /* the machine is shared: retry a
                                                      transient failure */
            fd[c] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            struct linger lg = {1, 0}; /* close = reset: no TIME_WAIT */
            setsockopt(fd[c], SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
            if (fd[c] >= 0 && !connect(fd[c], (struct sockaddr *)&sa, sizeof sa))
                break;
            err = errno;
            close(fd[c]);
            fd[c] = -1;
            usleep(1000);
        }
        FUZZ_CHECK(fd[c] >= 0, "connect to the rendezvous: %s", strerror(err));
    }
    for (int round = 0; round < 100 && loom_rt_rv_nfds(rv) < 1 + nconn; round++)
        serve(rv, 10);
    FUZZ_CHECK(loom_rt_rv_nfds(rv) == 1 + nconn, "%d of %d connections accepted",
               loom_rt_rv_nfds(rv) - 1, nconn);
    for (int c = 0; c < nconn; c++) {
        struct timeval tv = {1, 0};
        setsockopt(fd[c], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        uint8_t hello[29];
        FUZZ_CHECK(recv(fd[c], hello, sizeof hello, MSG_WAITALL) == sizeof hello, "%s",
                   "no HELLO");
        FUZZ_CHECK(loom_rt_get32(hello) == 25 && hello[4] == LOOM_F_HELLO &&
                       loom_rt_get32(hello + 5) == LOOM_PROTO_MAGIC, "%s", "bad HELLO");
        memcpy(nonce[c], hello + 13, 16);
    }
    const uint8_t *p = d + 1, *end = d + n;
    for (int c = 0; c < nconn && p < end; c++) {
        size_t len = fuzz_u16(p, end);
        p += 2;
        if (p > end)
            break;
        if (len > (size_t)(end - p))
            len = (size_t)(end - p);
        uint8_t *s = malloc(len ? len : 1);
        FUZZ_CHECK(s != NULL, "%s", "memory");
        memcpy(s, p, len);
        if (sign)
            sign_joins(s, len, nonce[c]);
        ssize_t w = send(fd[c], s, len, MSG_NOSIGNAL); /* fails once refused: fine */
        (void)w;
        free(s);
        p += len;
        serve(rv, len ? 1 : 0); /* loopback: the bytes are there at once */
    }
    serve(rv, 0);
    for (int c = 0; c < nconn; c++) {
        answers(fd[c], nranks);
        close(fd[c]);
    }
    loom_rt_rv_close(rv);
    return 0;
}
